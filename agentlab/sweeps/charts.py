"""Sweep charts (matplotlib): grouped bars per model (x) and setting (colour), from ``summarize()``.

Each function takes ``ax=None`` (a new figure) or an Axes, returns the Axes and never calls
``plt.show()``. Colours are Okabe-Ito (colour-blind safe) and every bar is labelled with its value,
so the chart reads without colour too.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..html_tables import PALETTE

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["plot_cost_per_solved", "plot_metric", "plot_reasoning_share", "plot_success_rate"]

_COLOURS = [PALETTE[c] for c in ("blue", "orange", "green", "vermillion", "purple", "sky", "yellow", "grey")]


def _groups(summary: pd.DataFrame) -> tuple[list[str], list[str], dict[tuple[str, str], Any]]:
    """(x labels, series labels, {(x, series): row}) from a 1- or 2-level index."""
    xs: list[str] = []
    series: list[str] = []
    rows: dict[tuple[str, str], Any] = {}
    for idx, row in summary.iterrows():
        parts = idx if isinstance(idx, tuple) else (idx,)
        x = str(parts[0])
        s = " / ".join(str(p) for p in parts[1:]) or "all"
        if x not in xs:
            xs.append(x)
        if s not in series:
            series.append(s)
        rows[(x, s)] = row
    return xs, series, rows


def plot_metric(
    summary: pd.DataFrame,
    column: str,
    *,
    ax: Axes | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    fmt: str = "{:.3g}",
    err: tuple[str, str] | None = None,
) -> Axes:
    """Bars of ``summary[column]``: one group per model, one colour per setting (NaN: no bar, "n/a")."""
    import matplotlib.pyplot as plt

    xs, series, rows = _groups(summary)
    if ax is None:
        _, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(xs) * max(1, len(series)) + 2.5), 4.0))
    width = 0.8 / max(1, len(series))
    for j, s in enumerate(series):
        pos, vals, lo, hi = [], [], [], []
        for i, x in enumerate(xs):
            row = rows.get((x, s))
            if row is None:
                continue
            v = float(row[column]) if row[column] is not None and not _isna(row[column]) else math.nan
            pos.append(i + (j - (len(series) - 1) / 2) * width)
            vals.append(v)
            if err is not None:
                lo.append(max(0.0, v - float(row[err[0]])) if not math.isnan(v) else 0.0)
                hi.append(max(0.0, float(row[err[1]]) - v) if not math.isnan(v) else 0.0)
        heights = [0.0 if math.isnan(v) else v for v in vals]
        yerr = [lo, hi] if err is not None else None
        bars = ax.bar(
            pos,
            heights,
            width=width * 0.95,
            color=_COLOURS[j % len(_COLOURS)],
            label=s,
            yerr=yerr,
            capsize=3 if err else 0,
            ecolor="#333333",
        )
        for b, v in zip(bars, vals, strict=True):
            ax.annotate(
                "n/a" if math.isnan(v) else fmt.format(v),
                (b.get_x() + b.get_width() / 2, b.get_height()),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=8,
            )
    ax.set_xticks(range(len(xs)), xs, rotation=15 if len(xs) > 3 else 0)
    ax.set_xlabel(str(summary.index.names[0] or "model"))
    ax.set_ylabel(ylabel or column)
    if title:
        ax.set_title(title)
    if len(series) > 1 or series != ["all"]:
        ax.legend(
            title=" / ".join(str(n) for n in summary.index.names[1:]) or None, fontsize=8, frameon=False
        )
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return ax


def _isna(v: Any) -> bool:
    try:
        import pandas as pd

        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def plot_success_rate(summary: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Success rate per model and setting, with Wilson 95% intervals as error bars."""
    ax = plot_metric(
        summary,
        "success_rate",
        ax=ax,
        ylabel="success rate (solved / scored)",
        title=title or "Success rate (95% Wilson interval)",
        fmt="{:.0%}",
        err=("success_ci_low", "success_ci_high"),
    )
    ax.set_ylim(0, 1.15)
    return ax


def plot_cost_per_solved(summary: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """USD per solved task (all runs' cost / solved runs); no bar when nothing was solved."""
    return plot_metric(
        summary,
        "cost_per_solved_usd",
        ax=ax,
        ylabel="USD per solved task",
        title=title or "What one solved task costs",
        fmt="${:.4f}",
    )


def plot_reasoning_share(summary: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Reasoning tokens as a share of output tokens (runs with a known reasoning figure only)."""
    ax = plot_metric(
        summary,
        "reasoning_share",
        ax=ax,
        ylabel="reasoning / output tokens",
        title=title or "Reasoning share of billed output",
        fmt="{:.0%}",
    )
    ax.set_ylim(0, 1.15)
    return ax
