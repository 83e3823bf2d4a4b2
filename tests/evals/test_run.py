"""evaluate: scored rows as runs finish, interrupt and resume, re-scoring without model calls, reducers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import agentlab as al
from agentlab.errors import ConfigError
from agentlab.evals import choice, includes, judge, numeric, reduce_runs, runs_table, tool_called
from agentlab.evals.run import _pass_at_k
from agentlab.sim.transport import SimTransport
from agentlab.sweeps import SweepProgress, load_results, read_rows, sim_tools
from agentlab.sweeps.store import ROW_FIELDS, ResultsFile, check_row

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]
DATA: list[dict[str, Any]] = [
    {"id": "warmer", "input": "Is it warmer in Paris or Rome?", "target": "Rome"},
    {"id": "total", "input": "What is the total population of Paris and Rome?", "target": 5021000},
    {"id": "calc", "input": "What is 12 * (3 + 4)?", "target": 84, "tools": ["calculator"]},
    {"id": "oslo", "input": "What is the population of Oslo?", "target": "800000"},  # the sims say 709000
]
KEY = ["task_id", "model", "setting", "repeat"]


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every request any in-process simulator answers in this test (the transport's own view)."""
    seen: list[bytes] = []
    real = SimTransport._respond

    def spy(self: SimTransport, request: Any, body: bytes) -> Any:
        seen.append(body)
        return real(self, request, body)

    monkeypatch.setattr(SimTransport, "_respond", spy)
    return seen


def _scorers() -> list[Any]:
    return [includes(), numeric(pick="last"), tool_called("get_weather", city="Paris"),
            judge("openai:sim-reasoner", "Is the answer right?")]  # fmt: skip


def test_one_dataset_three_simulated_models_two_repeats(tmp_path: Path, requests: list[bytes]) -> None:
    out = tmp_path / "eval.jsonl"
    res = al.evaluate(
        DATA, MODELS, scorers=_scorers(), tools=sim_tools(), repeats=2, results=out, progress=None
    )
    assert res.report is not None and res.report.status == "completed" and res.report.ran == 24
    runs = res.runs()
    assert len(runs) == 24 and not runs.duplicated(KEY).any() and (runs["status"] == "completed").all()
    for col in (
        "score_includes",
        "score_numeric",
        "score_called_get_weather",
        "score_judge",
        "input_tokens",
        "reasoning_tokens",
        "total_cost_usd",
        "reasoning_cost_usd",
        "latency_s",
        "judge_cost_usd",
    ):
        assert col in runs.columns, col  # fmt: skip
    assert "scores" not in runs.columns and str(runs["score_includes"].dtype) == "boolean"
    by_task = runs.groupby("task_id")
    assert by_task["score_includes"].all().to_dict() == {
        "calc": True,
        "oslo": False,
        "total": True,
        "warmer": True,
    }
    assert by_task["score_judge"].all().to_dict() == {
        "calc": True,
        "oslo": False,
        "total": True,
        "warmer": True,
    }
    assert by_task["score_called_get_weather"].all().to_dict()["warmer"]
    assert runs["success"].tolist() == runs["score_includes"].tolist()  # the first scorer's pass/fail
    # per-task tools: the calc task could only use the calculator
    calls = [json.loads(line) for line in out.read_text().splitlines()]
    assert {c["name"] for r in calls if r["task_id"] == "calc" for c in r["called_tools"]} == {"calculator"}
    reduced = res.reduce()
    assert len(reduced) == 12 and (reduced["runs"] == 2).all()
    assert set(reduced.columns) == {"task_id", "model", "setting", "runs", "score_includes", "score_numeric",
                                    "score_called_get_weather", "score_judge"}  # fmt: skip
    summary = res.summary()
    assert summary.loc[("openai:sim-reasoner", "default"), "score_includes"] == 0.75
    assert len(requests) > 24  # positive control for the rescore test: the spy sees model calls


def test_interrupt_keeps_finished_runs_and_the_same_call_resumes(
    tmp_path: Path, requests: list[bytes]
) -> None:
    out = tmp_path / "eval.jsonl"

    def stop_after_four(p: SweepProgress) -> None:
        if p.done >= 4:
            raise KeyboardInterrupt

    kw: dict[str, Any] = {
        "tools": sim_tools(),
        "repeats": 2,
        "results": out,
        "progress": None,
        "concurrency": 1,
    }
    with pytest.raises(KeyboardInterrupt):
        al.evaluate(DATA, MODELS[:2], scorers=[includes()], on_progress=stop_after_four, **kw)
    partial = al.load_eval(out).runs()
    assert 4 <= len(partial) < 16 and partial["score_includes"].notna().all()  # kept, with their scores
    before = dict(
        zip(map(tuple, partial[KEY].astype(object).to_numpy().tolist()), partial["run_id"], strict=True)
    )
    calls_before = len(requests)
    res = al.evaluate(DATA, MODELS[:2], scorers=[includes()], **kw)
    assert (
        res.report is not None
        and res.report.from_file == len(partial)
        and res.report.ran == 16 - len(partial)
    )
    runs = res.runs()
    assert len(runs) == 16 and len(list(read_rows(out))) == 16  # nothing redone, nothing appended twice
    after = dict(zip(map(tuple, runs[KEY].astype(object).to_numpy().tolist()), runs["run_id"], strict=True))
    assert all(after[k] == rid for k, rid in before.items())
    assert len(requests) > calls_before
    again = len(requests)
    al.evaluate(DATA, MODELS[:2], scorers=[includes()], **kw)  # everything is in the file: no model call
    assert len(requests) == again


