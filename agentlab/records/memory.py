"""A small long-term memory store that accepts portable items only.

Long-term memory outlives runs, sessions and notebooks, so it is the last place opaque reasoning or
reasoning text may reach. ``MemoryStore.add`` therefore accepts the portable item types by exact
type (system, user, assistant text, tool call, tool result, summary) and raises ``PrivacyError`` for
everything else: ``ProviderReasoningItem``, reasoning/text deltas, completed responses, raw dicts.
With a path, items are appended as JSONL through :class:`~agentlab.records.jsonl.AppendOnlyJsonl`: an item
is remembered only once its line is on disk whole; a failed write (disk full) raises
``StorageError`` and leaves both the file and the store as they were, so the store always reloads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import TypeAdapter

from agentlab.errors import PrivacyError
from agentlab.neutral.items import (
    AssistantTextItem,
    PortableItem,
    SummaryItem,
    SystemItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.records.jsonl import AppendOnlyJsonl, read_records

__all__ = ["MemoryStore"]

_PORTABLE = (SystemItem, UserItem, AssistantTextItem, ToolCallItem, ToolResultItem, SummaryItem)


class MemoryStore:
    """Portable items remembered across runs; optional JSONL persistence; naive text search."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._items: list[PortableItem] = []
        self._lock = threading.Lock()
        self._file: AppendOnlyJsonl | None = None
        if self.path is not None:
            self._file = AppendOnlyJsonl(self.path, mode=0o600)  # cuts a torn last line first
            self._items.extend(read_records(self.path, _parse_item, "a memory item"))

    def add(self, item: PortableItem) -> None:
        """Remember one portable item; ``PrivacyError`` for anything else.

        ``StorageError`` if the file cannot take it (nothing is stored then).
        """
        if type(item) not in _PORTABLE:
            raise PrivacyError(
                f"long-term memory accepts portable items only, not {type(item).__name__}; "
                "reasoning (text or opaque items) is never remembered"
            )
        with self._lock:
            if self._file is not None:
                self._file.append(item)
            self._items.append(item)

    def extend(self, items: Iterable[PortableItem]) -> None:
        """Add several items; all are checked before any is stored."""
        items = list(items)
        for it in items:
            if type(it) not in _PORTABLE:
                raise PrivacyError(f"long-term memory accepts portable items only, not {type(it).__name__}")
        for it in items:
            self.add(it)

    def search(self, text: str) -> list[PortableItem]:
        """Items whose text/output contains ``text`` (case-insensitive)."""
        q = text.lower()
        out = []
        for it in self._items:
            body = getattr(it, "text", None) or getattr(it, "output", None) or getattr(it, "arguments", "")
            if q in str(body).lower():
                out.append(it)
        return out

    def __iter__(self) -> Iterator[PortableItem]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"<MemoryStore {len(self._items)} items ({self.path or 'memory'})>"


_item_adapter: TypeAdapter[PortableItem] = TypeAdapter(PortableItem)


def _parse_item(line: bytes) -> PortableItem:
    return _item_adapter.validate_json(line)
