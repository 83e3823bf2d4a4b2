"""agentlab's charts: what reasoning costs, and how sweeps came out.

Costs from usage frames (``agentlab.usage_frame`` / ``Comparison.usage``), and sweep results from
``agentlab.sweeps.summarize()`` (grouped bars per model and setting; ``agentlab.sweeps.charts``
re-exports those names). Core draws with them
(``Comparison.plot_costs``, the sweep charts), so they live below the notebook layer;
``agentlab.notebook.charts`` re-exports them under their notebook names.

Each function takes a frame, draws on ``ax`` (a new figure when None, through pyplot so that
Jupyter's inline backend shows it at cell end) and returns the Axes for further styling; none calls
``plt.show()``. Colours are the Okabe-Ito palette (safe for the common colour-vision deficiencies),
every axis says its unit, every chart has a legend when it has more than one series.

Unknown is not zero: a group whose reasoning tokens are unknown gets a hatched "output (split
unknown)" segment instead of a reasoning segment of height 0, and gaps in per-step lines stay gaps.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from agentlab.render.html_tables import PALETTE

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = [
    "SEGMENTS",
    "cost_breakdown",
    "detached_ax",
    "plot_cost_breakdown",
    "plot_cost_per_solved",
    "plot_frontier",
    "plot_metric",
    "plot_reasoning_per_step",
    "plot_reasoning_share",
    "plot_success_rate",
]

SEGMENTS: tuple[tuple[str, str, str], ...] = (
    # (name, legend label, colour); stacked bottom to top.
    ("input", "input, uncached", PALETTE["sky"]),
    ("cache_read", "input, cache read", PALETTE["blue"]),
    ("cache_write", "input, cache write", PALETTE["purple"]),
    ("other_output", "output, answer & tool calls", PALETTE["green"]),
    ("reasoning", "output, reasoning", PALETTE["orange"]),
    ("output_unsplit", "output, split unknown", PALETTE["grey"]),
)

_LINE_COLOURS = [
    PALETTE[c] for c in ("blue", "orange", "green", "vermillion", "purple", "sky", "yellow", "grey")
]
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
"""One marker per group (alongside its colour), so lines stay apart in greyscale and where they cross."""


def _new_ax(figsize: tuple[float, float]) -> Axes:
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def detached_ax(figsize: tuple[float, float] = (7, 4)) -> Axes:
    """An Axes on a Figure that pyplot does not know: for charts saved to files (tracker artifacts).

    Why not ``plt.subplots``: a figure pyplot never registered is not kept open by it, so drawing
    many charts for export leaks no figure and shows nothing in a notebook cell.
    """
    from matplotlib.figure import Figure

    ax: Axes = Figure(figsize=figsize, layout="constrained").subplots()
    return ax


def _group_col(df: pd.DataFrame, by: str | None) -> tuple[pd.Series, str]:
    if by is None:
        by = "label" if "label" in df.columns else "model"
    if by == "model" and "provider" in df.columns:
        return df["provider"].astype(str) + ":" + df["model"].astype(str), "model"
    if by not in df.columns:
        raise KeyError(f"no column {by!r} in the frame; columns: {list(df.columns)}")
    return df[by].astype(str), by


_CHAR_EM = 0.62
"""A character's width in ems, generous for DejaVu Sans: text width is estimated as chars x em x size."""


def _fig_size(ax: Axes) -> tuple[float, float]:
    """The size in inches of the (top-level) figure the axes is drawn in."""
    fig = ax.get_figure(root=True)
    w, h = fig.get_size_inches() if fig is not None else (6.4, 4.8)
    return float(w), float(h)


def _units_to_points(ax: Axes) -> float:
    """Points per x data unit at the axes' current size and limits, with room for a later re-layout."""
    # x 0.75: a later tight_layout gives the outside legend and the labels some of the width
    width_pt = 0.75 * ax.get_position().width * _fig_size(ax)[0] * 72
    lo, hi = ax.get_xlim()
    return width_pt / max(hi - lo, 1e-9)


def _fits(ax: Axes, texts: list[str], slot_units: float, fontsize: float) -> bool:
    """Whether the widest of ``texts`` (its longest line), laid flat, fits a slot of ``slot_units``."""
    widest = max((len(line) for t in texts for line in t.splitlines()), default=0)
    return widest * _CHAR_EM * fontsize <= 0.8 * slot_units * _units_to_points(ax)