def test_rescore_calls_no_model(tmp_path: Path, requests: list[bytes]) -> None:
    out = tmp_path / "eval.jsonl"
    al.evaluate(DATA, MODELS[:1], scorers=[includes()], tools=sim_tools(), results=out, progress=None)
    assert requests  # positive control
    before, stored = len(requests), out.read_bytes()
    mc = [{**d, "choices": ["Paris", "Rome"]} if d["id"] == "warmer" else d for d in DATA]
    mentions = lambda answer, task: ("Rome" in (answer or ""), "mentions Rome")  # noqa: E731
    again = al.rescore(out, mc, scorers=[numeric(pick="last"), tool_called("calculator"), choice(), mentions])
    assert len(requests) == before  # the transport saw no request
    assert out.read_bytes() == stored  # the results file is left as it was
    runs = again.runs().set_index("task_id")
    assert runs.loc["calc", "score_called_calculator"] and not runs.loc["warmer", "score_called_calculator"]
    assert runs.loc["calc", "score_numeric"] and pd.isna(runs.loc["warmer", "score_numeric"])
    assert runs.loc["warmer", "score_<lambda>"] and not runs.loc["oslo", "score_<lambda>"]
    assert runs.loc["warmer", "score_includes"]  # the stored score is kept beside the new ones
    assert pd.isna(runs.loc["calc", "score_choice"])  # not a multiple-choice task
    into = tmp_path / "rescored.jsonl"
    written = al.rescore(out, DATA, scorers=[numeric(pick="last")], into=into)
    assert (
        written.path == into
        and written.runs()["score_numeric"].tolist() == again.runs()["score_numeric"].tolist()
    )
    with pytest.raises(ConfigError, match="must be a new file"):
        al.rescore(out, DATA, scorers=[numeric()], into=into)
    assert len(requests) == before


def test_a_failed_run_and_a_raising_scorer_score_none(tmp_path: Path) -> None:
    def boom(answer: str | None, task: Any) -> bool:
        raise RuntimeError("scorer bug")

    al.evaluate(
        DATA[:1], ["openai:sim-reasoner+fault=500x9"], scorers=[includes(), boom],
        results=tmp_path / "e.jsonl", progress=None, tools=sim_tools(), retries=0,
    )  # fmt: skip
    row = json.loads((tmp_path / "e.jsonl").read_text())
    assert row["status"] == "failed"
    assert row["scores"]["includes"] == {"value": None, "explanation": "the run failed"}
    ok = al.evaluate(DATA[:1], ["openai:sim-reasoner"], scorers=[boom], results=tmp_path / "f.jsonl",
                     progress=None, tools=sim_tools())  # fmt: skip
    assert ok.runs()["score_boom"].isna().all()
    assert json.loads((tmp_path / "f.jsonl").read_text())["scores"]["boom"]["explanation"].startswith(
        "scorer raised RuntimeError: scorer bug"
    )


def test_bad_calls_fail_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "e.jsonl"
    kw: dict[str, Any] = {"results": out, "progress": None, "tools": sim_tools()}
    with pytest.raises(ConfigError, match="duplicate scorer names"):
        al.evaluate(DATA, MODELS, scorers=[includes(), includes()], **kw)
    with pytest.raises(ConfigError, match="reducer must be"):
        al.evaluate(DATA, MODELS, scorers=[includes()], reducer="median", **kw)
    with pytest.raises(ConfigError, match="does not take \\['executor'\\]"):
        al.evaluate(DATA, MODELS, scorers=[includes()], executor="ray", **kw)
    with pytest.raises(ConfigError, match="field 'tools': unknown tool"):
        al.evaluate(DATA, MODELS, scorers=[includes()], results=out, progress=None)  # no tools given
    assert not out.exists()
    with pytest.raises(ConfigError, match="no results file"):
        al.load_eval(tmp_path / "none.jsonl")


