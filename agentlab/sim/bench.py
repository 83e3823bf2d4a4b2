"""Throughput of the in-process simulator, so the closing note's number can be re-measured.

Why three numbers: the simulator alone (request handling + SSE framing, what the simulator costs),
through ``httpx2`` (what a raw client sees), and through the official SDKs' streaming iterators
(dominated by SDK event validation, ~75 µs/event for openai when measured).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2

from agentlab.sim.app import handle
from agentlab.sim.core import Simulator
from agentlab.sim.transport import SimTransport

TASK = "Is it warmer in Paris or Rome?"
_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
OPENAI_BODY = {
    "model": "sim-reasoner",
    "input": TASK,
    "stream": True,
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "reasoning": {"effort": "high", "summary": "auto"},
    "tools": [{"type": "function", "name": "get_weather", "parameters": _SCHEMA}],
}
ANTHROPIC_BODY = {
    "model": "sim-thinker",
    "max_tokens": 8000,
    "stream": True,
    "thinking": {"type": "enabled", "budget_tokens": 4096},
    "messages": [{"role": "user", "content": TASK}],
    "tools": [{"name": "get_weather", "input_schema": _SCHEMA}],
}


#: What an SDK sends: a placeholder key for either API and Anthropic's version header.
_HEADERS = {"anthropic-version": "2023-06-01", "authorization": "Bearer sim-key", "x-api-key": "sim-key"}


def _rate(seconds: float, once: Callable[[], int]) -> float:
    events = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        events += once()
    return events / (time.perf_counter() - start)


def run_bench(seconds: float = 2.0) -> dict[str, float]:
    """Print and return events/second for each path and provider."""
    results: dict[str, float] = {}
    for provider, path, body in (
        ("openai", "/responses", OPENAI_BODY),
        ("anthropic", "/messages", ANTHROPIC_BODY),
    ):
        raw = json.dumps(body).encode()
        sim = Simulator()

        def core(sim: Simulator = sim, path: str = path, raw: bytes = raw) -> int:
            _, _, chunks = handle(sim, "POST", "/v1" + path, _HEADERS, raw)
            return sum(1 for c in chunks if isinstance(c, bytes))

        results[f"{provider} simulator"] = _rate(seconds, core)
        client = httpx2.Client(transport=SimTransport(), base_url="http://sim.agentlab.local/v1")

        def via_httpx(
            client: httpx2.Client = client, path: str = path, body: dict[str, object] = body
        ) -> int:
            with client.stream("POST", path, json=body, headers=_HEADERS) as r:
                return sum(1 for line in r.iter_lines() if line.startswith("event:"))

        results[f"{provider} httpx2"] = _rate(seconds, via_httpx)
    results.update(asyncio.run(_sdk_rates(seconds)))
    for name, rate in results.items():
        print(f"{name:24s} {rate:12,.0f} events/s")
    return results


async def _sdk_rates(seconds: float) -> dict[str, float]:
    from agentlab.sim.clients import anthropic_client, openai_client

    oai, ant = openai_client(), anthropic_client()

    async def oai_stream() -> Any:
        return await oai.responses.create(**OPENAI_BODY)  # type: ignore[call-overload]

    async def ant_stream() -> Any:
        return await ant.messages.create(**ANTHROPIC_BODY)  # type: ignore[call-overload]

    makers: tuple[tuple[str, Callable[[], Awaitable[Any]]], ...] = (
        ("openai SDK", oai_stream),
        ("anthropic SDK", ant_stream),
    )
    out: dict[str, float] = {}
    for name, make in makers:
        async for _ in await make():
            pass  # warm-up: the SDKs build their pydantic schemas lazily on first use
        events = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            async for _ in await make():
                events += 1
        out[name] = events / (time.perf_counter() - start)
    return out
