"""Per-provider concurrency is really bounded, and 429s slow that provider down (not fail its runs).

One provider's outage leaves the other running. Measured at the adapter boundary by the test itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlab.sweeps import load_results, sim_tasks, sim_tools, sweep

from .conftest import Probe, sim_factory

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker"]


def test_concurrency_bound_per_provider_is_respected(tmp_path: Path, probe: Probe) -> None:
    rep = sweep(
        sim_tasks()[:8],
        MODELS,
        results=tmp_path / "r.jsonl",
        tools=sim_tools(),
        repeats=2,
        concurrency={"openai": 2, "anthropic": 3},
        progress=None,
        adapter_factory=sim_factory(probe, latency_ms=15),
    )
    assert rep.status == "completed" and rep.ran == 32
    # Bounded, and the bound was actually reached (the test could fail both ways).
    assert probe.max_in_flight == {"openai": 2, "anthropic": 3}
    assert rep.limiters["openai"].max_in_flight == 2 and rep.limiters["anthropic"].max_in_flight == 3


def test_429s_slow_the_provider_down_instead_of_failing_runs(tmp_path: Path, probe: Probe) -> None:
    retry_after = 0.15
    rep = sweep(
        sim_tasks()[:6],
        MODELS,
        results=tmp_path / "r.jsonl",
        tools=sim_tools(),
        concurrency=4,
        retry_delay=0.0,
        progress=None,
        adapter_factory=sim_factory(probe, fault={"openai": "429x2"}, retry_after_ms=int(retry_after * 1000)),
    )
    df = load_results(tmp_path / "r.jsonl")
    assert rep.failed == 0 and (df["status"] == "completed").all() and df["success"].all()
    oa, an = df[df["provider"] == "openai"], df[df["provider"] == "anthropic"]
    assert (oa["rate_limited"] >= 2).all() and (an["rate_limited"] == 0).all()
    lim = rep.limiters["openai"]
    assert lim.rate_limited == len(probe.rate_limited_at) >= 12
    assert rep.limiters["anthropic"].rate_limited == 0
    # The slow-down, measured: after each 429, no new OpenAI call started before retry-after passed
    # (for every run of that provider, not just the one that got the 429).
    for prov, t429, ra in probe.rate_limited_at:
        assert ra == pytest.approx(retry_after)
        later = [t for p, t in probe.starts if p == prov and t > t429]
        assert all(t >= t429 + retry_after - 0.005 for t in later), (t429, min(later, default=None))
    # Anthropic never waited for OpenAI's cool-down: its calls started while OpenAI was cooling down.
    first_429 = min(t for _, t, _ in probe.rate_limited_at)
    assert any(p == "anthropic" and first_429 < t < first_429 + retry_after for p, t in probe.starts)


def test_limiter_halves_on_429_and_recovers(tmp_path: Path) -> None:
    import asyncio

    from agentlab.sweeps import AdaptiveLimiter

    async def scenario() -> list[int]:
        lim = AdaptiveLimiter("openai", 8)
        seen = [lim.limit]
        lim.on_rate_limited(0.0)
        seen.append(lim.limit)
        lim.on_rate_limited(10.0)  # a new window (the previous cool-down had passed): halves again
        seen.append(lim.limit)
        lim.on_rate_limited(0.0)  # inside the 10 s window: counted, not halved again
        seen.append(lim.limit)
        lim._cool_until = 0.0
        for _ in range(2 + 3):
            await lim.on_success()
        seen.append(lim.limit)
        return seen

    assert asyncio.run(scenario()) == [8, 4, 2, 2, 4]


def test_one_provider_outage_is_isolated_and_resumable(tmp_path: Path, probe: Probe) -> None:
    out = tmp_path / "r.jsonl"
    tasks = sim_tasks()[:6]
    rep = sweep(
        tasks,
        MODELS,
        results=out,
        tools=sim_tools(),
        concurrency=1,
        retries=1,
        retry_delay=0.0,
        max_consecutive_failures=2,
        progress=None,
        adapter_factory=sim_factory(probe, fault={"anthropic": "500"}),
    )
    assert rep.status == "provider_down"
    assert "anthropic: 2 runs in a row failed" in (rep.message or "") and "ProviderServerError" in (
        rep.message or ""
    )
    df = load_results(out)
    oa, an = df[df["provider"] == "openai"], df[df["provider"] == "anthropic"]
    assert len(oa) == 6 and (oa["status"] == "completed").all() and oa["success"].all()
    assert len(an) == 2 and (an["status"] == "failed").all() and an["success"].isna().all()
    assert set(an["error_type"]) == {"ProviderServerError"}
    assert rep.not_started == 4
    # The failed runs are not scored as model failures.
    s = rep.summary()
    assert s.loc[("anthropic:sim-thinker", "default"), "errors"] == 2
    assert s.loc[("anthropic:sim-thinker", "default"), "scored"] == 0

    # Later, the provider is back: resume runs what was not started; retry_failed redoes the failures.
    rep2 = sweep(tasks, MODELS, results=out, tools=sim_tools(), retry_failed=True, progress=None)
    assert rep2.status == "completed" and rep2.ran == 6 and rep2.from_file == 6
    df2 = load_results(out)
    assert len(df2) == 12 and (df2["status"] == "completed").all()
    assert len(load_results(out, superseded=True)) == 14  # the two failed attempts stay on record
