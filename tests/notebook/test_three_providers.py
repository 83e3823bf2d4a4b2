"""Three providers side by side on the simulator: Gemini's rows, columns and chart series are all there.

One comparison of ``openai:sim-reasoner``, ``anthropic:sim-thinker`` and ``google:sim-gemini`` (real
adapters and SDKs against ``agentlab.sim``) feeds the usage frame, the summary, the compare view and
the three charts. Gemini must come out like the other two: reasoning tokens reported (not ``<NA>``,
not 0) and priced, a column of its own, a distinct colour and marker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import Rectangle

import agentlab
from agentlab.notebook import charts
from agentlab.sweeps.compare import Comparison, compare

if TYPE_CHECKING:
    from matplotlib.axes import Axes

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]
TASK = "What is the total of the temperatures in Paris, Rome and Oslo?"


@agentlab.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "24 C", "Rome": "21 C", "Oslo": "9 C"}.get(city.split(",")[0].strip(), "no data")


def _solved(answer: str | None) -> bool:
    return answer is not None and "54" in answer


@pytest.fixture(scope="module")
def cmp() -> Comparison:
    return compare(TASK, MODELS, tools=[get_weather], check=_solved, live=False)


def test_compare_has_a_gemini_run_that_solved_it(cmp: Comparison) -> None:
    assert cmp.labels == MODELS
    assert [e.status for e in cmp.entries] == ["completed"] * 3, [e.error for e in cmp.entries]
    assert [e.solved for e in cmp.entries] == [True, True, True]
    assert cmp.steps["google:sim-gemini"] >= 2  # a tool loop: signatures went back within it
    text = str(cmp)
    assert "google:sim-gemini" in text and "google:sim-gemini" in cmp._repr_html_()


def test_usage_frame_has_gemini_rows_with_reasoning_and_cost(cmp: Comparison) -> None:
    df = cmp.usage
    assert list(df["provider"].unique()) == ["openai", "anthropic", "google"]
    gem = df[df["provider"] == "google"]
    assert len(gem) == cmp.steps["google:sim-gemini"]
    assert gem["reasoning_tokens"].notna().all() and (gem["reasoning_tokens"] > 0).all()
    assert (gem["reasoning_tokens"] <= gem["output_tokens"]).all()  # reasoning is billed output
    assert (gem["reasoning_source"] == "reported").all()
    assert (gem["total_cost_usd"] > 0).all() and (gem["reasoning_cost_usd"] > 0).all()
    assert (gem["reasoning_cost_usd"] <= gem["output_cost_usd"]).all()
    # every provider's rows add up the same way: input + output = total, cost = sum of its parts
    parts = ["input_cost_usd", "cache_read_cost_usd", "cache_write_cost_usd", "output_cost_usd"]
    for _, g in df.groupby("provider", sort=False):
        assert g[parts].sum(axis=1).tolist() == pytest.approx(g["total_cost_usd"].tolist())
    summary = cmp.summary().set_index("label")
    assert summary.loc["google:sim-gemini", "reasoning_tokens"] == gem["reasoning_tokens"].sum()
    assert summary.loc["google:sim-gemini", "cost_usd"] == pytest.approx(gem["total_cost_usd"].sum())


def test_cost_breakdown_has_a_gemini_bar_with_a_reasoning_segment(cmp: Comparison) -> None:
    data = charts.cost_breakdown(cmp.usage)
    assert list(data.index) == MODELS
    assert (data["reasoning"] > 0).all() and (data["output_unsplit"] == 0).all()
    ax = cmp.plot_costs()
    labels = [t.get_text().replace(":\n", ":") for t in ax.get_xticklabels()]
    assert labels == MODELS
    assert sum("% reasoning" in t.get_text() for t in ax.texts) == 3


def _line_styles(ax: Axes) -> dict[str, tuple[str, str]]:
    legend = ax.get_legend()
    assert legend is not None
    names = [t.get_text() for t in legend.get_texts()]
    lines = [ln for ln in ax.get_lines() if ln.get_label() in names]
    return {str(ln.get_label()): (to_hex(ln.get_color()), str(ln.get_marker())) for ln in lines}


def test_reasoning_per_step_gives_each_provider_its_colour_and_marker(cmp: Comparison) -> None:
    styles = _line_styles(cmp.plot_reasoning())
    assert list(styles) == MODELS
    assert len({c for c, _ in styles.values()}) == 3, styles
    assert len({m for _, m in styles.values()}) == 3, styles  # apart in greyscale too


def test_cost_per_solved_has_three_bars(cmp: Comparison) -> None:
    ax = charts.plot_cost_per_solved(cmp.summary())
    heights = [p.get_height() for p in ax.patches if isinstance(p, Rectangle)]
    assert len(heights) == 3 and all(h > 0 for h in heights)
    assert len({to_hex(p.get_facecolor()) for p in ax.patches}) == 3
    assert sum("1/1 solved" in t.get_text() for t in ax.texts) == 3


def test_compare_view_streams_three_columns_that_wrap() -> None:
    """Live: one column per provider, sharing the row; on a narrow page they wrap instead of overflowing."""
    import agentlab.notebook.run_view as views
    from agentlab.notebook._coalesce import flush_now

    made: list[views.CompareView] = []
    real = views.CompareView

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, *a: object, **kw: object) -> None:
            super().__init__(*a, **kw)
            made.append(self)

    views.CompareView = Spy  # type: ignore[misc]
    try:
        live = compare(TASK, MODELS, tools=[get_weather], check=_solved, live=True)
    finally:
        views.CompareView = real  # type: ignore[misc]
    view = made[0]
    row = view.children[1]
    assert row.layout.flex_flow == "row wrap" and list(row.children) == view.model_columns
    assert [c.title for c in view.columns] == MODELS
    for column, col, entry in zip(view.model_columns, view.columns, live.entries, strict=True):
        assert column.layout.flex == "1 1 0" and column.layout.min_width == "260px"
        flush_now(column)
        assert col.status == "completed"
        assert column._tail is not None
        assert entry.output is not None and entry.output in column._tail.value
        assert "reasoning" in column._tail.value
