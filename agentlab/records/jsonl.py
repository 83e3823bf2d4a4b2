"""Append-only JSONL files: the one place agentlab writes and reads a durable line.

The event log, long-term memory and the sweep results file all hold one JSON record per line and
only ever grow. What they promise, kept here once:

* **A record is encoded completely before a byte is written.** A record JSON cannot hold (a lone
  surrogate, NaN, an unknown type) raises ``StorageError`` with the file unchanged. Files are
  strict UTF-8, so every JSON parser (pydantic's too) reads back what was written.
* **An append either lands whole or not at all.** The line goes out through a full-write loop, then
  flush and (optionally) ``fsync``. On any ``OSError`` on the way (``ENOSPC`` disk full,
  ``EDQUOT``, ``EIO``), the file is cut back to its size before this append (``ftruncate`` on the
  recorded offset), so it is byte for byte what it was, and ``StorageError`` names the file and the
  errno, never the record. If even the cut fails, the next append makes it first: it never starts
  after a partial line.
* **A crash mid-write is repaired on open.** A process killed inside ``write`` can leave a torn
  last line; opening the file cuts it (``TornLineWarning``), so the next record starts on a line of
  its own.
* **Reads tolerate a torn last line only** (skipped with a ``TornLineWarning``). A bad line
  anywhere else is corruption: the reader raises ``ConfigError`` naming the file and line number.

One writer per file: appends are serialized by a lock within a process; two processes appending to
one file could cut each other's lines when rolling back, so agentlab never does that.
"""

from __future__ import annotations

import contextlib
import errno as errno_codes
import json
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from agentlab.errors import ConfigError, StorageError

__all__ = ["AppendOnlyJsonl", "Opener", "TornLineWarning", "encode_line", "iter_lines", "read_records"]

T = TypeVar("T")


class TornLineWarning(UserWarning):
    """A JSONL file ended with an incomplete line (the process died while writing it)."""


class AppendFile(Protocol):
    """What the writer needs of an open file: the seam tests use to fail a write after N bytes."""

    def write(self, data: memoryview, /) -> int | None: ...
    def flush(self) -> None: ...
    def fileno(self) -> int: ...
    def close(self) -> None: ...


Opener = Callable[[Path, int], AppendFile]
"""``opener(path, mode)`` opens ``path`` for binary append, creating it with permissions ``mode``."""


class _AppendFd:
    """A bare ``O_APPEND`` descriptor: each ``write`` is one ``os.write`` system call, no buffer.

    Nothing sits between the writer's loop and the kernel, so a short write or an ``ENOSPC`` is seen
    by the loop itself (and fault-injection tests that wrap ``os.write`` reach the real path).
    """

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: memoryview, /) -> int:
        return os.write(self._fd, data)

    def flush(self) -> None:
        """Unbuffered: every byte already went to the kernel with its ``write``."""

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        os.close(self._fd)


def open_append(path: Path, mode: int) -> AppendFile:
    """Binary, unbuffered, ``O_APPEND``: every ``write`` goes to the end of the file."""
    return _AppendFd(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, mode))


def encode_line(record: BaseModel | dict[str, Any], path: str | Path) -> bytes:
    """One record as one UTF-8 JSON line, or ``StorageError`` (``errno=None``) naming why not.

    The reason names the failure's type only: the record's content never enters an error message.
    """
    why: str
    try:
        if isinstance(record, BaseModel):
            text = record.model_dump_json()
        else:
            text = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8") + b"\n"
    except (ValueError, TypeError) as e:  # UnicodeEncodeError and pydantic's serialization error too
        why = (
            "it holds text that is not valid Unicode (a lone surrogate)"
            if isinstance(e, UnicodeError) or "surrogate" in str(e)
            else f"it holds a value JSON cannot represent ({type(e).__name__})"
        )
    # Raised outside the handler: the encoder's exception holds the text (``UnicodeError.object``),
    # and would stay reachable as ``__context__``.
    raise StorageError(f"{path}: record not written: {why}; the file is unchanged", path=str(path))


