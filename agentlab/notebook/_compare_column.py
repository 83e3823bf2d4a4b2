"""A compare's model column: its runs rendered as HTML, its reasoning streamed into one live text.

A compare's runs share one event loop, and everything a view does on that loop, or on a thread
contending with it for the GIL, is on the compare's wall time and inside the timings it shows. A
column made of a tree of widgets (a run view per run, per step a title, a tools line, a box and a
reasoning panel) opened ~58 widget models before a 5 x 3 compare started and ~8 more per step while
it ran (issue 33, item 3: the compare took 1.24-1.55x its view-less wall time). So a column is two
or three widget models whatever it shows: an ``HTML`` widget with the portable state of all its
runs (headers, steps, tool calls, answers, usage, timelines; and with repeats, a line per repeat
over its full view in a ``<details>``), re-rendered as a string by the coalescing flusher at its
pace, and one :class:`~agentlab.notebook._live_text.LiveText` (made at the first reasoning, off the
runs' threads) that streams the reasoning of the column's running steps, their tails bounded
(``options.live_chars`` in all), as custom messages that no save keeps.

The runs fold their events under a state lock of their own, never held while a widget is made or
a message sent; a run's end only marks its column dirty (the flusher renders it, each run's part
again only when that run changed), so nothing on the runs' thread waits for the frontend.

The live text is closed at cell end (:func:`collapse_columns`, from ``collapse_panels``), as a
panel's is; the column then says how much reasoning each step had and that it was not saved (or
shows it, with ``keep_text``). A compare column has no "Show reasoning" toggle.
"""

from __future__ import annotations

import html
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from agentlab.neutral.events import ModelCallCompletedEvent
from agentlab.notebook import _shared as shared
from agentlab.notebook._coalesce import DEFAULT_INTERVAL, flush_now, forget, gate, mark_dirty
from agentlab.notebook._live_text import LiveText, Snapshot
from agentlab.notebook._run_state import RunState, _Step, _wrap
from agentlab.notebook.display import PALETTE

__all__ = ["CompareRun", "ModelColumn", "collapse_columns"]

_STATUS_SLACK = 0.5
"""Seconds a column's HTML update may wait behind streaming reasoning for a message slot."""

COLUMN_LAYOUT = {
    "flex": "1 1 0",
    "min_width": "260px",
    "width": "auto",
    "padding": "4px",
    "border": f"1px solid {PALETTE['grey']}55",
}
"""A model's column: set at creation (setting it afterwards would cost a message per trait)."""

_columns: weakref.WeakSet[ModelColumn] = weakref.WeakSet()
_columns_lock = threading.Lock()


def collapse_columns() -> int:
    """Close every column's live reasoning text (cell end, as panels collapse); returns how many."""
    with _columns_lock:
        cols = list(_columns)
    return sum(c.collapse() for c in cols)


class CompareRun(RunState):
    """One run of a compare: its state, shown by its model's column (no widget of its own)."""

    def __init__(self, column: ModelColumn, title: str, keep_text: bool | None) -> None:
        self._column = column
        self._init_state(title, keep_text, compact=True, lock=column._state)
        self.version = 0
        """Bumped by every change its HTML shows (not by reasoning, which streams elsewhere)."""

    def _changed(self, *, slack: float | None = None) -> None:
        self.version += 1
        mark_dirty(self._column, slack=slack)

    def _render_now(self) -> None:
        # Not rendered here, on the run's thread (where ``finish`` is called): a column renders all
        # of its runs, and this thread is the one the compare's runs and timings run on. The
        # flusher renders it next, first in line; the cell end renders what is still pending.
        self._changed(slack=0.0)

    def _call_progress(self, st: _Step) -> None:
        column = self._column
        if not column._streamed:  # once per render, not per delta (each mark takes the flusher's lock)
            column._streamed = True
            mark_dirty(column, slack=0.0)  # streaming text: no slack, as a panel's

    def _call_ended(self, st: _Step, event: ModelCallCompletedEvent) -> None:
        self._changed(slack=0.0)

    @property
    def panels(self) -> list[Any]:
        """None: a compare's reasoning streams in its column's live text, not in per-step panels."""
        return []

    def __repr__(self) -> str:
        return f"<CompareRun {self.title!r} {self._status}, {len(self._steps)} steps>"


