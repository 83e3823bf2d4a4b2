"""Charts: labelled axes with units, legends, Axes returned, unknown never drawn as zero, no show()."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import Rectangle

import agentlab
from agentlab.costs.frames import usage_frame
from agentlab.neutral.usage import CallUsage
from agentlab.notebook import charts
from agentlab.testing import ScriptedAdapter, Step

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def _legend_texts(ax: Axes) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None, "the chart has no legend"
    return [t.get_text() for t in legend.get_texts()]


def _bar_heights(ax: Axes) -> list[float]:
    heights = []
    for p in ax.patches:
        assert isinstance(p, Rectangle), p
        heights.append(p.get_height())
    return heights


def _result(model: str, reasoning: list[int | None]) -> agentlab.RunResult:
    provider, _, name = model.partition(":")
    steps = []
    for i, r in enumerate(reasoning):
        last = i == len(reasoning) - 1
        usage = CallUsage(
            input_tokens=1000 + 100 * i,
            cache_read_tokens=500 if i else 0,
            cache_write_tokens=0,
            output_tokens=(r or 0) + 50,
            reasoning_tokens=r,
            reasoning_source="reported" if r is not None else "unknown",
        )
        steps.append(
            Step(text="done" if last else "", tool_calls=[] if last else [("noop", {})], usage=usage)
        )
    return agentlab.run(
        model, "q", tools=[noop], adapter=ScriptedAdapter(steps, provider=provider, model=name)
    )


@agentlab.tool
def noop() -> str:
    """Does nothing."""
    return "ok"


@pytest.fixture(autouse=True)
def _no_show(monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt

    def fail(*a: object, **k: object) -> None:
        raise AssertionError("charts must not call plt.show()")

    monkeypatch.setattr(plt, "show", fail)


def test_cost_breakdown_stacks_and_labels() -> None:
    df = usage_frame(
        [_result("openai:sim-reasoner", [800, 300]), _result("anthropic:sim-thinker", [1200, 100])]
    )
    data = charts.cost_breakdown(df)
    assert list(data.index) == ["openai:sim-reasoner", "anthropic:sim-thinker"]
    total = df.groupby(df["provider"] + ":" + df["model"], sort=False)["total_cost_usd"].sum()
    assert data.sum(axis=1).tolist() == pytest.approx(total.tolist())
    assert (data["reasoning"] > 0).all() and (data["output_unsplit"] == 0).all()
    ax = charts.plot_cost_breakdown(df)
    assert ax.get_ylabel() == "cost (USD)" and ax.get_xlabel() == "provider:model"
    labels = _legend_texts(ax)
    assert "output, reasoning" in labels and "input, uncached" in labels
    assert ax.figure is not None


def test_unknown_reasoning_is_hatched_not_zero() -> None:
    df = usage_frame([_result("anthropic:sim-thinker-legacy", [None, None])])
    data = charts.cost_breakdown(df)
    assert data.loc["anthropic:sim-thinker-legacy", "output_unsplit"] > 0
    assert data.loc["anthropic:sim-thinker-legacy", "reasoning"] == 0
    ax = charts.plot_cost_breakdown(df)
    assert "output, split unknown" in _legend_texts(ax)
    assert "reasoning n/a" in " ".join(t.get_text() for t in ax.texts)


def test_per_run_divides_by_runs() -> None:
    r = _result("openai:sim-reasoner", [100])
    df = usage_frame([r, _result("openai:sim-reasoner", [100])])
    one = charts.cost_breakdown(usage_frame([r]))
    assert charts.cost_breakdown(df, per_run=True).sum(axis=1).iloc[0] == pytest.approx(
        one.sum(axis=1).iloc[0]
    )


def test_reasoning_per_step_draws_a_line_per_run_and_gaps_for_unknown() -> None:
    df = usage_frame(
        [
            _result("openai:sim-reasoner", [800, 300, 50]),
            _result("openai:sim-reasoner", [700, 200, 40]),
            _result("anthropic:sim-thinker", [900, None]),
        ]
    )
    import matplotlib.pyplot as plt

    _fig, ax = plt.subplots()
    out = charts.plot_reasoning_per_step(df, ax=ax)
    assert out is ax
    assert ax.get_xlabel().startswith("step") and ax.get_ylabel() == "reasoning tokens"
    assert _legend_texts(ax) == [
        "openai:sim-reasoner",
        "anthropic:sim-thinker",
        "reasoning tokens unknown",
    ]
    lines = [ln for ln in ax.get_lines() if ln.get_linestyle() != "None"]
    assert len(lines) == 3
    assert math.isnan(np.asarray(lines[2].get_ydata(), dtype=float)[1])  # unknown is a gap, not 0


def test_cost_per_solved() -> None:
    runs = pd.DataFrame(
        {
            "label": ["a", "a", "b", "b", "c"],
            "cost_usd": [1.0, 1.0, 0.5, 0.5, 2.0],
            "solved": pd.array([True, False, True, True, False], dtype="boolean"),
        }
    )
    ax = charts.plot_cost_per_solved(runs)
    heights = _bar_heights(ax)
    assert heights == pytest.approx([2.0, 0.5, 0.0])
    texts = " ".join(t.get_text() for t in ax.texts)
    assert "1/2 solved" in texts and "none solved" in texts
    assert ax.get_ylabel() == "cost per solved task (USD)"


def test_one_cost_per_solved_for_runs_and_sweep_summaries() -> None:
    """One chart function: the sweep and notebook names are it, and it draws either frame."""
    from agentlab import notebook, sweeps
    from agentlab.sweeps import charts as sweep_charts

    assert sweeps.plot_cost_per_solved is notebook.plot_cost_per_solved is charts.plot_cost_per_solved
    assert sweep_charts.plot_metric is charts.plot_metric
    runs = pd.DataFrame({"label": ["a", "b"], "cost_usd": [1.0, 2.0], "solved": [True, False]})
    ax = sweeps.plot_cost_per_solved(runs)
    assert _bar_heights(ax) == pytest.approx([1.0, 0.0])
    idx = pd.MultiIndex.from_tuples([("m1", "drop"), ("m2", "drop")], names=["model", "continuity"])
    summary = pd.DataFrame(
        {"solved": pd.array([2, 0], dtype="Int64"), "cost_per_solved_usd": [0.5, math.nan]}, index=idx
    )
    ax = notebook.plot_cost_per_solved(summary)
    assert [t.get_text() for t in ax.texts] == ["$0.5000", "n/a"]
    with pytest.raises(ValueError, match="by"):
        charts.plot_cost_per_solved(summary, by="model")
