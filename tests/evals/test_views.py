"""The views: task x model matrix, transcripts after the fact, disagreements, the score-against-cost chart.

Checked by value against the runs table and ``agentlab.evals.stats``, for privacy with a reasoning
canary (streamed, and never in a view, the transcripts file or the report), and as static HTML
(nothing fetched; the matrix readable with scripts off, sortable with them on in headless Chromium).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import agentlab as al
from agentlab.adapters.base import ModelRef
from agentlab.evals import includes, numeric, views
from agentlab.evals.stats import model_means
from agentlab.sweeps import sim_tools
from agentlab.testing import ScriptedAdapter, Step
from tests.notebook.test_chart_text_overlap import overlaps

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
CANARY = f"CANARY-{uuid.uuid4().hex}"
MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]
DATA: list[dict[str, Any]] = [
    {"id": "warmer", "input": "Is it warmer in Paris or Rome?", "target": "Rome"},
    {"id": "total", "input": "What is the total population of Paris and Rome?", "target": 5021000},
    {"id": "oslo", "input": "What is the population of Oslo?", "target": "800000"},
    {"id": "calc", "input": "What is 12 * (3 + 4)?", "target": 84},
]


@pytest.fixture(scope="module")
def ev(tmp_path_factory: pytest.TempPathFactory) -> al.EvalResult:
    out = tmp_path_factory.mktemp("views") / "eval.jsonl"
    return al.evaluate(DATA, MODELS, scorers=[includes(), numeric(pick="last")], tools=sim_tools(),
                       repeats=2, results=out, progress=None)  # fmt: skip


@al.tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value-of-{key}"


def _canary_eval(path: Path) -> al.EvalResult:
    """Two models whose runs stream the canary as reasoning; B answers right on one task, A on none."""

    def make(ref: ModelRef) -> ScriptedAdapter:
        answer = "Rome" if ref.provider == "anthropic" else "Paris"
        steps = [
            Step(reasoning=[f"thinking {CANARY}"], opaque=[f"sig:{CANARY}"],
                 tool_calls=[("lookup", {"key": "a"})]),
            Step(reasoning=[f"done {CANARY}"], text=f"{answer} is warmer."),
            Step(reasoning=[f"again {CANARY}"], text="Oslo."),
        ]  # fmt: skip
        return ScriptedAdapter(steps, provider=ref.provider, model=ref.model)

    data = [{"id": "w", "input": "Is it warmer in Paris or Rome?", "target": "Rome"},
            {"id": "o", "input": "Which city is furthest north?", "target": "Oslo"}]  # fmt: skip
    return al.evaluate(data, ["openai:sim-reasoner", "anthropic:sim-thinker"], scorers=[includes()],
                       tools=[lookup], results=path, progress=None, concurrency=1,
                       adapter_factory=make)  # fmt: skip


# ------------------------------------------------------------------ the matrix


def test_the_matrix_is_the_mean_over_repeats_with_the_stats_ci(ev: al.EvalResult) -> None:
    m = ev.matrix("numeric")
    runs = ev.runs()
    want = runs.assign(v=runs["score_numeric"].astype("float64")).groupby(["task_id", "model"])["v"].mean()
    for (task, model), v in want.items():
        got = m.mean.loc[task, model]
        assert (math.isnan(got) and math.isnan(v)) or got == pytest.approx(v), (task, model)
    assert sorted(m.mean.index) == list(m.mean.index) == sorted(d["id"] for d in DATA)
    assert (m.repeats.fillna(0) <= 2).all().all()
    stats = model_means(runs, ["score_numeric"]).set_index("model")
    for model in MODELS:
        assert m.totals.loc[model, "mean"] == pytest.approx(stats.loc[model, "mean"])
        assert m.totals.loc[model, "ci_low"] == pytest.approx(max(0.0, stats.loc[model, "ci_low"]))
    means = m.totals["mean"].tolist()
    assert means == sorted(means, reverse=True)  # best model first


def test_the_matrix_html_is_static_readable_and_escaped(ev: al.EvalResult) -> None:
    text = ev.matrix()._repr_html_()
    assert "<script>" in text and "src=" not in text and "href" not in text  # inline; nothing fetched
    no_js = re.sub(r"<script>.*?</script>", "", text, flags=re.S)
    heads = re.findall(r"<th[^>]*>(.*?)</th>", no_js)
    for model in MODELS:  # a model's header may wrap at a <wbr>, and reads the same as text
        assert model in [h.replace("<wbr>", "") for h in heads]
        assert "<wbr>" in next(h for h in heads if h.replace("<wbr>", "") == model)
    assert "mean [95% CI]" in no_js and "cost / run" in no_js and "1.00 ± 0.00" in no_js
    assert "background:#" in no_js  # colour-scaled cells
    assert views.matrix(ev.path).to_html() == text  # any form, the same table


def test_a_sweep_with_a_check_shows_its_success(tmp_path: Path) -> None:
    rep = al.sweep(al.sweeps.sim_tasks()[:2], MODELS[:2], tools=sim_tools(), results=tmp_path / "s.jsonl",
                   progress=None)  # fmt: skip
    m = views.matrix(rep)
    assert m.score == "success" and m.mean.shape == (2, 2)


def test_no_score_is_one_typed_line(tmp_path: Path) -> None:
    frame = pd.DataFrame({"task_id": ["a"], "model": ["m"], "repeat": [0], "success": [None]})
    with pytest.raises(al.ConfigError, match="no scores") as info:
        views.matrix(frame)
    assert "\n" not in str(info.value)
    with pytest.raises(al.ResultsFormError, match=r"^matrix takes"):
        views.matrix(3)


# ------------------------------------------------------------------ transcripts


def test_a_transcript_after_the_fact_from_the_kept_records(tmp_path: Path) -> None:
    _canary_eval(tmp_path / "e.jsonl")
    kept = tmp_path / "e.transcripts.jsonl"
    assert kept.is_file() and CANARY.encode() not in kept.read_bytes()
    again = al.load_eval(tmp_path / "e.jsonl")  # a new session: only the files
    run_id = again.runs().query("model == 'anthropic:sim-thinker' and task_id == 'w'")["run_id"].iloc[0]
    t = again.transcript(run_id)
    assert t.kept == "records"
    whos = [w for w, _, _ in t.entries]
    assert whos[0] == "user" and "tool call" in whos and "tool result" in whos and whos[-1] == "end"
    text = str(t) + t._repr_html_()
    assert "Is it warmer in Paris or Rome?" in text and "lookup" in text and "value-of-a" in text
    assert "Rome is warmer." in text and "reasoning" in text  # reasoning-token counts per step
    assert "Reasoning text is not stored" in text and CANARY not in text and "sig:" not in text
    assert t == again.transcript(task="w", model="anthropic:sim-thinker", repeat=0)


def test_a_transcript_from_a_results_row_says_what_was_not_kept(ev: al.EvalResult, tmp_path: Path) -> None:
    rep = al.sweep(al.sweeps.sim_tasks()[:1], MODELS[:1], tools=sim_tools(), results=tmp_path / "s.jsonl",
                   progress=None)  # fmt: skip
    t = views.transcript(rep.path, task=al.sweeps.sim_tasks()[0].id, model=MODELS[0])
    assert t.kept == "row" and t.entries[-1][0] == "end" and "No per-step records" in t._repr_html_()
    with pytest.raises(al.ConfigError, match="0 runs match run_id='nope'") as info:
        ev.transcript("nope")
    assert "\n" not in str(info.value)


def test_a_transcript_of_a_comparison_in_memory() -> None:
    cmp = al.compare("Is it warmer in Paris or Rome?", MODELS[:2], tools=sim_tools())
    r = next(iter(cmp.results.values()))
    t = views.transcript(cmp, r.run_id)
    assert t.kept == "records" and any(w == "step" for w, _, _ in t.entries)


# ------------------------------------------------------------------ disagreements


def test_disagreements_are_the_tasks_where_the_two_differ(tmp_path: Path) -> None:
    res = _canary_eval(tmp_path / "e.jsonl")
    d = res.disagreements("openai:sim-reasoner", "anthropic:sim-thinker")
    assert d.frame["task_id"].tolist() == ["w"] and d.tasks == 2
    row = d.frame.iloc[0]
    assert (row["mean_a"], row["mean_b"], row["diff"]) == (0.0, 1.0, 1.0)
    assert row["answer_b"] == "Rome is warmer." and CANARY not in d._repr_html_()
    with pytest.raises(al.ConfigError, match=r"no model \['x:y'\]"):
        res.disagreements("x:y", "anthropic:sim-thinker")


def test_disagreements_sort_by_the_gap() -> None:
    runs = pd.DataFrame({
        "task_id": ["a", "a", "b", "b", "c", "c"], "model": ["A", "B"] * 3, "repeat": [0] * 6,
        "score_s": [1.0, 0.5, 0.0, 1.0, 1.0, 1.0], "output": ["x"] * 6,
    })  # fmt: skip
    d = views.disagreements(runs, "A", "B")
    assert d.frame["task_id"].tolist() == ["b", "a"] and d.frame["diff"].tolist() == [1.0, -0.5]


# ------------------------------------------------------------------ the frontier


def test_the_frontier_chart_has_cis_money_ticks_and_no_overlapping_text(ev: al.EvalResult) -> None:
    points = views.frontier_points(ev)
    stats = model_means(ev.runs(), ["score_includes", "total_cost_usd"]).set_index(["model", "metric"])
    for _, p in points.iterrows():
        assert p["cost"] == pytest.approx(stats.loc[(p["model"], "total_cost_usd"), "mean"])
        assert p["score"] == pytest.approx(stats.loc[(p["model"], "score_includes"), "mean"])
    ax = ev.plot_frontier()
    assert overlaps(ax.figure) == []  # type: ignore[arg-type]
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and all(t.startswith("$") for t in ticks)
    assert {t.get_text() for t in ax.texts} == set(MODELS)  # one label per model
    plt.close("all")


def test_the_frontier_joins_the_models_no_cheaper_model_beats() -> None:
    points = pd.DataFrame({
        "model": ["cheap", "mid", "dear", "dominated"], "score": [0.5, 0.7, 0.9, 0.6],
        "score_low": [0.4, 0.6, 0.8, 0.5], "score_high": [0.6, 0.8, 1.0, 0.7],
        "cost": [0.001, 0.002, 0.004, 0.003], "cost_low": [-0.001, 0.0015, 0.003, 0.002],
        "cost_high": [0.0012, 0.0025, 0.005, 0.004],
    })  # fmt: skip
    from agentlab.render.charts import plot_frontier

    ax = plot_frontier(points, score_name="accuracy")
    line = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert len(line) == 1 and np.asarray(line[0].get_xdata()).tolist() == [0.001, 0.002, 0.004]
    assert overlaps(ax.figure) == []  # type: ignore[arg-type]
    plt.close("all")


# ------------------------------------------------------------------ the report


def test_the_report_of_an_evaluation_holds_every_view_and_no_reasoning(tmp_path: Path) -> None:
    res = _canary_eval(tmp_path / "e.jsonl")
    text = al.save_report(res, tmp_path / "r.html").read_text(encoding="utf-8")
    for needle in ("Task × model: includes", "includes against cost", "disagree", "Transcripts",
                   "Reasoning text is not stored", "lookup"):  # fmt: skip
        assert needle in text, needle
    assert CANARY not in text and "<link" not in text.lower()
    assert re.search(r"(src|href)\s*=\s*[\"']https?:", text) is None


@pytest.mark.browser
def test_the_matrix_sorts_in_a_browser_and_reads_without_scripts(tmp_path: Path) -> None:
    if CHROMIUM is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("headless Chromium not found (CI=true)")
        pytest.skip("headless Chromium not found (Debian: apt-get install -y chromium)")
    runs = pd.DataFrame({
        "task_id": ["a", "a", "b", "b", "c", "c"], "model": ["A", "B"] * 3, "repeat": [0] * 6,
        "score_s": [0.0, 0.0, 1.0, 1.0, 0.5, 0.5], "total_cost_usd": [0.01] * 6,
    })  # fmt: skip
    table = views.matrix(runs).to_html()
    click = ("<script>var t=document.querySelector('.agentlab-matrix table');"
             "t.tHead.rows[0].cells[t.tHead.rows[0].cells.length-1].click();</script>")  # fmt: skip
    page = tmp_path / "m.html"
    page.write_text(f"<html><body>{table}{click}</body></html>", encoding="utf-8")

    def rows() -> list[str]:
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--dump-dom", page.as_uri()]  # fmt: skip
        dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout
        assert "<tbody>" in dom, dom[:2000]
        body = dom.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
        return re.findall(r"<tr><td data-v=\"([^\"]+)\"", body)

    assert rows() == ["b", "c", "a"]  # sorted by the clicked "task mean", highest first
    saved = table.split("<tbody>", 1)[1].split("</tbody>", 1)[0]  # without scripts: the table as saved
    assert re.findall(r"<tr><td data-v='([^']+)'", saved) == ["a", "b", "c"]


def test_transcripts_file_is_durable_records_only(tmp_path: Path) -> None:
    res = _canary_eval(tmp_path / "e.jsonl")
    from agentlab.records.eventlog import EventLog

    events: list[Any] = EventLog.read(tmp_path / "e.transcripts.jsonl")
    assert {e.run_id for e in events} == set(res.runs()["run_id"])
    assert {e.kind for e in events} >= {"run_started", "model_call_completed", "tool_call", "tool_result"}


def test_disagreements_between_two_settings_of_one_model() -> None:
    runs = pd.DataFrame({
        "task_id": ["a", "a", "b", "b"], "model": ["M"] * 4, "setting": ["base", "tight"] * 2,
        "repeat": [0] * 4, "score_s": [1.0, 0.0, 1.0, 1.0], "output": ["x", None, "y", "y"],
    })  # fmt: skip
    d = views.disagreements(runs, "M · base", "M · tight")
    assert d.frame["task_id"].tolist() == ["a"] and d.frame["diff"].tolist() == [-1.0]
    assert list(views.matrix(runs).mean.columns) == ["M · base", "M · tight"]
