"""The run view's timeline strip: model calls and tool calls of each step as bars on one time axis.

Plain HTML and CSS (positioned ``div``s), no matplotlib: the strip is re-rendered by the run view's
flusher turn whenever a step ends (it is one more gated widget of the view, so it costs a frontend
message only when it changed, within the shared budget of :mod:`agentlab.notebook._coalesce`), and
it is part of the saved final state (``text/html``), which must render without a kernel.

A step is one row: its model call on a thick lane, each of its tool calls on a thin lane below
(tools of one step run side by side, so their bars overlap where they did). Times are seconds
from the run's start: the run's recorded stamps (``started_s`` of the call and tool events) when
the events carry them, else the view's own clock at the moment each event arrived, minus the
duration (``timing`` says which). Only names and times are shown, never text of the run.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Literal

from agentlab.render.html_tables import PALETTE, fmt_seconds

__all__ = ["Rows", "Span", "strip_html", "strip_text", "timing_label"]

_MODEL, _TOOL, _FAILED = PALETTE["blue"], PALETTE["green"], PALETTE["vermillion"]


@dataclass(frozen=True, slots=True)
class Span:
    """One bar: a model call or a tool call, ``start``/``end`` in seconds from the run's start."""

    kind: Literal["model", "tool"]
    name: str
    start: float
    end: float
    is_error: bool = False
    recorded: bool = True
    """False: placed by the view's clock (the event carried no start stamp)."""


Rows = list[tuple[int, list[Span]]]
"""``(step, spans)`` in step order; a step's model call first."""


def _extent(rows: Rows) -> float:
    return max((s.end for _, spans in rows for s in spans), default=0.0)


def _bar(s: Span, total: float, top: int, height: int) -> str:
    width = max(100.0 * (s.end - s.start) / total, 0.4)  # an instant is still visible
    left = min(100.0 * s.start / total, 100.0 - width)
    colour = _FAILED if s.is_error else (_MODEL if s.kind == "model" else _TOOL)
    what = "model call" if s.kind == "model" else ("tool error" if s.is_error else "tool")
    tip = f"{s.name} ({what}): {fmt_seconds(s.start)} to {fmt_seconds(s.end)}"
    return (
        f'<div title="{html.escape(tip)}" style="position:absolute;left:{left:.2f}%;width:{width:.2f}%;'
        f'top:{top}px;height:{height}px;background:{colour};border-radius:2px"></div>'
    )


def _row(step: int, spans: list[Span], total: float) -> str:
    bars, top = [], 0
    for s in spans:
        h = 8 if s.kind == "model" else 5
        bars.append(_bar(s, total, top, h))
        top += h + 1
    return (
        '<div style="display:flex;align-items:flex-start;gap:4px;margin:1px 0">'
        f'<div style="width:2.2em;font-size:10px;opacity:0.7;text-align:right">{step}</div>'
        f'<div style="position:relative;overflow:hidden;flex:1 1 auto;height:{max(top, 8)}px;'
        f'background:{PALETTE["grey"]}18">{"".join(bars)}</div></div>'
    )


def timing_label(rows: Rows) -> str:
    """``recorded``, or ``view clock`` when any bar was placed by the view (events without stamps)."""
    spans = [s for _, ss in rows for s in ss]
    return "recorded" if all(s.recorded for s in spans) else "view clock"


def strip_html(rows: Rows) -> str:
    """The strip (empty string before any step ended)."""
    rows = [(n, ss) for n, ss in rows if ss]
    total = _extent(rows)
    if not rows or total <= 0:
        return ""
    legend = (
        f'<span style="color:{_MODEL}">■</span> model call '
        f'<span style="color:{_TOOL}">■</span> tool '
        f'<span style="color:{_FAILED}">■</span> tool error'
    )
    axis = (
        '<div style="display:flex;justify-content:space-between;font-size:10px;opacity:0.7;'
        f'margin-left:calc(2.2em + 4px)"><span>0</span><span>{html.escape(fmt_seconds(total))}</span></div>'
    )
    return (
        '<div class="agentlab-timeline" style="margin:4px 0 2px 0">'
        f'<div style="font-size:11px;opacity:0.8">Timeline · steps · seconds from run start '
        f"({timing_label(rows)}) · {legend}</div>"
        f"{''.join(_row(n, ss, total) for n, ss in rows)}{axis}</div>"
    )


def strip_text(rows: Rows) -> list[str]:
    """The strip as lines of text (the saved ``text/plain``): one line per step."""
    rows = [(n, ss) for n, ss in rows if ss]
    if not rows:
        return []
    lines = [f"Timeline ({timing_label(rows)}, seconds from run start):"]
    for n, spans in rows:
        bits = []
        for s in spans:
            err = " error" if s.is_error else ""
            bits.append(f"{s.name}{err} {fmt_seconds(s.start)}–{fmt_seconds(s.end)}")
        lines.append(f"  step {n}: " + "; ".join(bits))
    return lines
