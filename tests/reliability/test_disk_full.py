"""Files on a real full disk: a 64 KiB tmpfs, filled, then given space back.

For each durable JSONL file (event log, long-term memory, sweep results) and for the two things that
write them as they go (a run with an event log, a whole sweep): the append that hits ``ENOSPC``
raises ``StorageError`` naming the file and the errno, the file is byte for byte what it was, and
once space is back the next append starts on a clean line and everything reads back.

Mounting needs root (CI runs as root); elsewhere these tests skip and say why.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.errors import StorageError
from agentlab.neutral.events import ErrorEvent, RunStartedEvent
from agentlab.neutral.items import AssistantTextItem, UserItem
from agentlab.records.eventlog import EventLog
from agentlab.records.memory import MemoryStore
from agentlab.sweeps import load_results, read_rows, sim_tasks, sim_tools, sweep
from agentlab.sweeps.store import ResultsFile
from tests.support.runs import count_started_runs

BIG = 6000  # longer than a page, so a write into a full disk is always cut short (a torn line)


@dataclass
class Disk:
    """A mounted tmpfs; ``fill()`` takes every free page, ``free()`` gives them back."""

    path: Path

    def fill(self) -> None:
        with (self.path / "filler").open("ab", buffering=0) as f:
            chunk = b"\0" * 4096
            with contextlib.suppress(OSError):
                while True:
                    f.write(chunk)
            with contextlib.suppress(OSError):
                while True:  # the last partial page, byte by byte
                    f.write(b"\0")

    def free(self) -> None:
        (self.path / "filler").unlink(missing_ok=True)


@pytest.fixture
def disk() -> Iterator[Disk]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs these tests as root)")
    where = Path(tempfile.mkdtemp(prefix="agentlab-tinydisk-"))
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        where.rmdir()
        pytest.skip(f"mount -t tmpfs is not permitted here: {proc.stderr.strip() or proc.returncode}")
    try:
        yield Disk(where)
    finally:
        subprocess.run(["umount", str(where)], check=True)
        where.rmdir()


def _assert_disk_full(e: StorageError, path: Path) -> None:
    assert e.errno == errno.ENOSPC and e.path == str(path)
    assert str(path) in str(e) and "ENOSPC" in str(e)


def test_event_log_on_a_full_disk(disk: Disk) -> None:
    p = disk.path / "events.jsonl"
    log = EventLog(p)
    first = RunStartedEvent(provider="openai", model="m")
    log.append(first)
    before = p.read_bytes()
    disk.fill()
    big = ErrorEvent(error_type="X", message="y" * BIG)
    with pytest.raises(StorageError) as ei:
        log.append(big)
    _assert_disk_full(ei.value, p)
    assert "y" * 20 not in str(ei.value)  # the record is never in the message
    assert p.read_bytes() == before
    assert len(log) == 1  # memory holds what the file holds
    with pytest.raises(StorageError):  # still full: still refused, still unchanged
        log.append(big)
    assert p.read_bytes() == before
    disk.free()
    log.append(big)
    last = RunStartedEvent(provider="anthropic", model="m2")
    log.append(last)
    assert EventLog.read(p) == [first, big, last]  # no warning: no torn line anywhere
    assert list(log) == [first, big, last]


def test_memory_store_on_a_full_disk(disk: Disk) -> None:
    p = disk.path / "mem.jsonl"
    m = MemoryStore(p)
    m.add(UserItem(text="Paris is in France"))
    before = p.read_bytes()
    disk.fill()
    big = AssistantTextItem(text="z" * BIG)
    with pytest.raises(StorageError) as ei:
        m.add(big)
    _assert_disk_full(ei.value, p)
    assert p.read_bytes() == before and len(m) == 1
    disk.free()
    m.add(big)
    m.add(UserItem(text="and Rome in Italy"))
    assert list(MemoryStore(p)) == list(m) and len(m) == 3


def _row(i: int, output: str = "ok") -> dict[str, Any]:
    return {
        "task_id": f"t{i}",
        "model": "openai:sim-reasoner",
        "setting": "default",
        "repeat": 0,
        "status": "completed",
        "output": output,
    }


def test_results_file_on_a_full_disk(disk: Disk) -> None:
    p = disk.path / "r.jsonl"
    with ResultsFile(p) as f:
        f.append(_row(0))
        before = p.read_bytes()
        disk.fill()
        with pytest.raises(StorageError) as ei:
            f.append(_row(1, "w" * BIG))
        _assert_disk_full(ei.value, p)
        assert p.read_bytes() == before
        disk.free()
        f.append(_row(1, "w" * BIG))
        f.append(_row(2))
    assert [r["task_id"] for r in read_rows(p)] == ["t0", "t1", "t2"]


def test_a_run_whose_event_log_fills_the_disk_fails_loudly(disk: Disk) -> None:
    """The tool fills the disk and returns a long output: its record cannot be written."""
    p = disk.path / "events.jsonl"

    @al.tool
    def lookup(city: str) -> str:
        """Weather for a city."""
        disk.fill()
        return "sunny " * (BIG // 6)

    run = al.Run("openai:sim-reasoner", "Weather in Paris? Use the tool.", tools=[lookup], event_log=p)
    with pytest.raises(StorageError) as ei:
        run.run_sync()
    _assert_disk_full(ei.value, p)
    assert run.result is not None and run.result.status == "failed"
    assert run.result.error_type == "StorageError"
    logged = EventLog.read(p)  # the file holds whole records only: no torn line, no warning
    assert logged and logged[0].kind == "run_started"
    disk.free()
    again = al.run("openai:sim-reasoner", "What is 2+2?", event_log=p)
    assert again.status == "completed"
    back = EventLog.read(p)
    assert back[: len(logged)] == logged and back[len(logged) :] == list(again.events)


def test_a_sweep_whose_results_file_fills_stops_and_resumes(
    disk: Disk, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = count_started_runs(monkeypatch)
    p = disk.path / "r.jsonl"
    models = ["openai:sim-reasoner", "anthropic:sim-thinker"]
    tasks = sim_tasks()[:4]
    planned = len(tasks) * len(models) * 3

    def fill_after_first(prog: Any) -> None:
        if prog.done == 1:
            disk.fill()

    with pytest.raises(StorageError) as ei:
        sweep(
            tasks,
            models,
            results=p,
            tools=sim_tools(),
            repeats=3,
            concurrency=2,
            progress=None,
            on_progress=fill_after_first,
        )
    _assert_disk_full(ei.value, p)
    assert "resume" in str(ei.value)
    kept = list(read_rows(p))  # whole rows only: no torn row anywhere
    assert 1 <= len(kept) < planned
    # It stopped starting runs: besides the kept rows, only the run whose row failed and the runs
    # then in flight (2 per provider, so 3 others at most) were started.
    assert len(started) <= len(kept) + 4, (len(started), len(kept))

    disk.free()
    rep = sweep(tasks, models, results=p, tools=sim_tools(), repeats=3, concurrency=2, progress=None)
    assert rep.status == "completed" and rep.from_file == len(kept)
    assert rep.ran == planned - len(kept)
    df = load_results(p)
    assert len(df) == planned and not df.duplicated(["task_id", "model", "setting", "repeat"]).any()
    assert len(p.read_bytes().splitlines()) == planned  # nothing finished was redone


def test_report_pages_on_a_full_disk_are_old_or_whole(disk: Disk) -> None:
    """The report's pages and notebooks are whole files: on ENOSPC the old page stays, no temp left."""
    from agentlab.records.atomic_file import write_atomic

    page = disk.path / "index.html"
    write_atomic(page, "<p>old</p>")
    disk.fill()
    with pytest.raises(StorageError) as info:
        write_atomic(page, "<p>" + "x" * 20_000 + "</p>")
    _assert_disk_full(info.value, page)
    assert page.read_text(encoding="utf-8") == "<p>old</p>"
    assert sorted(p.name for p in disk.path.iterdir()) == ["filler", "index.html"]
    disk.free()
    write_atomic(page, "<p>" + "x" * 20_000 + "</p>")
    assert len(page.read_text(encoding="utf-8")) == 20_007
