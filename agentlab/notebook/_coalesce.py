"""One daemon thread that sends view updates to the frontend within one process-wide message budget.

Deltas can arrive thousands of times a second (a fast stream, or a simulated one), and a comparison
streams several columns at once. A frontend that receives a comm message per delta stalls, and a
saved notebook balloons. So the budget is per *frontend* (this process), not per view:

* every synced widget of a view is *gated* (:func:`gate`): setting its traits changes the kernel-side
  state at once but queues the sync (ipywidgets' ``hold_sync`` machinery, held permanently), so
  rendering never sends anything by itself;
* views only mark themselves dirty (:func:`mark_dirty`); this flusher owns every send. A token bucket
  (``MAX_RATE`` tokens per second, burst of one) allows at most ``MAX_RATE`` comm messages per
  second in total, i.e. at most ``MAX_RATE + 1`` in any 1 s window, however many panels, run views
  or compare columns are streaming. A message is one widget's ``update`` carrying all of its changed
  traits (one ``send_state`` per widget, never one per trait);
* views take turns (earliest deadline first: a view's deadline is when it became dirty plus its
  ``_sync_slack``, so equal views go round robin; and round robin over the pending widgets within a
  view), so no compare column starves. Streaming panels have no slack; a run view's status widgets
  have some (its step structure, which makes a new panel visible, has none), so a burst of status
  updates at a step's start does not hold up the text; a view due for a turn renders its *current*
  state (delta + snapshot, not a queue of deltas), so skipped frames lose no text;
* the first change after a quiet period goes out at once (leading edge): alone, a streaming panel
  is shown every ``1 / MAX_RATE`` s (p99 latency ~65 ms); with ``n`` busy views latency grows about
  linearly with ``n`` (still bounded).

:func:`render_now` (a stream's or run's end) renders synchronously, so the kernel-side state is final
at once, and queues the sends ahead of the stream's. :func:`flush_now` also *sends* synchronously,
outside the budget (the next budgeted message then waits one slot): for the cell-end collapse,
which must close the live reasoning text immediately, and for explicit user actions; :func:`flush_all`
does that for every pending view (cell end: the saved widget state must be complete).

One thread for all views (not a timer per view): threads are not free in a kernel. Sending from this
thread is what ipywidgets allows (``with output:`` from a thread would not be safe).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

__all__ = [
    "DEFAULT_INTERVAL",
    "MAX_RATE",
    "Flushable",
    "flush_all",
    "flush_now",
    "forget",
    "gate",
    "mark_dirty",
    "render_now",
    "wait_idle",
]

MAX_RATE = 16.0
"""Comm messages per second the kernel sends from all live views together.

The budget the page is promised is 21 frames in any 1 s window *as the page receives them*
(README, "Message budget"). Delivery (kernel -> server -> websocket) bunches frames: measured in
JupyterLab, a spread of delays of 0.005-0.05 s on a quiet machine, 0.5 s under heavy load. Sent
at 20/s, one delayed frame already made 22 in the page. At 16/s (at most 17 in a window as sent),
the page stays within 21 while the spread stays under 0.25 s."""

DEFAULT_INTERVAL = 1.0 / MAX_RATE
"""Minimum seconds between two renders of one view (a view alone gets the whole budget)."""


class Flushable(Protocol):
    """A view: ``_flush`` renders its current state into the traits of its gated ``_synced`` widgets."""

    _flush_interval: float
    _lock: Any
    _synced: list[Any]

    def _flush(self) -> None: ...


def gate(widget: Any) -> Any:
    """Hold ``widget``'s syncs: trait changes are queued until the flusher sends them. Returns it."""
    widget._holding_sync = True
    return widget


def _send_pending(widgets: Sequence[Any], start: int, limit: int | None) -> tuple[int, bool, int]:
    """Send up to ``limit`` widgets' queued traits (one message each), from index ``start`` round robin.

    A widget with a queued custom snapshot (:class:`~agentlab.notebook._live_text.LiveText`) sends it
    as its message: text that is shown but never becomes model state.

    Returns (messages sent, whether some widget still has queued traits, next start index).
    """
    n = len(widgets)
    sent = 0
    nxt = start
    for k in range(n):
        i = (start + k) % n
        w = widgets[i]
        keys = set(w._states_to_send)
        custom = getattr(w, "_custom_pending", None)  # a LiveText's snapshot: a custom message
        if not keys and custom is None:
            continue
        if limit is not None and sent >= limit:
            return sent, True, i
        w._states_to_send.clear()
        if custom is not None:
            custom = w.take_pending()
        if getattr(w, "comm", None) is not None:
            if keys:
                w.send_state(keys)
                sent += 1
            if custom is not None:
                w.send(custom)
                sent += 1
        nxt = (i + 1) % n
    return sent, False, nxt


