"""Whole files written all or nothing: reports, exported frames, the demo's pages and notebooks.

A page written in place with ``write_text`` is half a page when the disk fills mid-way, and the
reader cannot tell. Here the bytes go to a temporary file beside the target, are flushed and
fsynced, and only then renamed over it (``os.replace`` is atomic on one file system): the target is
either the old file or the whole new one. On failure the temporary file is removed and a
``StorageError`` names the path and the errno, never the content. Append-only records have their own
writer (:mod:`agentlab.records.jsonl`). Every file agentlab writes goes through one of the two
(``tests/reliability/test_file_writers.py`` scans the package for any other way of writing one).
"""

from __future__ import annotations

import contextlib
import errno as errno_codes
import os
import tempfile
from pathlib import Path

from agentlab.errors import StorageError
from agentlab.neutral._inputs import scrub

__all__ = ["copy_atomic", "ensure_dir", "write_atomic"]


def write_atomic(path: str | Path, data: str | bytes, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` (str is UTF-8) in one step, or leave it as it was."""
    target = Path(path)
    # A page is text for people: a lone surrogate (surrogateescape-decoded input) becomes U+FFFD.
    raw = scrub(data)[0].encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:
        failure: OSError | None = e
    else:
        failure = _write_then_replace(fd, tmp, raw, target, mode)
    if failure is not None:
        raise StorageError.from_os_error(
            target, "write the file (the old one, if any, is unchanged)", failure
        )


def copy_atomic(source: str | Path, target: str | Path) -> None:
    """Copy a file's bytes (and permission bits) to ``target`` all or nothing, as ``write_atomic``."""
    src = Path(source)
    try:
        data, mode = src.read_bytes(), src.stat().st_mode & 0o777
    except OSError as e:
        raise StorageError.from_os_error(src, "read the file to copy", e) from None
    write_atomic(target, data, mode=mode)


def ensure_dir(path: str | Path) -> Path:
    """``path`` as a directory (made with its parents if missing), or a ``StorageError`` naming it."""
    target = Path(path)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StorageError.from_os_error(target, "create the directory", e) from None
    return target


def _write_then_replace(fd: int, tmp: str, raw: bytes, target: Path, mode: int) -> OSError | None:
    """Write, fsync and rename into place; the OS error instead, with the temporary file removed."""
    failure: OSError | None = None
    try:
        view = memoryview(raw)
        while view:
            n = os.write(fd, view)
            if not n:
                raise OSError(errno_codes.EIO, "write made no progress")
            view = view[n:]
        os.fsync(fd)
        os.fchmod(fd, mode)
    except OSError as e:
        failure = e
    finally:
        os.close(fd)
    if failure is None:
        try:
            os.replace(tmp, target)
        except OSError as e:
            failure = e
    if failure is not None:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return failure
