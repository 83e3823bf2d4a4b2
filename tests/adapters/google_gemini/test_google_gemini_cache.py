"""Explicit Gemini caching (``CacheHints(mode="explicit")``) through ``agentlab.Run`` on the simulator.

The simulator serves ``cachedContents`` as the API does (``agentlab.sim.gemini.cache``), refuses
``cachedContent`` beside system instruction/tools/tool config, and answers unknown caches with 403;
these tests read what the adapter really sent (a recording transport) and what the simulator holds.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest

import agentlab as al
from agentlab.adapters.google_gemini import GoogleGeminiAdapter
from agentlab.adapters.google_gemini._cache import minimum_tokens
from agentlab.errors import ProviderAPIError
from agentlab.neutral.items import SystemItem, UserItem
from agentlab.neutral.request import CacheHints, ModelRequest
from agentlab.sim import gemini_client
from agentlab.sim.core import Simulator
from agentlab.sim.gemini import cache as gemini_cache
from agentlab.sim.transport import SimTransport
from tests.adapters.contract import WEATHER_OPEN as WEATHER

BIG = "You answer weather questions. Reference notes: " + "alpha beta gamma delta " * 1100
EXPLICIT = CacheHints(mode="explicit", ttl="5m")
TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny"}


class Recording(SimTransport):
    """The simulator, keeping every request (method, path, JSON body); may fail one generate call."""

    def __init__(self, simulator: Simulator, fail_generate_at: int | None = None) -> None:
        super().__init__(simulator=simulator)
        self.seen: list[tuple[str, str, Any]] = []
        self.fail_generate_at = fail_generate_at

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        raw = await request.aread()
        body = json.loads(raw) if raw else None
        self.seen.append((request.method, request.url.path, body))
        generating = request.method == "POST" and ":" in request.url.path
        if generating and len(self.generates()) == self.fail_generate_at:
            error = {"error": {"code": 400, "message": "Request contains an invalid argument.",
                               "status": "INVALID_ARGUMENT"}}  # fmt: skip
            return httpx2.Response(400, json=error)
        return await super().handle_async_request(request)

    def generates(self) -> list[Any]:
        return [b for m, p, b in self.seen if m == "POST" and "Content" in p and ":" in p]

    def creates(self) -> list[Any]:
        return [b for m, p, b in self.seen if m == "POST" and p.endswith("/cachedContents")]

    def deletes(self) -> list[str]:
        return [p for m, p, _ in self.seen if m == "DELETE"]


def setup(**kw: Any) -> tuple[GoogleGeminiAdapter, Recording, Simulator]:
    simulator = Simulator()
    transport = Recording(simulator, **kw)
    adapter = GoogleGeminiAdapter("sim-gemini", client=gemini_client(transport=transport), max_retries=0)
    return adapter, transport, simulator


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return TEMPS[city]


def run(adapter: GoogleGeminiAdapter, system: str = BIG, **kw: Any) -> al.RunResult:
    r = al.Run(
        "google:sim-gemini", "Is it warmer in Paris or Rome?", system=system, tools=[get_weather],
        adapter=adapter, cache=EXPLICIT, **kw,
    )  # fmt: skip
    return al.run_sync(r.arun())


def test_explicit_run_sends_cached_content_without_system_or_tools_and_reports_cache_reads() -> None:
    adapter, wire, simulator = setup()
    result = run(adapter)
    result.raise_for_status()
    (create,) = wire.creates()
    assert create["systemInstruction"]["parts"][0]["text"] == BIG
    assert create["tools"][0]["functionDeclarations"][0]["name"] == "get_weather"
    assert create["ttl"] == "300s" and create["model"] == "models/sim-gemini"
    generates = wire.generates()
    assert len(generates) == len(result.calls) >= 2  # one cache for every step of the loop
    names = {g["cachedContent"] for g in generates}
    assert len(names) == 1 and next(iter(names)).startswith("cachedContents/")
    for g in generates:
        assert not {"systemInstruction", "tools", "toolConfig"} & set(g)
    for call in result.calls:
        assert call.usage.cache_read_tokens and call.usage.cache_read_tokens > 4096
    first, *rest = result.calls
    held = create_tokens(result)
    assert first.usage.cache_write_tokens == held  # the creation, billed as input, once
    assert first.cost.cache_write == pytest.approx(held * 2.0 / 1e6)  # sim-gemini: writes cost input
    assert first.cost.cache_read == pytest.approx((first.usage.cache_read_tokens or 0) * 0.2 / 1e6)
    assert all(c.usage.cache_write_tokens == 0 for c in rest)
    assert wire.deletes() == [f"/v1beta/{next(iter(names))}"]
    assert gemini_cache.state_of(simulator).names() == []
    codes = [e.code for e in result.events if e.kind == "diagnostic"]
    assert "cache_created" in codes


def create_tokens(result: al.RunResult) -> int:
    (ev,) = [e for e in result.events if e.kind == "diagnostic" and e.code == "cache_created"]
    return int(ev.data["tokens"])


def test_implicit_mode_makes_no_cache() -> None:
    adapter, wire, _ = setup()
    r = al.Run(
        "google:sim-gemini",
        "Is it warmer in Paris or Rome?",
        system=BIG,
        tools=[get_weather],
        adapter=adapter,
    )
    al.run_sync(r.arun()).raise_for_status()
    assert wire.creates() == [] and all("cachedContent" not in g for g in wire.generates())
    assert all("systemInstruction" in g for g in wire.generates())


def test_a_too_small_prefix_makes_no_cache_and_says_so() -> None:
    adapter, wire, _ = setup()
    result = run(adapter, system="Be brief.")
    result.raise_for_status()
    assert wire.creates() == []  # not even asked: it cannot reach the minimum
    assert all("cachedContent" not in g and "systemInstruction" in g for g in wire.generates())
    notes = [e for e in result.events if e.kind == "diagnostic" and e.code == "cache_not_created"]
    assert notes and notes[0].data["reason"] == "below_minimum"
    assert notes[0].data["minimum"] == minimum_tokens("sim-gemini") == 4096
    assert notes[0].data["at_most"] is True


def test_the_api_refusing_a_small_cache_is_a_diagnostic_not_a_failure() -> None:
    adapter, wire, _ = setup()
    # Over 4096 bytes but under 4096 simulated tokens: sent, and the simulator's 400 decides.
    result = run(adapter, system="x" * 5000)
    result.raise_for_status()
    assert len(wire.creates()) == 1
    notes = [e for e in result.events if e.kind == "diagnostic" and e.code == "cache_not_created"]
    assert notes[0].data["at_most"] is False and notes[0].data["minimum"] == 4096
    assert all("cachedContent" not in g for g in wire.generates())


def test_the_cache_is_deleted_after_a_failed_run() -> None:
    adapter, wire, simulator = setup(fail_generate_at=2)
    r = al.Run(
        "google:sim-gemini", "Is it warmer in Paris or Rome?", system=BIG, tools=[get_weather],
        adapter=adapter, cache=EXPLICIT,
    )  # fmt: skip
    with pytest.raises(ProviderAPIError):
        al.run_sync(r.arun())
    assert r.result is not None and r.result.status == "failed"
    assert len(wire.creates()) == 1 and len(wire.deletes()) == 1
    assert gemini_cache.state_of(simulator).names() == []


def test_the_cache_is_deleted_after_a_cancelled_run() -> None:
    adapter, wire, simulator = setup()
    started = asyncio.Event()
    callers: list[asyncio.AbstractEventLoop] = []

    @al.tool
    async def slow_weather(city: str) -> str:
        """Current weather for a city."""
        callers[0].call_soon_threadsafe(started.set)  # async tools run on the tool loop
        await asyncio.sleep(30)
        return TEMPS[city]

    async def main() -> al.RunResult | None:
        callers.append(asyncio.get_running_loop())
        r = al.Run(
            "google:sim-gemini", "Is it warmer in Paris or Rome?", system=BIG, tools=[slow_weather],
            adapter=adapter, cache=EXPLICIT,
        )  # fmt: skip
        task = asyncio.create_task(r.arun())
        await asyncio.wait_for(started.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return r.result

    result = asyncio.run(main())
    assert result is not None and result.status == "cancelled"
    assert len(wire.creates()) == 1 and len(wire.deletes()) == 1
    assert gemini_cache.state_of(simulator).names() == []


def test_aclose_deletes_a_cache_made_outside_a_run() -> None:
    adapter, wire, simulator = setup()
    req = ModelRequest(
        model="sim-gemini", items=(SystemItem(text=BIG), UserItem(text="Is it warmer in Paris or Rome?")),
        tools=(WEATHER,), cache=EXPLICIT,
    )  # fmt: skip

    async def main() -> None:
        async for _ in adapter.stream(req):
            pass
        assert len(gemini_cache.state_of(simulator).names()) == 1
        await adapter.aclose()

    asyncio.run(main())
    assert len(wire.deletes()) == 1 and gemini_cache.state_of(simulator).names() == []


def test_no_signature_or_reasoning_ever_enters_a_cache_create_body() -> None:
    """A follow-up loop whose history holds a signed model turn: the cache stops before it."""
    adapter, wire, simulator = setup()
    # A first step without caching gives a signed model turn; the next request carries it back
    # (its continuation) and asks for an explicit cache.
    holder: list[Any] = []

    async def one_step() -> None:
        req = ModelRequest(
            model="sim-gemini", items=(SystemItem(text=BIG), UserItem(text="Is it warmer in Paris or Rome?")),
            tools=(WEATHER,),
        )  # fmt: skip
        async for ev in adapter.stream(req):
            if ev.kind == "response_completed":
                holder.append(ev.response)

    asyncio.run(one_step())
    (resp,) = holder
    assert resp.reasoning  # the model turn carries signatures
    canaries = [json.loads(r.unseal(provider="google", api="generate_content")) for r in resp.reasoning]
    step1_items = (
        SystemItem(text=BIG), UserItem(text="Is it warmer in Paris or Rome?"), *resp.items,
        *[al.ToolResultItem(call_id=c.call_id, name=c.name, output=TEMPS[json.loads(c.arguments)["city"]])
          for c in resp.tool_calls],
    )  # fmt: skip
    req2 = ModelRequest(
        model="sim-gemini", items=step1_items, continuation=resp.reasoning,
        tools=(WEATHER,), cache=EXPLICIT,
    )  # fmt: skip

    async def second() -> None:
        async for _ in adapter.stream(req2):
            pass
        await adapter.aclose()

    before = len(wire.creates())
    asyncio.run(second())
    create = wire.creates()[before]
    text = json.dumps(create)
    assert "thoughtSignature" not in text and '"thought"' not in text
    assert all(c not in text for c in canaries)
    assert len(create.get("contents") or []) == 1  # the user turn before the signed model turn
    sent = wire.generates()[-1]
    assert any("thoughtSignature" in p for c in sent["contents"] for p in c["parts"])  # signatures stay
    assert gemini_cache.state_of(simulator).names() == []


def test_a_cache_that_expired_during_a_tool_step_is_made_again_once() -> None:
    adapter, wire, simulator = setup()
    state = gemini_cache.state_of(simulator)
    real_clock = state.clock

    @al.tool
    def slow_weather(city: str) -> str:
        """Current weather for a city."""
        state.clock = lambda: real_clock() + 400  # past the 5-minute ttl
        return TEMPS[city]

    r = al.Run(
        "google:sim-gemini", "Is it warmer in Paris or Rome?", system=BIG, tools=[slow_weather],
        adapter=adapter, cache=EXPLICIT,
    )  # fmt: skip
    result = al.run_sync(r.arun())
    result.raise_for_status()
    assert len(wire.creates()) == 2
    assert [e.code for e in result.events if e.kind == "diagnostic"].count("cache_created") == 2
    assert len(wire.deletes()) == 1  # the expired one is gone already; the new one is deleted
    assert state.names() == []


def test_a_changed_prefix_replaces_the_cache() -> None:
    """A forced tool_choice goes back to auto after the first call: toolConfig, and so the cache, change."""
    adapter, wire, simulator = setup()
    result = run(adapter, tool_choice="required")
    result.raise_for_status()
    first, second = wire.creates()
    assert first["toolConfig"]["functionCallingConfig"]["mode"] == "ANY"
    assert second["toolConfig"]["functionCallingConfig"]["mode"] == "AUTO"
    names = [g["cachedContent"] for g in wire.generates()]
    assert names[0] != names[1] and len(set(names[1:])) == 1
    assert len(wire.deletes()) == 2  # the replaced one at once, the last one at the run's end
    assert gemini_cache.state_of(simulator).names() == []


def test_an_unknown_cache_mode_is_refused_naming_the_field() -> None:
    with pytest.raises(al.InvalidSettingsError, match="mode"):
        al.Run("google:sim-gemini", "hi", cache={"mode": "always"})  # type: ignore[arg-type]
