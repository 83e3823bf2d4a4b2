"""A loop paused in one cell and resumed in a later one continues from portable items only.

The extension releases the loop's continuation at cell end (``release_all`` stands in for it here).
What the resumed loop must do: send no opaque item after the release, and finish (no provider 400,
no ContinuityError), also when the pause came right after ``ModelCallStartedEvent`` (the request is
built after that point, so it cannot carry the released items).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import agentlab
from agentlab.loop.continuation import release_all
from agentlab.neutral.events import AdapterEvent


@agentlab.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "Paris: 24 C", "Rome": "Rome: 21 C"}.get(city, f"{city}: 15 C")


class Recording:
    """Wraps a real (simulated) adapter; records how many opaque items each request carried."""

    def __init__(self, inner: agentlab.Adapter) -> None:
        self.inner = inner
        self.provider, self.api, self.model, self.base_url = (
            inner.provider,
            inner.api,
            inner.model,
            inner.base_url,
        )
        self.max_retries = 0  # the run's own retries apply, as for any wrapper that does not forward it
        self.sent: list[tuple[bool, int]] = []  # (after release?, opaque items)
        self.released = False

    def stream(self, request: agentlab.ModelRequest) -> AsyncIterator[AdapterEvent]:
        self.sent.append((self.released, len(request.continuation)))
        return self.inner.stream(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.parametrize("pause_at", [("tool_result", 1), ("model_call_started", 2)])
async def test_paused_loop_resumes_from_portable_items(pause_at: tuple[str, int]) -> None:
    adapter = Recording(agentlab.create_adapter("anthropic:sim-thinker"))
    run = agentlab.Run(
        "anthropic:sim-thinker", "Is it warmer in Paris or Rome?", tools=[get_weather], adapter=adapter
    )
    agen = run.events()
    async for ev in agen:
        if (ev.kind, ev.step) == pause_at:
            break
    assert len(run.checkpoint.provider_continuation or ()) >= 1  # the paused loop held opaque items
    release_all()  # the cell ends
    adapter.released = True
    async for _ in agen:
        pass
    assert run.result is not None and run.result.status == "completed"
    assert [n for after, n in adapter.sent if after] and all(n == 0 for after, n in adapter.sent if after)