class AppendOnlyJsonl:
    """One append-only JSONL file with the guarantees in the module docstring.

    ``fsync=True`` makes each append durable against power loss (slower); without it a record is in
    the OS once ``append`` returns, which survives the process dying. ``opener`` is a test seam.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        fsync: bool = False,
        mode: int = 0o600,
        opener: Opener = open_append,
    ) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._mode = mode
        self._opener = opener
        self._lock = threading.Lock()
        self._restore_to: int | None = None
        """Size to cut the file back to before the next append (a roll-back that failed)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            repair_tail(self.path)
        except OSError as e:
            raise StorageError.from_os_error(self.path, "open the file", e) from None

    def append(self, record: BaseModel | dict[str, Any]) -> None:
        """Append one record as one line; ``StorageError`` (file unchanged) if it cannot be."""
        self.append_line(encode_line(record, self.path))

    def append_line(self, line: bytes) -> None:
        r"""Append one already-encoded line (must be one line ending in ``\n``)."""
        if not line.endswith(b"\n") or b"\n" in line[:-1]:
            raise ValueError("append_line takes exactly one line ending in a newline")
        with self._lock:
            if self._restore_to is not None:
                try:
                    os.truncate(self.path, self._restore_to)
                except OSError as e:
                    raise StorageError.from_os_error(
                        self.path, "cut a partial line left by an earlier failed append", e
                    ) from None
                self._restore_to = None
            try:
                f = self._opener(self.path, self._mode)
            except OSError as e:
                raise StorageError.from_os_error(self.path, "open the file for appending", e) from None
            try:
                self._write(f, line)
            finally:
                with contextlib.suppress(OSError):  # written and flushed already: nothing buffered is lost
                    f.close()

    def _write(self, f: AppendFile, line: bytes) -> None:
        try:
            fd = f.fileno()
            start = os.fstat(fd).st_size  # O_APPEND: this append begins exactly here
        except OSError as e:
            raise StorageError.from_os_error(self.path, "append a record", e) from None
        try:
            view = memoryview(line)
            while view:
                n = f.write(view)
                if not n:  # None (would block) or 0: no progress; do not spin
                    raise OSError(errno_codes.EIO, "write made no progress")
                view = view[n:]
            f.flush()
            if self.fsync:
                os.fsync(fd)
        except OSError as e:
            self._roll_back(fd, start)
            raise StorageError.from_os_error(self.path, "append a record", e) from None
        except BaseException:  # Ctrl-C between two partial writes: no half line either
            self._roll_back(fd, start)
            raise

    def _roll_back(self, fd: int, start: int) -> None:
        """Cut what this append wrote, so the file is as it was; remember to retry if that fails."""
        try:
            os.ftruncate(fd, start)
        except OSError:
            self._restore_to = start

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """``(line number, line)`` of every complete line; see :func:`iter_lines`."""
        return iter_lines(self.path)

    def __getstate__(self) -> dict[str, Any]:
        """Plain data (the lock is per process): a copy appends to the same file."""
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<AppendOnlyJsonl {self.path}>"


def repair_tail(path: Path) -> bool:
    """Cut a torn last line left by a crash (``TornLineWarning``); True if something was cut."""
    if not path.exists() or path.stat().st_size == 0:
        return False
    with path.open("rb+") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return False
        # Scan back in blocks for the last newline; the file may be large.
        pos, cut = size, 0
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            f.seek(pos)
            i = f.read(step).rfind(b"\n")
            if i >= 0:
                cut = pos + i + 1
                break
        f.truncate(cut)
    warnings.warn(
        f"{path}: removed a torn final line left by an interrupted write", TornLineWarning, stacklevel=4
    )
    return True


def iter_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """``(line number, line without its newline)`` for every complete, non-blank line, streamed.

    A last line without its newline is the tail of an interrupted write: skipped, with a
    ``TornLineWarning``. Whether a line is a valid record is the caller's call (it names the line
    number in its error). A missing file has no lines.
    """
    p = Path(path)
    if not p.exists():
        return
    with p.open("rb") as f:
        for n, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            if not raw.endswith(b"\n"):  # only the last line can lack it
                warnings.warn(f"{p}: ignoring a torn final line", TornLineWarning, stacklevel=3)
                return
            yield n, raw[:-1]


def read_records(path: str | Path, parse: Callable[[bytes], T], what: str) -> Iterator[T]:
    """``parse(line)`` for every complete line (see :func:`iter_lines`), streamed.

    A ``ValueError`` from ``parse`` (pydantic's ``ValidationError`` is one) is a corrupt line in
    the middle of the file: ``ConfigError`` naming the file, the line number and what is wrong
    (field and kind of problem, never the value: it may be model output). ``what`` names the kind
    of record expected, with its article: ``"a sweep results row"``.
    """
    for n, line in iter_lines(path):
        try:
            record = parse(line)
        except ValueError as e:
            problem = describe_problem(e)
        else:
            yield record
            continue
        # Raised outside the handler: a validation error holds the line's text as its input.
        raise ConfigError(f"{path}:{n}: not {what} ({problem}); is this the right file?")


def describe_problem(e: ValueError) -> str:
    """Where and what kind of problem, without the offending value."""
    if isinstance(e, ValidationError):
        first = e.errors(include_input=False, include_url=False, include_context=False)[0]
        where = ".".join(str(x) for x in first["loc"])
        return f"{where}: {first['type']}" if where else str(first["type"])
    if isinstance(e, json.JSONDecodeError):
        return f"not JSON: {e.msg} at column {e.colno}"
    return str(e)