def _xticks(ax: Axes, labels: list[str]) -> None:
    """Category labels that never run into each other: flat, on two lines, else upright.

    Flat when they fit their slot, on two lines (``provider:`` over the model) when that fits, else
    rotated 90 degrees. Slanted labels looked tidy but their boxes still overlapped for long
    ``provider:model`` names.
    """
    ax.set_xticks(list(range(len(labels))))
    size = 9.0
    wrapped = [t.replace(":", ":\n", 1) for t in labels]
    if _fits(ax, labels, 1.0, size):
        ax.set_xticklabels(labels, fontsize=size)
    elif _fits(ax, wrapped, 1.0, size):
        ax.set_xticklabels(wrapped, fontsize=size)
    else:
        ax.set_xticklabels(labels, fontsize=size, rotation=90)


def _usd(v: float, _pos: Any = None) -> str:
    """Bar labels in the one money format of the tables (``fmt_usd``)."""
    from agentlab.render.html_tables import fmt_usd

    return fmt_usd(v)


def _usd_tick(v: float, _pos: Any = None) -> str:
    """A money axis tick: as many decimals as the value needs, at least cents (``$0.008``, ``$0.01``).

    ``fmt_usd``'s 4 significant digits line amounts up in a table, but on an axis whose ticks are
    round numbers they only add zeros (``$0.008000``).
    """
    if v == 0:
        return "$0"
    text = f"{abs(v):,.6f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"{'-' if v < 0 else ''}${whole}.{frac.ljust(2, '0')}"


def _percent_axis(ax: Axes) -> None:
    """Shares (0..1) on the y axis as percentages (``80%``), not as ``0.8``."""
    from matplotlib.ticker import PercentFormatter

    ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))


def cost_breakdown(df: pd.DataFrame, by: str | None = None, *, per_run: bool = False) -> pd.DataFrame:
    """The numbers behind :func:`plot_cost_breakdown`: USD per segment (columns) per group (rows).

    ``other_output`` is output cost minus reasoning cost; where any call of a group has unknown
    reasoning tokens, that group's whole output goes to ``output_unsplit`` instead (unknown is not 0).
    ``per_run=True`` divides by the number of runs in the group (compare providers fairly when they
    ran different numbers of tasks).
    """
    import pandas as pd

    key, _ = _group_col(df, by)
    rows = {}
    for name, g in df.groupby(key, sort=False):
        out = float(g["output_cost_usd"].sum(min_count=1))
        reasoning_known = bool(g["reasoning_cost_usd"].notna().all()) and len(g) > 0
        reasoning = float(g["reasoning_cost_usd"].sum()) if reasoning_known else math.nan
        row = {
            "input": float(g["input_cost_usd"].sum(min_count=1)),
            "cache_read": float(g["cache_read_cost_usd"].sum(min_count=1)),
            "cache_write": float(g["cache_write_cost_usd"].sum(min_count=1)),
            "other_output": out - reasoning if reasoning_known else 0.0,
            "reasoning": reasoning if reasoning_known else 0.0,
            "output_unsplit": 0.0 if reasoning_known else out,
        }
        if per_run:
            n = g["run_id"].nunique() if "run_id" in g.columns else 1
            row = {k: v / max(n, 1) for k, v in row.items()}
        rows[str(name)] = row
    return pd.DataFrame.from_dict(rows, orient="index", columns=[s[0] for s in SEGMENTS])


