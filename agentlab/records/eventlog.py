"""An append-only log of durable records: in memory, and as JSONL on disk when given a path.

What may enter is decided by *type*, not by inspecting content: only instances of the durable event
classes (``RunStartedEvent``, ``ModelCallCompletedEvent``, ``ToolResultEvent``, ...; each has
``durable = True`` and holds portable data only). Transient events (reasoning/text deltas,
``ResponseCompletedEvent`` with its opaque continuation), opaque items, continuations and anything
else raise ``PrivacyError`` before a byte is written.

On disk every record is one line of an :class:`~agentlab.records.jsonl.AppendOnlyJsonl` file: encoded
completely first, appended whole or not at all. A write that fails (disk full, I/O error) raises
``StorageError`` with the file as it was and the record not kept in memory either, so memory and file
agree; a run whose log cannot be written fails with that error rather than going on unrecorded.
A torn final line from a crash is cut on open and skipped by ``read`` (reported); a bad line
anywhere else makes ``read`` raise ``ConfigError`` naming the line.
Error messages are passed through secret redaction on the way in.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentlab.errors import PrivacyError
from agentlab.neutral.events import DURABLE_TYPES, ErrorEvent, durable_event_adapter
from agentlab.records.jsonl import AppendOnlyJsonl, TornLineWarning, read_records

__all__ = ["DURABLE_TYPES", "EventLog", "TornLineWarning"]


class EventLog:
    """Durable records of runs. ``EventLog()`` keeps them in memory; ``EventLog(path)`` also appends JSONL."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._records: list[Any] = []
        self._lock = threading.Lock()
        self._file = AppendOnlyJsonl(self.path, mode=0o600) if self.path is not None else None

    def append(self, event: Any) -> None:
        """Record one durable event; ``PrivacyError`` for anything else.

        ``StorageError`` if the file cannot take it (nothing is recorded then, in memory or on disk).
        """
        if type(event) not in DURABLE_TYPES:
            raise PrivacyError(
                f"the event log accepts durable records only, not {type(event).__name__}"
                + (" (transient: display only)" if getattr(type(event), "durable", None) is False else "")
            )
        if type(event) is ErrorEvent:
            from agentlab.records.logs import redact_secrets

            event = event.model_copy(update={"message": redact_secrets(event.message)})
        with self._lock:
            if self._file is not None:
                self._file.append(event)
            self._records.append(event)

    def extend(self, events: Any) -> None:
        """Append each event in order; stops at the first one refused (those before it stay recorded)."""
        for e in events:
            self.append(e)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._records))

    def __len__(self) -> int:
        return len(self._records)

    @property
    def records(self) -> list[Any]:
        """A copy of the records so far, so a caller cannot change the log by editing the list."""
        return list(self._records)

    @staticmethod
    def read(path: str | Path) -> list[Any]:
        """Durable events from a JSONL file.

        A torn final line is skipped with a ``TornLineWarning``; a line that is not a durable record
        raises ``ConfigError`` naming it.
        """
        return list(read_records(path, durable_event_adapter().validate_json, "an event log record"))

    def __repr__(self) -> str:
        where = str(self.path) if self.path else "memory"
        return f"<EventLog {len(self._records)} records ({where})>"
