"""The timeline from recorded start times (``started_s``), the fallback for older results, throughput.

The recorded cases are built so that the reconstruction from durations (calls end to end, tools at
the call's end) gives a different answer: a retry's back-off before the call, tools that start at
different times and overlap, a gap between steps.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest

import agentlab as al
from agentlab.costs.throughput import Throughput, call_throughput, run_throughput
from agentlab.errors import ProviderConnectionError
from agentlab.evals.run_tables import timeline_frame
from agentlab.loop.result import CallRecord, RunResult
from agentlab.neutral.events import ModelCallCompletedEvent, ToolResultEvent
from agentlab.neutral.usage import CallUsage
from agentlab.testing import ScriptedAdapter, Step


@al.tool
async def fast(tag: str) -> str:
    """Returns soon."""
    await asyncio.sleep(0.02)
    return tag


@al.tool
async def slow(tag: str) -> str:
    """Returns later."""
    await asyncio.sleep(0.12)
    return tag


def _parallel_run() -> RunResult:
    steps = [
        Step(reasoning=["think"], tool_calls=[("slow", {"tag": "a"}), ("fast", {"tag": "b"})]),
        Step(text="done"),
    ]
    return al.run("openai:sim-reasoner", "go", tools=[slow, fast], adapter=ScriptedAdapter(steps))


def test_parallel_tools_overlap_as_recorded() -> None:
    r = _parallel_run()
    df = timeline_frame(r)
    assert set(df["timing"]) == {"recorded"}
    m1, s, f, m2 = (df.iloc[i] for i in range(4))
    assert (s["name"], f["name"]) == ("slow", "fast")
    # the rows are the recorded stamps, not a rebuild
    assert m1["start_s"] == pytest.approx(r.calls[0].started_s)
    tool_events = [e for e in r.events if isinstance(e, ToolResultEvent)]
    started, dur = tool_events[0].started_s, tool_events[0].duration_s
    assert started is not None and dur is not None
    assert s["start_s"] == pytest.approx(started) and s["end_s"] == pytest.approx(started + dur)
    # both ran at once: the fast one started before the slow one ended and ended well before it
    assert f["start_s"] < s["end_s"] and f["end_s"] < s["end_s"] - 0.05
    assert s["start_s"] >= m1["end_s"] and f["start_s"] >= m1["end_s"]
    # the next call starts after the last tool ended (the loop waited for both)
    assert m2["start_s"] >= s["end_s"]


def test_a_retry_shows_as_a_gap_before_the_call() -> None:
    steps = [Step(error=ProviderConnectionError("reset", provider="openai")), Step(text="ok")]
    r = al.run("openai:sim-reasoner", "go", adapter=ScriptedAdapter(steps), retries=1, retry_delay=0.15)
    assert r.status == "completed"
    df = timeline_frame(r)
    (m,) = (row for _, row in df.iterrows())
    assert m["timing"] == "recorded"
    # timed from its last attempt, after the failed one and the 0.15 s back-off (a rebuild says 0)
    assert m["start_s"] >= 0.15
    assert m["end_s"] == pytest.approx(m["start_s"] + m["duration_s"])


def _strip(r: RunResult) -> RunResult:
    """``r`` as an older agentlab saved it: no start stamps."""
    calls = tuple(c.model_copy(update={"started_s": None}) for c in r.calls)
    events = tuple(
        e.model_copy(update={"started_s": None})
        if isinstance(e, ToolResultEvent | ModelCallCompletedEvent)
        else e
        for e in r.events
    )
    return r.model_copy(update={"calls": calls, "events": events})


def test_results_without_stamps_fall_back_to_durations() -> None:
    old = _strip(_parallel_run())
    df = timeline_frame(old)
    assert set(df["timing"]) == {"from durations"}
    m1, s, f, m2 = (df.iloc[i] for i in range(4))
    assert m1["start_s"] == 0 and s["start_s"] == f["start_s"] == m1["end_s"]
    assert m2["start_s"] == pytest.approx(max(s["end_s"], f["end_s"]))


def test_stamps_are_left_out_of_dumps_when_unknown_and_old_records_load() -> None:
    r = _parallel_run()
    dumped = json.loads(r.calls[0].model_dump_json())
    assert dumped["started_s"] >= 0
    old = dict(dumped)
    del old["started_s"]
    assert CallRecord.model_validate(old).started_s is None
    assert "started_s" not in _strip(r).calls[0].model_dump()
    ev = next(e for e in r.events if isinstance(e, ToolResultEvent))
    assert "started_s" in json.loads(ev.model_dump_json())
    assert "started_s" not in ev.model_copy(update={"started_s": None}).model_dump()
    done = next(e for e in r.events if isinstance(e, ModelCallCompletedEvent))
    assert done.started_s == r.calls[0].started_s


def test_timeline_survives_the_event_log(tmp_path: Path) -> None:
    from agentlab.records.eventlog import EventLog

    path = tmp_path / "run.jsonl"
    steps = [Step(tool_calls=[("fast", {"tag": "x"})]), Step(text="ok")]
    al.run("openai:sim-reasoner", "go", tools=[fast], adapter=ScriptedAdapter(steps), event_log=path)
    back = [e for e in EventLog.read(path) if isinstance(e, ToolResultEvent | ModelCallCompletedEvent)]
    assert back and all(e.started_s is not None and e.started_s >= 0 for e in back)


# ---------------------------------------------------------------- throughput, the views' figures


def _record(
    latency: float | None, fr: float | None, ft: float | None, out: int, reasoning: int | None
) -> CallRecord:
    from agentlab.costs.pricing import Cost

    return CallRecord(
        run_id="run_x",
        step=1,
        provider="openai",
        model="sim-reasoner+tps=100",  # paced: its tokens per second are real (unpaced: n/a)
        usage=CallUsage(input_tokens=10, output_tokens=out, reasoning_tokens=reasoning),
        cost=Cost(),
        latency_s=latency,
        first_reasoning_s=fr,
        first_text_s=ft,
    )


CASES = [
    _record(2.0, 0.5, 1.5, 300, 200),  # both phases
    _record(1.0, 0.2, None, 100, 100),  # reasoning only (ends at the response end)
    _record(1.0, None, 0.4, 60, 0),  # answer only
    _record(1.0, None, None, 60, None),  # not streamed, reasoning unknown
    _record(1.0, 0.3, 0.6, 60, None),  # reasoning figure unknown
]


def test_call_throughput_matches_the_usage_frame() -> None:
    df = al.usage_frame(CASES)
    for i, c in enumerate(CASES):
        t = call_throughput(c)
        for col in ("reasoning_tokens_per_s", "answer_tokens_per_s", "first_reasoning_s", "first_text_s"):
            want, got = df[col].iloc[i], getattr(t, col)
            assert (got is None) == bool(pd.isna(want)), (i, col)
            if got is not None:
                assert got == pytest.approx(want)
    assert call_throughput(CASES[0]) == Throughput(0.5, 1.5, 200.0, 200.0)


def test_run_throughput_matches_usage_by_run() -> None:
    df = al.usage_frame(CASES)
    by = al.usage_by(df, "run_id").iloc[0]
    t = run_throughput(CASES)
    for col in ("reasoning_tokens_per_s", "answer_tokens_per_s", "first_reasoning_s", "first_text_s"):
        assert getattr(t, col) == pytest.approx(by[col]), col


def test_unknown_throughput_is_omitted_never_zero() -> None:
    t = call_throughput(CASES[3])
    assert t == Throughput() and t.parts() == []
    parts = call_throughput(CASES[0]).parts()
    assert parts == ["1st reasoning 500 ms", "1st answer 1.50 s", "reasoning 200 tok/s", "answer 200 tok/s"]
    assert run_throughput(CASES).parts(mean=True)[0].startswith("mean 1st reasoning")
    assert not any(p.split(" ", 1)[1] == "0 tok/s" for p in call_throughput(CASES[1]).parts())


def test_a_run_without_reasoning_has_no_reasoning_figures() -> None:
    r = al.run("openai:sim-reasoner", "go", adapter=ScriptedAdapter([Step(text=["o", "k"])]))
    t = run_throughput(r.calls)
    assert t.reasoning_tokens_per_s is None and t.first_reasoning_s is None
    assert t.first_text_s is not None and r.calls[0].started_s is not None