def plot_cost_breakdown(
    df: pd.DataFrame,
    by: str | None = None,
    *,
    ax: Axes | None = None,
    per_run: bool = False,
    title: str | None = None,
    ci: bool = False,
) -> Axes:
    """Stacked bars per provider/model: reasoning vs other output vs input (uncached, cache read/write).

    ``by``: a column of the usage frame (default ``label`` when present, as in ``Comparison.usage``,
    else ``provider:model``). Bars are labelled with their total and reasoning share.
    ``ci=True`` (implies ``per_run``): each bar is the mean run of its group, with an error bar for
    the 95% interval of that mean across the group's runs (``compare(repeats=N)``), not their sum.
    """
    per_run = per_run or ci
    data = cost_breakdown(df, by, per_run=per_run)
    if ax is None:
        ax = _new_ax((min(12.0, max(5.0, 1.1 * len(data) + 3.0)), 4.4))
    from matplotlib.ticker import FuncFormatter

    x = list(range(len(data)))
    bottom = [0.0] * len(data)
    for name, label, colour in SEGMENTS:
        vals = [0.0 if (v != v) else float(v) for v in data[name]]
        if not any(vals):
            continue
        ax.bar(
            x,
            vals,
            bottom=bottom,
            label=label,
            color=colour,
            width=0.6,
            edgecolor="white",
            linewidth=0.6,
            hatch="//" if name == "output_unsplit" else None,
        )
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    tops = _run_interval_bars(ax, df, by, bottom) if ci else bottom
    for i, (total, top, (_, row)) in enumerate(zip(bottom, tops, data.iterrows(), strict=True)):
        out = row["reasoning"] + row["other_output"] + row["output_unsplit"]
        share = (
            "reasoning n/a"
            if row["output_unsplit"] > 0
            else (f"{100 * row['reasoning'] / total:.0f}% reasoning" if total > 0 else "")
        )
        ax.annotate(
            f"{_usd(total)}\n{share}" if out >= 0 else _usd(total),
            (i, top),
            xytext=(0, 3),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=8,
        )
    _xticks(ax, [str(i) for i in data.index])
    ax.set_ylabel("cost per run (USD)" if per_run else "cost (USD)")
    ax.set_xlabel("provider:model" if _group_col(df, by)[1] in ("model", "label") else str(by))
    ax.yaxis.set_major_formatter(FuncFormatter(_usd_tick))
    ax.set_ylim(0, max([*tops, 1e-9]) * 1.22)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    default = "What a run costs, by token kind" if per_run else "What the runs cost, by token kind"
    ax.set_title(title or (default + " (mean, 95% CI across runs)" if ci else default))
    if ax.get_legend_handles_labels()[0]:  # no priced run, no bars: matplotlib would warn, not draw
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    _note_simulated_prices(ax, df)
    return ax


def _run_interval_bars(ax: Axes, df: pd.DataFrame, by: str | None, means: list[float]) -> list[float]:
    """Error bars for the 95% interval of each group's mean run cost; returns each bar's top.

    A group's runs are its ``run_id`` values; its bar (the stacked means) is their mean cost, so the
    interval is centred on it. One run gives no interval (no bar drawn): unknown, not zero.
    """
    from agentlab.render.intervals import mean_interval

    key, _ = _group_col(df, by)
    lows, highs = [], []
    for (_, g), mean in zip(df.groupby(key, sort=False), means, strict=True):
        runs = g.groupby("run_id", sort=False)["total_cost_usd"].sum(min_count=1) if "run_id" in g else []
        _, lo, hi = mean_interval(list(runs))
        known = not (math.isnan(lo) or math.isnan(hi))
        lows.append(max(0.0, mean - lo) if known else 0.0)
        highs.append(max(0.0, hi - mean) if known else 0.0)
    ax.errorbar(
        list(range(len(means))), means, yerr=[lows, highs], fmt="none", ecolor=PALETTE["grey"],
        elinewidth=1.2, capsize=4, label="95% CI across runs",
    )  # fmt: skip
    return [m + h for m, h in zip(means, highs, strict=True)]


