"""Files whose writes fail after N bytes, under agentlab's two writers (append-only and atomic).

Fast and mount-free: the same faults a full disk gives (a short write, then ``ENOSPC``), or an
``EIO`` from ``flush``, at a byte position the test chooses. ``Faults`` is installed as the opener
of the JSONL writer; ``AtomicFaults`` under ``write_atomic`` (every whole file agentlab writes).
"""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path
from typing import Any

import pytest

from agentlab.records import atomic_file, jsonl
from agentlab.records.jsonl import AppendOnlyJsonl


class FailingFile(io.FileIO):
    """A real append-mode file that writes at most ``budget`` more bytes, then fails with ``err``.

    Writes are also cut into short chunks of ``chunk`` bytes, as a kernel may do: a writer without a
    full-write loop loses the rest of the line.
    """

    def __init__(self, path: Path, mode: int, *, budget: int, chunk: int, err: int, at: str) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
        super().__init__(fd, "ab", closefd=True)
        self.budget, self.chunk, self.err, self.at = budget, chunk, err, at

    def write(self, data: Any, /) -> int:
        if self.at == "write" and self.budget <= 0:
            raise OSError(self.err, os.strerror(self.err))
        n = min(len(data), self.chunk, self.budget if self.at == "write" else len(data))
        written = super().write(bytes(data[:n]))
        self.budget -= written or 0
        return written or 0

    def flush(self) -> None:
        if self.at == "flush":
            raise OSError(self.err, os.strerror(self.err))


class Faults:
    """Installs ``FailingFile`` as the opener of every ``AppendOnlyJsonl`` created afterwards."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.armed: dict[str, Any] | None = None
        real_init = AppendOnlyJsonl.__init__

        def init(obj: AppendOnlyJsonl, path: Any, **kw: Any) -> None:
            real_init(obj, path, **kw, opener=self._open)

        monkeypatch.setattr(AppendOnlyJsonl, "__init__", init)

    def _open(self, path: Path, mode: int) -> Any:
        if self.armed is None:
            return jsonl.open_append(path, mode)
        return FailingFile(path, mode, **self.armed)

    def fail(
        self, *, after: int = 0, chunk: int = 1 << 20, err: int = errno.ENOSPC, at: str = "write"
    ) -> None:
        self.armed = {"budget": after, "chunk": chunk, "err": err, "at": at}

    def heal(self) -> None:
        self.armed = None


class _FailingOs:
    """``os`` as the atomic writer sees it, whose ``write`` runs out of space after a byte budget."""

    def __init__(self, budget: int, err: int) -> None:
        self.budget, self.err = budget, err

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def write(self, fd: int, data: Any) -> int:
        if self.budget <= 0:
            raise OSError(self.err, os.strerror(self.err))
        n = os.write(fd, bytes(data[: self.budget]))  # a short write first, as a filling disk gives
        self.budget -= n
        return n


class AtomicFaults:
    """Makes every ``write_atomic`` (whole files) fail after N bytes, as on a disk that fills."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._monkeypatch = monkeypatch

    def fail(self, *, after: int = 0, err: int = errno.ENOSPC) -> None:
        self._monkeypatch.setattr(atomic_file, "os", _FailingOs(after, err))

    def heal(self) -> None:
        self._monkeypatch.setattr(atomic_file, "os", os)
