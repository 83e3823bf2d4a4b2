"""The sweep results file: append-only JSONL, one row per finished run, safe to interrupt.

Why this shape:

* **Durable as runs finish.** Each row is serialized first, then written with one ``os.write`` on an
  ``O_APPEND`` descriptor and ``fsync``ed, so a crash loses at most the runs in flight, never a
  finished row. A crash *during* a write can leave a torn last line; opening the file again cuts it
  (with a ``TornLineWarning``) so the next row starts on a line of its own, and readers skip it.
* **Resumable.** A row is keyed by ``(task_id, model, setting, repeat)``; a resumed sweep skips keys
  already present, so nothing finished is redone. When a key appears more than once (a failed run
  retried with ``retry_failed=True``), the last row is the run's result and earlier rows only count
  towards money spent.
* **Private by construction.** A row is built from a whitelist of scalar fields (:data:`ROW_FIELDS`)
  taken from the run's result: status, counts, token buckets, cost, latency, the final answer and
  the error type/message. It is never built from events, history or reasoning, so reasoning text and
  opaque provider payloads cannot reach the file.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..eventlog import TornLineWarning
from ..frames import TOKEN_COST_COLUMNS

__all__ = ["ROW_FIELDS", "SCHEMA_VERSION", "ResultsFile", "RunKey", "read_rows", "row_key"]

SCHEMA_VERSION = 1

RunKey = tuple[str, str, str, int]
"""(task_id, model, setting, repeat): what makes a run unique within a sweep."""

# name -> pandas dtype of the loaded frame (see agentlab.sweeps.analysis), in file/column order.
ROW_FIELDS: dict[str, str] = {
    "task_id": "string",
    "model": "string",
    "setting": "string",
    "repeat": "Int64",
    "provider": "string",
    "run_id": "string",
    "status": "string",
    "success": "boolean",
    "steps": "Int64",
    "tool_calls": "Int64",
    **TOKEN_COST_COLUMNS,
    "retries": "Int64",
    "rate_limited": "Int64",
    "latency_s": "float64",
    "started_at": "string",
    "stop_reason": "string",
    "output": "string",
    "error_type": "string",
    "error": "string",
    "settings_fingerprint": "string",
    "v": "Int64",
}


def row_key(row: dict[str, Any]) -> RunKey:
    return (str(row["task_id"]), str(row["model"]), str(row["setting"]), int(row["repeat"]))


def _clean(v: Any) -> Any:
    """JSON has no NaN: unknown floats are written as null (read back as NaN)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def read_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """Every complete row in file order. A torn *last* line is skipped with a ``TornLineWarning``;
    a bad line elsewhere is corruption and raises ``ConfigError`` with its line number."""
    p = Path(path)
    if not p.exists():
        return
    with p.open("rb") as f:  # line by line: a resume scan of a huge file stays small in memory
        for n, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            torn = not raw.endswith(b"\n")  # only the last line can lack it: the write was interrupted
            try:
                row = json.loads(raw)
                if not isinstance(row, dict) or "task_id" not in row:
                    raise ValueError("not a results row")
            except ValueError:
                if torn:
                    warnings.warn(f"{p}: ignoring a torn final line", TornLineWarning, stacklevel=2)
                    continue
                raise ConfigError(f"{p}:{n}: not a sweep results row; is this the right file?") from None
            if torn:
                warnings.warn(
                    f"{p}: ignoring a final line without its newline", TornLineWarning, stacklevel=2
                )
                continue
            yield row


class ResultsFile:
    """Appends rows to ``path`` (created with its parent directory if missing)."""

    def __init__(self, path: str | Path, *, fsync: bool = True) -> None:
        self.path = Path(path)
        if self.path.suffix in (".parquet", ".csv"):
            raise ConfigError(f"results are written as JSONL; got {self.path.name!r}, use a .jsonl path")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self._repair_tail()
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _repair_tail(self) -> None:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with self.path.open("rb+") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) == b"\n":
                return
            size = f.seek(0, os.SEEK_END)
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
            f"{self.path}: removed a torn final line left by an interrupted write",
            TornLineWarning,
            stacklevel=3,
        )

    def append(self, row: dict[str, Any]) -> None:
        """Write one row (only :data:`ROW_FIELDS`, in order) as one line, then flush it to disk."""
        if self._fd is None:
            raise ConfigError(f"{self.path}: results file already closed")
        extra = set(row) - set(ROW_FIELDS)
        if extra:
            raise ValueError(f"not results fields: {sorted(extra)}")
        data = {k: _clean(row.get(k)) for k in ROW_FIELDS}
        data["v"] = SCHEMA_VERSION
        line = (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        n = os.write(self._fd, line)
        while n < len(line):  # a short write on a regular file is rare; finish the same line
            n += os.write(self._fd, line[n:])
        if self.fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
