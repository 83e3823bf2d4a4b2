"""Results rows that are valid JSON but not valid rows: a typed error naming the file and the line.

On resume and on load, never a bare KeyError/ValueError/TypeError and never a silent rerun or skip.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentlab.errors import ConfigError
from agentlab.sweeps import load_results, read_rows, sim_tasks, sim_tools, sweep
from agentlab.sweeps.store import ResultsFile

MODEL = "openai:sim-reasoner"


def _good(tmp_path: Path) -> Path:
    out = tmp_path / "r.jsonl"
    sweep(sim_tasks()[:3], [MODEL], results=out, tools=sim_tools(), progress=None)
    return out


def _without(key: str) -> Any:
    return lambda row: {k: v for k, v in row.items() if k != key}


def _with(**kw: Any) -> Any:
    return lambda row: {**row, **kw}


CORRUPTIONS: dict[str, Any] = {
    "missing task_id": _without("task_id"),
    "missing model": _without("model"),
    "missing setting": _without("setting"),
    "missing repeat": _without("repeat"),
    "repeat is a string": _with(repeat="x"),
    "repeat is a numeric string": _with(repeat="0"),
    "repeat is a float": _with(repeat=0.5),
    "repeat is a bool": _with(repeat=True),
    "repeat is negative": _with(repeat=-1),
    "repeat is null": _with(repeat=None),
    "task_id is a number": _with(task_id=7),
    "model is a list": _with(model=["openai", "sim"]),
    "input_tokens is a string": _with(input_tokens="12"),
    "total_cost_usd is a string": _with(total_cost_usd="0.01"),
    "latency_s is a dict": _with(latency_s={"s": 1}),
    "success is a string": _with(success="yes"),
    "status is a number": _with(status=3),
    "started_at is a number": _with(started_at=5),
    "the line is null": lambda row: None,
    "the line is a list": lambda row: [row],
    "the line is a string": lambda row: "row",
    "the line is a number": lambda row: 3,
}


def _corrupt_line_2(out: Path, how: Any) -> None:
    lines = out.read_bytes().splitlines(keepends=True)
    bad = json.dumps(how(json.loads(lines[1]))).encode() + b"\n"
    out.write_bytes(lines[0] + bad + b"".join(lines[2:]))


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_corrupt_row_is_a_typed_error_on_load_and_on_resume(tmp_path: Path, name: str) -> None:
    out = _good(tmp_path)
    _corrupt_line_2(out, CORRUPTIONS[name])
    before = out.read_bytes()
    with pytest.raises(ConfigError, match=r"r\.jsonl:2: "):
        load_results(out)
    with pytest.raises(ConfigError, match=r"r\.jsonl:2: "):
        load_results(out, superseded=True)
    with pytest.raises(ConfigError, match=r"r\.jsonl:2: "):
        list(read_rows(out))
    with pytest.raises(ConfigError, match=r"r\.jsonl:2: "):  # resume refuses: no silent rerun or skip
        sweep(sim_tasks()[:3], [MODEL], results=out, tools=sim_tools(), progress=None)
    assert out.read_bytes() == before  # nothing was run or appended


def test_corrupt_row_message_names_the_field_not_the_value(tmp_path: Path) -> None:
    out = _good(tmp_path)
    _corrupt_line_2(out, _with(repeat="SECRET-REASONING-CANARY"))
    with pytest.raises(ConfigError) as ei:
        load_results(out)
    assert "repeat" in str(ei.value) and "CANARY" not in str(ei.value)


def test_rows_of_an_older_schema_missing_newer_fields_still_load(tmp_path: Path) -> None:
    """Only the key fields are required; a field a row lacks is unknown (<NA>), as before."""
    out = tmp_path / "r.jsonl"
    out.write_text(json.dumps({"task_id": "a", "model": MODEL, "setting": "default", "repeat": 0}) + "\n")
    df = load_results(out)
    assert len(df) == 1 and df["status"].isna().all()


def test_unencodable_text_in_a_row_does_not_lose_the_row(tmp_path: Path) -> None:
    r"""Model output is the only free text in a row; a lone surrogate in it is replaced.

    JSON ``"\ud800"`` decodes to one; replacing it keeps the paid-for run, and the file stays strict
    UTF-8.
    """
    out = tmp_path / "r.jsonl"
    with ResultsFile(out, fsync=False) as f:
        f.append({"task_id": "a", "model": MODEL, "setting": "default", "repeat": 0, "output": "x\ud800y"})
    out.read_bytes().decode("utf-8")  # strict
    assert [r["output"] for r in read_rows(out)] == ["x\ufffdy"]


def test_the_writer_never_writes_a_row_the_readers_would_refuse(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    with ResultsFile(out, fsync=False) as f:
        with pytest.raises(ValueError, match="'repeat' must be an integer"):
            f.append({"task_id": "a", "model": MODEL, "setting": "default", "repeat": "0"})
        with pytest.raises(ValueError, match="'task_id' must be a string, got null"):
            f.append({"model": MODEL, "setting": "default", "repeat": 0})
    assert not out.exists() or out.read_bytes() == b""