def plot_reasoning_per_step(
    df: pd.DataFrame,
    by: str | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Reasoning tokens per step, one line per run; runs of the same group share a colour and a marker.

    ``by`` picks the colour group (default ``label``/``provider:model``). Groups are dodged a little
    along x (and use their own marker and dash), so two models with identical figures show as two
    lines, not one hidden under the other. Unknown reasoning tokens leave a gap and the step is
    shaded and labelled "unknown" (never a mark at 0, which would read as "no reasoning").
    """
    if ax is None:
        ax = _new_ax((7.0, 4.0))
    key, _ = _group_col(df, by)
    names = list(dict.fromkeys(str(v) for v in key))
    spread = 0.24 if len(names) > 1 else 0.0
    labelled: set[str] = set()
    unknown_steps: set[int] = set()
    for _run_id, g in df.assign(_group=key).groupby("run_id", sort=False):
        group = str(g["_group"].iloc[0])
        n = names.index(group)
        dx = (n / (len(names) - 1) - 0.5) * spread if len(names) > 1 else 0.0
        g = g.sort_values("step")
        steps = [int(s) for s in g["step"]]
        vals = [float(v) for v in g["reasoning_tokens"].to_numpy(dtype="float64", na_value=math.nan)]
        ax.plot(
            [s + dx for s in steps],
            vals,
            marker=_MARKERS[n % len(_MARKERS)],
            linestyle=_DASHES[n % len(_DASHES)],
            color=_LINE_COLOURS[n % len(_LINE_COLOURS)],
            alpha=0.85,
            linewidth=1.6,
            label=group if group not in labelled else None,
        )
        labelled.add(group)
        unknown_steps.update(s for s, v in zip(steps, vals, strict=True) if math.isnan(v))
    _mark_unknown_steps(ax, sorted(unknown_steps))
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.set_xlabel("step (model call within the run)")
    ax.set_ylabel("reasoning tokens")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_axisbelow(True)
    ax.set_title(title or "Reasoning tokens per step (one line per run)")
    if labelled or unknown_steps:
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return ax


_DASHES = ("-", "--", "-.", ":")
"""A dash pattern per group, on top of colour and marker: coincident lines stay distinguishable."""


def _mark_unknown_steps(ax: Axes, steps: list[int]) -> None:
    """Shade the steps whose reasoning tokens are unknown and label them (one legend entry)."""
    for i, s in enumerate(steps):
        ax.axvspan(
            s - 0.4,
            s + 0.4,
            color=PALETTE["grey"],
            alpha=0.18,
            linewidth=0,
            label="reasoning tokens unknown" if i == 0 else None,
        )
        ax.annotate(
            "unknown",
            (s, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(0, -3),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize=7,
            color="#555555",
        )


def _note_simulated_prices(ax: Axes, df: pd.DataFrame) -> bool:
    """Say on the chart that its dollars come from the simulated price table (fictional prices).

    Known from the frame's ``price_source`` (``agentlab simulated``; a sweep summary joins sources
    with ``; ``). Returns whether the note was added.
    """
    if "price_source" not in df.columns:
        return False
    sources = [str(v) for v in df["price_source"].dropna()]
    if not any("simulated" in v for v in sources):
        return False
    every = all("simulated" in v and ";" not in v for v in sources)
    text = "prices simulated (agentlab's fictional table)" if every else "some prices simulated"
    # outside right, at the bottom: below the legend, clear of the title, bars and their labels
    ax.annotate(
        text,
        (1.01, 0.0),
        xycoords="axes fraction",
        xytext=(4, 0),
        textcoords="offset points",
        ha="left",
        va="bottom",
        fontsize=7,
        style="italic",
        color="#555555",
    )
    return True


def plot_cost_per_solved(
    runs: pd.DataFrame,
    by: str | None = None,
    *,
    ax: Axes | None = None,
    cost_col: str = "cost_usd",
    solved_col: str = "solved",
    title: str | None = None,
) -> Axes:
    """Total cost divided by tasks solved, per group: what one correct answer costs.

    ``runs`` has one row per run (``Comparison.summary()``, or several concatenated) with a cost
    column and a boolean ``solved`` column. A group with no solved task has no bar (infinite cost
    per solved task) and says so; runs with unknown ``solved`` are left out of both sums.

    A sweep summary (``agentlab.sweeps.summarize()``, which has computed ``cost_per_solved_usd``
    per model and setting) is drawn as grouped bars instead: one chart function for both frames,
    so the sweep and notebook names are the same function.
    """
    if "cost_per_solved_usd" in runs.columns:
        if by is not None:
            raise ValueError("a sweep summary is grouped by its index; `by` applies to per-run frames")
        return _plot_summary_cost_per_solved(runs, ax, title)
    return _plot_runs_cost_per_solved(runs, by, ax=ax, cost_col=cost_col, solved_col=solved_col, title=title)


def _plot_runs_cost_per_solved(
    runs: pd.DataFrame,
    by: str | None,
    *,
    ax: Axes | None,
    cost_col: str,
    solved_col: str,
    title: str | None,
) -> Axes:
    """The per-run case of :func:`plot_cost_per_solved`."""
    key, _ = _group_col(runs, by)
    if ax is None:
        ax = _new_ax((max(5.0, 1.4 * key.nunique() + 3.0), 4.0))
    names: list[str] = []
    values: list[float] = []
    notes: list[str] = []
    for name, g in runs.assign(_key=key).groupby("_key", sort=False):
        judged = g[g[solved_col].notna()]
        n_solved = int(judged[solved_col].astype(bool).sum())
        cost = float(judged[cost_col].sum(min_count=1))
        names.append(str(name))
        values.append(cost / n_solved if n_solved and not math.isnan(cost) else math.nan)
        notes.append(f"{n_solved}/{len(judged)} solved")
    from matplotlib.ticker import FuncFormatter

    x = list(range(len(names)))
    colours = [_LINE_COLOURS[i % len(_LINE_COLOURS)] for i in x]
    heights = [0.0 if math.isnan(v) else v for v in values]
    ax.bar(x, heights, color=colours, width=0.6)
    top = max([*heights, 1e-9])
    for i, (v, note) in enumerate(zip(values, notes, strict=True)):
        text = f"{_usd(v)}\n{note}" if not math.isnan(v) else f"none solved\n{note}"
        ax.annotate(
            text,
            (i, 0 if math.isnan(v) else v),
            xytext=(0, 3),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=8,
        )
    _xticks(ax, names)
    ax.set_xlabel("provider:model")
    ax.set_ylabel("cost per solved task (USD)")
    ax.yaxis.set_major_formatter(FuncFormatter(_usd_tick))
    ax.set_ylim(0, top * 1.3)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.set_title(title or "What one solved task costs")
    _note_simulated_prices(ax, runs)
    return ax


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
    fmt_value: Any = None,
) -> Axes:
    """Bars of ``summary[column]``: one group per model, one colour per setting (NaN: no bar, "n/a")."""
    import matplotlib.pyplot as plt

    xs, series, rows = _groups(summary)
    if ax is None:
        _, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(xs) * max(1, len(series)) + 2.5), 4.0))
    width = 0.8 / max(1, len(series))
    labels: list[tuple[float, float, str]] = []  # (x, top of bar or error bar, text)
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
            color=_LINE_COLOURS[j % len(_LINE_COLOURS)],
            label=s,
            yerr=yerr,
            capsize=3 if err else 0,
            ecolor="#333333",
        )
        for k, (b, v) in enumerate(zip(bars, vals, strict=True)):
            text = "n/a" if math.isnan(v) else (fmt_value(v) if fmt_value else fmt.format(v))
            labels.append((b.get_x() + b.get_width() / 2, b.get_height() + (hi[k] if hi else 0.0), text))
    _value_labels(ax, labels, width * 0.95)
    _xticks(ax, xs)  # slanted when long provider:model names would run into each other
    ax.set_xlabel(str(summary.index.names[0] or "model"))
    ax.set_ylabel(ylabel or column)
    if title:
        ax.set_title(title)
    if len(series) > 1 or series != ["all"]:
        # outside the axes: inside, "best" still lands on a bar when every corner holds one
        ax.legend(
            title=" / ".join(str(n) for n in summary.index.names[1:]) or None,
            fontsize=8,
            frameon=False,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
        )
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return ax


def _value_labels(ax: Axes, labels: list[tuple[float, float, str]], slot: float) -> None:
    """Each bar's value above it (above its error bar), flat when all fit their bar, else upright.

    Upright labels are taller: the y limit is raised so the tallest stays inside the axes (side by
    side, flat "100%" labels of narrow bars ran into each other: "100%100%100%").
    """
    if not labels:
        return
    texts = [t for _, _, t in labels]
    size = 8.0 if _fits(ax, texts, slot, 8.0) else 6.5
    flat = _fits(ax, texts, slot, size)
    for x, top, text in labels:
        ax.annotate(
            text,
            (x, top),
            xytext=(0, 3),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=size,
            rotation=0 if flat else 90,
        )
    # x 0.7: a later tight_layout may take some height for the tick labels
    height_pt = 0.7 * ax.get_position().height * _fig_size(ax)[1] * 72
    label_pt = size * 1.3 if flat else max(len(t) for _, _, t in labels) * _CHAR_EM * size
    room = max(0.2, 1 - (label_pt + 12) / max(height_pt, 1.0))
    top = max(t for _, t, _ in labels)
    if top > 0:
        ax.set_ylim(0, max(ax.get_ylim()[1], top / room))


def _isna(v: Any) -> bool:
    try:
        import pandas as pd

        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _plot_share(
    summary: pd.DataFrame, column: str, ax: Axes | None, ylabel: str, title: str, err: tuple[str, str] | None
) -> Axes:
    """Bars of a share (0 to 1): percent labels and axis, with room above 100% for the labels."""
    ax = plot_metric(summary, column, ax=ax, ylabel=ylabel, title=title, fmt="{:.0%}", err=err)
    ax.set_ylim(0, max(1.15, ax.get_ylim()[1]))
    _percent_axis(ax)
    return ax


def plot_success_rate(summary: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Success rate per model and setting, with Wilson 95% intervals as error bars."""
    title = title or "Success rate (95% Wilson interval)"
    ylabel = "success rate (solved / scored)"
    return _plot_share(summary, "success_rate", ax, ylabel, title, ("success_ci_low", "success_ci_high"))


