"""Per-run tables beside the usage frame: ``tool_frame`` (one row per tool call) and ``timeline_frame``.

Both read a finished run's durable records only (``RunResult.calls`` and ``.events``), so they hold
what a result may hold: tool names, arguments and results (the caller's and the tools' own data),
timings; never reasoning. Each accepts a ``RunResult``, a ``Comparison`` (adds a ``label`` column, one
block per model) or an iterable of results.

The timeline uses the times the run recorded (``timing`` is ``recorded``): each model call's
``started_s`` (``CallRecord``, when its last attempt was sent) and each tool's ``started_s``
(``ToolResultEvent``), in seconds from the run's start on a monotonic clock, each lasting its
``latency_s`` / ``duration_s``. Parallel tools therefore overlap as they did, and retries, back-off
waits and loop overhead show as gaps.

Results recorded before those stamps existed (older saved results and event logs) fall back to a
reconstruction from durations (``timing`` is ``from durations``): each step's model call runs from
the end of the previous step; that step's tool calls start when the call ends and run side by side
(the loop gathers them); the next step starts when the last of them ends. Gaps are lost there. A
run uses one rule for all its rows: recorded only when every model call and every tool that ran
has its stamp.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from agentlab.loop.result import CallRecord, RunResult

__all__ = [
    "TIMELINE_COLUMNS",
    "TOOL_COLUMNS",
    "labelled_results",
    "plot_timeline",
    "timeline_frame",
    "tool_frame",
]

TOOL_COLUMNS: dict[str, str] = {
    "label": "string",
    "repeat": "Int64",
    "run_id": "string",
    "step": "Int64",
    "call_id": "string",
    "tool": "string",
    "server": "string",
    "server_version": "string",
    "arguments": "string",
    "duration_s": "float64",
    "is_error": "boolean",
    "error": "string",
    "result_chars": "Int64",
}
"""``server``/``server_version``: the MCP server the tool came from and the version it reported
(<NA> for a Python tool, or a results file); ``arguments``: the JSON text the model sent;
``error``: the result text when the tool failed (<NA> otherwise); ``result_chars``: the size of the
result the model saw (<NA>: no result recorded, e.g. a cancelled run); ``duration_s``: NaN when the
tool never ran (unknown tool, duplicate id)."""

TIMELINE_COLUMNS: dict[str, str] = {
    "label": "string",
    "repeat": "Int64",
    "run_id": "string",
    "step": "Int64",
    "kind": "string",
    "name": "string",
    "start_s": "float64",
    "end_s": "float64",
    "duration_s": "float64",
    "first_reasoning_s": "float64",
    "first_text_s": "float64",
    "is_error": "boolean",
    "timing": "string",
}
"""``repeat``: which of a label's runs (``compare(repeats=N)``, from 0; 0 for a lone result);
``kind``: ``model`` or ``tool``; ``name``: the model or the tool (``server:tool`` for an MCP
server's); ``start_s``/``end_s``: seconds from the run's start (see the module docstring);
``timing``: ``recorded`` or ``from durations``;
``first_reasoning_s``/``first_text_s``: for a model call, seconds from its start to the first
reasoning / answer delta (NaN: none streamed)."""


def labelled_results(obj: Any) -> Iterator[tuple[str, RunResult]]:
    """``(label, result)`` pairs: a Comparison's columns, a result under its model, or several."""
    for label, _repeat, r in _labelled_runs(obj):
        yield label, r


def _labelled_runs(obj: Any) -> Iterator[tuple[str, int, RunResult]]:
    """``(label, repeat, result)`` of the runs ``obj`` holds in memory (every results form is taken)."""
    from agentlab.evals.results import as_results

    yield from as_results(obj, what="tool_frame / timeline_frame").records


def _frame(rows: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({c: pd.array([r.get(c) for r in rows], dtype=d) for c, d in columns.items()})


def _tool_rows(label: str, r: RunResult, repeat: int = 0) -> Iterator[dict[str, Any]]:
    from agentlab.neutral.events import ToolCallEvent, ToolResultEvent

    results = {e.result.call_id: e for e in r.events if isinstance(e, ToolResultEvent)}
    for e in r.events:
        if not isinstance(e, ToolCallEvent):
            continue
        res = results.get(e.call.call_id)
        failed = None if res is None else res.result.is_error
        source = r.tool_sources.get(e.call.name)
        yield {
            "label": label,
            "repeat": repeat,
            "run_id": r.run_id,
            "step": e.step,
            "call_id": e.call.call_id,
            "tool": e.call.name,
            "server": None if source is None else source.server,
            "server_version": None if source is None else source.server_version,
            "arguments": e.call.arguments,
            "duration_s": math.nan if res is None or res.duration_s is None else res.duration_s,
            "is_error": failed,
            "error": res.result.output if res is not None and failed else None,
            "result_chars": None if res is None else len(res.result.output),
            "_started_s": None if res is None else res.started_s,
        }


def _stored_tool_rows(frame: pd.DataFrame) -> Iterator[dict[str, Any]]:
    """Tool calls as a results file keeps them (an evaluation's ``called_tools``): name and arguments.

    Steps, durations and results were never written to the file: they are unknown, not 0.
    """
    import json

    if "called_tools" not in frame.columns:
        return
    for _, run in frame.iterrows():
        for call in run["called_tools"] if isinstance(run["called_tools"], list) else ():
            args = call.get("arguments")
            yield {
                "label": run["model"],
                "repeat": run.get("repeat"),
                "run_id": run.get("run_id"),
                "tool": call.get("name"),
                "arguments": args if isinstance(args, str) else json.dumps(args, sort_keys=True),
                "duration_s": math.nan,
            }


def tool_frame(obj: Any) -> pd.DataFrame:
    """One row per tool call: step, tool, arguments, duration, error (columns: ``TOOL_COLUMNS``).

    Takes every results form (``agentlab.evals.results.as_results``); from a results file only what
    it kept (an evaluation's tool names and arguments), the rest unknown.
    """
    from agentlab.evals.results import as_results

    res = as_results(obj, what="tool_frame")
    rows = [row for label, k, r in res.records for row in _tool_rows(label, r, k)]
    if not res.records:
        rows = list(_stored_tool_rows(res.frame))
    return _frame(rows, TOOL_COLUMNS)


def _nan(v: float | None) -> float:
    return math.nan if v is None else float(v)


def _model_row(c: CallRecord, start: float) -> dict[str, Any]:
    lat = _nan(c.latency_s)
    return {
        "step": c.step,
        "kind": "model",
        "name": f"{c.provider}:{c.model}",
        "start_s": start,
        "end_s": start + lat,
        "duration_s": lat,
        "first_reasoning_s": _nan(c.first_reasoning_s),
        "first_text_s": _nan(c.first_text_s),
        "is_error": False,
    }


def _tool_row(tr: dict[str, Any], start: float) -> dict[str, Any]:
    d = tr["duration_s"]
    return {
        "step": tr["step"],
        "kind": "tool",
        "name": tr["tool"] if tr.get("server") is None else f"{tr['server']}:{tr['tool']}",
        "start_s": start,
        "end_s": start + d,
        "duration_s": d,
        "first_reasoning_s": math.nan,
        "first_text_s": math.nan,
        "is_error": tr["is_error"],
    }


def _recorded(calls: list[CallRecord], tools: dict[int, list[dict[str, Any]]]) -> bool:
    """Whether every model call and every tool that ran carries its start stamp."""
    ran = [t for ts in tools.values() for t in ts if not math.isnan(t["duration_s"])]
    return all(c.started_s is not None for c in calls) and all(t["_started_s"] is not None for t in ran)


def _timeline_rows(label: str, r: RunResult, repeat: int = 0) -> Iterator[dict[str, Any]]:
    tools: dict[int, list[dict[str, Any]]] = {}
    for row in _tool_rows(label, r, repeat):
        tools.setdefault(int(row["step"] or 0), []).append(row)
    calls = sorted(r.calls, key=lambda c: c.step)
    recorded = bool(calls) and _recorded(calls, tools)
    base = {
        "label": label,
        "repeat": repeat,
        "run_id": r.run_id,
        "timing": "recorded" if recorded else "from durations",
    }
    t = 0.0
    for c in calls:
        m = _model_row(c, _nan(c.started_s) if recorded else t)
        yield {**base, **m}
        # A call without a latency is drawn as an instant (its tools still need a place to start).
        call_end = m["start_s"] if math.isnan(m["end_s"]) else m["end_s"]
        step_end = call_end
        for tr in tools.get(c.step, []):
            # A tool that never ran has no stamp: it sits at the end of its call, with no duration.
            start = tr["_started_s"] if recorded and tr["_started_s"] is not None else call_end
            row = _tool_row(tr, start)
            if not math.isnan(row["end_s"]):
                step_end = max(step_end, row["end_s"])
            yield {**base, **row}
        t = step_end


def _run_span_rows(frame: pd.DataFrame) -> Iterator[dict[str, Any]]:
    """One bar per run from a results file: its recorded start and latency (``timing``: ``per run``).

    A file keeps no per-call records, so the bar is the whole run, placed from the first run's start.
    """
    has_starts = "started_at" in frame.columns and bool(frame["started_at"].notna().any())
    t0 = frame["started_at"].min() if has_starts else None
    for _, run in frame.iterrows():
        at = run["started_at"] if has_starts else None
        start = 0.0 if t0 is None or _missing(at) else float((at - t0).total_seconds())
        lat = _nan(None if _missing(run.get("latency_s")) else float(run["latency_s"]))
        yield {
            "label": run["model"], "repeat": run.get("repeat"), "run_id": run.get("run_id"),
            "kind": "model", "name": run["model"], "start_s": start, "end_s": start + lat,
            "duration_s": lat, "first_reasoning_s": math.nan, "first_text_s": math.nan,
            "is_error": run.get("status") == "failed", "timing": "per run",
        }  # fmt: skip


def _missing(v: Any) -> bool:
    import pandas as pd

    return v is None or bool(pd.isna(v))


def timeline_frame(obj: Any) -> pd.DataFrame:
    """Model calls and tool calls of each run on one time axis (columns: ``TIMELINE_COLUMNS``).

    Takes every results form; a results file (no per-call records) gives one bar per run.
    """
    from agentlab.evals.results import as_results

    res = as_results(obj, what="timeline_frame")
    rows = [row for label, k, r in res.records for row in _timeline_rows(label, r, k)]
    if not res.records:
        rows = list(_run_span_rows(res.frame))
    return _frame(rows, TIMELINE_COLUMNS)


def plot_timeline(obj: Any, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """The timeline chart of any results form (one lane pair per model and repeat) or a timeline frame."""
    import pandas as pd

    from agentlab.evals.results import as_results
    from agentlab.render.timeline_chart import plot_timeline as draw

    is_timeline = isinstance(obj, pd.DataFrame) and {"kind", "start_s"} <= set(obj.columns)
    frame = obj if is_timeline else timeline_frame(as_results(obj, what="plot_timeline"))
    return draw(frame, ax=ax, title=title)
