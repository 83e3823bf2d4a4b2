"""An append-only log of durable records: in memory, and as JSONL on disk when given a path.

What may enter is decided by *type*, not by inspecting content: only instances of the durable event
classes (``RunStartedEvent``, ``ModelCallCompletedEvent``, ``ToolResultEvent``, ...; each has
``durable = True`` and holds portable data only). Transient events (reasoning/text deltas,
``ResponseCompletedEvent`` with its opaque continuation), opaque items, continuations and anything
else raise ``PrivacyError`` before a byte is written.

On disk every record is one line, serialized completely first and written with a single
``write`` + flush, so a crash cannot leave a half-written line in the middle of the file; a torn
final line from a crash during that one write is ignored by ``read`` (and reported).
Error messages are passed through secret redaction on the way in.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import PrivacyError
from .events import (
    DiagnosticEvent,
    ErrorEvent,
    ModelCallCompletedEvent,
    ModelCallStartedEvent,
    RunCompletedEvent,
    RunStartedEvent,
    ToolCallEvent,
    ToolResultEvent,
    durable_event_adapter,
)

__all__ = ["DURABLE_TYPES", "EventLog", "TornLineWarning"]

DURABLE_TYPES: tuple[type, ...] = (
    RunStartedEvent,
    ModelCallStartedEvent,
    ModelCallCompletedEvent,
    ToolCallEvent,
    ToolResultEvent,
    DiagnosticEvent,
    ErrorEvent,
    RunCompletedEvent,
)
"""The only types an EventLog accepts (exact types: a subclass could add a field)."""


class TornLineWarning(UserWarning):
    """A JSONL event log ended with an incomplete line (the process died while writing it)."""


class EventLog:
    """Durable records of runs. ``EventLog()`` keeps them in memory; ``EventLog(path)`` also appends JSONL."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._records: list[Any] = []
        self._lock = threading.Lock()
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._repair_tail(self.path)

    @staticmethod
    def _repair_tail(path: Path) -> None:
        """Cut a torn last line left by a crash, so the next record starts on a line of its own."""
        if not path.exists() or path.stat().st_size == 0:
            return
        with path.open("rb+") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) == b"\n":
                return
            f.seek(0)
            cut = f.read().rfind(b"\n") + 1
            f.truncate(cut)
        warnings.warn(
            f"{path}: removed a torn final line left by an interrupted write", TornLineWarning, stacklevel=3
        )

    def append(self, event: Any) -> None:
        """Record one durable event; ``PrivacyError`` for anything else (nothing is written then)."""
        if type(event) not in DURABLE_TYPES:
            raise PrivacyError(
                f"the event log accepts durable records only, not {type(event).__name__}"
                + (" (transient: display only)" if getattr(type(event), "durable", None) is False else "")
            )
        if type(event) is ErrorEvent:
            from .logs import redact_secrets

            event = event.model_copy(update={"message": redact_secrets(event.message)})
        line = (event.model_dump_json() + "\n").encode("utf-8") if self.path is not None else b""
        with self._lock:
            if self.path is not None:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    view = memoryview(line)
                    while view:
                        n = os.write(fd, view)
                        view = view[n:]
                finally:
                    os.close(fd)
            self._records.append(event)

    def extend(self, events: Any) -> None:
        for e in events:
            self.append(e)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._records))

    def __len__(self) -> int:
        return len(self._records)

    @property
    def records(self) -> list[Any]:
        return list(self._records)

    @staticmethod
    def read(path: str | Path) -> list[Any]:
        """Durable events from a JSONL file (a torn final line is skipped with a ``TornLineWarning``)."""
        ta = durable_event_adapter()
        data = Path(path).read_bytes()
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        if tail:
            warnings.warn(f"{path}: ignoring a torn final line", TornLineWarning, stacklevel=2)
        return [ta.validate_json(line) for line in lines if line.strip()]

    def __repr__(self) -> str:
        where = str(self.path) if self.path else "memory"
        return f"<EventLog {len(self._records)} records ({where})>"
