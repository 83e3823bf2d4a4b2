"""The reasoning panel: streams reasoning text while a model thinks, then forgets it on screen.

Raw reasoning is display-only (architecture law 2). So the panel keeps the full text in *kernel
memory*, and the text never becomes synced widget state (which a save keeps: JupyterLab's "Save
Widget State", nbclient's ``store_widget_state``): it reaches the page only as custom messages to a
:class:`~agentlab.notebook._live_text.LiveText` view, which no save stores. Synced state (the
``HTML`` header, the toggle) holds titles and counters only.

* while streaming, the live text shows live counters and the tail of the text; updates are
  coalesced (:mod:`agentlab.notebook._coalesce`) within one budget for the whole frontend: at most
  ~16 comm messages per second from all live panels and views together, however fast deltas arrive
  and however many panels stream, and each message carries the current snapshot, so no text is lost
  by skipping frames;
* when the cell ends (the IPython extension calls :func:`collapse_panels`) the panel collapses to a
  summary line and its live text is closed. A "Show reasoning" toggle opens a new one and sends it
  the text from kernel memory while the kernel lives; the next cell end closes it again. A save in
  between, while the text is on screen, still finds none.
* restored without its kernel (a reopened notebook, a restarted kernel, a static page) a collapsed
  panel hides the toggle and says that the reasoning was not saved (:data:`OFFLINE_STYLE`);
* ``keep_text=True`` (or ``options.keep_reasoning = True``, or ``AGENTLAB_KEEP_REASONING=1``) keeps
  the text in the collapsed panel's header, inside a ``<details>`` element: the explicit opt-in for
  users who *want* it saved.

``__repr__`` is cheap and text-free on purpose: ipywidgets puts ``repr(widget)`` into the
``text/plain`` part of every display, which is saved with the notebook.
"""

from __future__ import annotations

import html
import os
import secrets
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets

from agentlab.assembly.reducer import EMPTY, CallSnapshot, accumulate
from agentlab.neutral.events import ReasoningDeltaEvent, TextDeltaEvent
from agentlab.neutral.usage import CallUsage
from agentlab.notebook import _shared as shared
from agentlab.notebook._coalesce import (
    DEFAULT_INTERVAL,
    flush_all,
    flush_now,
    forget,
    gate,
    mark_dirty,
    render_now,
)
from agentlab.notebook._live_text import TEXT_STYLE, LiveText, Snapshot
from agentlab.notebook.display import UI_FONT

__all__ = ["PanelOptions", "ReasoningPanel", "collapse_panels", "live_panels", "options"]


@dataclass
class PanelOptions:
    """Process-wide panel defaults (``agentlab.notebook.options``)."""

    keep_reasoning: bool = field(
        default_factory=lambda: os.environ.get("AGENTLAB_KEEP_REASONING", "").lower() in {"1", "true", "yes"}
    )
    """Keep reasoning text in collapsed panels (and so in saved notebooks). Off by default."""
    live_chars: int = 4000
    """How much of the tail of the text a streaming panel shows (the rest stays in kernel memory)."""
    flush_interval: float = DEFAULT_INTERVAL
    """Minimum seconds between two renders of one panel. The frontend's total message rate is bounded
    separately, across all panels and views (``agentlab.notebook._coalesce.MAX_RATE``, 16/s)."""


options = PanelOptions()

_panels: weakref.WeakSet[ReasoningPanel] = weakref.WeakSet()
_panels_lock = threading.Lock()


def live_panels() -> list[ReasoningPanel]:
    """Panels still alive in this kernel (for the extension and for tests)."""
    with _panels_lock:
        return list(_panels)


def collapse_panels() -> int:
    """Collapse every panel that is not collapsed yet (cell end); returns how many were collapsed.

    Also closes the live reasoning text of every compare column (:mod:`agentlab.notebook._compare_column`),
    and sends every view's pending update at once (outside the message budget): the state a
    notebook saves at the end of the cell is complete.
    """
    n = 0
    for p in live_panels():
        if p.collapse():
            n += 1
    columns = sys.modules.get("agentlab.notebook._compare_column")
    if columns is not None:  # a compare's columns stream their reasoning in a live text each: closed too
        columns.collapse_columns()
    flush_all()
    return n


