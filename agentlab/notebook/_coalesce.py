"""One daemon thread that flushes dirty views at a bounded rate.

Deltas can arrive thousands of times a second (a fast stream, or a simulated one). A frontend that
receives a comm message per delta stalls, and a saved notebook balloons. Views therefore only mark
themselves dirty; this flusher calls their ``_flush()`` at most once per ``interval`` each (leading
edge: the first change after a quiet period is shown at once), so the message rate is bounded by
``1 / interval`` per view however fast deltas come, and nothing is lost because a flush always
renders the view's *current* state (delta + snapshot, not a queue of deltas).

One thread for all views (not a timer per view): a comparison streams several panels at once, and
threads are not free in a kernel. Flushing sets traits from this thread, which ipywidgets allows
(``with output:`` from a thread would not be safe; see DESIGN.md "Known pitfalls").
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Protocol

__all__ = ["DEFAULT_INTERVAL", "Flushable", "flush_now", "mark_dirty"]

DEFAULT_INTERVAL = 0.05
"""Seconds between two flushes of one view: at most 20 frontend updates per second per view."""


class Flushable(Protocol):
    """A view whose ``_flush`` renders its current state into its synced traits."""

    _flush_interval: float

    def _flush(self) -> None: ...


class _Flusher:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._dirty: dict[int, Flushable] = {}
        self._last: dict[int, float] = {}
        self._thread: threading.Thread | None = None

    def mark(self, view: Flushable) -> None:
        with self._cond:
            self._dirty[id(view)] = view
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="agentlab-view-flusher", daemon=True)
                self._thread.start()
            self._cond.notify()

    def flush_now(self, view: Flushable) -> None:
        """Flush synchronously (cell end, run end): the final state must not wait for a tick."""
        with self._cond:
            self._dirty.pop(id(view), None)
            self._last[id(view)] = time.monotonic()
        view._flush()

    def _loop(self) -> None:
        while True:
            due: list[Flushable] = []
            with self._cond:
                while not self._dirty:
                    if not self._cond.wait(timeout=30.0) and not self._dirty:
                        # Idle for a while: let the thread end; ``mark`` starts a new one.
                        self._thread = None
                        return
                now = time.monotonic()
                wait = None
                for key, view in list(self._dirty.items()):
                    next_at = self._last.get(key, 0.0) + view._flush_interval
                    if now >= next_at:
                        due.append(view)
                        del self._dirty[key]
                        self._last[key] = now
                    else:
                        wait = next_at - now if wait is None else min(wait, next_at - now)
                if not due and wait is not None:
                    self._cond.wait(timeout=wait)
                    continue
            for view in due:
                with contextlib.suppress(Exception):  # a broken view must not stop the others
                    view._flush()


_flusher = _Flusher()


def mark_dirty(view: Flushable) -> None:
    """Ask for ``view._flush()`` soon (now if the view was quiet, else at its next slot)."""
    _flusher.mark(view)


def flush_now(view: Flushable) -> None:
    """Render ``view`` now, on this thread, and cancel any pending flush of it."""
    _flusher.flush_now(view)
