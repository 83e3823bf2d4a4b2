"""Per-run tables beside the usage frame: ``tool_frame`` (one row per tool call) and ``timeline_frame``.

Both read a finished run's durable records only (``RunResult.calls`` and ``.events``), so they hold
what a result may hold: tool names, arguments and results (the caller's and the tools' own data),
timings; never reasoning. Each accepts a ``RunResult``, a ``Comparison`` (adds a ``label`` column, one
block per model) or an iterable of results.

The timeline is rebuilt from recorded durations, not wall-clock stamps (durable events carry
none): each step's model call runs from the end of the previous step for its ``latency_s``; that
step's tool calls start when the call ends and run side by side (the loop gathers them), each for
its ``duration_s``; the next step starts when the last of them ends. Loop overhead between
records (history assembly, validation) is therefore left out, which is why ``timing`` says
``from durations``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from agentlab.loop.result import RunResult

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
    "run_id": "string",
    "step": "Int64",
    "call_id": "string",
    "tool": "string",
    "arguments": "string",
    "duration_s": "float64",
    "is_error": "boolean",
    "error": "string",
    "result_chars": "Int64",
}
"""``arguments``: the JSON text the model sent; ``error``: the result text when the tool failed
(<NA> otherwise); ``result_chars``: the size of the result the model saw (<NA>: no result recorded,
e.g. a cancelled run); ``duration_s``: NaN when the tool never ran (unknown tool, duplicate id)."""

TIMELINE_COLUMNS: dict[str, str] = {
    "label": "string",
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
"""``kind``: ``model`` or ``tool``; ``name``: the model or the tool; ``start_s``/``end_s``: seconds
from the run's start (see the module docstring); ``first_reasoning_s``/``first_text_s``: for a
model call, seconds from its start to the first reasoning / answer delta (NaN: none streamed)."""


def labelled_results(obj: Any) -> Iterator[tuple[str, RunResult]]:
    """``(label, result)`` pairs: a Comparison's columns, a result under its model, or several."""
    from agentlab.loop.result import RunResult

    if isinstance(obj, RunResult):
        yield f"{obj.provider}:{obj.model}", obj
        return
    entries = getattr(obj, "entries", None)
    if entries is not None:
        for e in entries:
            if e.result is not None:
                yield e.label, e.result
        return
    if isinstance(obj, Iterable):
        for item in obj:
            yield from labelled_results(item)
        return
    raise TypeError(f"expected a RunResult, a Comparison or results, got {type(obj).__name__}")


def _frame(rows: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({c: pd.array([r.get(c) for r in rows], dtype=d) for c, d in columns.items()})


def _tool_rows(label: str, r: RunResult) -> Iterator[dict[str, Any]]:
    from agentlab.neutral.events import ToolCallEvent, ToolResultEvent

    results = {e.result.call_id: e for e in r.events if isinstance(e, ToolResultEvent)}
    for e in r.events:
        if not isinstance(e, ToolCallEvent):
            continue
        res = results.get(e.call.call_id)
        failed = None if res is None else res.result.is_error
        yield {
            "label": label,
            "run_id": r.run_id,
            "step": e.step,
            "call_id": e.call.call_id,
            "tool": e.call.name,
            "arguments": e.call.arguments,
            "duration_s": math.nan if res is None or res.duration_s is None else res.duration_s,
            "is_error": failed,
            "error": res.result.output if res is not None and failed else None,
            "result_chars": None if res is None else len(res.result.output),
        }


def tool_frame(obj: Any) -> pd.DataFrame:
    """One row per tool call: step, tool, arguments, duration, error (columns: ``TOOL_COLUMNS``)."""
    rows = [row for label, r in labelled_results(obj) for row in _tool_rows(label, r)]
    return _frame(rows, TOOL_COLUMNS)


def _timeline_rows(label: str, r: RunResult) -> Iterator[dict[str, Any]]:
    tools: dict[int, list[dict[str, Any]]] = {}
    for row in _tool_rows(label, r):
        tools.setdefault(int(row["step"] or 0), []).append(row)
    base = {"label": label, "run_id": r.run_id, "timing": "from durations"}
    t = 0.0
    for c in sorted(r.calls, key=lambda c: c.step):
        lat = c.latency_s if c.latency_s is not None else math.nan
        end = t + (0.0 if math.isnan(lat) else lat)
        yield {
            **base,
            "step": c.step,
            "kind": "model",
            "name": f"{c.provider}:{c.model}",
            "start_s": t,
            "end_s": end if not math.isnan(lat) else math.nan,
            "duration_s": lat,
            "first_reasoning_s": math.nan if c.first_reasoning_s is None else c.first_reasoning_s,
            "first_text_s": math.nan if c.first_text_s is None else c.first_text_s,
            "is_error": False,
        }
        step_end = end
        for tr in tools.get(c.step, []):
            d = tr["duration_s"]
            tool_end = end + (0.0 if math.isnan(d) else d)
            step_end = max(step_end, tool_end)
            yield {
                **base,
                "step": c.step,
                "kind": "tool",
                "name": tr["tool"],
                "start_s": end,
                "end_s": tool_end if not math.isnan(d) else math.nan,
                "duration_s": d,
                "first_reasoning_s": math.nan,
                "first_text_s": math.nan,
                "is_error": tr["is_error"],
            }
        t = step_end


def timeline_frame(obj: Any) -> pd.DataFrame:
    """Model calls and tool calls of each run on one time axis (columns: ``TIMELINE_COLUMNS``)."""
    rows = [row for label, r in labelled_results(obj) for row in _timeline_rows(label, r)]
    return _frame(rows, TIMELINE_COLUMNS)


def plot_timeline(obj: Any, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """The timeline chart of a run, a comparison (one lane pair per model) or a timeline frame."""
    import pandas as pd

    from agentlab.render.timeline_chart import plot_timeline as draw

    frame = obj if isinstance(obj, pd.DataFrame) else timeline_frame(obj)
    return draw(frame, ax=ax, title=title)
