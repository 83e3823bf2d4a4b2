"""One results model: every downstream function takes every results form, refuses anything else in one line.

The forms: a compare result, a ``SweepReport``, an ``EvalResult``, a results-file path (``str`` and
``Path``), a ``load_results`` frame, the tidy runs table (``EvalResult.runs()``). The functions:
exports, the HTML report, tool and timeline tables and charts, the cost chart, MLflow logging (its
MLflow client replaced: what is checked is the frame it would log), the paired statistics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import pytest

import agentlab as al
from agentlab.evals import includes, numeric
from agentlab.sweeps import sim_tasks, sim_tools

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker"]
DATA = [
    {"id": "warmer", "input": "Is it warmer in Paris or Rome?", "target": "Rome"},
    {"id": "total", "input": "What is the total population of Paris and Rome?", "target": 5021000},
    {"id": "oslo", "input": "What is the population of Oslo?", "target": "800000"},
]


@pytest.fixture(scope="module")
def forms(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each results form, from runs on the simulated providers (made once for the module)."""
    tmp = tmp_path_factory.mktemp("forms")
    cmp = al.compare("Is it warmer in Paris or Rome?", MODELS, tools=sim_tools(), repeats=2,
                     check=lambda a: "Rome" in (a or ""))  # fmt: skip
    report = al.sweep(sim_tasks()[:2], MODELS, tools=sim_tools(), results=tmp / "sweep.jsonl", progress=None)
    ev = al.evaluate(DATA, MODELS, scorers=[includes(), numeric(pick="last")], tools=sim_tools(),
                     repeats=2, results=tmp / "eval.jsonl", progress=None)  # fmt: skip
    assert ev.path is not None
    return {
        "compare": cmp,
        "sweep report": report,
        "evaluation": ev,
        "results path (str)": str(ev.path),
        "results path (Path)": report.path,
        "load_results frame": al.load_results(ev.path),
        "runs table": ev.runs(),
        "run result": next(iter(cmp.results.values())),
    }


def _export(obj: Any, tmp: Path) -> Any:
    paths = al.export_frames(obj, tmp / "csv", format="csv")
    assert {"usage", "tools", "timeline", "summary", "runs"} <= set(paths)
    runs = pd.read_csv(paths["runs"])
    assert len(runs) > 0 and {"task_id", "model", "repeat"} <= set(runs.columns)
    return paths


def _report(obj: Any, tmp: Path) -> Any:
    text = al.save_report(obj, tmp / "report.html").read_text(encoding="utf-8")
    assert "<svg" in text and "<h2>Summary</h2>" in text
    return text


def _tools(obj: Any, tmp: Path) -> Any:
    frame = al.tool_frame(obj)
    assert list(frame.columns)[:3] == ["label", "repeat", "run_id"]
    return frame


def _timeline(obj: Any, tmp: Path) -> Any:
    frame = al.timeline_frame(obj)
    assert len(frame) > 0 and frame["duration_s"].notna().any()
    ax = al.plot_timeline(obj)
    assert ax.get_yticklabels()  # one lane per model (and repeat)
    plt.close("all")
    return frame


def _costs(obj: Any, tmp: Path) -> Any:
    ax = al.plot_costs(obj)
    assert ax.patches and "$" in ax.get_yticklabels()[-1].get_text()
    plt.close("all")
    return ax


def _paired(obj: Any, tmp: Path) -> Any:
    table = al.paired_tests(obj, ["total_cost_usd"], n_resamples=99)
    assert len(table) == 1 and {table.iloc[0]["model_a"], table.iloc[0]["model_b"]} == set(MODELS)
    means = al.model_means(obj, ["total_cost_usd"])
    assert set(means["model"]) == set(MODELS)
    return table


