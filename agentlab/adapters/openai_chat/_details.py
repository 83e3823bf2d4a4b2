"""OpenRouter ``reasoning_details`` merged by ``index`` (streams deliver each item in pieces).

The documented merge: pieces with the same ``index`` are one item; ``text`` (and a
``reasoning.summary``'s ``summary``) is concatenated; ``signature``, ``data`` and ``id`` take the last
non-null value; any other key keeps its first non-null value (``type``, ``format``). Items are in
``index`` order whatever order their first pieces came in. An item whose pieces carry no index is its
own item. The merged dicts are what goes back on the assistant message.
"""

from __future__ import annotations

from typing import Any

from agentlab.neutral.error_text import WireFieldError

__all__ = ["DetailsMerger"]

_CONCAT = ("text", "summary")
_LAST = ("signature", "data", "id")


class DetailsMerger:
    """Accumulates ``reasoning_details`` pieces; :attr:`items` are the merged details in order."""

    __slots__ = ("_by_index", "items")
    _shaped_repr = True

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self._by_index: dict[object, dict[str, Any]] = {}

    def __repr__(self) -> str:
        return f"<DetailsMerger items={len(self.items)}>"

    def _place(self, item: dict[str, Any], key: object) -> None:
        """Insert a new item in ``index`` order (its position on the message), whatever came first.

        An index that arrives before a lower one is put after it; unindexed items keep arrival order.
        """
        at = len(self.items)
        if isinstance(key, int):
            for n, other in enumerate(self.items):
                k = other.get("index")
                if isinstance(k, int) and k > key:
                    at = n
                    break
        self.items.insert(at, item)

    def add(self, pieces: object) -> str:
        """Merge one delta's ``reasoning_details`` list; returns its display text (may be empty)."""
        if not isinstance(pieces, list):
            raise WireFieldError("reasoning_details", "array", pieces)
        shown: list[str] = []
        for piece in pieces:
            if not isinstance(piece, dict):
                raise WireFieldError("reasoning_details[]", "object", piece)
            key = piece.get("index")
            item = self._by_index.get(key) if key is not None else None
            if item is None:
                item = {}
                self._place(item, key)
                if key is not None:
                    self._by_index[key] = item
            for k, v in piece.items():
                if v is None:
                    item.setdefault(k, None)
                elif k in _CONCAT and isinstance(v, str):
                    item[k] = (item.get(k) or "") + v
                    shown.append(v)
                elif k in _LAST or item.get(k) is None:
                    item[k] = v
        return "".join(shown)
