"""A tool loop resumed from portable items never answers 400: every provider x simulated model x way.

The three ways a loop goes on without its opaque reasoning (README "Continuity"): a run stopped by
``max_steps`` whose checkpoint went through JSON and is continued by ``Session(history=...)``; a
live loop whose continuation is released after step 1 (``al.release_all()``, what a cell's end
does); a ``Session`` that moves to the model mid-loop, from another provider. The strict simulator
answers each with the real API's 400 when the request breaks the provider's rule (Anthropic's
thinking block, Gemini's signatures, DeepSeek's reasoning_content, OpenRouter relaying its backing
model's), so a provider passes only if its adapter takes the documented recovery that the shared
decision (``agentlab.neutral.recovery``) names for it. Parametrized from the registry: a provider
registered with simulated models is covered without editing this file.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

import agentlab as al
from agentlab.adapters.registry import get_provider, provider_names
from agentlab.loop.checkpoint import Checkpoint
from agentlab.neutral.events import DiagnosticEvent, ToolCallEvent

TASK = "Is it warmer in Paris or Rome?"
TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny"}


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return TEMPS.get(city, "20 C, clear")


def _simulated() -> list[str]:
    models = []
    for name in provider_names():
        for model in get_provider(name).simulated_model_names() or ():
            models.append(f"{name}:{model}")
    return models


MODELS = _simulated()


def _elsewhere(model: str) -> str:
    """A simulated model of another provider, where the moved-from loop starts."""
    return next(m for m in MODELS if m.partition(":")[0] != model.partition(":")[0])


async def from_checkpoint(model: str) -> al.RunResult:
    first = al.Run(model, TASK, tools=[get_weather], max_steps=1)
    assert (await first.arun()).status == "step_limit"
    restored = Checkpoint.from_json(first.checkpoint.to_json())
    again = al.Run(model, None, tools=[get_weather], session=al.Session(history=restored.history), retries=0)
    return await again.arun()


async def after_release(model: str) -> al.RunResult:
    run = al.Run(model, TASK, tools=[get_weather], retries=0)
    events = run.events()
    try:
        async for ev in events:
            if isinstance(ev, ToolCallEvent):
                break  # step 1 made its calls: the loop is paused, its continuation held
        assert al.release_all() >= 1  # what the notebook extension does at a cell's end
        async for _ev in events:
            pass
    finally:
        await events.aclose()
    assert run.result is not None
    assert any(
        isinstance(e, DiagnosticEvent) and e.code == "continuation_released" for e in run.result.events
    )
    return run.result


async def moved_mid_loop(model: str) -> al.RunResult:
    session = al.Session()
    first = await session.arun(_elsewhere(model), TASK, tools=[get_weather], max_steps=1)
    assert first.status == "step_limit"
    return await session.arun(model, None, tools=[get_weather], retries=0)


WAYS: dict[str, Callable[[str], Awaitable[al.RunResult]]] = {
    "checkpoint_json": from_checkpoint,
    "release_all": after_release,
    "session_moves": moved_mid_loop,
}


def test_every_provider_with_a_simulator_is_covered() -> None:
    names = {m.partition(":")[0] for m in MODELS}
    assert {"openai", "anthropic", "google", "deepseek", "openrouter"} <= names
    assert {"openrouter:sim-router-gemini", "openrouter:sim-router-claude"} <= set(MODELS)


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("model", MODELS)
async def test_a_loop_resumed_from_portable_items_never_answers_400(model: str, way: str) -> None:
    try:
        result = await WAYS[way](model)
    except al.ProviderAPIError as err:  # pragma: no cover - the failure this test exists for
        pytest.fail(f"{model} resumed by {way}: {err}")
    assert result.status == "completed", (model, way, result.error)
    assert result.output