class _Logged(Exception):
    """Raised by the stand-in MLflow logger with the frame it was given (nothing reaches MLflow)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame


def _mlflow(monkeypatch: pytest.MonkeyPatch) -> Callable[[Any, Path], Any]:
    from agentlab.tracking import mlflow_log

    def fake_log(client: Any, exp: Any, frame: pd.DataFrame, parent: Any, knobs: Any) -> Any:
        raise _Logged(frame)

    monkeypatch.setattr(mlflow_log, "_client", lambda uri, loc: (None, loc))
    monkeypatch.setattr(mlflow_log, "_experiment_id", lambda client, name, loc: "0")
    monkeypatch.setattr(mlflow_log, "_log", fake_log)

    def log(obj: Any, tmp: Path) -> Any:
        for fn in (al.log_sweep, al.log_comparison):
            with pytest.raises(_Logged) as info:
                fn(obj, experiment="e")
            assert len(info.value.frame) > 0 and "model" in info.value.frame.columns
        return None

    return log


FUNCTIONS: dict[str, Callable[[Any, Path], Any]] = {
    "export_frames": _export,
    "save_report": _report,
    "tool_frame": _tools,
    "timeline_frame / plot_timeline": _timeline,
    "plot_costs": _costs,
    "paired_tests / model_means": _paired,
}
FORMS = [
    "compare",
    "sweep report",
    "evaluation",
    "results path (str)",
    "results path (Path)",
    "load_results frame",
    "runs table",
    "run result",
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("function", [*FUNCTIONS, "log_sweep / log_comparison"])
def test_every_function_takes_every_results_form(
    function: str, form: str, forms: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if function == "paired_tests / model_means" and form == "run result":
        pytest.skip("a lone run has one model: nothing to pair")
    call = _mlflow(monkeypatch) if function.startswith("log_") else FUNCTIONS[function]
    call(forms[form], tmp_path)


BAD: list[Any] = [42, {"runs": 1}, pd.DataFrame({"label": ["x"]}), [1, 2], "no/such/results.jsonl"]
CALLS: dict[str, Callable[[Any], Any]] = {
    "export_frames": lambda x: al.export_frames(x, "never-written", format="csv"),
    "save_report": lambda x: al.save_report(x, "never-written/report.html"),
    "report_html": lambda x: al.report_html(x),
    "tool_frame": lambda x: al.tool_frame(x),
    "timeline_frame": lambda x: al.timeline_frame(x),
    "plot_timeline": lambda x: al.plot_timeline(x),
    "plot_costs": lambda x: al.plot_costs(x),
    "paired_tests": lambda x: al.paired_tests(x),
    "model_means": lambda x: al.model_means(x),
    "log_sweep": lambda x: al.log_sweep(x, experiment="e"),
    "log_comparison": lambda x: al.log_comparison(x, experiment="e"),
}


BAD_IDS = ["int", "dict", "frame-without-runs", "list-of-ints", "missing-path"]


@pytest.mark.parametrize("bad", BAD, ids=BAD_IDS)
@pytest.mark.parametrize("name", list(CALLS))
def test_anything_else_is_one_typed_line(
    name: str, bad: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(al.ResultsFormError) as info:
        CALLS[name](bad)
    message = str(info.value)
    assert "\n" not in message and isinstance(info.value, al.ConfigError)
    assert name in message or name.split("_")[0] in message
    assert not (tmp_path / "never-written").exists()  # refused before anything is written


def test_a_results_file_keeps_what_it_has_and_nothing_is_made_up(forms: dict[str, Any]) -> None:
    ev = forms["evaluation"]
    tools = al.tool_frame(ev.path)
    # an evaluation's rows keep each run's tool calls (names, arguments); steps and timings are unknown
    assert len(tools) > 0 and tools["step"].isna().all() and tools["duration_s"].isna().all()
    assert set(tools["tool"]) <= {"get_weather", "get_population", "calculator"}
    timeline = al.timeline_frame(ev.path)
    runs = ev.runs()
    assert len(timeline) == len(runs) and (timeline["timing"] == "per run").all()
    assert timeline["duration_s"].tolist() == pytest.approx(runs["latency_s"].tolist())
    assert math.isclose(timeline["start_s"].min(), 0.0)
    # a sweep's rows keep no tool calls: the tool frame is empty, never invented
    assert al.tool_frame(forms["sweep report"]).empty


def test_a_hand_made_frame_is_enough_for_the_tests_and_one_line_short_of_a_report(tmp_path: Path) -> None:
    scores = pd.DataFrame({"task_id": ["a", "b", "a", "b"], "model": ["A", "A", "B", "B"], "repeat": [0] * 4,
                           "score_s": [1.0, 0.0, 1.0, 1.0]})  # fmt: skip
    assert len(al.paired_tests(scores, ["score_s"])) == 1
    for call in (lambda: al.save_report(scores, tmp_path / "r.html"), lambda: al.plot_costs(scores),
                 lambda: al.export_frames(scores, tmp_path / "x", format="csv")):  # fmt: skip
        with pytest.raises(al.ResultsFormError, match=r"lacks column\(s\) \[") as info:
            call()
        assert "\n" not in str(info.value)
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "x").exists()