NOT_DISPLAYED = "reasoning not displayed by the provider"
"""What a view says for reasoning the provider returned without its text (display omitted): never an
empty block as if nothing happened, and its tokens still come from the usage."""

OFFLINE_STYLE = (
    "<style>.agentlab-offline{display:none}"
    ".jupyter-widgets-disconnected .agentlab-offline{display:inline}"
    ".jupyter-widgets-disconnected .agentlab-online{display:none}"
    ".agentlab-toggle.jupyter-widgets-disconnected{display:none !important}"
    ".agentlab-view.jupyter-widgets-disconnected::before,"
    ".agentlab-view .jupyter-widgets-disconnected::before{content:none !important;display:none !important}"
    "</style>"
)
"""Restored without a kernel (a reopened notebook, a restarted kernel, a static page), ipywidgets
marks every view ``jupyter-widgets-disconnected`` (JupyterLab draws an icon on each). This rule,
shipped in the collapsed header itself (standard widgets only, so a static page applies it too),
hides those icons inside agentlab views, hides the "Show reasoning" toggle that could not work any
more, and says instead, plainly, that the reasoning was not saved."""


def _fmt_tokens(n: int | None, *, estimated: bool = False) -> str:
    if n is None:
        return "<NA>"
    return f"~{n:,}" if estimated else f"{n:,}"


