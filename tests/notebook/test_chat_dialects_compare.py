"""Six providers side by side on the simulator: the Chat Completions dialects are co-equal columns.

One comparison of OpenAI, Anthropic, Gemini, DeepSeek, OpenRouter (Claude-backed) and a local vLLM
server (real adapters and SDKs against ``agentlab.sim``) feeds the usage frame, the summary and the
charts. DeepSeek and OpenRouter report reasoning tokens; the local server does not (``<NA>``,
``unknown``, never 0) and has no price (NaN, not a fake 0); OpenRouter's own ``usage.cost`` sits
beside agentlab's computed cost.
"""

from __future__ import annotations

import math

import pytest
from matplotlib.colors import to_hex

import agentlab
from agentlab.notebook import charts
from agentlab.sweeps.compare import Comparison, compare

MODELS = [
    "openai:sim-reasoner",
    "anthropic:sim-thinker",
    "google:sim-gemini",
    "deepseek:sim-deepseek",
    "openrouter:sim-router-claude",
    "vllm:sim-local",
]
PRICED = MODELS[:5]
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


def test_every_dialect_ran_a_tool_loop(cmp: Comparison) -> None:
    assert cmp.labels == MODELS
    assert [e.status for e in cmp.entries] == ["completed"] * 6, [e.error for e in cmp.entries]
    assert all(cmp.steps[m] >= 2 for m in MODELS)
    assert all(m in cmp._repr_html_() for m in MODELS)


def test_reasoning_buckets_reported_or_unknown(cmp: Comparison) -> None:
    df = cmp.usage
    assert list(df["provider"].unique()) == [m.split(":")[0] for m in MODELS]
    for provider in ("deepseek", "openrouter"):
        rows = df[df["provider"] == provider]
        assert (rows["reasoning_source"] == "reported").all(), provider
        assert (rows["reasoning_tokens"] > 0).all()
        assert (rows["reasoning_tokens"] <= rows["output_tokens"]).all()
    local = df[df["provider"] == "vllm"]
    assert (local["reasoning_source"] == "unknown").all()
    assert local["reasoning_tokens"].isna().all()  # not 0
    assert (local["output_tokens"] > 0).all()


def test_costs_computed_reported_and_unknown(cmp: Comparison) -> None:
    df = cmp.usage
    priced = df[df["provider"] != "vllm"]
    assert (priced["total_cost_usd"] > 0).all() and priced["price_source"].eq("agentlab simulated").all()
    router = df[df["provider"] == "openrouter"]
    assert router["provider_cost_usd"].notna().all()  # OpenRouter's own usage.cost, beside ours
    assert router["provider_cost_usd"].tolist() == pytest.approx(router["total_cost_usd"].tolist(), rel=0.05)
    assert df[df["provider"] != "openrouter"]["provider_cost_usd"].isna().all()  # nobody else reports one
    local = df[df["provider"] == "vllm"]
    assert local["total_cost_usd"].isna().all()  # a local server has no price: unknown, not 0
    assert local["price_source"].str.contains("no price").all()
    s = cmp.summary().set_index("label")
    assert s.loc["openrouter:sim-router-claude", "provider_cost_usd"] == pytest.approx(
        router["provider_cost_usd"].sum()
    )
    assert math.isnan(s.loc["deepseek:sim-deepseek", "provider_cost_usd"])
    assert math.isnan(s.loc["vllm:sim-local", "cost_usd"])
    assert s.loc["deepseek:sim-deepseek", "price_source"] == "agentlab simulated"


def test_charts_have_every_group(cmp: Comparison) -> None:
    data = charts.cost_breakdown(cmp.usage)
    assert set(PRICED) <= set(data.index)
    ax = cmp.plot_costs()
    assert set(PRICED) <= {t.get_text().replace(":\n", ":") for t in ax.get_xticklabels()}
    legend = cmp.plot_reasoning().get_legend()
    assert legend is not None
    names = [t.get_text() for t in legend.get_texts()]
    assert set(PRICED) <= set(names)  # the local server has no reasoning figure to plot
    ax = charts.plot_cost_per_solved(cmp.summary())
    assert len({to_hex(p.get_facecolor()) for p in ax.patches}) >= 5


def test_compare_view_wraps_six_columns() -> None:
    """Live: one column per provider; with six they wrap on a narrow page instead of overflowing."""
    import agentlab.notebook.run_view as views

    made: list[views.CompareView] = []
    real = views.CompareView

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, *a: object, **kw: object) -> None:
            super().__init__(*a, **kw)
            made.append(self)

    views.CompareView = Spy  # type: ignore[misc]
    try:
        compare(TASK, MODELS, tools=[get_weather], check=_solved, live=True)
    finally:
        views.CompareView = real  # type: ignore[misc]
    view = made[0]
    row = view.children[1]
    assert row.layout.flex_flow == "row wrap" and [c.title for c in view.columns] == MODELS
    assert list(row.children) == view.model_columns
    assert all(c.layout.min_width == "260px" for c in view.model_columns)
    assert all(c.status == "completed" for c in view.columns)
