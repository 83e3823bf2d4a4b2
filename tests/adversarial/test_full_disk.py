"""Files on a full disk: a 64 KiB tmpfs, filled, then given space back.

For each append-only JSONL file (event log, memory store, sweep results): appends until the disk is
full; the append that fails raises agentlab's typed error and leaves the file byte for byte as it
was; the reader then reads every record appended before, intact; once space is back the next
append works and starts on a line of its own.

tmpfs allocates whole pages, so the last page of a file takes small appends until it is full: the
write that crosses the page boundary is the short write that used to tear a line.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.neutral.events import DiagnosticEvent
from agentlab.neutral.items import UserItem
from tests.adversarial.support import (
    MODELS,
    Canaries,
    HostileTransport,
    adapter_on,
    get_weather,
    responder_for,
)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted as root (skipped, with the reason, where mounting is not permitted)."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {proc.stderr.strip() or proc.returncode}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(disk: Path) -> Path:
    """Fill the disk up to the last byte; returns the filler (delete it to give space back)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (4096, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return filler


def _event(i: int) -> DiagnosticEvent:
    return DiagnosticEvent(run_id="run_disk", step=i, code="note", message=f"record {i} " + "x" * 150)


def _append_until_full(
    append: Any, make: Any, path: Path, limit: int = 400
) -> tuple[int, BaseException, bytes]:
    """Append until one fails; (how many succeeded, the error, the file as it was before it)."""
    for i in range(limit):
        before = path.read_bytes() if path.exists() else b""
        try:
            append(make(i))
        except BaseException as e:
            return i, e, before
    raise AssertionError(f"{limit} appends fitted on a 64 KiB disk: the fault never happened")


def _check_failed_append(what: str, err: BaseException, before: bytes, path: Path) -> list[str]:
    """What is wrong with a failed append (empty when nothing): all problems, not just the first."""
    problems = []
    after = path.read_bytes()
    if not isinstance(err, al.AgentlabError):
        problems.append(
            f"{what}: the failed append raised a bare {type(err).__name__} ({err}); "
            "want agentlab's typed error"
        )
    if after != before:
        tail = after[max(0, len(before) - 20) :][:80]
        problems.append(
            f"{what}: the failed append changed the file ({len(before)} -> {len(after)} bytes, "
            f"tail {tail!r}); want it exactly as before"
        )
    return problems


def _soft(problems: list[str], what: str, fn: Any) -> Any:
    """Run a check; a failure is recorded (the test goes on to report the later ones too)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a torn line "repaired" with a warning is not good enough
            return fn()
    except BaseException as e:
        problems.append(f"{what}: {type(e).__name__}: {str(e)[:200]}")
        return None


def test_event_log_on_a_full_disk(tiny_disk: Path) -> None:
    path = tiny_disk / "events.jsonl"
    log = al.EventLog(path)
    log.append(_event(0))
    filler = fill(tiny_disk)
    n, err, before = _append_until_full(log.append, lambda i: _event(i + 1), path)
    assert n >= 1, "the file's last page took no append at all (the test needs a partly used page)"
    problems = _check_failed_append("EventLog.append", err, before, path)
    steps = _soft(problems, "EventLog.read after the fault", lambda: [r.step for r in al.EventLog.read(path)])
    if steps is not None and steps != list(range(n + 1)):
        problems.append(f"read back after the fault: steps {steps[-3:]}..., want 0..{n}")
    filler.unlink()
    _soft(problems, "EventLog.append once space is back", lambda: log.append(_event(999)))
    steps = _soft(
        problems, "EventLog.read once space is back", lambda: [r.step for r in al.EventLog.read(path)]
    )
    if steps is not None and steps != [*range(n + 1), 999]:
        problems.append(
            f"read back once space is back: {len(steps)} records ending {steps[-3:]}, want 0..{n}, 999"
        )
    _soft(problems, "a new EventLog on the file", lambda: al.EventLog(path))
    assert not problems, "\n".join(problems)


def test_memory_store_on_a_full_disk(tiny_disk: Path) -> None:
    path = tiny_disk / "memory.jsonl"
    store = al.MemoryStore(path)
    store.add(UserItem(text="item 0 " + "y" * 150))
    filler = fill(tiny_disk)
    n, err, before = _append_until_full(
        store.add, lambda i: UserItem(text=f"item {i + 1} " + "y" * 150), path
    )
    problems = _check_failed_append("MemoryStore.add", err, before, path)
    reloaded = _soft(problems, "MemoryStore reload after the fault", lambda: al.MemoryStore(path))
    if reloaded is not None and len(reloaded) != n + 1:
        problems.append(f"reload after the fault: {len(reloaded)} items, want {n + 1}")
    filler.unlink()
    _soft(
        problems,
        "MemoryStore.add once space is back",
        lambda: store.add(UserItem(text="after space came back")),
    )
    texts = _soft(
        problems,
        "MemoryStore reload once space is back",
        lambda: [i.text if isinstance(i, UserItem) else repr(i) for i in al.MemoryStore(path)],
    )
    if texts is not None and (len(texts) != n + 2 or texts[-1] != "after space came back"):
        problems.append(
            f"reload once space is back: {len(texts)} items, want {n + 2} ending with the new one"
        )
    assert not problems, "\n".join(problems)


def test_sweep_results_on_a_full_disk(tiny_disk: Path) -> None:
    """A sweep whose results file fills the disk stops with a typed error.

    It keeps only whole rows, starts no run it cannot record, and resumes once space is back.
    """
    results = tiny_disk / "sweep.jsonl"
    c = Canaries.fresh()
    started = [0]

    def factory(ref: Any) -> Any:
        started[0] += 1
        return adapter_on(
            "openai", HostileTransport("openai", responder_for("openai", "none", c)), c.key_for("openai")
        )

    tasks = [f"Is it warmer in Paris or Rome? (variant {i})" for i in range(40)]

    async def sweep() -> Any:
        return await al.asweep(
            tasks, [f"openai:{MODELS['openai']}"], results=results, tools=[get_weather],
            adapter_factory=factory, retries=0, retry_delay=0.0, progress=None, concurrency=1,
        )  # fmt: skip

    # one row first, so that the file has a partly used page, then fill the disk
    asyncio.run(_one(tasks[:1], results, factory))
    filler = fill(tiny_disk)
    try:
        asyncio.run(sweep())
        raised: BaseException | None = None
    except BaseException as e:
        raised = e
    problems: list[str] = []
    data = results.read_bytes()
    rows = len(data.splitlines())
    assert rows < len(tasks), "the disk never filled"
    if not data.endswith(b"\n"):
        problems.append(f"a torn row at the end of the results file: ...{data[-100:]!r}")
    if not isinstance(raised, al.AgentlabError):
        what = f"{type(raised).__name__}: {str(raised)[:150]}" if raised is not None else "nothing"
        problems.append(
            f"the sweep whose results cannot be written raised {what}; want agentlab's typed error"
        )
    if started[0] > rows + 1:
        problems.append(
            f"{started[0]} runs were started for {rows} rows kept: runs went on after the file failed"
        )
    filler.unlink()
    _soft(problems, "resume once space is back", lambda: asyncio.run(sweep()))
    frame = _soft(problems, "load_results after resume", lambda: al.load_results(results))
    if frame is not None and len(frame) != len(tasks):
        problems.append(f"after resume: {len(frame)} rows, want {len(tasks)}")
    assert not problems, "\n".join(problems)


async def _one(tasks: list[str], results: Path, factory: Any) -> None:
    await al.asweep(
        tasks, [f"openai:{MODELS['openai']}"], results=results, tools=[get_weather], adapter_factory=factory,
        retries=0, retry_delay=0.0, progress=None,
    )  # fmt: skip


def test_tiny_disk_really_fills(tiny_disk: Path) -> None:
    """Control: the fixture's disk does run out (ENOSPC), and comes back."""
    filler = fill(tiny_disk)
    with pytest.raises(OSError) as info:
        (tiny_disk / "more").write_bytes(b"z" * 8192)
    assert info.value.errno == errno.ENOSPC
    filler.unlink()
    (tiny_disk / "more").write_bytes(b"z" * 8192)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs (a report with its charts is over 100 KB), as ``tiny_disk``."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {proc.stderr.strip() or proc.returncode}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@al.tool
def _weather(city: str) -> str:
    """Weather for a city."""
    return "sunny"


def _run_result() -> Any:
    return al.Run("openai:sim-reasoner", "Weather in Paris? Use the tool.", tools=[_weather]).run_sync()


def test_report_and_exported_frames_on_a_full_disk(small_disk: Path) -> None:
    """Each whole-file writer on a full disk: typed error, the earlier files intact, nothing partial."""
    import importlib.util

    formats = ["csv"] + (["parquet"] if importlib.util.find_spec("pyarrow") else [])
    writers: dict[str, Any] = {"save_report": lambda r: [al.save_report(r, small_disk / "report.html")]}
    for fmt in formats:
        writers[f"export_frames {fmt}"] = lambda r, fmt=fmt: list(
            al.export_frames(r, small_disk / fmt, format=fmt).values()
        )
    first = {name: write(_run_result()) for name, write in writers.items()}
    before = {p: p.read_bytes() for paths in first.values() for p in paths}
    files_before = sorted(small_disk.rglob("*"))
    filler = fill(small_disk)
    problems: list[str] = []
    for name, write in writers.items():
        try:
            write(_run_result())
            problems.append(f"{name}: wrote on a full disk without an error (the disk never filled?)")
        except BaseException as e:
            if not isinstance(e, al.StorageError) or "\n" in str(e):
                what = f"{type(e).__name__}: {str(e)[:150]}"
                problems.append(f"{name}: raised {what}; want a one-line StorageError")
    for p, data in before.items():
        if p.read_bytes() != data:
            problems.append(f"{p.name}: {len(data)} bytes before, {p.stat().st_size} after the failed write")
    extra = sorted(set(small_disk.rglob("*")) - set(files_before) - {filler})
    if extra:
        problems.append(f"left behind: {[str(p.relative_to(small_disk)) for p in extra]}")
    filler.unlink()
    for name, write in writers.items():
        _soft(problems, f"{name} once space is back", lambda write=write: write(_run_result()))
    assert not problems, "\n".join(problems)


def test_a_batch_sweep_on_a_nearly_full_disk_leaves_nothing_at_the_providers(tiny_disk: Path) -> None:
    """One page free: the manifest or journal fails mid-round, every batch made is deleted.

    The batches of that round exist at the providers (their requests hold the loop's opaque items);
    once the driver cannot record them, it must not leave them there unrecorded and billed. Once
    space is back, the same call resumes and finishes, leaving nothing at the providers either.
    """
    from agentlab.sim import anthropic_client, gemini_client, openai_client
    from agentlab.sweeps import sim_tasks, sim_tools
    from tests.support.opaque import RecordingTransport
    from tests.support.provider_copies import left_at_provider

    t = RecordingTransport()
    store = t.simulator.batches
    store.seconds = 0.05

    def make(ref: Any) -> Any:
        from agentlab.adapters.base import create_adapter

        if ref.provider == "openai":
            return create_adapter(ref, client=openai_client(transport=t))
        if ref.provider == "google":
            return create_adapter(ref, client=gemini_client(transport=t))
        return create_adapter(ref, client=anthropic_client(transport=t))

    def left() -> list[str]:
        return left_at_provider(store)

    out = tiny_disk / "batch.jsonl"
    models = ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]

    def sweep() -> Any:
        fast = {"poll_s": 0.02, "poll_max_s": 0.1}
        return al.sweep(sim_tasks()[:2], models, results=out, tools=sim_tools(), progress=None,
                        adapter_factory=make, backend="batch", batch=fast)  # fmt: skip

    filler = fill(tiny_disk)
    os.truncate(filler, filler.stat().st_size - 4096)  # one page free, about what the report saw
    problems: list[str] = []
    try:
        sweep()
        problems.append("the sweep finished on a full disk (the disk never filled?)")
    except BaseException as e:
        if not isinstance(e, al.StorageError) or "\n" in str(e):
            problems.append(f"raised {type(e).__name__}: {str(e)[:200]}; want a one-line StorageError")
    if not store._n:  # the store's id counter: files and batches ever created (deleted ones too)
        problems.append("nothing was created at a provider: the fault came first (the test needs one)")
    if left():
        problems.append(f"left at the providers after the storage stop: {left()}")
    filler.unlink()
    rep = _soft(problems, "resume once space is back", sweep)
    if rep is not None and (rep.status != "completed" or rep.failed):
        problems.append(f"after resume: {rep.status}, {rep.failed} failed")
    if left():
        problems.append(f"left at the providers after the resumed sweep: {left()}")
    assert not problems, "\n".join(problems)
