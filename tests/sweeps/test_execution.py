"""``ExecutionOptions``: a sweep's back end and executor as one value, checked once when built."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from agentlab.errors import ConfigError
from agentlab.sweeps import ExecutionOptions, sim_tasks, sim_tools, sweep
from tests.structure import ROOT


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"backend": "threads"}, "backend must be 'asyncio' or 'batch', got 'threads'"),
        ({"executor": "dask"}, "executor must be one of 'asyncio', 'ray', got 'dask'"),
        ({"batch": {"poll_s": 5}}, "batch= options need backend='batch'"),
        ({"backend": "batch", "batch": {"pol_s": 5}}, "batch: unknown option(s) ['pol_s']"),
        ({"backend": "batch", "batch": {"runs": 0}}, "batch runs must be an int >= 1, got 0"),
        ({"ray_options": {"num_cpus": 1}}, "ray_options applies to executor='ray' only"),
        ({"executor": "ray", "backend": "batch"}, "executor='ray' runs live calls"),
    ],
)
def test_a_bad_field_is_one_line_naming_it(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        ExecutionOptions(**fields)  # type: ignore[arg-type]
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_batch_options_are_held_checked() -> None:
    opts = ExecutionOptions(backend="batch", batch={"poll_s": 5})
    assert opts.batch_options is not None and opts.batch_options.poll_s == 5
    assert opts.runs_in_flight(4) == opts.batch_options.runs
    assert ExecutionOptions().batch_options is None and ExecutionOptions().runs_in_flight(4) == 4


def test_execution_and_the_keywords_are_one_or_the_other(tmp_path: Path) -> None:
    """Two sources for one choice are refused before anything runs (no results file is made)."""
    out = tmp_path / "r.jsonl"
    common: dict[str, Any] = dict(results=out, tools=sim_tools(), progress=None)
    with pytest.raises(ConfigError, match=r"^execution= already sets backend: give one or the other$"):
        sweep(sim_tasks()[:1], ["openai:sim-reasoner"], execution=ExecutionOptions(), backend="batch",
              **common)
    with pytest.raises(ConfigError, match=r"^execution must be an ExecutionOptions, got dict$"):
        sweep(sim_tasks()[:1], ["openai:sim-reasoner"], execution={"backend": "batch"}, **common)
    assert not out.exists()


def test_a_sweep_with_execution_runs_as_with_the_keywords(tmp_path: Path) -> None:
    rep = sweep(
        sim_tasks()[:1], ["openai:sim-reasoner"], results=tmp_path / "r.jsonl", tools=sim_tools(),
        progress=None, execution=ExecutionOptions(executor="asyncio"),
    )  # fmt: skip
    assert rep.status == "completed" and rep.ran == 1


def test_asweep_is_well_under_80_lines() -> None:
    tree = ast.parse((ROOT / "sweeps" / "runner.py").read_text(encoding="utf-8"))
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef) and n.name == "asweep")
    assert (fn.end_lineno or 0) - fn.lineno + 1 <= 75
