"""An OpenRouter tool loop resumed from portable items: the backing model's rule, recovered as text.

Gemini behind OpenRouter validates the ``reasoning_details`` (thought signatures) of every tool-call
message of the current turn; Claude behind OpenRouter, Anthropic's thinking rule on the last
tool-call message. A loop whose continuation was released (a cell's end, a restored checkpoint) has
no details for the steps before the release, and the strict simulator answers that the way
OpenRouter does (400). The adapter takes the recovery the shared decision names
(``agentlab.neutral.recovery``): those exchanges as plain text, the steps made after the release
with their own details. A live loop that loses its details by a bug still gets Gemini's 400, on
one line (OpenRouter relays the upstream's pretty-printed JSON).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

import agentlab as al
from agentlab.adapters.openai_chat import OpenRouterAdapter
from agentlab.errors import ContinuityViolation, ProviderAPIError
from agentlab.loop.checkpoint import Checkpoint
from agentlab.loop.continuation import generation, release_since
from agentlab.neutral.events import DiagnosticEvent, ToolCallEvent
from agentlab.neutral.request import ModelRequest
from agentlab.sim import chat_client
from tests.adapters.contract import RecordingTransport

TASK = "Is it warmer in Paris or Rome?"
TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny"}


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return TEMPS.get(city, "20 C")


def sim_adapter(
    model: str, cls: type[OpenRouterAdapter] = OpenRouterAdapter
) -> tuple[Any, RecordingTransport]:
    far = RecordingTransport()
    return cls(model, client=chat_client("openrouter", transport=far), max_retries=0), far


async def paused_released_resumed(run: al.Run) -> list[Any]:
    """Pause at step 1's tool call, release (what a cell's end does), then let the loop go on."""
    gen = generation()
    events = run.events()
    seen: list[Any] = []
    try:
        async for ev in events:
            seen.append(ev)
            if isinstance(ev, ToolCallEvent):
                break
        assert release_since(gen) == 1
        async for ev in events:
            seen.append(ev)
    finally:
        await events.aclose()
    return seen


def assistant_messages(body: bytes) -> list[dict[str, Any]]:
    return [m for m in json.loads(body)["messages"] if m["role"] == "assistant"]


def diags(seen: list[Any], code: str) -> list[DiagnosticEvent]:
    return [e for e in seen if isinstance(e, DiagnosticEvent) and e.code == code]


async def test_gemini_route_released_loop_sends_the_lost_steps_as_text_and_keeps_later_details() -> None:
    adapter, far = sim_adapter("sim-router-gemini")
    run = al.Run("openrouter:sim-router-gemini", TASK, tools=[get_weather], adapter=adapter, retries=0)
    seen = await paused_released_resumed(run)
    assert run.result is not None and run.result.status == "completed", run.result
    # Step 2: step 1's exchange lost its details with the release: plain text, no tool call left.
    (step1,) = assistant_messages(far.bodies[1])
    assert "tool_calls" not in step1 and "reasoning_details" not in step1
    assert step1["content"].startswith("[called tool get_weather with ")
    # Step 3: step 1 still as text; step 2 was made after the release and keeps its own details.
    later = assistant_messages(far.bodies[2])
    assert "tool_calls" not in later[0]
    assert later[1]["tool_calls"] and later[1]["reasoning_details"][0]["type"] == "reasoning.encrypted"
    notes = diags(seen, "dangling_tool_use")
    assert [n.step for n in notes] == [2, 3] and all("released" in n.message for n in notes)


@pytest.mark.parametrize("model", ["sim-router-gemini", "sim-router-claude"])
async def test_a_restored_checkpoint_resumes_on_the_gemini_and_claude_routes(model: str) -> None:
    first = al.Run(f"openrouter:{model}", TASK, tools=[get_weather], max_steps=1)
    assert (await first.arun()).status == "step_limit"
    history = Checkpoint.from_json(first.checkpoint.to_json()).history
    adapter, far = sim_adapter(model)
    again = al.Run(
        f"openrouter:{model}", None, tools=[get_weather], session=al.Session(history=history), adapter=adapter
    )
    result = await again.arun()
    assert result.status == "completed", result
    assert "tool_calls" not in assistant_messages(far.bodies[0])[0]  # the restored step, as text


async def test_the_openai_route_needs_nothing_back_and_keeps_the_exchange_structured() -> None:
    adapter, far = sim_adapter("sim-router-openai")
    run = al.Run("openrouter:sim-router-openai", TASK, tools=[get_weather], adapter=adapter, retries=0)
    seen = await paused_released_resumed(run)
    assert run.result is not None and run.result.status == "completed"
    assert assistant_messages(far.bodies[1])[0]["tool_calls"]  # no rule: sent as it is
    assert not diags(seen, "dangling_tool_use")


async def test_a_live_loop_keeps_every_exchange_structured() -> None:
    adapter, far = sim_adapter("sim-router-claude")
    result = await al.Run("openrouter:sim-router-claude", TASK, tools=[get_weather], adapter=adapter).arun()
    assert result.status == "completed"
    for body in far.bodies[1:]:
        assert all(m.get("tool_calls") for m in assistant_messages(body))


class LosesDetails(OpenRouterAdapter):
    """A bug stand-in: a live loop's request reaches the adapter without its continuation."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        async for ev in super().stream(request.model_copy(update={"continuation": ()})):
            yield ev


class LosesDetailsUnseen(OpenRouterAdapter):
    """The same bug, with what the continuity guard expects lost too: the request reaches the API."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        lost = request.model_copy(update={"continuation": (), "continuity_expected": ()})
        async for ev in super().stream(lost):
            yield ev


async def test_a_live_gemini_route_loop_missing_its_details_by_bug_is_refused_before_sending() -> None:
    adapter, far = sim_adapter("sim-router-gemini", LosesDetails)
    run = al.Run("openrouter:sim-router-gemini", TASK, tools=[get_weather], adapter=adapter, retries=0)
    with pytest.raises(ContinuityViolation, match="openrouter reasoning_details item"):
        await run.arun()
    assert len(far.bodies) == 1  # the second request was never sent


async def test_a_live_gemini_route_loop_missing_its_details_by_bug_still_answers_400_on_one_line() -> None:
    adapter, far = sim_adapter("sim-router-gemini", LosesDetailsUnseen)
    run = al.Run("openrouter:sim-router-gemini", TASK, tools=[get_weather], adapter=adapter, retries=0)
    with pytest.raises(ProviderAPIError) as info:
        await run.arun()
    text = str(info.value)
    assert info.value.status == 400 and "Gemini models require OpenRouter reasoning details" in text
    # one line: the upstream's relayed JSON is reduced to its message (the one error-text scrubber)
    assert len(text.splitlines()) == 1 and '"error"' not in text and "(upstream Google)" in text
    assert assistant_messages(far.bodies[1])[0]["tool_calls"]  # never papered over with text
