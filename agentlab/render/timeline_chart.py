"""``plot_timeline``: a run's model calls and tool calls on one time axis, one pair of lanes per run.

Draws a ``timeline_frame`` (``agentlab.timeline_frame``): per run (per provider in a comparison) a
"model" lane with each call as a bar, the part from its first reasoning delta to its first answer
delta in the reasoning colour, and a "tools" lane below it where tool calls of one step (which run
side by side) share the lane in thin rows. Failed tools are drawn in vermillion and hatched. The
times are the run's recorded start times, or rebuilt from durations for older results (see
``agentlab.evals.run_tables``); the x label says which.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentlab.render.html_tables import PALETTE

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["chart_svg", "plot_timeline"]

_MODEL, _REASONING, _TOOL, _FAILED = (
    PALETTE["blue"],
    PALETTE["orange"],
    PALETTE["green"],
    PALETTE["vermillion"],
)


def _f(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _timing_note(frame: pd.DataFrame) -> str:
    """What the x axis is: recorded start times, or a rebuild from durations (for older results)."""
    kinds = set(frame["timing"].dropna().unique()) if "timing" in frame.columns else set()
    if kinds == {"per run"}:
        return "one bar per run: its start and latency from the results file"
    if kinds == {"recorded"}:
        return "recorded start times"
    if "recorded" in kinds:
        return "recorded start times; older runs rebuilt from durations"
    return "rebuilt from recorded durations"


def _missing(v: Any) -> bool:
    import pandas as pd

    return v is None or bool(pd.isna(v))


def _model_bars(ax: Axes, g: pd.DataFrame, y: float) -> None:
    for _, row in g.iterrows():
        start, dur = _f(row["start_s"]), _f(row["duration_s"])
        if math.isnan(dur):
            continue
        ax.broken_barh([(start, dur)], (y - 0.35, 0.7), facecolors=_MODEL, edgecolor="white", linewidth=0.5)
        fr, ft = _f(row["first_reasoning_s"]), _f(row["first_text_s"])
        if not math.isnan(fr):
            end = ft if not math.isnan(ft) and ft > fr else dur
            ax.broken_barh([(start + fr, end - fr)], (y - 0.35, 0.7), facecolors=_REASONING, linewidth=0)
        if _missing(row["step"]):  # a whole run (from a results file), not a numbered call
            continue
        ax.annotate(
            str(row["step"]), (start, y), xytext=(2, 0), textcoords="offset points", fontsize=7,
            va="center", ha="left", color="white",
        )  # fmt: skip


def _tool_bars(ax: Axes, g: pd.DataFrame, y: float) -> None:
    for _step, s in g.groupby("step", sort=False):
        h = 0.7 / max(1, len(s))
        for i, (_, row) in enumerate(s.iterrows()):
            start, dur = _f(row["start_s"]), _f(row["duration_s"])
            if math.isnan(dur):
                continue
            failed = row["is_error"] is True or str(row["is_error"]) == "True"  # <NA>: not known to fail
            ax.broken_barh(
                [(start, dur)], (y - 0.35 + i * h, h * 0.9), facecolors=_FAILED if failed else _TOOL,
                hatch="//" if failed else None, edgecolor="white", linewidth=0.5,
            )  # fmt: skip


def _lanes(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """One lane pair per run: by label, and by ``repeat`` within a label that has several (``r1``…).

    Repeats of one model share its label; drawn in one lane they would sit on top of each other.
    """
    out = []
    for label in dict.fromkeys(str(v) for v in frame["label"]):
        g = frame[frame["label"].astype(str) == label]
        reps = list(dict.fromkeys(g["repeat"].dropna())) if "repeat" in g.columns else []
        if len(reps) < 2:
            out.append((label, g))
            continue
        out += [(f"{label} r{int(k) + 1}", g[g["repeat"] == k]) for k in reps]
    return out


def plot_timeline(frame: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Model calls vs tool calls over time, per run (a comparison: one lane pair per model and repeat).

    ``frame`` is ``timeline_frame(result_or_comparison)`` (``agentlab.plot_timeline`` also takes the
    result or comparison itself). Returns the Axes (a new figure when ``ax`` is None).
    """
    import pandas as pd
    from matplotlib.patches import Patch

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"plot_timeline draws a timeline frame, got {type(frame).__name__}; "
            "pass agentlab.timeline_frame(result) or call agentlab.plot_timeline(result)"
        )
    lanes = _lanes(frame)
    note = _timing_note(frame)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(9.0, 1.0 + 1.1 * max(1, len(lanes))), layout="constrained")
    ticks: list[float] = []
    names: list[str] = []
    for n, (name, g) in enumerate(lanes):
        y_model, y_tool = 2 * n, 2 * n + 1
        _model_bars(ax, g[g["kind"] == "model"], y_model)
        _tool_bars(ax, g[g["kind"] == "tool"], y_tool)
        ticks += [y_model, y_tool]
        names += [f"{name} · model", f"{name} · tools"]
    ax.set_yticks(ticks, names, fontsize=8)
    ax.set_ylim(len(ticks) - 0.5, -0.5)  # first run on top
    ax.set_xlim(left=0)
    ax.set_xlabel(f"seconds from {'the first run' if note.startswith('one bar') else 'run'} start ({note})")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    ax.set_title(title or "Run timeline: model calls and tool calls")
    handles = [
        Patch(facecolor=_MODEL, label="model call"),
        Patch(facecolor=_REASONING, label="reasoning streaming"),
        Patch(facecolor=_TOOL, label="tool call"),
        Patch(facecolor=_FAILED, hatch="//", label="tool error"),
    ]
    ax.legend(handles=handles, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return ax


def chart_svg(draw: Callable[[Any], Axes], data: Any) -> str:
    """A chart as inline SVG text for a static report (drawn, saved, and its figure closed).

    Why SVG: the report must open without a kernel or network, and SVG text scales and needs no
    separate image files; matplotlib escapes the labels it writes (model and tool names).
    """
    import io

    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    fig = draw(data).figure
    if not isinstance(fig, Figure):  # a SubFigure: save the figure that holds it
        fig = fig.figure
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]