def _plot_summary_cost_per_solved(summary: pd.DataFrame, ax: Axes | None, title: str | None) -> Axes:
    """USD per solved task from a sweep summary (all runs' cost / solved runs); "n/a" when none."""
    ax = plot_metric(
        summary,
        "cost_per_solved_usd",
        ax=ax,
        ylabel="USD per solved task",
        title=title or "What one solved task costs",
        fmt="{}",
        fmt_value=_usd,
    )
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(_usd_tick))
    _note_simulated_prices(ax, summary)
    return ax


def plot_reasoning_share(summary: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Reasoning tokens as a share of output tokens (runs with a known reasoning figure only)."""
    title = title or "Reasoning share of billed output"
    return _plot_share(summary, "reasoning_share", ax, "reasoning / output tokens", title, None)


# ---------------------------------------------------------------- score against cost

_LABEL_SPOTS = (
    (7, 5, "left", "bottom"), (7, -5, "left", "top"), (-7, 5, "right", "bottom"),
    (-7, -5, "right", "top"), (0, 9, "center", "bottom"), (0, -9, "center", "top"),
    (12, 0, "left", "center"), (-12, 0, "right", "center"),
)  # fmt: skip
"""Where a point's label may go, in points from it: the first spot that overlaps nothing wins."""


def _place_labels(ax: Axes, points: list[tuple[float, float, str, str]]) -> None:
    """Label each point where its text overlaps no other label and stays inside the axes.

    Each label is in its point's colour, with a thin leader line to it: beside a crowded row of
    points a label alone could be read as naming its neighbour.

    Greedy, in the order given; a label covers neither another label nor any point's marker; with
    nowhere free, labels move further out in the same directions. Drawn boxes (of the text alone) are
    measured with the figure's renderer after layout, as the
    overlap test does; the leader is drawn once the spot is chosen.
    """
    ax.get_figure(root=True).draw_without_rendering()  # type: ignore[union-attr]
    from matplotlib.transforms import Bbox

    inside = ax.get_window_extent()
    marks = [ax.transData.transform((x, y)) for x, y, _, _ in points]
    placed: list[Any] = [Bbox.from_extents(px - 7, py - 7, px + 7, py + 7) for px, py in marks]  # markers
    for x, y, text, colour in points:
        (spot, ha, va), box = _free_spot(ax, (x, y, text, colour), inside, placed)
        leader = {"arrowstyle": "-", "color": colour, "lw": 0.6, "shrinkA": 0, "shrinkB": 4}
        ax.annotate(text, (x, y), xytext=spot, textcoords="offset points", ha=ha, va=va, fontsize=8,
                    color=colour, arrowprops=leader)  # fmt: skip
        placed.append(box)


def _free_spot(
    ax: Axes, point: tuple[float, float, str, str], inside: Any, placed: list[Any]
) -> tuple[tuple[tuple[float, float], str, str], Any]:
    """The first label spot (offset in points, alignment) whose text fits the axes and covers nothing.

    Each spot is tried with the text alone, then removed: the caller draws the label with its leader.
    """
    x, y, text, colour = point
    for scale in (1.0, 2.0, 3.0):
        for dx, dy, ha, va in _LABEL_SPOTS:
            offset = (dx * scale, dy * scale)
            t = ax.annotate(text, (x, y), xytext=offset, textcoords="offset points", ha=ha, va=va,
                            fontsize=8, color=colour)  # fmt: skip
            box = t.get_window_extent()
            t.remove()
            fits = inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1)
            if fits and not any(box.overlaps(p) for p in placed):
                return (offset, ha, va), box
    # crowded: the first spot, drawn anyway (the table beside it has the numbers)
    t = ax.annotate(text, (x, y), xytext=(7, 5), textcoords="offset points", fontsize=8, color=colour)
    box = t.get_window_extent()
    t.remove()
    return ((7.0, 5.0), "left", "baseline"), box


