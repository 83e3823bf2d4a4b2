"""Helpers for sweep tests: instrumented adapters on the in-process simulator."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentlab.adapters.base import ModelRef
from agentlab.errors import RateLimitError
from agentlab.neutral.events import AdapterEvent
from agentlab.neutral.request import ModelRequest


@dataclass
class Probe:
    """What the test itself observes at the adapter boundary (independent of the sweep's counters)."""

    in_flight: dict[str, int] = field(default_factory=dict)
    max_in_flight: dict[str, int] = field(default_factory=dict)
    starts: list[tuple[str, float]] = field(default_factory=list)
    rate_limited_at: list[tuple[str, float, float | None]] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)


class CountingAdapter:
    """Wraps a real adapter; counts concurrent model calls per provider and records 429s."""

    def __init__(self, inner: Any, probe: Probe) -> None:
        self.inner, self.probe = inner, probe
        self.provider, self.api, self.model, self.base_url = (
            inner.provider,
            inner.api,
            inner.model,
            inner.base_url,
        )
        self.max_retries = 0  # the run's own retries apply, as for any wrapper that does not forward it

    async def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        p, pr = self.provider, self.probe
        pr.starts.append((p, time.monotonic()))
        pr.calls[p] = pr.calls.get(p, 0) + 1
        pr.in_flight[p] = pr.in_flight.get(p, 0) + 1
        pr.max_in_flight[p] = max(pr.max_in_flight.get(p, 0), pr.in_flight[p])
        try:
            async for ev in self.inner.stream(request):
                yield ev
        except RateLimitError as e:
            pr.rate_limited_at.append((p, time.monotonic(), e.retry_after))
            raise
        finally:
            pr.in_flight[p] -= 1

    async def aclose(self) -> None:
        await self.inner.aclose()


def sim_factory(
    probe: Probe, *, fault: dict[str, str] | None = None, retry_after_ms: int = 20, latency_ms: int = 0
) -> Callable[[ModelRef], Any]:
    """Adapters on a fresh simulator per model, SDK retries off, optional ``x-sim-fault`` per provider."""

    def make(ref: ModelRef) -> Any:
        from agentlab import sim

        headers = {"x-sim-fault": fault[ref.provider]} if fault and ref.provider in fault else None
        opts = {"retry_after_ms": retry_after_ms, "latency_ms": latency_ms, "max_retries": 0}
        if ref.provider == "openai":
            from agentlab.adapters.openai_responses import OpenAIResponsesAdapter

            oclient = sim.openai_client(**opts)
            inner: Any = OpenAIResponsesAdapter(
                ref.model, client=oclient, max_retries=0, extra_headers=headers
            )
        else:
            from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter

            aclient = sim.anthropic_client(**opts)
            inner = AnthropicMessagesAdapter(ref.model, client=aclient, max_retries=0, extra_headers=headers)
        return CountingAdapter(inner, probe)

    return make


@pytest.fixture
def probe() -> Probe:
    return Probe()
