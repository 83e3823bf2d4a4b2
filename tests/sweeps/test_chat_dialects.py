"""A continuity sweep over OpenAI, Anthropic, Gemini, DeepSeek, OpenRouter and a local server.

Each dialect is a co-equal group: verbatim plus the ablation arm its registry entry allows; reasoning
tokens reported (DeepSeek, OpenRouter) or ``<NA>`` (local, never 0); costs computed from the price
table, OpenRouter's reported cost beside them, a local server's cost unknown; charts with every group.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from agentlab.adapters.base import parse_model
from agentlab.sweeps import (
    continuity_settings,
    load_results,
    plot_cost_per_solved,
    plot_success_rate,
    sim_tasks,
    sim_tools,
    summarize,
    sweep,
)
from tests.support.opaque import sim_opaque_tokens

MODELS = [
    "openai:sim-reasoner",
    "anthropic:sim-thinker",
    "google:sim-gemini",
    "deepseek:sim-deepseek",
    "openrouter:sim-router-gemini",
    "llamacpp:sim-local",
]


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    out = tmp_path_factory.mktemp("sweep") / "r.jsonl"
    tasks = sim_tasks(["continuity"])[:1] + sim_tasks(["compare"])[:1]
    settings = continuity_settings()
    rep = sweep(tasks, MODELS, results=out, tools=sim_tools(), settings=settings, repeats=1, progress=None)
    assert rep.status == "completed" and rep.failed == 0, rep
    return out, load_results(out)


def test_every_dialect_has_verbatim_and_an_ablation(swept: tuple[Path, pd.DataFrame]) -> None:
    _, df = swept
    assert set(df["model"]) == set(MODELS)
    for model in MODELS:
        arms = set(df.loc[df["model"] == model, "setting"])
        assert "verbatim" in arms and len(arms) == 2, (model, arms)


def test_reasoning_buckets_and_costs(swept: tuple[Path, pd.DataFrame]) -> None:
    _, df = swept
    provider = df["model"].map(lambda m: parse_model(m).provider)
    for p in ("deepseek", "openrouter"):
        rows = df[(provider == p) & (df["setting"] == "verbatim")]
        assert (rows["reasoning_source"] == "reported").all() and (rows["reasoning_tokens"] > 0).all(), p
        assert (rows["total_cost_usd"] > 0).all(), p
    local = df[provider == "llamacpp"]
    assert local["reasoning_tokens"].isna().all() and (local["reasoning_source"] == "unknown").all()
    assert local["total_cost_usd"].isna().all() and local["price_source"].str.contains("no price").all()
    router = df[provider == "openrouter"]
    assert router["provider_cost_usd"].notna().all() and (router["provider_cost_usd"] > 0).all()
    assert df[provider != "openrouter"]["provider_cost_usd"].isna().all()
    s = summarize(df)
    row = s.loc[("openrouter:sim-router-gemini", "verbatim")]
    assert row["provider_cost_usd"] == pytest.approx(
        router.loc[router["setting"] == "verbatim", "provider_cost_usd"].sum()
    )
    assert pd.isna(s.loc[("deepseek:sim-deepseek", "verbatim"), "provider_cost_usd"])
    assert pd.isna(s.loc[("llamacpp:sim-local", "verbatim"), "total_cost_usd"])


def test_results_file_holds_no_opaque_reasoning(swept: tuple[Path, pd.DataFrame]) -> None:
    out, _ = swept
    text = out.read_text()
    assert "deepseek:sim-deepseek" in text and "openrouter:sim-router-gemini" in text
    assert sim_opaque_tokens(text) == []
    assert "reasoning_content" not in text and "reasoning_details" not in text


def test_sweep_charts_draw_every_group(swept: tuple[Path, pd.DataFrame]) -> None:
    _, df = swept
    s = summarize(df)
    ticks = {t.get_text().replace(":\n", ":") for t in plot_success_rate(s).get_xticklabels()}
    assert ticks == set(MODELS)
    priced = {t.get_text().replace(":\n", ":") for t in plot_cost_per_solved(s).get_xticklabels()}
    assert set(MODELS[:5]) <= priced
