"""OpenAI server-side compaction: ``compaction`` items are opaque provider state, kept for one loop only.

With ``context_management`` (``provider_options={"openai_context_management": [...]}``) a response
over the threshold starts with a ``compaction`` item that replaces the context before it. Within the
loop it goes back verbatim (and the continuity guard holds it to that); it is never persisted; a
provider switch drops it visibly; the summary it took is billed as output. The simulator compacts
the same way and authenticates the item like a reasoning item.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import openai
import pytest

import agentlab as al
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.errors import ContinuityViolation, PrivacyError
from agentlab.neutral.continuity import opaque_slots
from agentlab.neutral.events import DiagnosticEvent, ResponseCompletedEvent
from agentlab.sim import openai_client
from tests.adapters.contract import RecordingTransport

TASK = "Is it warmer in Paris or Rome?"
COMPACT = {"openai_context_management": [{"type": "compaction", "compact_threshold": 40}]}


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "18 C", "Rome": "24 C"}.get(city, "20 C")


def _adapter() -> tuple[Any, RecordingTransport]:
    transport = RecordingTransport()
    return OpenAIResponsesAdapter(
        "sim-reasoner", client=openai_client(transport=transport), max_retries=0
    ), transport


async def _run(**kw: Any) -> tuple[al.RunResult, list[Any], RecordingTransport]:
    adapter, transport = _adapter()
    seen: list[Any] = []
    r = await al.arun(
        "openai:sim-reasoner", TASK, tools=[get_weather], adapter=adapter, on_event=seen.append, **kw
    )
    return r, [e.response for e in seen if isinstance(e, ResponseCompletedEvent)], transport


async def test_a_compacting_loop_sends_its_compaction_items_back_verbatim() -> None:
    r, responses, transport = await _run(provider_options=COMPACT)
    assert r.status == "completed" and len(responses) >= 2
    first = responses[0]
    assert [(i.block_type, i.index) for i in first.reasoning] == [("compaction", 0), ("reasoning", 1)]
    sent = json.loads(transport.bodies[1])["input"]
    (item,) = [i for i in sent if i.get("type") == "compaction"]
    received = json.loads(first.reasoning[0].unseal(provider="openai", api="responses"))
    assert item == received and item["id"].startswith("cmp_")
    kinds = [i.get("type") for i in sent]
    assert kinds.index("compaction") + 1 == kinds.index("reasoning")  # in its place, before its follower


async def test_the_compaction_summary_is_counted_in_usage() -> None:
    plain, _, _ = await _run()
    compacted, _, _ = await _run(provider_options=COMPACT)
    out_plain, out_compacted = plain.calls[0].usage.output_tokens, compacted.calls[0].usage.output_tokens
    assert out_plain is not None and out_compacted is not None and out_compacted > out_plain
    assert compacted.calls[0].usage.reasoning_tokens == plain.calls[0].usage.reasoning_tokens


async def test_the_simulator_takes_the_compaction_item_in_place_of_the_context_before_it() -> None:
    client = openai_client()
    long_history: Any = [
        {"role": "user", "content": "background " * 400},
        {"role": "assistant", "content": "noted"},
    ]
    r = await client.responses.create(
        model="sim-reasoner",
        input=[*long_history, {"role": "user", "content": TASK}],
        store=False,
        include=["reasoning.encrypted_content"],
        context_management=[{"type": "compaction", "compact_threshold": 100}],
    )
    (cmp,) = [i.model_dump(exclude_none=True) for i in r.output if i.type == "compaction"]
    full: Any = [*long_history, {"role": "user", "content": "and now?"}]
    compacted: Any = [*long_history, cmp, {"role": "user", "content": "and now?"}]
    n_full = (await client.responses.input_tokens.count(model="sim-reasoner", input=full)).input_tokens
    n_compacted = (
        await client.responses.input_tokens.count(model="sim-reasoner", input=compacted)
    ).input_tokens
    assert n_compacted < n_full / 4
    changed: Any = {**cmp, "encrypted_content": cmp["encrypted_content"][:-6] + "AAAAAA"}
    with pytest.raises(openai.BadRequestError) as info:
        await client.responses.create(model="sim-reasoner", input=[*long_history, changed], store=False)
    assert isinstance(info.value.body, dict) and info.value.body["code"] == "invalid_encrypted_content"


async def test_a_changed_compaction_item_is_refused_before_sending() -> None:
    adapter, transport = _adapter()
    build = adapter.build

    def changing(request: al.ModelRequest) -> Any:
        built = build(request)
        body = json.loads(built.body)
        for container, key in opaque_slots(body, adapter.continuity_layout):
            if container[key]["type"] == "compaction":
                container[key]["encrypted_content"] += "x"
        built.body = json.dumps(body).encode()
        return built

    adapter.build = changing
    with pytest.raises(ContinuityViolation, match=r"openai compaction item .* is modified") as info:
        await al.arun(
            "openai:sim-reasoner", TASK, tools=[get_weather], adapter=adapter, provider_options=COMPACT
        )
    assert (info.value.kind, info.value.index) == ("compaction", 0)
    assert len(transport.bodies) == 1


async def test_compaction_items_are_never_persisted(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    adapter, _ = _adapter()
    seen: list[Any] = []
    run = al.Run(
        "openai:sim-reasoner",
        TASK,
        tools=[get_weather],
        adapter=adapter,
        provider_options=COMPACT,
        event_log=log,
        on_event=seen.append,
    )
    r = await run.arun()
    items = [
        i for e in seen if isinstance(e, ResponseCompletedEvent) for i in e.response.reasoning
        if i.block_type == "compaction"
    ]  # fmt: skip
    assert r.status == "completed" and items
    sealed = [json.loads(i.unseal(provider="openai", api="responses"))["encrypted_content"] for i in items]
    durable = [log.read_text(), run.checkpoint.to_json(), r.model_dump_json(), r.usage_frame().to_json()]
    for text in durable:
        for token in sealed:
            assert token[:40] not in text
    with pytest.raises(PrivacyError):
        pickle.dumps(items[0])


async def test_a_provider_switch_drops_compaction_items_visibly() -> None:
    session = al.Session()
    adapter, _ = _adapter()
    seen: list[Any] = []
    r1 = await session.arun(
        "openai:sim-reasoner",
        TASK,
        tools=[get_weather],
        adapter=adapter,
        provider_options=COMPACT,
        on_event=seen.append,
    )
    held = sum(len(e.response.reasoning) for e in seen if isinstance(e, ResponseCompletedEvent))
    compactions = sum(
        i.block_type == "compaction"
        for e in seen
        if isinstance(e, ResponseCompletedEvent)
        for i in e.response.reasoning
    )
    assert r1.status == "completed" and compactions >= 1
    r2 = await session.arun("anthropic:sim-thinker", "And which is colder?")
    drops = [e for e in r2.events if isinstance(e, DiagnosticEvent) and e.code == "reasoning_item_dropped"]
    assert drops and drops[0].data == {"count": held, "reason": "provider_switch", "provider": "anthropic"}
