"""Charts a reader can trust (issue 17), checked on the drawn artists.

No line hidden under another, unknown shown as unknown, legends off the bars, simulated prices said.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Rectangle

import agentlab
from agentlab.costs.frames import usage_frame
from agentlab.neutral.usage import CallUsage
from agentlab.notebook import charts
from agentlab.testing import ScriptedAdapter, Step


@agentlab.tool
def noop() -> str:
    """Does nothing."""
    return "ok"


def _result(model: str, reasoning: list[int | None]) -> agentlab.RunResult:
    provider, _, name = model.partition(":")
    steps = []
    for i, r in enumerate(reasoning):
        last = i == len(reasoning) - 1
        usage = CallUsage(
            input_tokens=1000,
            cache_read_tokens=0,
            cache_write_tokens=0,
            output_tokens=(r or 0) + 50,
            reasoning_tokens=r,
            reasoning_source="reported" if r is not None else "unknown",
        )
        steps.append(
            Step(text="done" if last else "", tool_calls=[] if last else [("noop", {})], usage=usage)
        )
    adapter = ScriptedAdapter(steps, provider=provider, model=name)
    return agentlab.run(model, "q", tools=[noop], adapter=adapter)


def _data_lines(ax: object) -> list[object]:
    return [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 0]  # type: ignore[attr-defined]


def test_identical_reasoning_lines_stay_apart() -> None:
    runs = [_result("openai:sim-reasoner", [500, 200]), _result("anthropic:sim-thinker", [500, 200])]
    df = usage_frame(runs)
    ax = charts.plot_reasoning_per_step(df)
    a, b = _data_lines(ax)
    # same y values, yet the two lines do not coincide: dodged along x, own marker, own dash
    assert list(a.get_ydata()) == list(b.get_ydata())  # type: ignore[attr-defined]
    assert not np.allclose(a.get_xdata(), b.get_xdata())  # type: ignore[attr-defined]
    assert a.get_marker() != b.get_marker() and a.get_linestyle() != b.get_linestyle()  # type: ignore[attr-defined]
    # the dodge stays within the step, so steps still read as integers
    assert np.all(np.abs(np.asarray(a.get_xdata()) - np.array([1, 2])) < 0.25)  # type: ignore[attr-defined]


def test_unknown_reasoning_is_missing_and_labelled_not_zero() -> None:
    df = usage_frame([_result("anthropic:sim-thinker-legacy", [None, None])])
    ax = charts.plot_reasoning_per_step(df)
    for ln in ax.get_lines():
        ys = np.asarray(ln.get_ydata(), dtype=float)
        assert not np.any(ys == 0), "an unknown step is drawn at y=0"
    legend = ax.get_legend()
    assert legend is not None
    assert "reasoning tokens unknown" in [t.get_text() for t in legend.get_texts()]
    assert [t.get_text() for t in ax.texts].count("unknown") == 2


def _summary() -> pd.DataFrame:
    idx = pd.MultiIndex.from_product(
        [["openai:sim-reasoner", "anthropic:sim-thinker"], ["on", "off"]], names=["model", "setting"]
    )
    return pd.DataFrame(
        {
            "success_rate": [1.0, 1.0, 1.0, 0.9],
            "success_ci_low": [0.7, 0.7, 0.7, 0.6],
            "success_ci_high": [1.0, 1.0, 1.0, 1.0],
            "cost_per_solved_usd": [0.01, 0.02, 0.005556, 0.03],
            "reasoning_share": [0.9, 0.0, 0.95, 0.0],
            "price_source": ["agentlab simulated"] * 4,
        },
        index=idx,
    )


def test_legends_never_cover_bars_in_notebook_04_layout() -> None:
    # notebook 04: three charts side by side, then tight_layout (legends used to sit on a full bar)
    summary = _summary()
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    charts.plot_success_rate(summary, ax=axes[0])
    charts.plot_cost_per_solved(summary, ax=axes[1])
    charts.plot_reasoning_share(summary, ax=axes[2])
    fig.tight_layout()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    bars = [p.get_window_extent(renderer) for ax in axes for p in ax.patches if isinstance(p, Rectangle)]
    assert bars
    for ax in axes:
        legend = ax.get_legend().get_window_extent(renderer)
        hit = [b for b in bars if b.width > 0 and b.height > 0 and legend.overlaps(b)]
        assert not hit, f"legend of {ax.get_title()!r} covers {len(hit)} bar(s)"


def test_cost_charts_say_prices_are_simulated() -> None:
    df = usage_frame([_result("openai:sim-reasoner", [500, 200])])
    assert (df["price_source"] == "agentlab simulated").all()
    ax = charts.plot_cost_breakdown(df)
    assert any("prices simulated" in t.get_text() for t in ax.texts)
    ax2 = charts.plot_cost_per_solved(_summary())
    assert any("prices simulated" in t.get_text() for t in ax2.texts)
    labels = [t.get_text() for t in ax2.texts]
    assert "$0.01000" in labels and "$0.005556" in labels  # one money rule: 4 significant digits


def test_real_prices_carry_no_simulated_note() -> None:
    df = usage_frame([_result("openai:sim-reasoner", [500, 200])])
    df["price_source"] = pd.array(["genai-prices 0.0.40"] * len(df), dtype="string")
    ax = charts.plot_cost_breakdown(df)
    assert not any("simulated" in t.get_text() for t in ax.texts)
    assert not math.isnan(float(df["total_cost_usd"].sum()))


def test_simulated_note_overlaps_neither_title_nor_bars() -> None:
    df = usage_frame([_result("openai:sim-reasoner", [500, 200]), _result("anthropic:sim-thinker", [400])])
    ax = charts.plot_cost_breakdown(df)
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    note = next(t for t in ax.texts if "prices simulated" in t.get_text()).get_window_extent(renderer)
    assert not note.overlaps(ax.title.get_window_extent(renderer))
    for p in ax.patches:
        assert not note.overlaps(p.get_window_extent(renderer))
    legend = ax.get_legend()
    assert legend is not None and not note.overlaps(legend.get_window_extent(renderer))