class _Flusher:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: OrderedDict[int, Flushable] = OrderedDict()  # views with something to render/send
        self._render: set[int] = set()  # views whose traits are stale (need ``_flush``)
        self._deadline: dict[int, float] = {}  # queued views: when each should go (earliest first)
        self._last: dict[int, float] = {}  # last render, per view
        self._cursor: dict[int, int] = {}  # round robin over a view's widgets
        self._busy: set[int] = set()  # views being synced by the flusher thread right now
        self._tokens = 1.0
        self._refilled = time.monotonic()
        self._thread: threading.Thread | None = None
        self.rate = MAX_RATE

    # --------------------------------------------------------------- callers (any thread)

    def mark(
        self, view: Flushable, *, render: bool = True, first: bool = False, slack: float | None = None
    ) -> None:
        key = id(view)
        with self._cond:
            if render:
                self._render.add(key)
            now = time.monotonic()
            due = (
                now - 1.0 if first else now + (getattr(view, "_sync_slack", 0.0) if slack is None else slack)
            )
            if key not in self._queue:
                self._queue[key] = view
                self._deadline[key] = due
                wake = True
            else:
                # Already queued: the flusher's next wake-up covers it. Waking it for every delta
                # (thousands a second) made it contend for the GIL with the run it displays.
                wake = first or due < self._deadline.get(key, due)
                self._deadline[key] = min(self._deadline.get(key, due), due)
            # Whether the thread still lives is asked only when it is to be woken: ``is_alive`` takes
            # a lock, and this runs for every delta of every view, on the runs' thread.
            if self._thread is None or (wake and not self._thread.is_alive()):
                self._thread = threading.Thread(target=self._loop, name="agentlab-view-flusher", daemon=True)
                self._thread.start()
            if wake:
                self._cond.notify_all()

    def render_now(self, view: Flushable) -> None:
        key = id(view)
        with view._lock:
            with self._cond:
                self._render.discard(key)
                self._last[key] = time.monotonic()
            view._flush()
        self.mark(view, render=False, first=True)

    def flush_now(self, view: Flushable) -> int:
        key = id(view)
        with view._lock:  # the flusher thread syncs under this lock too: no older state lands after this
            with self._cond:
                self._render.discard(key)
                self._queue.pop(key, None)
                self._deadline.pop(key, None)
                self._last[key] = time.monotonic()
            view._flush()
            sent, _, _ = _send_pending(view._synced, 0, None)
        with self._cond:
            self._refill()
            # Charged, but as no debt: a cell-end burst must not silence the next cell's first stream.
            self._tokens = min(self._tokens, 0.0) if sent else self._tokens
        return sent

    def forget(self, view: Flushable) -> None:
        key = id(view)
        with view._lock, self._cond:  # view first, as the flusher thread takes them: never mid-sync
            self._queue.pop(key, None)
            self._deadline.pop(key, None)
            self._render.discard(key)
            self._last.pop(key, None)
            self._cursor.pop(key, None)

    def flush_all(self) -> int:
        with self._cond:
            views = list(self._queue.values())
        return sum(self.flush_now(v) for v in views)

    def wait_idle(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._queue or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(timeout=min(left, 0.05))
            return True

    # --------------------------------------------------------------- the flusher thread

    def _refill(self) -> None:
        now = time.monotonic()
        self._tokens = min(1.0, self._tokens + (now - self._refilled) * self.rate)
        self._refilled = now

    def _pick(self, now: float) -> tuple[Flushable | None, bool, float | None]:
        """The queued view that may go now with the earliest deadline, and whether it needs a render.

        When none may go yet: no view, and how long to wait for one.
        """
        wait: float | None = None
        best: int | None = None
        for key, view in self._queue.items():
            if key in self._render:
                next_at = self._last.get(key, 0.0) + view._flush_interval
                if now < next_at:
                    wait = next_at - now if wait is None else min(wait, next_at - now)
                    continue
            if best is None or self._deadline.get(key, 0.0) < self._deadline.get(best, 0.0):
                best = key
        if best is None:
            return None, False, wait
        view = self._queue.pop(best)
        self._deadline.pop(best, None)
        render = best in self._render
        self._render.discard(best)
        return view, render, None

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    if not self._cond.wait(timeout=30.0) and not self._queue:
                        # Idle for a while: let the thread end; ``mark`` starts a new one.
                        self._thread = None
                        return
                self._refill()
                if self._tokens < 1.0:
                    self._cond.wait(timeout=(1.0 - self._tokens) / self.rate)
                    continue
                now = time.monotonic()
                view, render, wait = self._pick(now)
                if view is None:
                    self._cond.wait(timeout=wait)
                    continue
                key = id(view)
                if render:
                    self._last[key] = now
                self._busy.add(key)
            sent, more = 0, False
            try:
                with contextlib.suppress(Exception), view._lock:  # a broken view must not stop the others
                    if render:
                        view._flush()
                    sent, more, self._cursor[key] = _send_pending(view._synced, self._cursor.get(key, 0), 1)
            finally:
                with self._cond:
                    self._busy.discard(key)
                    self._tokens -= sent
                    if more and key not in self._queue:
                        # the rest of its widgets: after the other views' turns
                        self._queue[key] = view
                        self._deadline[key] = time.monotonic() + getattr(view, "_sync_slack", 0.0)
                    self._cond.notify_all()


_flusher = _Flusher()


def mark_dirty(view: Flushable, *, slack: float | None = None) -> None:
    """Ask for ``view`` to be rendered and sent at its next turn within the frontend's message budget.

    ``slack``: how long this update may wait behind others (default: the view's ``_sync_slack``, 0).
    """
    _flusher.mark(view, slack=slack)


def render_now(view: Flushable) -> None:
    """Render ``view`` now (its kernel-side state is current on return); send it first, within budget."""
    _flusher.render_now(view)


def flush_now(view: Flushable) -> int:
    """Render and send ``view`` now, on this thread, outside the budget; returns the messages sent."""
    return _flusher.flush_now(view)


def forget(view: Flushable) -> None:
    """Drop ``view``'s pending updates: it is no longer on screen (replaced by its static final state)."""
    _flusher.forget(view)


def flush_all() -> int:
    """:func:`flush_now` every view with pending updates (cell end); returns the messages sent."""
    return _flusher.flush_all()


def wait_idle(timeout: float = 5.0) -> bool:
    """Wait until every pending update has been sent (tests, benchmarks); False on timeout."""
    return _flusher.wait_idle(timeout)