def test_old_results_files_without_scores_still_load(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    row = {"task_id": "t", "model": "openai:sim-reasoner", "setting": "default", "repeat": 0,
           "status": "completed", "output": "Rome", "v": 1}  # fmt: skip
    old.write_text(json.dumps(row) + "\n")
    df = load_results(old)
    assert df["scores"].isna().all() and len(df) == 1
    assert list(runs_table(old).columns)[-4:] == ["judge_input_tokens", "judge_output_tokens",
                                                  "judge_reasoning_tokens", "judge_cost_usd"]  # fmt: skip
    scored = al.rescore(
        old, [{"id": "t", "input": "Warmer, Paris or Rome?", "target": "Rome"}], scorers=[includes()]
    )
    assert scored.runs()["score_includes"].tolist() == [True]


def test_rows_with_bad_scores_are_refused() -> None:
    base = {"task_id": "t", "model": "m", "setting": "s", "repeat": 0}
    check_row({**base, "scores": {"a": {"value": 0.5, "explanation": ""}}, "called_tools": [{"name": "x"}]})
    cases: list[tuple[dict[str, Any], str]] = [({"scores": [1]}, "'scores' must be an object"),
                     ({"scores": {"a": {"value": "yes"}}}, "'a' must be an object with a number"),
                     ({"called_tools": [{"arguments": {}}]}, "string 'name'"),
                     ({"called_tools": {"name": "x"}}, "'called_tools' must be a list")]  # fmt: skip
    for bad, msg in cases:
        with pytest.raises(ValueError, match=msg):
            check_row({**base, **bad})
    assert "scores" in ROW_FIELDS and "called_tools" in ROW_FIELDS


def test_a_plain_sweep_row_has_null_scores(tmp_path: Path) -> None:
    with ResultsFile(tmp_path / "r.jsonl") as f:
        f.append({"task_id": "t", "model": "m", "setting": "s", "repeat": 0})
    line = json.loads((tmp_path / "r.jsonl").read_text())
    assert line["scores"] is None and line["called_tools"] is None and list(line) == list(ROW_FIELDS)


def test_reducers() -> None:
    runs = pd.DataFrame({
        "task_id": ["a", "a", "a", "b", "b", "b"], "model": ["m"] * 6, "setting": ["s"] * 6,
        "score_x": pd.array([True, False, True, False, False, None], dtype="boolean"),
        "score_y": [0.2, 0.4, 0.4, 1.0, 1.0, 1.0],
    })  # fmt: skip
    mean = reduce_runs(runs, "mean").set_index("task_id")
    assert mean.loc["a", "score_x"] == pytest.approx(2 / 3) and mean.loc["b", "score_x"] == 0.0
    assert mean.loc["a", "runs"] == 3 and mean.loc["b", "score_y"] == 1.0
    maj = reduce_runs(runs, "majority").set_index("task_id")
    assert maj.loc["a", "score_x"] == 1.0 and maj.loc["a", "score_y"] == 0.4
    allr = reduce_runs(runs, "all").set_index("task_id")
    assert allr.loc["a", "score_x"] == 0.0 and allr.loc["b", "score_y"] == 1.0
    pk = reduce_runs(runs, "pass@k", k=1).set_index("task_id")
    assert pk.loc["a", "score_x"] == pytest.approx(2 / 3)  # pass@1 is the mean
    assert reduce_runs(runs, "pass@k").set_index("task_id").loc["a", "score_x"] == 1.0
    assert _pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    with pytest.raises(ConfigError, match="reducer must be"):
        reduce_runs(runs, "median")  # type: ignore[arg-type]


def test_a_task_s_own_system_prompt_and_tools_reach_its_run(tmp_path: Path) -> None:
    from agentlab.adapters.base import ModelRef
    from agentlab.neutral.request import ModelRequest
    from agentlab.testing import ScriptedAdapter, Step

    seen: list[tuple[str, tuple[str, ...]]] = []

    def keep(req: ModelRequest) -> None:
        seen.append((req.model_dump_json(), tuple(t.name for t in req.tools)))

    def make(ref: ModelRef) -> ScriptedAdapter:
        return ScriptedAdapter([Step(text="84", expect=keep), Step(text="Rome", expect=keep)],
                               provider=ref.provider, model=ref.model)  # fmt: skip

    data = [{"id": "own", "input": "What is 12 * (3 + 4)?", "system": "TASK-SYSTEM-7f3a",
             "tools": ["calculator"]},
            {"id": "plain", "input": "Is it warmer in Paris or Rome?"}]  # fmt: skip
    al.evaluate(data, ["openai:sim-reasoner"], scorers=[includes()], tools=sim_tools(),
                results=tmp_path / "e.jsonl", settings=[al.Setting("s", system="SETTING-SYSTEM-91c2")],
                progress=None, concurrency=1, adapter_factory=make)  # fmt: skip
    (own, own_tools), (plain, plain_tools) = seen
    assert "TASK-SYSTEM-7f3a" in own and "SETTING-SYSTEM-91c2" not in own and own_tools == ("calculator",)
    assert "SETTING-SYSTEM-91c2" in plain and len(plain_tools) == len(sim_tools())
