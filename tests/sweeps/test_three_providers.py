"""A continuity sweep over the three built-in providers on the simulator: Gemini is a co-equal row.

Written against ``continuity_settings()`` generically: each provider gets ``verbatim`` and whichever
ablation arm its registry entry allows (``drop`` where reasoning can be dropped mid-loop, thinking
off where it cannot), so the test holds whichever arm Gemini lands in.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from matplotlib.colors import to_hex

from agentlab.adapters.base import parse_model
from agentlab.sweeps import (
    Setting,
    continuity_settings,
    load_results,
    plot_cost_per_solved,
    plot_success_rate,
    sim_tasks,
    sim_tools,
    summarize,
    sweep,
)
from tests.notebook.test_chart_text_overlap import overlaps
from tests.support.opaque import sim_opaque_tokens

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]


def _arms(model: str, settings: list[Setting]) -> list[str]:
    provider = parse_model(model).provider
    return [s.name for s in settings if s.providers is None or provider in s.providers]


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    out = tmp_path_factory.mktemp("sweep") / "r.jsonl"
    tasks = sim_tasks(["continuity"])[:2] + sim_tasks(["compare"])[:1]
    rep = sweep(
        tasks,
        MODELS,
        results=out,
        tools=sim_tools(),
        settings=continuity_settings(),
        repeats=1,
        progress=None,
    )
    assert rep.status == "completed" and rep.failed == 0, rep
    return out, load_results(out)


def test_every_provider_gets_verbatim_and_one_ablation(swept: tuple[Path, pd.DataFrame]) -> None:
    _, df = swept
    settings = continuity_settings()
    for model in MODELS:
        arms = _arms(model, settings)
        assert arms[0] == "verbatim" and len(arms) == 2, (model, arms)
        assert set(df.loc[df["model"] == model, "setting"]) == set(arms)
    assert set(df["model"]) == set(MODELS)  # rows are in completion order


def test_gemini_rows_carry_reasoning_tokens_and_costs(swept: tuple[Path, pd.DataFrame]) -> None:
    _, df = swept
    gem = df[df["model"] == "google:sim-gemini"]
    verbatim = gem[gem["setting"] == "verbatim"]
    assert len(verbatim) == 3 and verbatim["success"].all()
    assert (verbatim["steps"] >= 2).all()  # tool loops, with the signatures carried back
    assert verbatim["reasoning_tokens"].notna().all() and (verbatim["reasoning_tokens"] > 0).all()
    assert (verbatim["reasoning_tokens"] <= verbatim["output_tokens"]).all()
    assert (gem["total_cost_usd"] > 0).all() and gem["total_cost_usd"].notna().all()
    assert (verbatim["reasoning_items_dropped"] == 0).all()
    s = summarize(df)
    for arm in _arms("google:sim-gemini", continuity_settings()):
        row = s.loc[("google:sim-gemini", arm)]
        assert row["runs"] == 3 and row["total_cost_usd"] > 0
    assert s.loc[("google:sim-gemini", "verbatim"), "reasoning_share"] > 0


def test_results_file_holds_no_thought_signature(swept: tuple[Path, pd.DataFrame]) -> None:
    out, _ = swept
    text = out.read_text()
    assert "google:sim-gemini" in text
    assert sim_opaque_tokens(text) == []
    assert "thoughtSignature" not in text and "thought_signature" not in text


def test_sweep_charts_draw_a_gemini_group(swept: tuple[Path, pd.DataFrame]) -> None:
    _, df = swept
    s = summarize(df)
    for ax in (plot_success_rate(s), plot_cost_per_solved(s)):
        ticks = ax.get_xticklabels()
        # long names go on two lines ("provider:" over the model) or upright, never into each other
        assert sorted(t.get_text().replace(":\n", ":") for t in ticks) == sorted(MODELS)
        assert overlaps(ax.figure) == []  # type: ignore[arg-type]
        legend = ax.get_legend()
        assert legend is not None
        arms = [t.get_text() for t in legend.get_texts()]
        assert "verbatim" in arms and len(arms) == len(
            {a for m in MODELS for a in _arms(m, continuity_settings())}
        )
        colours = {to_hex(p.get_facecolor()) for p in ax.patches}
        assert len(colours) == len(arms)  # one colour per setting
