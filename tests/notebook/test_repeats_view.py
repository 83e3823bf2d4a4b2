"""compare(repeats=N): one column per model, compact repeats, `repeat` in every table, mean ± CI charts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

import agentlab as al
from agentlab.notebook import run_view
from agentlab.notebook._coalesce import flush_now
from agentlab.sweeps.analysis import mean_interval
from agentlab.sweeps.compare import Comparison
from agentlab.testing import ScriptedAdapter, Step

MODELS = [
    "openai:sim-reasoner",
    "anthropic:sim-thinker",
    "google:sim-gemini",
    "deepseek:sim-deepseek",
    "openrouter:sim-router-claude",
]
REPEATS = 3


@al.tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"{city}: 21 C"


def _adapter(model: str, k: int) -> ScriptedAdapter:
    provider, _, name = model.partition(":")
    steps = [
        Step(reasoning=["x "] * (5 + 20 * k), tool_calls=[("get_weather", {"city": "Paris"})]),
        Step(reasoning=["y "] * (3 + k), text="Paris: 21 C"),
    ]
    return ScriptedAdapter(steps, provider=provider, model=name)


@pytest.fixture
def views(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[run_view.CompareView]]:
    """The compare views ``compare(live=True)`` builds (outside a kernel: built, not shown)."""
    made: list[run_view.CompareView] = []

    class Recording(run_view.CompareView):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            made.append(self)

    monkeypatch.setattr(run_view, "CompareView", Recording)
    yield made


def _compare(models: list[str] = MODELS, live: bool = False) -> Comparison:
    adapters = [_adapter(m, k) for m in models for k in range(REPEATS)]
    return al.compare("Warm?", models, tools=[get_weather], adapters=adapters, repeats=REPEATS, live=live)


def test_live_view_has_one_column_per_model_and_says_models_by_repeats(
    views: list[run_view.CompareView],
) -> None:
    cmp = _compare(live=True)
    (view,) = views
    head, row = view.children
    assert "5 models × 3 repeats" in head.value and "15 models" not in head.value
    assert len(row.children) == len(MODELS)  # one column per model, not one per run
    for label, col in zip(MODELS, row.children, strict=True):
        flush_now(col)  # the flusher renders a column (a run's end does not, on the runs' thread)
        page = col.html
        assert label in page
        assert page.count("<details>") == REPEATS and "<details open" not in page  # full views folded
        assert len(col.children) <= 2  # its HTML and its live reasoning text: no widget per run or step
        for k, run in enumerate(col.runs):
            line = run.line_html()
            assert line in page
            text = re.sub(r"<[^>]+>", "", line)
            assert text.startswith(f"r{k + 1} · completed · 2 steps · out ")
            assert "$" in text and text.endswith(" s")
    assert len(view.columns) == 15 and all(c.status == "completed" for c in view.columns)
    # the caption of the result agrees
    assert "5 models × 3 repeats" in cmp._repr_html_()


def test_static_final_state_is_compact_too(views: list[run_view.CompareView]) -> None:
    """What a saved notebook shows without a kernel: one column per model, each repeat a line + <details>."""
    _compare(live=True)
    (view,) = views
    page = view.summary_html()
    assert "5 models × 3 repeats" in page
    assert page.count("flex:1 1 0;min-width:260px") == len(MODELS) + 15  # 5 columns; a run view per repeat
    assert page.count("<details>") == 15 and "<details open" not in page
    text = view.summary_text()
    assert text.splitlines()[0] == "Compare · 5 models × 3 repeats"
    assert len(text.splitlines()) == 1 + len(MODELS) * (1 + REPEATS)  # about a screen, not 3.5
    bundle = view._repr_mimebundle_()
    assert bundle["text/plain"] == text and bundle["text/html"] == page


def test_one_run_per_model_keeps_the_flat_columns(views: list[run_view.CompareView]) -> None:
    adapters = [_adapter(m, 0) for m in MODELS[:2]]
    al.compare("Warm?", MODELS[:2], tools=[get_weather], adapters=adapters, live=True)
    (view,) = views
    assert view.children[1].children == tuple(view.model_columns)
    assert [c.runs for c in view.model_columns] == [[c] for c in view.columns]
    assert "2 models" in view.children[0].value and "repeats" not in view.children[0].value
    for col in view.model_columns:  # a run's full view, no summary line, nothing folded
        flush_now(col)
        assert "<details>" not in col.html and "completed" in col.html


def test_repeat_is_visible_in_every_table() -> None:
    cmp = _compare(MODELS[:2])
    assert "repeat" in cmp.summary().columns
    shown = cmp.usage._repr_html_()
    header = re.search(r"<thead>.*?</thead>", shown, re.S)
    assert header is not None and ">repeat<" in header.group(0) and ">run_id<" in header.group(0)
    assert "repeat" in repr(cmp.usage).splitlines()[0]
    assert al.tool_frame(cmp)["repeat"].tolist() == [0, 1, 2] * 2
    tl = al.timeline_frame(cmp)
    assert sorted(set(tl["repeat"].tolist())) == [0, 1, 2]
    assert tl.groupby(["label", "repeat"])["run_id"].nunique().eq(1).all()


def test_plot_costs_draws_the_mean_run_with_its_interval() -> None:
    import matplotlib.pyplot as plt
    from matplotlib.container import BarContainer, ErrorbarContainer

    cmp = _compare(MODELS[:2])
    ax = cmp.plot_costs()
    try:
        heights = [0.0, 0.0]
        for c in ax.containers:
            if isinstance(c, BarContainer):
                for i, patch in enumerate(c.patches):
                    heights[i] += patch.get_height()
        runs = cmp.summary().groupby("label", sort=False)["cost_usd"]
        for i, (_, costs) in enumerate(runs):
            mean, lo, hi = mean_interval(costs.tolist())
            assert heights[i] == pytest.approx(mean)  # the mean run, not the sum of the 3 repeats
            assert heights[i] < costs.sum() / 2
        (err,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
        segs = err.lines[2][0].get_segments()  # one vertical segment per bar: (x, low) -> (x, high)
        for i, (_, costs) in enumerate(runs):
            mean, lo, hi = mean_interval(costs.tolist())
            (x0, y0), (x1, y1) = segs[i]
            assert x0 == x1 == i and y0 == pytest.approx(lo) and y1 == pytest.approx(hi)
        assert "mean" in ax.get_title()
    finally:
        plt.close("all")


def test_timeline_gives_each_repeat_its_own_lanes() -> None:
    import matplotlib.pyplot as plt

    cmp = _compare(MODELS[:2])
    ax = al.plot_timeline(cmp)
    try:
        names = [t.get_text() for t in ax.get_yticklabels()]
        assert len(names) == len(set(names)) == 2 * 2 * REPEATS
        assert f"{MODELS[0]} r2 · model" in names and f"{MODELS[1]} r3 · tools" in names
        # every run's bars sit in lanes of their own (on main the 3 repeats were drawn over each other)
        bottoms = {round(float(p.get_extents().y0), 6) for c in ax.collections for p in c.get_paths()}
        lanes = {round(b + 0.35) for b in bottoms}
        assert lanes == set(range(2 * 2 * REPEATS))
    finally:
        plt.close("all")
