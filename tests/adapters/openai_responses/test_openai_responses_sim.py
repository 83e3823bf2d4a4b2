"""End-to-end tool loops on the simulated OpenAI Responses endpoint, through the real SDK.

The simulator enforces what the real API enforces (authenticated ``encrypted_content``, the
"required following item" rule, store=false) and models the continuity effect: a loop whose
request lacks the reasoning items that planned its tool calls has lost its plan (it re-plans, at a
cost in reasoning tokens, and repeats its last tool batch). These tests show the effect through
``agentlab.arun`` (the core ``Run``) and by hand.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

import agentlab as al
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.errors import ProviderAPIError
from agentlab.neutral.events import ModelResponse
from agentlab.neutral.items import ProviderReasoningItem, ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest
from agentlab.sim import openai_client
from tests.adapters.contract import WEATHER, RecordingTransport, collect, completed

TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny"}
TASK = "Is it warmer in Paris or Rome?"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return TEMPS[city]


def sim_adapter(
    transport: RecordingTransport | None = None,
) -> tuple[OpenAIResponsesAdapter, RecordingTransport]:
    transport = transport or RecordingTransport()
    return OpenAIResponsesAdapter(
        "sim-reasoner", client=openai_client(transport=transport), max_retries=0
    ), transport


async def loop_by_hand(*, keep_continuation: bool) -> tuple[list[ModelResponse], RecordingTransport]:
    """The tool loop written out with ModelRequest, as a Run does it."""
    adapter, transport = sim_adapter()
    request = ModelRequest(model="sim-reasoner", items=(UserItem(text=TASK),), tools=(WEATHER,))
    responses: list[ModelResponse] = []
    for _ in range(6):
        resp = completed(await collect(adapter, request))
        responses.append(resp)
        if resp.stop_reason != "tool_use":
            break
        results = [
            ToolResultItem(call_id=c.call_id, name=c.name, output=get_weather(**json.loads(c.arguments)))
            for c in resp.tool_calls
        ]
        request = request.model_copy(
            update={
                "items": (*request.items, *resp.items, *results),
                "continuation": (*request.continuation, *resp.reasoning) if keep_continuation else (),
            }
        )
    await adapter.aclose()
    return responses, transport


async def test_loop_with_continuation_keeps_its_plan() -> None:
    responses, transport = await loop_by_hand(keep_continuation=True)
    assert [r.stop_reason for r in responses] == ["tool_use", "end_turn"]
    assert [json.loads(c.arguments)["city"] for c in responses[0].tool_calls] == ["Paris", "Rome"]
    assert "Rome" in responses[-1].text
    assert [h["x-sim-plan"] for h in transport.headers] == ["known", "known"]
    # The reasoning item went back byte for byte, right before the parallel calls it planned.
    sent = json.loads(transport.bodies[1])
    assert [i.get("type", i.get("role")) for i in sent["input"]] == [
        "user",
        "reasoning",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    for item in responses[0].reasoning:
        assert item.unseal(provider="openai", api="responses") in transport.bodies[1]
    assert sent["store"] is False and "previous_response_id" not in sent


async def test_loop_without_continuation_loses_its_plan_and_pays_for_it() -> None:
    kept, _ = await loop_by_hand(keep_continuation=True)
    lost, transport = await loop_by_hand(keep_continuation=False)
    assert [r.stop_reason for r in lost] == ["tool_use", "tool_use", "end_turn"]
    assert transport.headers[1]["x-sim-plan"] == "lost"
    # The same batch of calls again (new call ids), then the same answer.
    args = [[c.arguments for c in r.tool_calls] for r in lost[:2]]
    assert args[0] == args[1]
    assert {c.call_id for c in lost[0].tool_calls}.isdisjoint(c.call_id for c in lost[1].tool_calls)
    assert lost[-1].text == kept[-1].text

    def reasoning(rs: list[ModelResponse]) -> int:
        return sum(r.usage.reasoning_tokens or 0 for r in rs)

    assert reasoning(lost) > reasoning(kept)
    # The re-planning step reasons more than the step that had its plan.
    assert (lost[1].usage.reasoning_tokens or 0) > (kept[1].usage.reasoning_tokens or 0)


async def test_run_drives_the_adapter_and_shows_the_continuity_effect() -> None:
    adapter, transport = sim_adapter()
    kept = await al.arun("openai:sim-reasoner", TASK, tools=[get_weather], adapter=adapter)
    assert kept.status == "completed" and "Rome" in (kept.output or "")
    assert kept.steps == 2 and [h["x-sim-plan"] for h in transport.headers] == ["known", "known"]
    assert kept.usage.reasoning_items_dropped == 0

    adapter2, transport2 = sim_adapter()
    dropped = await al.arun(
        "openai:sim-reasoner", TASK, tools=[get_weather], adapter=adapter2, continuation_policy="drop"
    )
    assert dropped.status == "completed" and dropped.output == kept.output
    assert dropped.steps == 3 and transport2.headers[1]["x-sim-plan"] == "lost"
    assert (dropped.usage.tokens.reasoning_tokens or 0) > (kept.usage.tokens.reasoning_tokens or 0)
    # Usage per call is what the endpoint reported.
    assert all(c.usage.reasoning_source == "reported" for c in kept.calls)


async def test_model_string_routes_a_sim_model_to_the_simulator_without_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = await al.arun("openai:sim-reasoner", TASK, tools=[get_weather])
    assert result.status == "completed" and "Rome" in (result.output or "")
    adapter = al.create_adapter("openai:sim-reasoner")
    assert isinstance(adapter, OpenAIResponsesAdapter) and "sim" in (adapter.base_url or "")
    await adapter.aclose()


async def test_tampered_encrypted_content_is_rejected_with_a_typed_error() -> None:
    adapter, _ = sim_adapter()
    first = ModelRequest(model="sim-reasoner", items=(UserItem(text=TASK),), tools=(WEATHER,))
    r1 = completed(await collect(adapter, first))
    (item,) = r1.reasoning
    payload: dict[str, Any] = json.loads(item.unseal(provider="openai", api="responses"))
    enc = payload["encrypted_content"]
    payload["encrypted_content"] = enc[:-8] + ("A" if enc[-8] != "A" else "B") + enc[-7:]
    forged = ProviderReasoningItem(
        json.dumps(payload).encode(),
        provider="openai",
        api="responses",
        model="sim-reasoner",
        block_type="reasoning",
        turn_id=item.turn_id,
        index=item.index,
        base_url=item.base_url,
    )
    results = [
        ToolResultItem(call_id=c.call_id, output=get_weather(**json.loads(c.arguments)))
        for c in r1.tool_calls
    ]
    second = first.model_copy(
        update={"items": (*first.items, *r1.items, *results), "continuation": (forged,)}
    )
    with pytest.raises(ProviderAPIError) as info:
        await collect(adapter, second)
    assert info.value.status == 400 and info.value.code == "invalid_encrypted_content"


async def test_debug_logs_hold_no_reasoning_and_no_key(caplog: pytest.LogCaptureFixture) -> None:
    """Raw reasoning is never written anywhere durable; logs are the first place it would leak."""
    with caplog.at_level(logging.DEBUG):
        responses, _ = await loop_by_hand(keep_continuation=True)
    summary = "".join(
        part["text"]
        for r in responses
        for item in r.reasoning
        for part in json.loads(item.unseal(provider="openai", api="responses"))["summary"]
    )
    encrypted = [
        json.loads(i.unseal(provider="openai", api="responses"))["encrypted_content"]
        for r in responses
        for i in r.reasoning
    ]
    assert summary and encrypted and caplog.records
    logged = caplog.text
    assert summary[:40] not in logged and not any(e[:32] in logged for e in encrypted)
    assert "sim-key" not in logged
