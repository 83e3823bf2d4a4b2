"""Reverse pairing: gpt-5.4 and later reject a ``message`` sent back without its reasoning item.

The forward rule (a reasoning item needs the item that followed it) is old; the reverse one is the
real API's 400 "Item 'msg_...' of type 'message' was provided without its required 'reasoning'
item: 'rs_...'." The simulator enforces both directions for those models (and ``sim-reasoner``),
and the adapter drops pairs whole: an output item whose reasoning item is not sent goes back
without its id, as portable text.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from agentlab.adapters.openai_responses._request import build_request
from agentlab.neutral.items import (
    AssistantTextItem,
    ProviderReasoningItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import ModelRequest
from agentlab.sim import Simulator, openai_client
from agentlab.sim.openai.responses import pairs_both_ways

QUESTION = "What is 12 * (3 + 4)?"


async def _first_answer(client: openai.AsyncOpenAI, model: str) -> list[dict[str, Any]]:
    r = await client.responses.create(
        model=model, input=QUESTION, store=False, include=["reasoning.encrypted_content"]
    )
    return [item.model_dump(exclude_none=True) for item in r.output]


def _follow_up(output: list[dict[str, Any]], *, keep_reasoning: bool) -> Any:
    kept = [i for i in output if keep_reasoning or i["type"] != "reasoning"]
    return [{"role": "user", "content": QUESTION}, *kept, {"role": "user", "content": "And times 2?"}]


@pytest.mark.parametrize("model", ["sim-reasoner", "gpt-5.4", "gpt-5.5", "gpt-6.1-sol"])
async def test_a_message_without_its_reasoning_item_is_the_real_400(model: str) -> None:
    client = openai_client(simulator=Simulator(real_models=True))
    output = await _first_answer(client, model)
    (rs,) = [i for i in output if i["type"] == "reasoning"]
    (msg,) = [i for i in output if i["type"] == "message"]
    with pytest.raises(openai.BadRequestError) as info:
        await client.responses.create(
            model=model, input=_follow_up(output, keep_reasoning=False), store=False
        )
    err = info.value.body
    assert isinstance(err, dict)
    assert err == {
        "message": f"Item '{msg['id']}' of type 'message' was provided without its required 'reasoning' "
        f"item: '{rs['id']}'.",
        "type": "invalid_request_error",
        "param": "input",
        "code": None,
    }
    ok = await client.responses.create(
        model=model, input=_follow_up(output, keep_reasoning=True), store=False
    )
    assert ok.status == "completed"


@pytest.mark.parametrize("model", ["sim-reasoner-mini", "gpt-5.2", "o3"])
async def test_older_models_take_the_message_alone(model: str) -> None:
    client = openai_client(simulator=Simulator(real_models=True))
    output = await _first_answer(client, model)
    ok = await client.responses.create(
        model=model, input=_follow_up(output, keep_reasoning=False), store=False
    )
    assert ok.status == "completed"


def test_which_models_pair_both_ways() -> None:
    assert [
        pairs_both_ways(m) for m in ("gpt-5.4", "gpt-5.4-mini", "gpt-5.10", "gpt-6", "gpt-5.3-codex")
    ] == [
        True,
        True,
        True,
        True,
        False,
    ]
    assert not pairs_both_ways("o4-mini") and pairs_both_ways("gpt-5.5 (simulated by agentlab: sim-reasoner)")


def _reasoning(index: int, encrypted: str | None) -> ProviderReasoningItem:
    body: dict[str, Any] = {"type": "reasoning", "id": f"rs_{index}", "summary": []}
    if encrypted is not None:
        body["encrypted_content"] = encrypted
    return ProviderReasoningItem(
        json.dumps(body).encode(),
        provider="openai",
        api="responses",
        model="gpt-5.5",
        block_type="reasoning",
        turn_id="resp_1",
        index=index,
    )


def test_an_item_whose_reasoning_was_dropped_goes_back_without_its_id() -> None:
    """A pair is dropped whole: the message of a reasoning item that cannot go back loses its id.

    Response resp_1 was [reasoning, function_call, reasoning, message]; the second reasoning item
    cannot be sent (no encrypted_content), so its message goes back as plain text, not as msg_3.
    """
    request = ModelRequest(
        model="gpt-5.5",
        items=(
            UserItem(text="q"),
            ToolCallItem(call_id="call_1", name="f", turn_id="resp_1", index=1, provider_item_id="fc_1"),
            AssistantTextItem(text="done", turn_id="resp_1", index=3, provider_item_id="msg_3"),
            ToolResultItem(call_id="call_1", output="ok"),
        ),
        continuation=(_reasoning(0, "enc-0"), _reasoning(2, None)),
    )
    built = build_request(request, model="gpt-5.5", base_url=None)
    inputs = json.loads(built.body)["input"]
    assert [i.get("type") or i["role"] for i in inputs] == [
        "user",
        "reasoning",
        "function_call",
        "assistant",
        "function_call_output",
    ]
    assert inputs[2]["id"] == "fc_1"  # its reasoning item went back: the pair is whole
    assert "id" not in inputs[3] and inputs[3]["content"] == "done"  # its reasoning did not: no half pair
    assert built.reasoning_sent == 1 and built.reasoning_dropped == 1
