"""The sweep results file: append-only JSONL, one row per finished run, safe to interrupt.

Why this shape:

* **Durable as runs finish.** Each row is appended through :class:`~agentlab.records.jsonl.AppendOnlyJsonl`
  and ``fsync``ed, so a crash loses at most the runs in flight, never a finished row. A row lands
  whole or not at all: a failed write (disk full) raises ``StorageError`` with the file as it was.
  A crash *during* a write can leave a torn last line; opening the file again cuts it (with a
  ``TornLineWarning``) so the next row starts on a line of its own, and readers skip it.
* **Checked on the way back.** Every row read is checked against :data:`ROW_FIELDS` (key fields
  present and typed, every other field of its column's type or null); a row that is not is
  corruption, and the reader raises ``ConfigError`` naming the file and line rather than resuming
  or loading wrongly.
* **Resumable.** A row is keyed by ``(task_id, model, setting, repeat)``; a resumed sweep skips keys
  already present, so nothing finished is redone. When a key appears more than once (a failed run
  retried with ``retry_failed=True``), the last row is the run's result and earlier rows only count
  towards money spent.
* **Private by construction.** A row is built from a whitelist of scalar fields (:data:`ROW_FIELDS`)
  taken from the run's result: status, counts, token buckets, cost and what priced it (the usage
  frame's ``price_source`` / ``price_updated``; null in rows written before them), the provider's own
  reported cost (``provider_cost_usd``, OpenRouter's; null when none was reported), latency, the
  final answer and the error type/message. It is never built from events, history or reasoning,
  so reasoning text and opaque provider payloads cannot reach the file.
* **Scores, when an evaluation asks** (:mod:`agentlab.evals`): ``scores`` maps a scorer's name to
  ``{"value", "explanation"}`` (plus a judge's own usage under ``"judge"``) and ``called_tools``
  lists the run's tool calls as ``{"name", "arguments"}`` (portable history: what the model asked
  for, never reasoning or opaque items). Both are null in a plain sweep's rows and absent from files
  written before them, which still load.
* **Tool servers**: ``tool_servers`` names each MCP server the run's tools came from, with the
  name and version the server reported (``"time=mcp-time 2026.10.19"``; null when none).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from agentlab.costs.frames import TOKEN_COST_COLUMNS
from agentlab.errors import ConfigError
from agentlab.records.jsonl import AppendOnlyJsonl, read_records

__all__ = [
    "KEY_FIELDS",
    "ROW_FIELDS",
    "SCHEMA_VERSION",
    "ResultsFile",
    "RunKey",
    "check_row",
    "read_rows",
    "row_key",
]

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
    "price_source": "string",
    "price_updated": "string",
    "retries": "Int64",
    "rate_limited": "Int64",
    "latency_s": "float64",
    "started_at": "string",
    "stop_reason": "string",
    "output": "string",
    "output_value": "string",
    "output_valid": "boolean",
    "error_type": "string",
    "error": "string",
    "settings_fingerprint": "string",
    "backend": "string",
    "pricing_tier": "string",
    "resumed_steps": "Int64",
    "scores": "object",
    "called_tools": "object",
    "tool_servers": "string",
    "v": "Int64",
}


KEY_FIELDS = ("task_id", "model", "setting", "repeat")
"""The fields of :data:`RunKey`: every row must have them (the other fields may be missing or null)."""

_INT64 = 2**63
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def row_key(row: dict[str, Any]) -> RunKey:
    """The run key of a row that passed :func:`check_row` (every row :func:`read_rows` yields)."""
    return (row["task_id"], row["model"], row["setting"], row["repeat"])


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    return "a list" if isinstance(v, list) else "an object"


def _fits(dtype: str, v: Any) -> bool:
    if dtype == "string":
        return isinstance(v, str)
    if dtype == "Int64":
        return isinstance(v, int) and not isinstance(v, bool) and -_INT64 < v < _INT64
    if dtype == "float64":
        return isinstance(v, int | float) and not isinstance(v, bool)
    if dtype == "object":
        return isinstance(v, dict | list)
    return isinstance(v, bool)  # "boolean"


_EXPECTED = {
    "string": "a string",
    "Int64": "an integer",
    "float64": "a number",
    "boolean": "true or false",
    "object": "a JSON object or list",
}
_SHAPES = {"scores": dict, "called_tools": list}


def _check_nested(row: dict[str, Any]) -> None:
    """``scores``: name -> object with a scalar ``value``; ``called_tools``: objects with a ``name``."""
    for name, kind in _SHAPES.items():
        v = row.get(name)
        if v is not None and not isinstance(v, kind):
            raise ValueError(f"field {name!r} must be {'an object' if kind is dict else 'a list'}")
    for key, score in (row.get("scores") or {}).items():
        if not isinstance(score, dict) or isinstance(score.get("value"), dict | list | str):
            raise ValueError(
                f"field 'scores': {key!r} must be an object with a number, boolean or null value"
            )
    for call in row.get("called_tools") or []:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ValueError("field 'called_tools': each call must be an object with a string 'name'")


def check_row(row: Any) -> dict[str, Any]:
    """``row`` if it is a valid results row, else ``ValueError`` naming the field and what is wrong.

    Key fields must be present and typed (``repeat`` an integer >= 0); any other known field is of
    its column's type or null; unknown fields (a newer schema) are ignored. The message names the
    field and the JSON type found, never the value (a row holds model output).
    """
    if not isinstance(row, dict):
        raise ValueError(f"a row is a JSON object, this line holds {_json_type(row)}")
    for name in KEY_FIELDS:
        if name not in row:
            raise ValueError(f"key field {name!r} is missing")
    for name, value in row.items():
        dtype = ROW_FIELDS.get(name)
        if dtype is None or (value is None and name not in KEY_FIELDS):
            continue
        if not _fits(dtype, value):
            raise ValueError(f"field {name!r} must be {_EXPECTED[dtype]}, got {_json_type(value)}")
    if row["repeat"] < 0:
        raise ValueError("field 'repeat' must be >= 0")
    _check_nested(row)
    at = row.get("started_at")
    if at is not None:
        try:
            datetime.fromisoformat(at)
        except ValueError:
            raise ValueError("field 'started_at' is not an ISO 8601 timestamp") from None
    return row


def _clean(v: Any) -> Any:
    """JSON has no NaN: unknown floats are written as null (read back as NaN)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _parse_row(line: bytes) -> dict[str, Any]:
    return check_row(json.loads(line))