def _frontier(points: pd.DataFrame) -> pd.DataFrame:
    """The models no cheaper model beats: sorted by cost, each scoring above every cheaper one."""
    known = points.dropna(subset=["score", "cost"]).sort_values(["cost", "score"], ascending=[True, False])
    keep, best = [], -math.inf
    for i, row in known.iterrows():
        if row["score"] > best:
            keep.append(i)
            best = row["score"]
    return known.loc[keep]


def _bounds(lo: Any, hi: Any, centre: Any, floor: float | None = None) -> list[list[float]]:
    """Error bar lengths below and above ``centre`` (0 where the interval is unknown)."""
    below, above = [], []
    for low, high, c in zip(lo, hi, centre, strict=True):
        low = max(floor, low) if floor is not None and not math.isnan(low) else low
        below.append(0.0 if math.isnan(low) else max(0.0, c - low))
        above.append(0.0 if math.isnan(high) else max(0.0, high - c))
    return [below, above]


def plot_frontier(
    points: pd.DataFrame, *, score_name: str = "score", ax: Axes | None = None, title: str | None = None
) -> Axes:
    """Mean score against mean cost per run, one point per model, with 95% CIs on both axes.

    ``points``: one row per model with ``model``, ``score``, ``score_low``, ``score_high``, ``cost``,
    ``cost_low``, ``cost_high`` (``agentlab.evals.views.frontier_points``). The dashed line joins the
    models on the frontier (none cheaper scores higher); the cost interval is cut at $0, where a
    symmetric interval on few tasks would reach below. Cost is a log axis when the models' costs
    span more than 20x. Labels are placed so that no two overlap.
    """
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    if ax is None:
        ax = _new_ax((7.5, 4.8))
    known = points.dropna(subset=["score", "cost"])
    for i, (_, row) in enumerate(known.iterrows()):
        colour, marker = _LINE_COLOURS[i % len(_LINE_COLOURS)], _MARKERS[i % len(_MARKERS)]
        xerr = _bounds([row["cost_low"]], [row["cost_high"]], [row["cost"]], floor=0.0)
        yerr = _bounds([row["score_low"]], [row["score_high"]], [row["score"]])
        ax.errorbar([row["cost"]], [row["score"]], xerr=xerr, yerr=yerr, fmt=marker, color=colour,
                    ecolor=colour, elinewidth=1.1, capsize=3, markersize=7, alpha=0.95)  # fmt: skip
    front = _frontier(known)
    if len(front) > 1:
        ax.step(front["cost"], front["score"], where="post", linestyle="--", color=PALETTE["grey"],
                linewidth=1.0, label="frontier: no cheaper model scores higher")  # fmt: skip
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    costs = [c for c in known["cost"] if c > 0]
    if costs and max(costs) / min(costs) > 20:
        from matplotlib.ticker import NullFormatter

        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.xaxis.set_major_formatter(FuncFormatter(_usd_tick))
    ax.margins(x=0.18, y=0.15)
    ax.set_xlabel("mean cost per run (USD, 95% CI)")
    ax.set_ylabel(f"mean {score_name} (95% CI)")
    ax.grid(alpha=0.3)
    ax.set_axisbelow(True)
    ax.set_title(title or f"{score_name} against cost, per model")
    ax.set_xlim(ax.get_xlim())
    ax.set_ylim(ax.get_ylim())
    colours = [_LINE_COLOURS[i % len(_LINE_COLOURS)] for i in range(len(known))]
    spots = [(float(r["cost"]), float(r["score"]), str(r["model"])) for _, r in known.iterrows()]
    _place_labels(ax, [(*spot, colour) for spot, colour in zip(spots, colours, strict=True)])
    return ax
