"""A results file that cannot take a row stops the sweep (mount-free: a fake file that fails).

The same story as ``tests/reliability/test_disk_full.py`` on a real full disk, fast and without
root: once a row cannot be written, no new run starts, the runs in flight are cancelled, the call
raises ``StorageError`` with the counts, and calling again resumes without redoing a finished run.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.errors import StorageError
from agentlab.records.eventlog import EventLog
from agentlab.sweeps import load_results, read_rows, sim_tasks, sim_tools, sweep
from tests.support.faulty_files import Faults
from tests.support.runs import count_started_runs

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker"]


def test_sweep_stops_starting_runs_when_a_row_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = count_started_runs(monkeypatch)
    faults = Faults(monkeypatch)
    out = tmp_path / "r.jsonl"
    tasks = sim_tasks()[:4]
    planned = len(tasks) * len(MODELS) * 2

    def fail_after_three(prog: Any) -> None:
        if prog.done >= 3 and faults.armed is None:
            faults.fail(after=40, chunk=16, err=errno.EDQUOT)

    with pytest.raises(StorageError) as ei:
        sweep(
            tasks,
            MODELS,
            results=out,
            tools=sim_tools(),
            repeats=2,
            concurrency=2,
            progress=None,
            on_progress=fail_after_three,
            fsync=False,
        )
    e = ei.value
    assert e.errno == errno.EDQUOT and e.path == str(out) and "EDQUOT" in str(e)
    kept = list(read_rows(out))  # a row or two may land between the progress report and the fault
    assert 3 <= len(kept) < planned
    assert f"{len(kept)} run(s) recorded" in str(e) and "resume" in str(e)
    assert "\n" not in str(e), str(e)  # one line, as every agentlab error
    # Besides the 3 kept: the one whose row failed and at most 3 others then in flight.
    assert len(started) <= len(kept) + 4, (len(started), len(kept))

    faults.heal()
    rep = sweep(tasks, MODELS, results=out, tools=sim_tools(), repeats=2, concurrency=2, progress=None)
    assert rep.status == "completed" and rep.from_file == len(kept)
    assert rep.ran == planned - len(kept)
    df = load_results(out)
    assert len(df) == planned and len(out.read_bytes().splitlines()) == planned
    assert set(df["run_id"]) >= {r["run_id"] for r in kept}


def test_a_run_whose_event_log_cannot_be_written_fails_with_storage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faults = Faults(monkeypatch)
    p = tmp_path / "events.jsonl"

    @al.tool
    def lookup(city: str) -> str:
        """Weather for a city."""
        faults.fail(after=10, chunk=4)
        return "sunny"

    run = al.Run("openai:sim-reasoner", "Weather in Paris? Use the tool.", tools=[lookup], event_log=p)
    with pytest.raises(StorageError, match="ENOSPC"):
        run.run_sync()
    assert run.result is not None and run.result.status == "failed"
    assert run.result.error_type == "StorageError"
    logged = EventLog.read(p)  # whole records only, no warning
    assert [e.kind for e in logged[:1]] == ["run_started"]
    assert all(e.kind != "tool_result" for e in logged)
