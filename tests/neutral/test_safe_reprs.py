"""Objects holding bodies, reasoning deltas or opaque payloads show no content in any repr.

Objects that hold a request or response body, a reasoning delta or an opaque payload show sizes, counts, kinds
and ids in every repr a notebook or a traceback formatter uses (``repr``, ``str``, IPython's pretty printer,
rich's pretty printer), never the content. ``ev.text`` stays the explicit way to get a delta's text.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter, MessageAssembler
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.adapters.openai_responses._stream import ResponseAssembler
from agentlab.loop.checkpoint import Checkpoint
from agentlab.loop.continuation import Continuation
from agentlab.neutral.events import (
    ModelCallCompletedEvent,
    ModelResponse,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
)
from agentlab.neutral.items import (
    AssistantTextItem,
    ProviderReasoningItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import ModelRequest
from agentlab.neutral.usage import CallUsage

C = f"CANARY{uuid.uuid4().hex[:12]}"


def _ipython(obj: object) -> str:
    from IPython.lib.pretty import pretty

    return str(pretty(obj))


def _rich(obj: object) -> str:
    from rich.console import Console
    from rich.pretty import Pretty

    console = Console(file=io.StringIO(), width=120, record=True)
    console.print(Pretty(obj))
    return console.export_text()


FORMATTERS: dict[str, Callable[[object], str]] = {
    "repr": repr,
    "str": str,
    "ipython": _ipython,
    "rich": _rich,
}


def _item(
    provider: str, api: str, model: str, block_type: str, payload: dict[str, Any]
) -> ProviderReasoningItem:
    return ProviderReasoningItem(
        json.dumps(payload).encode(), provider=provider, api=api, model=model, block_type=block_type,
        turn_id="t1", index=0,
    )  # fmt: skip


def _holders() -> dict[str, object]:
    oi = _item("openai", "responses", "sim-reasoner", "reasoning",
               {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": C}],
                "encrypted_content": C})  # fmt: skip
    ai = _item("anthropic", "messages", "sim-thinker", "thinking",
               {"type": "thinking", "thinking": C, "signature": C})  # fmt: skip
    items = (
        UserItem(text=C),
        AssistantTextItem(text=C, turn_id="t1", index=1),
        ToolCallItem(call_id="c1", name="f", arguments=json.dumps({"q": C}), turn_id="t1", index=2),
        ToolResultItem(call_id="c1", name="f", output=C),
    )
    oreq = ModelRequest(
        model="sim-reasoner", items=items, continuation=(oi,), provider_options={"openai_x": C}
    )
    areq = ModelRequest(model="sim-thinker", items=items, continuation=(ai,))
    resp = ModelResponse(
        provider="openai", api="responses", model="sim-reasoner", response_id="resp_1",
        items=items[1:3], reasoning=(oi,), stop_reason="refusal", stop_detail=C,
    )  # fmt: skip
    oasm = ResponseAssembler(model="sim-reasoner", base_url=None)
    oasm.feed(json.dumps({"type": "response.created", "response": {"id": "resp_1"}}))
    oasm.feed(json.dumps({"type": "response.output_item.done", "output_index": 0,
                          "item": {"type": "reasoning", "id": "rs_1", "encrypted_content": C}}))  # fmt: skip
    aasm = MessageAssembler(model="sim-thinker", base_url=None)
    for wire in (
        {"type": "message_start", "message": {"id": "msg_1", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": C}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": C}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": C}},
    ):
        aasm.feed(json.dumps(wire))
    cont = Continuation(provider="openai", api="responses", model="sim-reasoner")
    cont.add([oi])
    cp = Checkpoint(run_id="r1", provider="openai", model="sim-reasoner", history=items)
    cp.attach(cont)
    return {
        "ModelRequest": oreq,
        "ModelResponse": resp,
        "ReasoningDeltaEvent": ReasoningDeltaEvent(text=C, block="rs_1:0"),
        "TextDeltaEvent": TextDeltaEvent(text=C),
        "ToolCallDeltaEvent": ToolCallDeltaEvent(call_id="c1", name="f", arguments_delta=C),
        "ResponseCompletedEvent": ResponseCompletedEvent(response=resp, latency_s=0.5),
        "ModelCallCompletedEvent": ModelCallCompletedEvent(
            provider="openai", model="sim-reasoner", stop_reason="end_turn", usage=CallUsage(), items=items
        ),
        "openai BuiltRequest": OpenAIResponsesAdapter("sim-reasoner").build(oreq),
        "anthropic BuiltRequest": AnthropicMessagesAdapter("sim-thinker").build(areq),
        "ResponseAssembler": oasm,
        "MessageAssembler": aasm,
        "anthropic block": aasm.blocks[0],
        "Continuation": cont,
        "Checkpoint": cp,
        "ProviderReasoningItem": oi,
    }


HOLDERS = _holders()


@pytest.mark.parametrize("fmt", FORMATTERS)
@pytest.mark.parametrize("name", HOLDERS)
def test_repr_shows_no_content(name: str, fmt: str) -> None:
    obj = HOLDERS[name]
    text = FORMATTERS[fmt](obj)
    assert C not in text, f"{fmt}({name}) shows content: {text[:300]}"
    assert text.strip()


def test_a_delta_shows_its_length_and_text_stays_explicit() -> None:
    ev = ReasoningDeltaEvent(text=C, block="0")
    assert f"{len(C)} chars" in repr(ev)
    assert f"{len(C)} chars" in str(ev)  # what ``on_event=print`` prints
    assert ev.text == C
    assert ev.model_dump()["text"] == C  # serialization is not a repr: unchanged


def test_built_request_still_shows_its_size() -> None:
    built = HOLDERS["openai BuiltRequest"]
    assert f"{len(built.body)} bytes" in repr(built)  # type: ignore[attr-defined]


def test_shapes_name_kinds_and_ids() -> None:
    text = repr(HOLDERS["ModelResponse"])
    assert "resp_1" in text and "sim-reasoner" in text
    assert "assistant_text" in text and "tool_call" in text
    assert "1 opaque" in text


def test_on_event_print_prints_no_reasoning(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's ``on_event=print``: cell output shows each delta's length, not its text."""
    import agentlab as al
    from agentlab.testing import ScriptedAdapter, Step

    adapter = ScriptedAdapter([Step(reasoning=[f"thinking {C}", f"more {C}"], text="The answer is 4.")])
    result = al.run("openai:sim-reasoner", "What is 2+2?", adapter=adapter, on_event=print)
    out = capsys.readouterr().out
    assert result.output == "The answer is 4."
    assert "reasoning_delta" in out and f"<{len(C) + 9} chars>" in out
    assert C not in out
