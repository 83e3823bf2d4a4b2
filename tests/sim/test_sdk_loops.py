"""The official SDKs drive full tool loops against the in-process simulator, and answers are right."""

from __future__ import annotations

from typing import Any

from agentlab import sim
from tests.sim.helpers import (
    ANTHROPIC_WEATHER,
    OPENAI_WEATHER,
    anthropic_tool_results,
    openai_outputs,
    openai_tool_results,
    weather,
)

IMPL: dict[str, Any] = {"get_weather": weather}


async def test_openai_tool_loop_nonstream_answers_from_tool_results() -> None:
    client = sim.openai_client()
    # The history is wire JSON sent back verbatim (model_dump dicts), which the SDK's TypedDicts do not
    # describe: the calls that take it ignore call-overload / arg-type.
    items: list[dict[str, Any]] = [{"role": "user", "content": "Is it warmer in Paris or Rome?"}]
    calls_per_turn = []
    for _ in range(4):
        r = await client.responses.create(  # type: ignore[call-overload]
            model="sim-reasoner",
            input=items,
            tools=[OPENAI_WEATHER],
            store=False,
            include=["reasoning.encrypted_content"],
            reasoning={"effort": "low", "summary": "auto"},
        )
        calls = [o for o in r.output if o.type == "function_call"]
        calls_per_turn.append(len(calls))
        items += openai_outputs(r.output) + openai_tool_results(r.output, IMPL)
        if not calls:
            break
    assert calls_per_turn == [2, 0]  # both cities in parallel, then the answer
    assert r.output_text == "Rome is warmer (24 vs Paris 18)."
    assert r.usage is not None and r.usage.output_tokens_details.reasoning_tokens > 0
    assert r.usage.output_tokens > r.usage.output_tokens_details.reasoning_tokens


async def test_openai_streams_and_stream_helper() -> None:
    client = sim.openai_client()
    stream = await client.responses.create(  # type: ignore[call-overload]  # wire-JSON tool dict
        model="sim-reasoner",
        input="Is it warmer in Paris or Rome?",
        tools=[OPENAI_WEATHER],
        stream=True,
        store=False,
        include=["reasoning.encrypted_content"],
        reasoning={"summary": "auto"},
    )
    types = [ev.type async for ev in stream]
    assert types[0] == "response.created" and types[-1] == "response.completed"
    assert (
        "response.reasoning_summary_text.delta" in types and "response.function_call_arguments.delta" in types
    )
    async with client.responses.stream(model="sim-reasoner", input="What is 12 * (3 + 4)?") as st:
        async for _ in st:
            pass
        final = await st.get_final_response()
    assert final.output_text == "12 * (3 + 4) = 84"


def test_openai_sync_client() -> None:
    client = sim.openai_sync_client()
    r = client.responses.create(model="sim-reasoner-mini", input="What is 2 + 2 * 10?")
    assert r.output_text == "2 + 2 * 10 = 22"


async def test_anthropic_tool_loop_with_thinking_nonstream_and_stream() -> None:
    client = sim.anthropic_client()
    # wire JSON history, as in the OpenAI loop above
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "Is it warmer in Paris or Rome?"}]
    kinds = []
    for _ in range(4):
        r = await client.messages.create(  # type: ignore[call-overload]
            model="sim-thinker",
            max_tokens=4000,
            thinking={"type": "enabled", "budget_tokens": 2048},
            messages=msgs,
            tools=[ANTHROPIC_WEATHER],
        )
        kinds.append([b.type for b in r.content])
        msgs.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in r.content]})
        results = anthropic_tool_results(r.content, IMPL)
        if not results:
            break
        msgs.append({"role": "user", "content": results})
    assert kinds == [["thinking", "tool_use", "tool_use"], ["thinking", "text"]]
    assert r.stop_reason == "end_turn"
    assert r.content[-1].type == "text" and r.content[-1].text == "Rome is warmer (24 vs Paris 18)."
    assert r.usage.output_tokens_details is not None and r.usage.output_tokens_details.thinking_tokens > 0

    async with client.messages.stream(
        model="sim-thinker",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2048},
        messages=msgs[:1],  # type: ignore[arg-type]
        tools=[ANTHROPIC_WEATHER],  # type: ignore[list-item]
    ) as st:
        async for _ in st:
            pass
        final = await st.get_final_message()
    assert [b.type for b in final.content] == kinds[0]
    raw = await client.messages.create(  # type: ignore[call-overload]
        model="sim-thinker",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2048},
        messages=msgs[:1],
        tools=[ANTHROPIC_WEATHER],
        stream=True,
    )
    types = [ev.type async for ev in raw]
    assert types[0] == "message_start" and types[-1] == "message_stop"


def test_anthropic_sync_client_legacy_has_no_thinking_tokens() -> None:
    client = sim.anthropic_sync_client()
    r = client.messages.create(
        model="sim-thinker-legacy",
        max_tokens=3000,
        thinking={"type": "enabled", "budget_tokens": 1024},
        messages=[{"role": "user", "content": "What is 7 * 6?"}],
    )
    assert r.content[-1].type == "text" and r.content[-1].text == "7 * 6 = 42"
    assert r.usage.output_tokens_details is None
