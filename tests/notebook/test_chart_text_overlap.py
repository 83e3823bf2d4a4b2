"""Every shipped chart, drawn (Agg) from realistic data: no two visible texts overlap.

Money and percentages read as such on the axes.

Texts are every visible label a reader sees: titles, axis labels, the tick labels inside the view,
annotations (bar values, notes) and legend texts. Two overlap when their drawn bounding boxes
(``get_window_extent`` with the figure's renderer) intersect by more than a pixel.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

import agentlab as al
from agentlab.notebook import charts
from agentlab.sweeps.analysis import summarize

MODELS = [
    "openai:sim-reasoner",
    "anthropic:sim-thinker",
    "google:sim-gemini",
    "deepseek:sim-deepseek",
    "openrouter:sim-router-claude",
]


@pytest.fixture(scope="module")
def comparison() -> al.Comparison:
    """Five models, one run each (how repeats are drawn is the repeats views' concern)."""

    @al.tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"{city}: 21 C"

    return al.compare(
        "Is it warmer in Paris or Rome?",
        MODELS,
        tools=[get_weather],
        live=False,
        check=lambda a: "Rome" in (a or ""),
    )


def _summary(models: int = 3, settings: int = 3) -> pd.DataFrame:
    """A sweep summary: every setting solved every time (the "100%100%100%" case), costs near $0.01."""
    idx = pd.MultiIndex.from_product(
        [MODELS[:models], ["none", "full", "summary"][:settings]], names=["model", "setting"]
    )
    n = len(idx)
    return pd.DataFrame(
        {
            "success_rate": [1.0] * n,
            "success_ci_low": [0.72] * n,
            "success_ci_high": [1.0] * n,
            "cost_per_solved_usd": [0.008 + 0.0011 * i for i in range(n)],
            "reasoning_share": [0.92 - 0.01 * i for i in range(n)],
            "price_source": ["agentlab simulated"] * n,
        },
        index=idx,
    )


def _texts(fig: Figure) -> Iterator[Text]:
    for ax in fig.axes:
        yield from (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label)  # type: ignore[attr-defined]
        for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            lo, hi = sorted(lim)
            span = (hi - lo) * 1e-9
            for loc, lab in zip(axis.get_ticklocs(), axis.get_ticklabels(), strict=False):
                if lo - span <= loc <= hi + span:
                    yield lab
        yield from ax.texts
        legend = ax.get_legend()
        if legend is not None:
            yield legend.get_title()
            yield from legend.get_texts()
    yield from fig.texts


def overlaps(fig: Figure) -> list[tuple[str, str]]:
    """Pairs of visible, non-empty texts whose drawn boxes intersect (by more than 1 px each way)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes: list[tuple[str, Bbox]] = []
    for t in _texts(fig):
        if t.get_visible() and t.get_text().strip():
            boxes.append((t.get_text(), t.get_window_extent(renderer).expanded(1.0, 1.0).padded(-1.0)))
    return [
        (a, b) for (a, ba), (b, bb) in itertools.combinations(boxes, 2) if ba.overlaps(bb)
    ]


def _money_ticks(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels() if t.get_text()]


SUMMARY_CHARTS: dict[str, Callable[..., Axes]] = {
    "success_rate": charts.plot_success_rate,
    "cost_per_solved": charts.plot_cost_per_solved,
    "reasoning_share": charts.plot_reasoning_share,
}


@pytest.mark.parametrize("name", list(SUMMARY_CHARTS))
@pytest.mark.parametrize(("models", "settings"), [(3, 3), (5, 3), (2, 1)])
def test_sweep_charts_alone_have_no_overlapping_text(name: str, models: int, settings: int) -> None:
    ax = SUMMARY_CHARTS[name](_summary(models, settings))
    assert overlaps(ax.figure) == []  # type: ignore[arg-type]
    plt.close(ax.figure)  # type: ignore[arg-type]


def test_sweep_charts_side_by_side_have_no_overlapping_text() -> None:
    """Notebook 04's layout: the three charts in one row, then ``tight_layout``."""
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    for ax, plot in zip(axes, SUMMARY_CHARTS.values(), strict=True):
        plot(_summary(3, 3), ax=ax)
    fig.tight_layout()
    assert overlaps(fig) == []
    plt.close(fig)


def test_comparison_charts_have_no_overlapping_text(comparison: al.Comparison) -> None:
    drawn: list[tuple[str, Any]] = [
        ("costs", comparison.plot_costs()),
        ("reasoning", comparison.plot_reasoning()),
        ("timeline", al.plot_timeline(comparison)),
        ("cost_per_solved", charts.plot_cost_per_solved(comparison.summary())),
        ("success_rate", charts.plot_success_rate(summarize(comparison.runs_frame()))),
    ]
    for name, ax in drawn:
        assert overlaps(ax.figure) == [], name
        plt.close(ax.figure)


def test_money_ticks_are_short_and_percent_ticks_are_percent() -> None:
    ax = charts.plot_cost_per_solved(_summary())
    ticks = _money_ticks(ax)
    assert ticks and all(t.startswith("$") for t in ticks)
    assert not any(t.endswith("000") for t in ticks), ticks  # "$0.008000" -> "$0.008"
    assert "$0.008" in ticks or "$0.01" in ticks, ticks
    plt.close(ax.figure)  # type: ignore[arg-type]
    for plot in (charts.plot_success_rate, charts.plot_reasoning_share):
        ax = plot(_summary())
        ticks = _money_ticks(ax)
        assert ticks and all(t.endswith("%") for t in ticks), ticks
        plt.close(ax.figure)  # type: ignore[arg-type]