class ReasoningPanel(widgets.VBox):  # type: ignore[misc]
    """A live, coalesced view of one model call's reasoning (or a whole run's, step by step).

    Feed it agentlab events (:meth:`feed`) or text (:meth:`append`) from any thread, or hand it the
    call's current snapshot (:meth:`show`): its state is a :class:`~agentlab.assembly.reducer.CallSnapshot`
    folded by the shared reducer, so whatever frame it renders shows the whole text so far. Reported
    token counts replace the live estimates when :meth:`set_usage` is called (at call completion);
    until then reasoning/text tokens are shown as ``~chars/4`` estimates, marked with ``~``.
    """

    def __init__(
        self,
        title: str = "Reasoning",
        *,
        keep_text: bool | None = None,
        flush_interval: float | None = None,
        live_chars: int | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self._call: CallSnapshot = EMPTY
        self._step: int | None = None
        self._usage: CallUsage | None = None
        self._t0: float | None = None
        self._t_end: float | None = None
        self._streaming = False
        self._collapsed = False
        self._status = ""
        self.title = title
        self.keep_text = options.keep_reasoning if keep_text is None else keep_text
        self._flush_interval = options.flush_interval if flush_interval is None else flush_interval
        self._live_chars = options.live_chars if live_chars is None else live_chars
        self._toggle_class = f"agentlab-t{secrets.token_hex(6)}"

        self._body = widgets.HTML(
            value=f'<div style="{UI_FONT}">{self._hide_toggle()}{self._render_header()}</div>',
            # Stretch, not width 100%: the HTML widget has side margins, and 100% plus margins
            # overflowed the panel (an empty horizontal scrollbar under every panel).
            layout=shared.layout(width="auto", align_self="stretch"),
            style=shared.html_style(),
        )
        self._toggle = widgets.ToggleButton(
            value=False,
            description="Show reasoning",
            tooltip="Reasoning text is kept in kernel memory; shown here, it is not saved with the notebook",
            layout=shared.layout(width="auto", height="24px"),
            style=shared.toggle_style(),
            # Shown or hidden by a rule in the header (:meth:`_render_body`), not by its own layout:
            # the cell-end collapse then costs one message less per panel. The class is random, not
            # a counter: a rule left in an older output (a kernel restarted in the same page) must
            # never match a new panel's toggle.
            _dom_classes=["agentlab-toggle", self._toggle_class],
        )
        self._toggle.observe(self._on_toggle, names="value")
        self._live: LiveText | None = LiveText(self._live_snapshot)
        self._pushed: Snapshot | None = None
        # Syncs (and snapshots) of these are sent by the flusher only, within the frontend's budget.
        # The live text first: when a stream starts, the first frame the budget allows is the text
        # (with its counters), and the header's "streaming…" takes the next one.
        self._synced: list[Any] = [self._live, gate(self._body)]
        super().__init__(
            children=[self._body, self._toggle, self._live],
            layout=shared.layout(width="100%", align_items="flex-start"),
            _dom_classes=["agentlab-panel"],
        )
        with _panels_lock:
            _panels.add(self)

    # ------------------------------------------------------------------ input (any thread)

    def feed(self, event: object) -> None:
        """Take an agentlab event: reasoning deltas are shown, text deltas only counted (others ignored)."""
        if isinstance(event, ReasoningDeltaEvent | TextDeltaEvent):
            with self._lock:
                self._start(event.step)
                self._call = accumulate(self._call, event)
            mark_dirty(self)

    def append(self, text: str, *, block: str | None = None, step: int | None = None) -> None:
        """Append reasoning text; a new ``block`` starts a new paragraph."""
        with self._lock:
            current = self._call.block
            ev = ReasoningDeltaEvent(text=text, block=block or current or "0", step=step)
            self._start(step)
            self._call = accumulate(self._call, ev)
        mark_dirty(self)

    def show_call(self, snapshot: CallSnapshot) -> None:
        """Show ``snapshot``, the call's state as its owner folded it (a run view folds each event once)."""
        with self._lock:
            self._start(snapshot.step)
            self._call = snapshot
        mark_dirty(self)

    def set_usage(self, usage: CallUsage | None) -> None:
        """Replace the live token estimates with what the provider reported for the call(s)."""
        with self._lock:
            self._usage = usage if self._usage is None or usage is None else self._usage + usage
        mark_dirty(self)

    def end(self, status: str = "") -> None:
        """The stream is over (text stays visible until the cell ends); renders now.

        The kernel-side state is final on return; its frontend update goes out next, within budget.
        """
        with self._lock:
            self._streaming = False
            if self._t0 is not None and self._t_end is None:
                self._t_end = time.monotonic()
            self._status = status
        render_now(self)

    def collapse(self) -> bool:
        """Collapse to a summary line and close the live text (kept in the header with ``keep_text``).

        Returns False when it was already collapsed. Called by the extension at cell end.
        """
        with self._lock:
            if self._collapsed and not self._toggle.value and self._live is None:
                return False
            self._collapsed = True
            self._streaming = False
            if self._t0 is not None and self._t_end is None:
                self._t_end = time.monotonic()
        if self._toggle.value:
            self._toggle.value = False  # re-hide text the user revealed in an earlier cell
        self._close_live()
        flush_now(self)
        return True

    def retire(self) -> None:
        """Off screen for good (its view was replaced by its static final state): close the live text.

        Nothing is rendered or sent but the live text's closing: the widget is not shown anywhere.
        """
        with self._lock:
            self._collapsed = True
            self._streaming = False
        self._close_live()
        forget(self)

    def _open_live(self) -> None:
        with self._lock:
            if self._live is None:
                self._live = LiveText(self._live_snapshot)
                self._pushed = None
                self._synced.append(self._live)
                self.children = [self._body, self._toggle, self._live]

    def _close_live(self) -> None:
        with self._lock:  # the flusher sends under this lock: it cannot be using the widget meanwhile
            live, self._live = self._live, None
            if live is None:
                return
            self._synced.remove(live)
            self.children = [self._body, self._toggle]
        live.close()

    def _start(self, step: int | None) -> None:
        if step is not None:
            self._step = step
        if self._t0 is None:
            self._t0 = time.monotonic()
        if not self._collapsed:
            self._streaming = True

    # ------------------------------------------------------------------ reading back

    @property
    def text(self) -> str:
        """The full reasoning text, from kernel memory (never from the frontend)."""
        with self._lock:
            call = self._call
        return call.reasoning

    @property
    def collapsed(self) -> bool:
        """True once the cell that streamed this panel has ended and the panel folded to its header."""
        return self._collapsed

    def show(self) -> None:
        """Put the full text on screen until the next cell ends (sent to the page, not synced state)."""
        self._toggle.value = True

    def _on_toggle(self, change: dict[str, Any]) -> None:
        self._toggle.description = "Hide reasoning" if change["new"] else "Show reasoning"
        if change["new"]:
            self._open_live()
        elif self._collapsed:
            self._close_live()
        flush_now(self)

    # ------------------------------------------------------------------ rendering

    def _counters(self) -> str:
        u = self._usage
        if u is not None:
            r = _fmt_tokens(u.reasoning_tokens)
            t = _fmt_tokens(u.non_reasoning_output_tokens)
        else:
            r = _fmt_tokens((self._call.reasoning_chars + 3) // 4, estimated=True)
            t = _fmt_tokens((self._call.text_chars + 3) // 4, estimated=True)
        elapsed = 0.0
        if self._t0 is not None:
            elapsed = (self._t_end or time.monotonic()) - self._t0
        step = f" · step {self._step}" if self._step is not None and "step" not in self.title else ""
        status = f" · {self._status}" if self._status else ""
        hidden = f" ({NOT_DISPLAYED})" if self._omitted_only() else ""
        return f"reasoning {r} tok{hidden} · text {t} tok · {elapsed:.1f} s{step}{status}"

    def _omitted_only(self) -> bool:
        """The provider returned reasoning without its text (display omitted), and no text at all."""
        return bool(self._call.reasoning_omitted) and not self._call.reasoning_chars

    def _render_header(self, *, collapsed: bool = False) -> str:
        icon = "▸" if collapsed else ("●" if self._streaming else "○")
        # While streaming, the counters tick in the live text (one message per frame, not two).
        counters = "streaming…" if self._streaming and not collapsed else html.escape(self._counters())
        return (
            f'<div style="font-size:12px;opacity:0.85"><b>{icon} {html.escape(self.title)}</b> · '
            f"{counters}</div>"
        )

    def _live_snapshot(self) -> Snapshot:
        """What the live text shows now: the streaming tail with counters, or the whole text on demand."""
        with self._lock:
            text = self._call.reasoning
            if self._collapsed:
                return {"type": "snapshot", "meta": "", "text": text, "streaming": False}
            tail = text[-self._live_chars :] if text else ""
            skipped = len(text) - len(tail)
            meta = self._counters() if self._streaming else ""
            if skipped > 0:
                meta += f"{' · ' if meta else ''}… {skipped:,} earlier chars in kernel memory"
            return {"type": "snapshot", "meta": meta, "text": tail, "streaming": self._streaming}

    def _flush(self) -> None:
        with self._lock:
            value, show_toggle = self._render_body()
            # Set the traits while still holding the lock: a flush computed before ``collapse()`` must
            # not land after it.
            hide = "" if show_toggle else self._hide_toggle()
            value = f'<div style="{UI_FONT}">{hide}{value}</div>'
            if self._body.value != value:
                self._body.value = value
            if self._live is not None:
                snap = self._live_snapshot()
                if snap != self._pushed:
                    self._live.push(snap)
                    self._pushed = snap

    def _hide_toggle(self) -> str:
        """The rule that keeps this panel's toggle off screen (the header carries it while it applies)."""
        return f"<style>.{self._toggle_class}{{display:none !important}}</style>"

    def _render_body(self) -> tuple[str, bool]:
        """The synced header, and whether the "Show reasoning" toggle is on screen.

        The header holds no reasoning text, except in a collapsed ``keep_text`` panel.
        """
        header = self._render_header(collapsed=self._collapsed)
        chars = self._call.reasoning_chars
        if not self._collapsed:
            return header, False
        if self._omitted_only():  # reasoning there was, none to show: say so, not "0 chars"
            return f'{header}<div style="font-size:11px;opacity:0.65">{NOT_DISPLAYED}</div>', False
        note = f"{chars:,} chars of reasoning"
        if self.keep_text:
            full = html.escape(self._call.reasoning)
            return (
                f"{header}<details><summary style='font-size:12px'>{note} (kept in this "
                f'notebook)</summary><pre style="{TEXT_STYLE};max-height:30em">{full}</pre></details>'
            ), False
        where = "shown below from kernel memory" if self._toggle.value else "kernel memory only"
        return (
            f'{OFFLINE_STYLE}{header}<div style="font-size:11px;opacity:0.65">{note}: '
            "not saved in the notebook"
            f'<span class="agentlab-online"> ({where})</span><span class="agentlab-offline">: this view was '
            "restored without its kernel; re-run the cell to see the reasoning again</span></div>"
        ), chars > 0

    def __repr__(self) -> str:
        state = "collapsed" if self._collapsed else ("streaming" if self._streaming else "idle")
        return (
            f"<ReasoningPanel {self.title!r} {state}, {self._call.reasoning_chars:,} chars in kernel memory>"
        )
