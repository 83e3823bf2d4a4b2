"""The one append-only JSONL writer, with a fake file whose write fails after N bytes (no mount).

Each durable file (event log, memory, sweep results) is checked through the same seam, so a writer
that skipped the roll-back, the full-write loop or the typed error would fail here.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlab.errors import ConfigError, StorageError
from agentlab.neutral.events import ErrorEvent, RunStartedEvent
from agentlab.neutral.items import AssistantTextItem, UserItem
from agentlab.records import jsonl
from agentlab.records.eventlog import EventLog
from agentlab.records.jsonl import AppendOnlyJsonl, TornLineWarning, read_records
from agentlab.records.memory import MemoryStore
from agentlab.sweeps.store import ResultsFile, read_rows
from tests.support.faulty_files import Faults


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> Faults:
    return Faults(monkeypatch)


# ------------------------------------------------------------------ the writer itself


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EDQUOT, errno.EIO])
@pytest.mark.parametrize("after", [0, 1, 17])
def test_failed_append_leaves_the_file_as_it_was(
    tmp_path: Path, faults: Faults, err: int, after: int
) -> None:
    p = tmp_path / "f.jsonl"
    f = AppendOnlyJsonl(p)
    f.append({"n": 0})
    before = p.read_bytes()
    faults.fail(after=after, chunk=5, err=err)
    with pytest.raises(StorageError) as ei:
        f.append({"n": 1, "text": "x" * 100})
    assert ei.value.errno == err and ei.value.path == str(p)
    assert errno.errorcode[err] in str(ei.value) and "xxxx" not in str(ei.value)
    assert p.read_bytes() == before
    faults.heal()
    f.append({"n": 2})
    assert [json.loads(line) for _, line in f.lines()] == [{"n": 0}, {"n": 2}]


@pytest.mark.parametrize("at", ["flush"])
def test_a_failing_flush_is_rolled_back_too(tmp_path: Path, faults: Faults, at: str) -> None:
    p = tmp_path / "f.jsonl"
    f = AppendOnlyJsonl(p)
    f.append({"n": 0})
    faults.fail(at=at, err=errno.EIO)
    with pytest.raises(StorageError, match="EIO"):
        f.append({"n": 1})
    assert p.read_bytes() == b'{"n":0}\n'


def test_a_failing_fsync_is_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "f.jsonl"
    f = AppendOnlyJsonl(p, fsync=True)
    f.append({"n": 0})

    def bad_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr("agentlab.records.jsonl.os.fsync", bad_fsync)
    with pytest.raises(StorageError) as ei:
        f.append({"n": 1})
    assert ei.value.errno == errno.EIO and p.read_bytes() == b'{"n":0}\n'


def test_short_writes_are_completed(tmp_path: Path, faults: Faults) -> None:
    p = tmp_path / "f.jsonl"
    faults.fail(after=10_000, chunk=3)
    AppendOnlyJsonl(p).append({"text": "y" * 200})
    assert json.loads(p.read_bytes()) == {"text": "y" * 200}


def test_a_roll_back_that_fails_is_done_before_the_next_append(
    tmp_path: Path, faults: Faults, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "f.jsonl"
    f = AppendOnlyJsonl(p)
    f.append({"n": 0})
    faults.fail(after=4)

    def no_ftruncate(fd: int, size: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr("agentlab.records.jsonl.os.ftruncate", no_ftruncate)
    with pytest.raises(StorageError):
        f.append({"n": 1})
    assert p.read_bytes() == b'{"n":0}\n{"n"'  # the partial line could not be cut yet...
    monkeypatch.undo()
    faults.heal()
    f.append({"n": 2})  # ...so it is cut first: the next record starts on a clean line
    assert p.read_bytes() == b'{"n":0}\n{"n":2}\n'


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ({"t": "a\udc80b"}, "lone surrogate"),
        ({"x": float("nan")}, "ValueError"),
        ({"x": object()}, "TypeError"),
        (UserItem(text="a\ud800"), "lone surrogate"),
    ],
)
def test_unencodable_records_are_refused_before_writing(tmp_path: Path, record: Any, why: str) -> None:
    p = tmp_path / "f.jsonl"
    f = AppendOnlyJsonl(p)
    f.append({"n": 0})
    with pytest.raises(StorageError, match=why) as ei:
        f.append(record)
    assert ei.value.errno is None and ei.value.__context__ is None  # nothing holds the text
    assert p.read_bytes() == b'{"n":0}\n'


def test_torn_tail_is_cut_on_open_and_skipped_on_read(tmp_path: Path) -> None:
    p = tmp_path / "f.jsonl"
    p.write_bytes(b'{"n":0}\n{"n":')
    with pytest.warns(TornLineWarning, match="ignoring a torn final line"):
        assert [n for n, _ in jsonl.iter_lines(p)] == [1]
    with pytest.warns(TornLineWarning, match="removed a torn final line"):
        f = AppendOnlyJsonl(p)
    f.append({"n": 1})
    assert p.read_bytes() == b'{"n":0}\n{"n":1}\n'


def test_a_bad_line_in_the_middle_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "f.jsonl"
    p.write_bytes(b'{"n":0}\n\n{"n":SECRET}\n{"n":2}\n')
    with pytest.raises(ConfigError, match=r"f\.jsonl:3: not a record \(not JSON") as ei:
        list(read_records(p, json.loads, "a record"))
    assert "SECRET" not in str(ei.value) and ei.value.__context__ is None


# ------------------------------------------------------------------ the three files on it


def test_event_log_failed_append_then_recovery(tmp_path: Path, faults: Faults) -> None:
    p = tmp_path / "events.jsonl"
    log = EventLog(p)
    first = RunStartedEvent(provider="openai", model="m")
    log.append(first)
    faults.fail(after=30, chunk=7)
    with pytest.raises(StorageError):
        log.append(ErrorEvent(error_type="X", message="m" * 300))
    assert len(log) == 1
    faults.heal()
    last = RunStartedEvent(provider="anthropic", model="m2")
    log.append(last)
    assert EventLog.read(p) == [first, last] == log.records


def test_event_log_read_names_a_corrupt_line(tmp_path: Path) -> None:
    p = tmp_path / "events.jsonl"
    EventLog(p).append(RunStartedEvent(provider="openai", model="m"))
    with p.open("ab") as f:
        f.write(b'{"kind":"run_started","model":42,"provider":"REASONING-CANARY"}\n')
    EventLog(p).append(RunStartedEvent(provider="openai", model="m"))
    with pytest.raises(ConfigError, match=r"events\.jsonl:2: not an event log record") as ei:
        EventLog.read(p)
    assert "CANARY" not in str(ei.value)


def test_memory_store_failed_add_then_recovery(tmp_path: Path, faults: Faults) -> None:
    p = tmp_path / "mem.jsonl"
    m = MemoryStore(p)
    m.add(UserItem(text="kept"))
    faults.fail(after=5, chunk=2)
    with pytest.raises(StorageError):
        m.add(AssistantTextItem(text="lost " * 50))
    assert len(m) == 1
    faults.heal()
    m.add(AssistantTextItem(text="after"))
    assert list(MemoryStore(p)) == list(m) == [UserItem(text="kept"), AssistantTextItem(text="after")]


def test_memory_store_reload_repairs_a_torn_tail_and_names_corruption(tmp_path: Path) -> None:
    p = tmp_path / "mem.jsonl"
    MemoryStore(p).add(UserItem(text="kept"))
    with p.open("ab") as f:
        f.write(b'{"kind":"user","te')
    with pytest.warns(TornLineWarning):
        assert list(MemoryStore(p)) == [UserItem(text="kept")]
    with p.open("ab") as f:
        f.write(b'{"kind":"nope"}\n')
    with pytest.raises(ConfigError, match=r"mem\.jsonl:2: not a memory item"):
        MemoryStore(p)


def test_results_file_failed_append_then_recovery(tmp_path: Path, faults: Faults) -> None:
    p = tmp_path / "r.jsonl"

    def row(i: int) -> dict[str, Any]:
        return {"task_id": f"t{i}", "model": "openai:m", "setting": "s", "repeat": 0, "output": "o" * 200}

    with ResultsFile(p, fsync=True) as f:
        f.append(row(0))
        faults.fail(after=50, chunk=9)
        with pytest.raises(StorageError):
            f.append(row(1))
        faults.heal()
        f.append(row(2))
    assert [r["task_id"] for r in read_rows(p)] == ["t0", "t2"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    plan=st.lists(
        st.tuples(st.integers(0, 300), st.one_of(st.none(), st.integers(0, 320)), st.integers(1, 64)),
        min_size=1,
        max_size=12,
    )
)
def test_any_sequence_of_failures_leaves_exactly_the_successful_lines(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, plan: list[Any]
) -> None:
    """The file is always the successful lines, in order, nothing else.

    Appends of random sizes, each failing after a random number of bytes (or not at all), cut into random
    short writes.
    """
    with monkeypatch.context() as mp:
        faults = Faults(mp)
        p = tmp_path_factory.mktemp("prop") / "f.jsonl"
        f = AppendOnlyJsonl(p)
        expected = b""
        for i, (size, fail_after, chunk) in enumerate(plan):
            line = json.dumps({"i": i, "pad": "p" * size}).encode() + b"\n"
            if fail_after is None:
                faults.fail(after=1 << 30, chunk=chunk)
            else:
                faults.fail(after=fail_after, chunk=chunk)
            try:
                f.append_line(line)
            except StorageError:
                assert fail_after is not None and fail_after < len(line)
            else:
                expected += line
            assert p.read_bytes() == expected


def test_the_writer_is_plain_data(tmp_path: Path) -> None:
    import copy
    import pickle

    f = AppendOnlyJsonl(tmp_path / "f.jsonl")
    for g in (pickle.loads(pickle.dumps(f)), copy.deepcopy(f)):
        g.append({"n": 1})
    assert len(list(f.lines())) == 2


def test_an_interrupt_between_partial_writes_leaves_no_half_line(tmp_path: Path) -> None:
    """Ctrl-C can land between two short writes of one line: that append is rolled back too."""
    from tests.support.faulty_files import FailingFile

    class Interrupted(FailingFile):
        def write(self, data: Any, /) -> int:
            if self.budget <= 0:
                raise KeyboardInterrupt
            return super().write(data)

    p = tmp_path / "f.jsonl"
    AppendOnlyJsonl(p).append({"n": 0})
    f = AppendOnlyJsonl(
        p, opener=lambda path, mode: Interrupted(path, mode, budget=6, chunk=3, err=0, at="write")
    )
    with pytest.raises(KeyboardInterrupt):
        f.append({"n": 1, "pad": "x" * 50})
    assert p.read_bytes() == b'{"n":0}\n'