def read_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """Every complete row in file order, each checked by :func:`check_row`, streamed.

    Streaming keeps a resume scan of a huge file small in memory. A torn *last* line is skipped with a
    ``TornLineWarning``; a bad line elsewhere is corruption and raises ``ConfigError`` with its line
    number.
    """
    return read_records(path, _parse_row, "a sweep results row")


class ResultsFile:
    """Appends rows to ``path`` (created with its parent directory if missing)."""

    def __init__(self, path: str | Path, *, fsync: bool = True) -> None:
        self.path = Path(path)
        if self.path.suffix in (".parquet", ".csv"):
            raise ConfigError(f"results are written as JSONL; got {self.path.name!r}, use a .jsonl path")
        self.fsync = fsync
        self._file: AppendOnlyJsonl | None = AppendOnlyJsonl(self.path, fsync=fsync, mode=0o644)

    def append(self, row: dict[str, Any]) -> None:
        """Write one row (only :data:`ROW_FIELDS`, in order) as one line, then flush it to disk.

        ``ValueError`` for a row :func:`check_row` refuses (a bug in the caller), before anything is
        written; ``StorageError`` when the file cannot take it (the file is as it was). A lone surrogate in a
        free-text field (model output, an error message) is replaced by U+FFFD: one unencodable
        character must not cost a paid-for run, and the file stays strict UTF-8.
        """
        if self._file is None:
            raise ConfigError(f"{self.path}: results file already closed")
        extra = set(row) - set(ROW_FIELDS)
        if extra:
            raise ValueError(f"not results fields: {sorted(extra)}")
        data = {k: _clean(row.get(k)) for k in ROW_FIELDS}
        data["v"] = SCHEMA_VERSION
        for k, v in data.items():
            if isinstance(v, str) and k not in KEY_FIELDS:
                data[k] = _LONE_SURROGATE.sub("\ufffd", v)
        check_row(data)  # never write a row that resume and load_results would refuse
        self._file.append(data)

    def close(self) -> None:
        """Stop writing: later appends raise, so a finished sweep's file cannot grow by accident."""
        self._file = None

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
