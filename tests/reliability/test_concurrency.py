"""Fifty runs at once across both providers, faults sprinkled in, through ``agentlab.acompare``.

Every run ends in a defined state (the one its fault implies), nothing is left live (continuations,
response streams), the shared JSONL event log holds every run's records as whole lines with each
run's records in order, and the usage frame adds up: per run, the sum of its per-call rows equals
the run's totals (tokens and cost), and the frame holds exactly one row per completed model call.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import agentlab as al
from agentlab.neutral.events import ErrorEvent, ModelCallCompletedEvent, RunCompletedEvent, RunStartedEvent
from agentlab.sim import SimTransport
from tests.reliability.support import (
    MODELS,
    PROVIDERS,
    TASK,
    RecordingTransport,
    check_history_consistent,
    close_adapter,
    get_weather,
    make_adapter,
)

N = 50
ANSWER = "Rome is warmer (24 vs Paris 18)."
TOKEN_COLUMNS = (
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
)

# kind -> (fault plan, expected status)
MIX: list[tuple[str, Any, str]] = [
    ("clean", None, "completed"),
    ("429 once", lambda n, _p: "429" if n == 0 else None, "completed"),
    ("reset once", lambda n, _p: "reset" if n == 0 else None, "completed"),
    ("slow", lambda _n, _p: "slow:1", "completed"),
    ("500 from step 2", lambda n, _p: "500" if n >= 1 else None, "failed"),
    ("malformed from step 2", lambda n, _p: "malformed" if n >= 1 else None, "failed"),
    ("unknown events", lambda _n, _p: "unknown_event", "completed"),
]


async def test_fifty_runs_at_once_end_defined_and_usage_adds_up(tmp_path: Path) -> None:
    shared = SimTransport(retry_after_ms=1)  # one simulator behind every run (shared prompt cache too)
    models: list[str] = []
    adapters: list[Any] = []
    transports: list[RecordingTransport] = []
    expected: list[str] = []
    for i in range(N):
        provider = PROVIDERS[i % 2]
        _kind, plan, status = MIX[(i // 2) % len(MIX)]
        rec = RecordingTransport(shared, plan=plan)
        transports.append(rec)
        adapters.append(make_adapter(provider, rec, max_retries=1))
        models.append(f"{provider}:{MODELS[provider]}")
        expected.append(status)
    assert {"completed", "failed"} <= set(expected)
    log_path = tmp_path / "events.jsonl"
    try:
        cmp = await al.acompare(
            TASK,
            models,
            tools=[get_weather],
            adapters=adapters,
            live=False,
            event_log=log_path,
            retries=1,
            retry_delay=0.01,
        )
    finally:
        for a in adapters:
            await close_adapter(a)

    assert len(cmp.entries) == N
    results = []
    for i, (e, want, rec) in enumerate(zip(cmp.entries, expected, transports, strict=True)):
        assert e.result is not None, f"run {i} ({e.label}) has no result: {e.error}"
        r = e.result
        results.append(r)
        assert r.status == want, (i, e.label, r.status, r.error)
        if want == "completed":
            assert r.output == ANSWER and r.steps == 2
        else:
            assert r.error and r.error_type in ("ProviderServerError", "StreamInterruptedError")
            assert r.steps == 1  # step 1 completed, step 2 failed: nothing of it kept
        check_history_consistent(r.history)
        assert not rec.unclosed, f"run {i}: a response stream was left open"
        assert all(s != 400 for s in rec.statuses), f"run {i}: the strict simulator refused a request"
    ids = {r.run_id for r in results}
    assert not [c for c in al.live_continuations() if c.run_id in ids], "every continuation was released"

    # --- the usage frame adds up, per run and overall
    frame = cmp.usage
    assert len(frame) == sum(r.steps for r in results)
    assert frame["run_id"].nunique() == N
    for r in results:
        rows = frame[frame["run_id"] == r.run_id]
        assert len(rows) == r.steps == r.usage.calls
        for col in TOKEN_COLUMNS:
            total = getattr(r.usage.tokens, col)
            got = rows[col].sum(min_count=1)
            if total is None:
                assert rows[col].isna().all()
            else:
                assert int(got) == total, (r.run_id, col, got, total)
        assert math.isclose(
            float(rows["total_cost_usd"].sum()), r.usage.cost.total, rel_tol=1e-9, abs_tol=1e-12
        )
        assert int(rows["output_tokens"].sum()) >= int(rows["reasoning_tokens"].sum(min_count=1) or 0)
    for col in ("input_tokens", "output_tokens", "reasoning_tokens"):
        assert int(frame[col].sum()) == sum(getattr(r.usage.tokens, col) or 0 for r in results)

    # --- one shared log file, 50 writers: whole lines, each run's records complete and in order
    records = al.EventLog.read(log_path)
    assert len(records) == sum(len(r.events) for r in results)
    for r in results:
        mine = [x for x in records if x.run_id == r.run_id]
        assert [type(x) for x in mine] == [type(x) for x in r.events]
        assert isinstance(mine[0], RunStartedEvent) and isinstance(mine[-1], RunCompletedEvent)
        assert mine[-1].status == r.status
        assert sum(isinstance(x, ModelCallCompletedEvent) for x in mine) == r.steps
        if r.status == "failed":
            assert isinstance(mine[-2], ErrorEvent) and mine[-2].provider == r.provider


async def test_concurrent_runs_with_cancellations_end_defined(tmp_path: Path) -> None:
    """Twenty runs at once; every third is cancelled at a random point of its loop.

    Cancellation lands mid-stream at step 1 or 2. Each run ends ``completed`` or ``cancelled``; a cancelled
    run's usage is exactly the calls it completed; nothing stays live or open.
    """
    import asyncio
    import random

    from agentlab.neutral.events import ReasoningDeltaEvent

    rnd = random.Random(8)
    shared = SimTransport(retry_after_ms=1)
    log = al.EventLog(tmp_path / "events.jsonl")
    runs: list[al.Run] = []
    transports: list[RecordingTransport] = []
    adapters: list[Any] = []
    cancel_at: dict[int, tuple[int, int]] = {}
    tasks: list[asyncio.Task[Any]] = []

    def hook(i: int) -> Any:
        def on_event(ev: Any) -> None:
            want = cancel_at.get(i)
            if want is not None and isinstance(ev, ReasoningDeltaEvent) and ev.step == want[0]:
                if want[1] <= 0:
                    tasks[i].cancel()
                    cancel_at.pop(i)
                else:
                    cancel_at[i] = (want[0], want[1] - 1)

        return on_event

    for i in range(20):
        provider = PROVIDERS[i % 2]
        rec = RecordingTransport(shared, plan=lambda _n, _p: "slow:1")
        transports.append(rec)
        adapters.append(make_adapter(provider, rec))
        if i % 3 == 0:
            cancel_at[i] = (rnd.choice((1, 2)), rnd.randrange(0, 5))
        runs.append(
            al.Run(
                f"{provider}:{MODELS[provider]}",
                TASK,
                tools=[get_weather],
                adapter=adapters[-1],
                event_log=log,
                on_event=hook(i),
            )
        )
    planned = set(cancel_at)
    tasks.extend(asyncio.create_task(r.arun()) for r in runs)
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    for a in adapters:
        await close_adapter(a)

    for i, (r, out, rec) in enumerate(zip(runs, outcomes, transports, strict=True)):
        res = r.result
        assert res is not None
        if i in planned:
            assert isinstance(out, asyncio.CancelledError) and res.status == "cancelled", (i, out)
        else:
            assert res.status == "completed" and res.output == ANSWER
        assert res.usage.calls == res.steps == len(res.calls) == r.checkpoint.step
        frame = res.usage_frame()
        assert len(frame) == res.steps
        if res.steps:
            assert int(frame["output_tokens"].sum()) == res.usage.output_tokens
            assert int(frame["input_tokens"].sum()) == res.usage.input_tokens
        check_history_consistent(res.history)
        assert not rec.unclosed and all(s == 200 for s in rec.statuses)
        assert r.checkpoint.provider_continuation is None
    cut_steps = {res.steps for i in planned if (res := runs[i].result) is not None}
    assert cut_steps == {0, 1}, "cancelled both in the first call and after a completed step"
    ids = {r.run_id for r in runs}
    assert not [c for c in al.live_continuations() if c.run_id in ids]
    recs = al.EventLog.read(tmp_path / "events.jsonl")
    for r in runs:
        mine = [x for x in recs if x.run_id == r.run_id]
        assert isinstance(mine[-1], RunCompletedEvent) and r.result is not None
        assert mine[-1].status == r.result.status