class ModelColumn(widgets.VBox):  # type: ignore[misc]
    """One model's column of a compare: ``runs`` (one per repeat) drawn as HTML, reasoning live.

    A :class:`~agentlab.notebook._coalesce.Flushable`: the runs mark it dirty, the flusher renders it.
    """

    def __init__(self, label: str, titles: Sequence[str], *, keep_text: bool | None, grouped: bool) -> None:
        self._lock = threading.RLock()
        """Held by the flusher while it renders and sends this column (the widgets' lock)."""
        self._state = threading.RLock()
        """The runs' state lock (shared by them): held briefly, to fold an event or read the state,
        never while a widget is made or a message sent, so the runs never wait for the frontend."""
        self._flush_interval = DEFAULT_INTERVAL
        self._sync_slack = _STATUS_SLACK
        self.label = label
        self.grouped = grouped
        self.runs = [CompareRun(self, t, keep_text) for t in titles]
        self._live: LiveText | None = None
        self._pushed: Snapshot | None = None
        self._collapsed = False  # the cell ended: no live text any more
        self._streamed = False
        """A delta arrived since the column was last queued for its reasoning: it is queued already.
        Cleared when a render starts, before it reads the state, so no delta goes unrendered."""
        self._rendered: dict[tuple[int, str], tuple[tuple[int, bool], str]] = {}  # see _cached
        self._body = widgets.HTML(
            value=_wrap(self._render_top()), layout=shared.layout(), style=shared.html_style()
        )
        # A single run's timeline and footer go below its live reasoning; repeats have their lines.
        self._tail = None if grouped else widgets.HTML(layout=shared.layout(), style=shared.html_style())
        super().__init__(
            children=self._children(),
            layout=shared.layout(**COLUMN_LAYOUT),
            _dom_classes=["agentlab-view", "agentlab-column"],
        )
        # Sent by the flusher only, within the frontend's budget (the live text, once made, first).
        self._synced: list[Any] = [gate(self), gate(self._body)]
        if self._tail is not None:
            self._synced.append(gate(self._tail))
        with _columns_lock:
            _columns.add(self)

    def _children(self) -> list[Any]:
        kids: list[Any] = [self._body]
        if self._live is not None:
            kids.append(self._live)
        if self._tail is not None:
            kids.append(self._tail)
        return kids

    # ------------------------------------------------------------------ rendering (flusher thread)

    def _flush(self) -> None:
        with self._lock:
            self._streamed = False
            with self._state:
                wanted = self._wants_live()
                on_a_run = wanted and any(threading.current_thread() in r._feeders for r in self.runs)
            if on_a_run:
                mark_dirty(self, slack=0.0)  # a widget is made on the flusher thread, not a run's
            elif wanted:
                self._open_live()
            with self._state:
                top, tail = _wrap(self._render_top()), _wrap(self._render_tail())
                snap = self._render_snapshot() if self._live is not None else None
            if self._body.value != top:
                self._body.value = top
            if self._tail is not None and self._tail.value != tail:
                self._tail.value = tail
            if self._live is not None and snap is not None and snap != self._pushed:
                self._live.push(snap)
                self._pushed = snap

    def _render_top(self) -> str:
        if not self.grouped:
            return self._cached(self.runs[0], "top")
        label = f'<div style="font-size:13px"><b>{html.escape(self.label)}</b></div>'
        return label + "".join(self._cached(r, "repeat") for r in self.runs)

    def _render_tail(self) -> str:
        return "" if self.grouped else self._cached(self.runs[0], "tail")

    def _cached(self, r: CompareRun, part: str) -> str:
        """A run's part of the column, rendered again only when the run changed (``version``)."""
        notes = self._collapsed  # live: the text streams below; collapsed: what there was, not saved
        key = (r.version, notes)
        hit = self._rendered.get((id(r), part))
        if hit is not None and hit[0] == key:
            return hit[1]
        if part == "top":
            out = r._render_header() + r.steps_html(notes=notes)
        elif part == "tail":
            out = r.tail_html()
        else:  # a repeat: its line over its full view, folded
            body = r._render_header() + r.steps_html(notes=notes) + r.tail_html()
            out = (
                f"{r.line_html()}<details><summary style='font-size:11px;opacity:0.75'>"
                f"{html.escape(r.title)}: full run view</summary>{body}</details>"
            )
        self._rendered[(id(r), part)] = key, out
        return out

    # ------------------------------------------------------------------ the live reasoning text

    def _wants_live(self) -> bool:
        return self._live is None and not self._collapsed and any(self._reasoning_steps())

    def _reasoning_steps(self) -> list[tuple[CompareRun, _Step]]:
        """Per run, its latest step with reasoning (what the live text shows)."""
        out = []
        for r in self.runs:
            steps = [st for _, st in sorted(r._steps.items()) if st.call.reasoning_chars]
            if steps:
                out.append((r, steps[-1]))
        return out

    def _snapshot(self) -> Snapshot:
        """The tails of the running steps' reasoning, ``options.live_chars`` in all (the rest in memory)."""
        with self._state:
            return self._render_snapshot()

    def _render_snapshot(self) -> Snapshot:
        from agentlab.notebook.panel import options

        live_chars = options.live_chars
        shown = self._reasoning_steps()
        if self._collapsed or not shown:
            return {"type": "snapshot", "meta": "", "text": "", "streaming": False}
        budget = max(200, live_chars // len(shown))
        streaming = False
        parts = []
        for r, st in shown:
            live = not st.done and r._t_end is None
            streaming = streaming or live
            text = st.call.reasoning
            tail = text[-budget:]
            who = f"{r.title} · " if self.grouped else ""
            state = "streaming…" if live else "done"
            head = f"▸ {who}step {st.number} · ~{(len(text) + 3) // 4:,} tok · {state}"
            parts.append(f"{head}\n{'…' if len(tail) < len(text) else ''}{tail}")
        meta = (
            "reasoning (live, not saved in the notebook)" if streaming else "reasoning, until the cell ends"
        )
        return {"type": "snapshot", "meta": meta, "text": "\n\n".join(parts), "streaming": streaming}

    def _open_live(self) -> None:
        self._live = LiveText(self._snapshot)
        self._pushed = None
        self._synced.insert(0, self._live)
        self.children = self._children()

    def _close_live(self) -> bool:
        with self._lock:  # the flusher sends under this lock: it cannot be using the widget meanwhile
            live, self._live = self._live, None
            if live is None:
                return False
            self._synced.remove(live)
            self.children = self._children()
        live.close()
        return True

    def collapse(self) -> bool:
        """Cell end: close the live text; the column then notes each step's reasoning (not its text)."""
        with self._state:
            if self._collapsed:
                return False
            self._collapsed = True
        self._close_live()
        flush_now(self)
        return True

    def retire(self) -> None:
        """Replaced by the compare's static final state: nothing more is rendered or sent."""
        with self._state:
            self._collapsed = True
        self._close_live()
        forget(self)

    @property
    def html(self) -> str:
        """The column's portable HTML as last rendered (what its widgets hold; reasoning is never in it)."""
        tail = self._tail.value if self._tail is not None else ""
        return str(self._body.value) + str(tail)

    def __repr__(self) -> str:
        return f"<ModelColumn {self.label!r}, {len(self.runs)} run{'s' if len(self.runs) != 1 else ''}>"
