"""The opaque reasoning state of one active tool loop, and a process-wide registry to release it.

A ``Continuation`` belongs to exactly one loop of one run on one provider/API/model/endpoint. It holds
that loop's ``ProviderReasoningItem``s so the run can send them back verbatim on the next call, and
nothing else. It is released (emptied for good) when the loop ends, fails, is cancelled, or when the
notebook cell that started it ends: the notebook extension records ``generation()`` before a cell
and calls ``release_since(gen)`` after it.

The registry holds continuations *weakly*: a run that is garbage-collected takes its opaque items
with it; the registry never keeps them alive.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Iterable
from typing import Any, ClassVar, NoReturn

from agentlab.errors import ContinuityError, PrivacyError
from agentlab.neutral.items import ProviderReasoningItem

__all__ = ["Continuation", "generation", "live_continuations", "release_all", "release_since"]

_lock = threading.Lock()
_serials = itertools.count(1)
_last_serial = 0
_live: weakref.WeakValueDictionary[int, Continuation] = weakref.WeakValueDictionary()


class Continuation:
    """This loop's opaque reasoning items, in the order they were received.

    ``add`` accepts only items made by this continuation's provider/API/model/endpoint and returns the
    ones it refused (the caller reports them as dropped). After ``release()`` the items are gone and
    any further ``add``/``items`` raises ``ContinuityError``: a released loop cannot be resumed.
    """

    __slots__ = (
        "__weakref__",
        "_items",
        "_released",
        "_released_count",
        "api",
        "base_url",
        "model",
        "provider",
        "run_id",
        "serial",
    )

    _shaped_repr: ClassVar[bool] = True  # its repr shows counts only (see ``agentlab.neutral._shapes``)

    def __init__(
        self, *, provider: str, api: str, model: str, base_url: str | None = None, run_id: str | None = None
    ) -> None:
        global _last_serial
        self.provider = provider
        self.api = api
        self.model = model
        self.base_url = base_url
        self.run_id = run_id
        self._items: list[ProviderReasoningItem] = []
        self._released = False
        self._released_count = 0
        with _lock:
            self.serial = next(_serials)
            _last_serial = self.serial
            _live[self.serial] = self

    @property
    def released(self) -> bool:
        """True once released: the items are gone and the loop can no longer continue."""
        return self._released

    @property
    def items(self) -> tuple[ProviderReasoningItem, ...]:
        """The items to send back on the next call of this loop."""
        if self._released:
            raise ContinuityError(
                f"the continuation of run {self.run_id} was released (loop ended, or the notebook cell "
                "that started it finished); a released tool loop cannot continue"
            )
        return tuple(self._items)

    def accepts(self, item: ProviderReasoningItem) -> bool:
        """Whether ``item`` may go back on this loop (same provider, API, model, endpoint); others never."""
        return item.matches(provider=self.provider, api=self.api, model=self.model, base_url=self.base_url)

    def add(self, items: Iterable[ProviderReasoningItem]) -> list[ProviderReasoningItem]:
        """Append matching items; return the non-matching ones (never stored, never converted)."""
        if self._released:
            raise ContinuityError(f"the continuation of run {self.run_id} was already released")
        refused: list[ProviderReasoningItem] = []
        for it in items:
            if not isinstance(it, ProviderReasoningItem):
                raise TypeError(f"a continuation holds ProviderReasoningItem only, got {type(it).__name__}")
            (self._items if self.accepts(it) else refused).append(it)
        return refused

    def release(self) -> int:
        """Drop every item for good; returns how many were held. Idempotent."""
        n = len(self._items)
        self._items.clear()
        self._released = True
        self._released_count += n
        with _lock:
            _live.pop(self.serial, None)
        return n

    @property
    def released_count(self) -> int:
        """How many items the release dropped (0 before it): the run counts them as dropped."""
        return self._released_count

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        state = "released" if self._released else f"{len(self._items)} opaque items"
        return f"<Continuation {self.provider}/{self.api} {self.model} run={self.run_id} {state}>"

    def __reduce__(self) -> NoReturn:
        raise PrivacyError("a Continuation is transient and cannot be pickled or persisted")

    def __copy__(self) -> NoReturn:
        raise PrivacyError("a Continuation cannot be copied; it belongs to one tool loop")

    def __deepcopy__(self, memo: dict[int, Any]) -> NoReturn:
        raise PrivacyError("a Continuation cannot be copied; it belongs to one tool loop")


def live_continuations() -> list[Continuation]:
    """Every continuation not yet released (and still referenced), oldest first."""
    with _lock:
        return [c for _, c in sorted(_live.items())]


def generation() -> int:
    """A marker: continuations created after this call have a larger serial (see ``release_since``)."""
    with _lock:
        return _last_serial


def release_since(gen: int) -> int:
    """Release every live continuation created after ``generation()`` returned ``gen``.

    Returns how many continuations were released. The notebook extension calls this at cell end.
    """
    targets = [c for c in live_continuations() if c.serial > gen]
    for c in targets:
        c.release()
    return len(targets)


def release_all() -> int:
    """Release every live continuation (e.g. on kernel shutdown or in tests)."""
    return release_since(0)
