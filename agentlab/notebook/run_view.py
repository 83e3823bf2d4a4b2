"""Live views of runs: a run view (step timeline) and a compare view (one column per model).

Views consume agentlab events only (never SDK types), from any thread: ``view.on_event`` is a plain
callable to pass as a run's ``on_event``. State is kept in Python and rendered by the coalescing
flusher (:mod:`agentlab.notebook._coalesce`), which sends the updates of all live views within one
budget for the whole frontend (~16 comm messages per second), so a fast stream, or a comparison of
many columns, costs a bounded number of frontend messages. Reasoning goes to one
:class:`~agentlab.notebook.panel.ReasoningPanel` per step (cleared at cell end); everything else
shown here is portable (tool calls and results, answers, usage, throughput, the timeline strip of
:mod:`agentlab.notebook.timeline_strip`) and may be saved with the notebook.

A displayed view's output is replaced at cell end, once its run is over, by its static final state
(:func:`refresh_displays`: ``text/html`` and ``text/plain``, no widget), so JupyterLab with its
default settings, VS Code, GitHub, nbviewer and nbconvert show how the run ended, without a kernel
and without widget state: not the placeholder of the moment it started, not "model not found".
"""

from __future__ import annotations

import html
import json
import re
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import ipywidgets as widgets

from agentlab.assembly.reducer import EMPTY, CallSnapshot, ToolCallState, accumulate
from agentlab.costs.throughput import call_throughput, run_throughput
from agentlab.neutral.events import (
    DiagnosticEvent,
    ErrorEvent,
    ModelCallCompletedEvent,
    ModelCallStartedEvent,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    RunCompletedEvent,
    RunStartedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentlab.neutral.usage import CallUsage
from agentlab.notebook import _shared as shared
from agentlab.notebook._coalesce import DEFAULT_INTERVAL, forget, gate, mark_dirty, render_now
from agentlab.notebook._live_text import TEXT_STYLE
from agentlab.notebook.display import PALETTE, UI_FONT, fmt_seconds, fmt_usd, usage_line
from agentlab.notebook.panel import NOT_DISPLAYED, ReasoningPanel
from agentlab.notebook.timeline_strip import Rows, Span, strip_html, strip_text

__all__ = ["CompareView", "RunView", "refresh_displays", "show_saved", "static_bundle"]

_MAX_CELL = 400  # characters of a tool argument/result shown in the timeline
_STATUS_SLACK = 0.5
"""Seconds a run view's status update may wait behind streaming reasoning panels for a message slot."""


_FOLDED = (ToolCallDeltaEvent, ToolCallEvent, ToolResultEvent, ResponseCompletedEvent)
"""Step events the view only folds (a completed response's fold keeps its portable facts, no opaque item)."""


def _strip_error(output: str) -> str:
    """A tool's error text without its own "Error: " prefix (the view already says "error:")."""
    head, sep, rest = output.partition(":")
    return rest.lstrip() if sep and head.strip().lower() == "error" else output


_TAG = re.compile(r"<[^>]+>")
_BLOCK = re.compile(r"</div>\s*<div")


def _text(fragment: str) -> str:
    """Rendered HTML fragment to one line of text (our own markup: no scripts, entities escaped)."""
    fragment = fragment.replace("</b>(", "(")  # a tool call reads name(arguments)
    return re.sub(r"[ \t]+", " ", html.unescape(_TAG.sub(" ", fragment))).strip()


def _blocks(fragment: str) -> list[str]:
    return _BLOCK.sub("</div>\x00<div", fragment).split("\x00") if fragment else []


_shown: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_shown_lock = threading.Lock()
_held: dict[int, Any] = {}
"""Displayed objects nothing else keeps alive (a sweep's progress bar outlives its sweep only here),
held until the end of their cell; widgets are kept alive by ipywidgets' own registry."""


def show_saved(view: Any) -> Any:
    """Display ``view`` with a display id (so its saved output can be replaced later); returns the handle.

    ``view`` has ``summary_text()`` and, once displayed, ``_display``; its saved output is updated
    at cell end by :func:`refresh_displays` until ``view.finished`` (or, for a run or compare view,
    every run's end).
    """
    from IPython.display import display

    handle = display(view, display_id=True)  # type: ignore[no-untyped-call]
    with _shown_lock:
        _shown[view] = view.summary_text()
        if not isinstance(view, widgets.Widget):
            _held[id(view)] = view
    return handle


def refresh_displays() -> int:
    """Replace the output of every displayed view that finished by its static final state (cell end).

    A view is displayed when its run starts ("importing the SDK…", "waiting, 0 steps"), as a widget
    with ``text/plain`` and ``text/html`` beside it. A frontend renders the widget first, and a
    notebook reopened without its widget state (JupyterLab's default: "Save Widget State
    Automatically" off; or saved after a kernel restart) shows "Error displaying widget: model not
    found" in its place, whatever HTML sits beside it. So at cell end the extension calls this, on
    the kernel's main thread, and a finished view's output is updated (``update_display_data``, which
    JupyterLab, VS Code and nbclient apply) to :func:`static_bundle`: text and HTML only, no widget
    mime type, what every frontend renders without a kernel. A view still running (a task left
    running past its cell) keeps its widget, its saved text brought up to date, until a later cell
    end finds it finished. Returns how many outputs were updated.
    """
    with _shown_lock:
        items = list(_shown.items())
    n = 0
    for view, last in items:
        now = view.summary_text()
        done = _finished(view)
        if view._display is not None and (done or now != last):
            if done:
                view._display.update(static_bundle(view), raw=True)
                _retire(view)
            else:
                view._display.update(view)
            n += 1
        with _shown_lock:
            _held.pop(id(view), None)  # its cell has ended: its saved output is now its last state
            if done:  # final: nothing left to update, stop checking it
                _shown.pop(view, None)
            else:
                _shown[view] = now
    return n


def _retire(view: Any) -> None:
    """A view replaced by its static state: its pending widget updates and live texts are dropped.

    Its widgets are on screen nowhere any more, so the cell-end collapse need not render them.
    """
    cols = view.columns if isinstance(view, CompareView) else [view] if isinstance(view, RunView) else []
    for col in cols:
        forget(col)
        with col._lock:  # the panels made so far (none is made for a view no longer shown)
            panels = [s.panel for s in col._steps.values() if s.panel is not None]
        for panel in panels:
            panel.retire()


def static_bundle(view: Any) -> dict[str, str]:
    """``view``'s final state as a mimebundle every frontend renders without a kernel or widget state.

    ``text/html`` (``summary_html``: no reasoning, unless the view keeps it) and ``text/plain``
    (``summary_text``), and no ``application/vnd.jupyter.widget-view+json``: a frontend picks the
    widget first when it is there, and without the widget's state it draws an error instead.
    """
    return {"text/plain": view.summary_text(), "text/html": view.summary_html()}


def _finished(view: Any) -> bool:
    done = getattr(view, "finished", None)
    if isinstance(done, bool):
        return done
    cols = view.columns if isinstance(view, CompareView) else [view]
    return all(c._t_end is not None and c.status not in ("running", "waiting") for c in cols)


def _reasoning_note(st: _Step, keep_text: bool) -> str:
    """A step's reasoning in a static view: its size, and the text only where the panel keeps it."""
    chars = st.call.reasoning_chars
    if not chars:
        hidden = st.call.reasoning_omitted  # reasoning there was, with no text: say so
        return f'<div style="font-size:11px;opacity:0.65">{NOT_DISPLAYED}</div>' if hidden else ""
    if keep_text:  # the explicit opt-in: the text is saved, folded as in the collapsed panel
        return (
            f"<details><summary style='font-size:11px;opacity:0.75'>{chars:,} chars of reasoning (kept in "
            f'this notebook)</summary><pre style="{TEXT_STYLE};max-height:30em">'
            f"{html.escape(st.call.reasoning)}</pre></details>"
        )
    note = f"{chars:,} chars of reasoning: not saved in the notebook"
    return f'<div style="font-size:11px;opacity:0.65">{note}</div>'


def _clip(s: str, n: int = _MAX_CELL) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _pretty_args(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False)
    except (ValueError, TypeError):
        return arguments


@dataclass
class _Step:
    """One step's model call state (folded by the shared reducer, one fold per event) and its widgets.

    The widgets are made later than the step, off the run's thread (:meth:`RunView._build_steps`):
    None until then.
    """

    number: int
    panel: ReasoningPanel | None = None
    title: widgets.HTML | None = None
    tools_html: widgets.HTML | None = None
    box: widgets.VBox | None = None
    call: CallSnapshot = field(default_factory=lambda: EMPTY)
    started: float = field(default_factory=time.monotonic)
    model_span: Span | None = None
    tool_spans: dict[str, Span] = field(default_factory=dict)
    """By call id, in the order the results arrived."""

    @property
    def spans(self) -> list[Span]:
        """The step's bars for the timeline strip: its model call, then its tools."""
        head = [self.model_span] if self.model_span is not None else []
        return head + list(self.tool_spans.values())

    @property
    def done(self) -> bool:
        return self.call.status == "completed"

    @property
    def tools(self) -> tuple[ToolCallState, ...]:
        return self.call.tool_calls


def _step_title(n: int) -> str:
    return f'<div style="font-size:12px"><b>Step {n}</b> · streaming…</div>'


def _html(value: str) -> widgets.HTML:
    """An ``HTML`` widget on the shared layout and style: one widget model, not three."""
    return widgets.HTML(value=value, layout=shared.layout(), style=shared.html_style())


def _wrap(v: str) -> str:
    return f'<div style="{UI_FONT}">{v}</div>' if v else ""


class _SavedView(widgets.VBox):  # type: ignore[misc]
    """A live view whose saved output (what a notebook keeps beside the widget) is its summary.

    Run and compare views share it: a reader without widgets sees ``summary_text``/``summary_html``.
    """

    _display: Any = None

    def summary_text(self) -> str:
        raise NotImplementedError

    def summary_html(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        data = super()._repr_mimebundle_(**kwargs)
        if isinstance(data, dict):
            data["text/plain"] = self.summary_text()
            data["text/html"] = self.summary_html()
        return data

    def show(self) -> None:
        """Display the view, and keep its saved output current (:func:`refresh_displays`, at cell end)."""
        self._display = show_saved(self)


class RunView(_SavedView):
    """A run as it happens: header, one section per step (reasoning, text, tool calls), answer, usage.

    ``RunView(title)`` then pass ``view.on_event`` to a run. ``finish()`` (or a ``RunCompletedEvent``)
    renders the final state immediately.
    """

    _header: widgets.HTML
    _steps_box: widgets.VBox
    _timeline: widgets.HTML
    _footer: widgets.HTML

    def __init__(
        self,
        title: str = "",
        *,
        keep_text: bool | None = None,
        flush_interval: float = DEFAULT_INTERVAL,
        compact: bool = False,
        line: bool = False,
    ) -> None:
        self._lock = threading.RLock()
        self._flush_interval = flush_interval
        self._sync_slack = _STATUS_SLACK
        self._keep_text = keep_text
        self._compact = compact
        self.title = title
        self._run_id: str | None = None
        self._status = "waiting"
        self._t0 = time.monotonic()
        self._t_end: float | None = None
        self._feeders: set[threading.Thread] = set()
        """Worker threads that delivered this view's events (a run's loop): no widget is made there."""
        self._steps: dict[int, _Step] = {}
        self._answer: str | None = None
        self._errors: list[str] = []
        self._error_types: list[str] = []
        self._notes: list[str] = []
        self._usage: CallUsage | None = None
        self._cost: float | None = None
        self._calls = 0
        self._partial = False
        self._display: Any = None

        self._framed = False  # its own widgets made (_build_frame)
        # A repeat of a compare column: one summary line, shown above its collapsed full view.
        self.line: widgets.HTML | None = _html(_wrap(self.line_html())) if line else None
        # A compact view is a compare column: its layout is set at creation (setting it afterwards
        # would cost a frontend message per trait per column).
        column = {"flex": "1 1 0", "min_width": "260px", "width": "auto"} if compact else {"width": "100%"}
        super().__init__(
            layout=shared.layout(border=f"1px solid {PALETTE['grey']}55", padding="4px", **column),
            _dom_classes=["agentlab-view"],
        )
        # Syncs of these (and of each step's title and tools) are sent by the flusher only, within the
        # frontend's message budget; a step's reasoning panel is a view of its own.
        self._synced: list[widgets.Widget] = []
        if self.line is not None:  # synced by the flusher like the rest: the same message budget
            self._synced.append(gate(self.line))
        if compact:  # its widgets are made later, off the caller's thread (_build_frame); the view's
            self._synced.append(gate(self))  # children are then set within the budget like the rest
        else:
            self._build_frame()

    def _build_frame(self) -> None:
        """Make the view's own widgets (header, steps box, timeline strip, footer), once.

        A compare column's are made at its first render off the runs' threads (the flusher thread,
        as a step's widgets are): a 15-run compare built them on the caller's thread before any run
        started, 60 of the 137 widget models its view opened there, all on the compare's wall time (issue 33,
        item 3). A run view alone makes them at once (it is shown as soon as it is made).
        """
        with self._lock:
            if self._framed:
                return
            self._steps_box = widgets.VBox(layout=shared.layout(width="100%"))
            self._timeline = _html("")
            self._footer = _html("")
            self._header = _html(_wrap(self._render_header()))
            # The step structure comes first in each turn (it is what makes a new step's panel visible).
            # The timeline strip changes only when a step's call or a tool ends.
            first = [self._steps_box, self._header, self._timeline, self._footer]
            self._synced[0:0] = [gate(w) for w in first]
            self.children = [self._header, self._steps_box, self._timeline, self._footer]
            self._framed = True

    # ------------------------------------------------------------------ events (any thread)

    def on_event(self, event: object) -> None:
        """Route one agentlab event into the view. Unknown events are ignored (future-proof).

        A step's events are folded into its :class:`~agentlab.assembly.reducer.CallSnapshot`; a
        render shows the current snapshot, so frames the flusher skips lose nothing.
        """
        t = type(event)
        self._note_feeder()
        if t is ReasoningDeltaEvent or t is TextDeltaEvent:
            st = self._fold(event)
            if st.panel is not None:  # else its widgets, when made, start from the call so far
                st.panel.show_call(st.call)
            if t is ReasoningDeltaEvent:
                return
        elif t in _FOLDED:
            st = self._fold(event)
            if t is ToolResultEvent:
                self._tool_span(st, event)  # type: ignore[arg-type]
        elif isinstance(event, RunStartedEvent):
            with self._lock:
                self._run_id = event.run_id
                self._status = "running"
                # The run's clock starts here (not while the SDK was imported), as the run's own
                # figures (result, usage frame) do: header and table times agree.
                self._t0 = time.monotonic()
                if not self.title:
                    self.title = f"{event.provider}:{event.model}"
        elif isinstance(event, ModelCallStartedEvent):
            self._fold(event)
            with self._lock:
                self._status = "running"
        elif isinstance(event, ModelCallCompletedEvent):
            self._call_completed(event)
        elif isinstance(event, ErrorEvent):
            with self._lock:
                line = f"{event.error_type}: {event.message}"
                if line not in self._errors:  # a retried or re-raised error reads once
                    self._errors.append(line)
                    self._error_types.append(event.error_type)
        elif isinstance(event, DiagnosticEvent):
            with self._lock:
                if not any(event.message in e for e in self._errors):
                    self._notes.append(f"{event.code}: {event.message}")
        elif isinstance(event, RunCompletedEvent):
            with self._lock:
                self._status = event.status
                self._answer = event.output
                self._t_end = time.monotonic()
                # The run's own totals are authoritative (they include calls a view may have missed).
                self._usage = event.usage
                self._cost = event.cost_usd
                self._calls = max(self._calls, event.steps)
            self.finish()
            return
        else:
            return
        mark_dirty(self)

    def _note_feeder(self) -> None:
        th = threading.current_thread()
        if th not in self._feeders and th is not threading.main_thread():
            self._feeders.add(th)

    def _call_completed(self, event: ModelCallCompletedEvent) -> None:
        st = self._fold(event)
        with self._lock:
            st.model_span = self._span(
                "model", f"{event.provider}:{event.model}", event.started_s, event.latency_s
            )
            self._calls += 1
            self._usage = event.usage if self._usage is None else self._usage + event.usage
            if event.cost_usd is not None:
                self._cost = (self._cost or 0.0) + event.cost_usd
        if st.panel is not None:  # else made later, from the completed call
            st.panel.set_usage(event.usage)
            st.panel.end(event.stop_reason)

    def set_status(self, status: str) -> None:
        """Show a status before the run's first event (e.g. that the provider SDK is being imported)."""
        with self._lock:
            self._status = status
        render_now(self)

    def finish(self, status: str | None = None) -> None:
        """Render the final state now (called on run completion, failure or cancellation).

        The kernel-side state is final on return; the frontend updates go out next, within budget.
        """
        with self._lock:
            if status is not None:
                self._status = status
            if self._t_end is None:
                self._t_end = time.monotonic()
            steps = list(self._steps.values())
            # A call cut off mid-stream (cancel, failure) reported no usage: the totals are unknown,
            # not the zeros (and $0) of the calls that did complete.
            self._partial = any(not s.done and (s.call.reasoning_chars or s.call.text_chars) for s in steps)
        for st in steps:
            if not st.done and st.panel is not None:
                st.panel.end(self._status)
        render_now(self)

    # ------------------------------------------------------------------ steps

    def _span(
        self,
        kind: Literal["model", "tool"],
        name: str,
        started_s: float | None,
        duration_s: float | None,
        err: bool = False,
    ) -> Span:
        """A bar from the run's recorded start stamp, else from the view's clock (now, minus the duration)."""
        dur = duration_s or 0.0
        if started_s is not None:
            return Span(kind, name, started_s, started_s + dur, err)
        end = time.monotonic() - self._t0
        return Span(kind, name, max(0.0, end - dur), end, err, recorded=False)

    def _tool_span(self, st: _Step, event: ToolResultEvent) -> None:
        r = event.result
        with self._lock:
            st.tool_spans[r.call_id] = self._span(
                "tool", r.name or "?", event.started_s, event.duration_s, r.is_error
            )

    def _fold(self, event: Any) -> _Step:
        """Fold a step's event into that step's call snapshot."""
        n = 0 if event.step is None else event.step
        with self._lock:
            st = self._steps.get(n) or self._step_for(n)
            st.call = accumulate(st.call, event)
        return st

    def _step_for(self, step: int | None) -> _Step:
        """The step's state, new if need be; its widgets are made at the view's next render."""
        n = 0 if step is None else step
        with self._lock:
            st = self._steps.get(n)
            if st is not None:
                return st
            st = self._steps[n] = _Step(n)
        mark_dirty(self, slack=0.0)  # the new step's box must reach the frontend while reasoning streams
        return st

    def _build_steps(self) -> None:
        """Make the widgets of the steps that have none yet, each starting from its call so far.

        Not on the run's own thread (see :meth:`_flush`): a step's widgets are 8 widget models, each
        a comm opened, and the run's loop, in a compare every run's, is what the run's timings are
        measured on. The flusher thread (or the cell end, or :attr:`panels`) makes them instead.
        """
        with self._lock:
            self._build_frame()
            new = [st for st in self._steps.values() if st.panel is None]
            for st in new:
                panel = ReasoningPanel(f"Reasoning · step {st.number}", keep_text=self._keep_text)
                st.title = gate(_html(_wrap(_step_title(st.number))))
                st.tools_html = gate(_html(""))
                st.box = widgets.VBox(
                    children=[st.title, panel, st.tools_html],
                    layout=shared.layout(width="100%", margin="2px 0 2px 0"),
                )
                st.panel = panel
                at = self._synced.index(self._footer)
                self._synced[at:at] = [st.title, st.tools_html]  # before the footer
                panel.show_call(st.call)
                if st.done:
                    panel.set_usage(st.call.usage)
                    panel.end(st.call.stop_reason or "")
                elif self._t_end is not None and self._status not in ("running", "waiting"):
                    panel.end(self._status)
            if new:
                self._steps_box.children = [s.box for _, s in sorted(self._steps.items())]

    def _keeps_text(self) -> bool:
        from agentlab.notebook.panel import options

        return options.keep_reasoning if self._keep_text is None else self._keep_text

    # ------------------------------------------------------------------ rendering

    def _render_header(self) -> str:
        # Elapsed time only once the run is over: a ticking clock would re-send the header at every
        # turn and eat the frontend's message budget (the streaming panel shows its own clock).
        elapsed = f" · {self._t_end - self._t0:.1f} s" if self._t_end is not None else ""
        colour = {
            "completed": PALETTE["green"],
            "failed": PALETTE["vermillion"],
            "cancelled": PALETTE["vermillion"],
            "step_limit": PALETTE["orange"],
        }.get(self._status, PALETTE["blue"])
        run = f" · run {html.escape(self._run_id[:8])}" if self._run_id and not self._compact else ""
        return (
            f'<div style="font-size:13px"><b>{html.escape(self.title or "run")}</b>{run} · '
            f'<span style="color:{colour}">{html.escape(self._status)}</span> · {len(self._steps)} '
            f"step{'s' if len(self._steps) != 1 else ''}{elapsed}</div>"
        )

    def line_html(self) -> str:
        """One line for a repeat: title, status, steps, tokens, cost and time (its full view folds away)."""
        colour = {"completed": PALETTE["green"], "failed": PALETTE["vermillion"],
                  "cancelled": PALETTE["vermillion"], "step_limit": PALETTE["orange"]}.get(
            self._status, PALETTE["blue"])  # fmt: skip
        n = max(len(self._steps), self._calls)
        bits = [f'<b>{html.escape(self.title or "run")}</b>',
                f'<span style="color:{colour}">{html.escape(self._status)}</span>',
                f"{n} step{'s' if n != 1 else ''}"]  # fmt: skip
        if self._usage is not None or self._cost is not None:
            u = self._usage
            out = "<NA>" if u is None or u.output_tokens is None else f"{u.output_tokens:,}"
            bits.append(f"out {out} tok")
            bits.append("cost unknown" if self._partial or self._cost is None else fmt_usd(self._cost))
        if self._t_end is not None:
            bits.append(f"{self._t_end - self._t0:.1f} s")
        return f'<div style="font-size:12px">{" · ".join(bits)}</div>'

    def _render_step_title(self, st: _Step) -> str:
        call = st.call
        if not st.done:
            if self._t_end is not None and self._status not in ("running", "waiting"):
                ended = html.escape(self._status)
                return f'<div style="font-size:12px"><b>Step {st.number}</b> · {ended}</div>'
            return _step_title(st.number)
        bits = [f"<b>Step {st.number}</b>", html.escape(call.stop_reason or ""), fmt_seconds(call.latency_s)]
        if call.usage is not None:
            bits.append(html.escape(usage_line(call.usage, call.cost_usd)))
        speed = call_throughput(call).parts()  # unknown figures are left out, never shown as 0
        line = (
            f'<div style="font-size:11px;opacity:0.75">throughput: {html.escape(" · ".join(speed))}</div>'
            if speed
            else ""
        )
        return f'<div style="font-size:12px">{" · ".join(b for b in bits if b)}{line}</div>'

    def _render_tools(self, st: _Step) -> str:
        parts = []
        text = st.call.text.strip()
        if text and st.tools:  # preamble text before tool calls ("Let me check the weather")
            parts.append(f'<div style="font-size:12px;opacity:0.8">{html.escape(_clip(text))}</div>')
        for t in st.tools:
            args = html.escape(_clip(_pretty_args(t.arguments)))
            if t.output is None:
                state = "running…" if t.complete else "arguments streaming…"
                res = f'<span style="opacity:0.6">{state}</span>'
            elif t.is_error:
                err = html.escape(_clip(_strip_error(t.output)))
                res = f'<span style="color:{PALETTE["vermillion"]}">error: {err}</span>'
            else:
                res = f"→ {html.escape(_clip(t.output))}"
            dur = (
                f' <span style="opacity:0.6">({fmt_seconds(t.duration_s)})</span>'
                if t.output is not None
                else ""
            )
            parts.append(
                f'<div style="font-size:12px;font-family:var(--jp-code-font-family,monospace)">'
                f"<b>{html.escape(t.name)}</b>({args}) {res}{dur}</div>"
            )
        return "".join(parts)

    def _render_footer(self) -> str:
        parts = []
        # A single run raises its error into the cell, whose output shows the message: the view names
        # the error only (the message read twice otherwise). A compare column raises nothing: in full.
        shown = (
            self._errors
            if self._compact
            else [f"{t} (the message is in the cell's error below)" for t in self._error_types]
        )
        for e in shown:
            parts.append(f'<div style="color:{PALETTE["vermillion"]};font-size:12px">{html.escape(e)}</div>')
        for n in self._notes[-3:]:
            parts.append(f'<div style="opacity:0.7;font-size:11px">ⓘ {html.escape(n)}</div>')
        if self._answer is not None:
            parts.append(
                f'<div style="margin-top:4px;padding:4px 6px;border-left:3px solid {PALETTE["green"]}">'
                f"<b>Answer</b><div style='white-space:pre-wrap'>{html.escape(self._answer)}</div></div>"
            )
        elif self._steps:
            last = self._steps[max(self._steps)]
            if last.call.text_chars and not last.tools:
                streamed = last.call.text
                parts.append(
                    f'<div style="margin-top:4px;white-space:pre-wrap;opacity:0.85">'
                    f"{html.escape(streamed[-2000:])}</div>"
                )
        line = self._usage_text()
        if line:
            parts.append(f'<div style="font-size:12px;margin-top:2px">{html.escape(line)}</div>')
        speed = self._run_speed()
        if speed:
            parts.append(f'<div style="font-size:11px;opacity:0.8">{html.escape(speed)}</div>')
        return "".join(parts)

    def _run_speed(self) -> str:
        """The run's throughput, once it ended: over its completed calls (unknown figures left out)."""
        if self._t_end is None:
            return ""
        bits = run_throughput(s.call for s in self._steps.values() if s.done).parts(mean=True)
        return f"Run throughput: {' · '.join(bits)}" if bits else ""

    def _timeline_rows(self) -> Rows:
        return [(n, st.spans) for n, st in sorted(self._steps.items())]

    def _usage_text(self) -> str:
        if self._usage is None and self._cost is None:
            return ""
        calls = f" · {self._calls} call{'s' if self._calls != 1 else ''}"
        if self._partial:  # unknown, never 0: a call ended mid-stream without reporting its usage
            usage = (self._usage or CallUsage()) + CallUsage()
            return f"Σ {usage_line(usage)} · cost unknown (a call ended mid-stream){calls}"
        return f"Σ {usage_line(self._usage, self._cost)}{calls}"

    def _flush(self) -> None:
        with self._lock:  # held while setting traits, so flushes from two threads cannot land out of order
            if threading.current_thread() not in self._feeders:
                self._build_steps()
            elif not self._framed or any(st.panel is None for st in self._steps.values()):
                mark_dirty(self)  # a render on the flusher thread makes them (a run's end renders here)
            header = self._render_header()
            steps = [(st, self._render_step_title(st), self._render_tools(st)) for st in self._steps.values()]
            footer = self._render_footer()
            timeline = strip_html(self._timeline_rows())
            pairs = (
                [(self._header, header), (self._timeline, timeline), (self._footer, footer)]
                if self._framed
                else []
            )
            if self.line is not None:
                pairs.append((self.line, self.line_html()))
            for w, v in pairs + [
                pair
                for st, title, tools in steps
                if st.title is not None and st.tools_html is not None
                for pair in ((st.title, title), (st.tools_html, tools))
            ]:
                v = _wrap(v)
                if w.value != v:
                    w.value = v

    # ------------------------------------------------------------------ reading back

    @property
    def panels(self) -> list[ReasoningPanel]:
        """The reasoning panel of every step so far, in step order (a snapshot; steps may still be added)."""
        self._build_steps()
        with self._lock:
            return [s.panel for _, s in sorted(self._steps.items()) if s.panel is not None]

    @property
    def status(self) -> str:
        """``waiting``, ``running``, or how the run ended (``completed``, ``failed``, ...)."""
        return self._status

    def __repr__(self) -> str:
        return f"<RunView {self.title!r} {self._status}, {len(self._steps)} steps>"

    # ------------------------------------------------------------------ the saved representation

    def summary_text(self) -> str:
        """The final state as plain text (status, steps, tool calls, answer, usage), never reasoning."""
        with self._lock:
            lines = [_text(self._render_header())]
            for _, st in sorted(self._steps.items()):
                lines.append("  " + _text(self._render_step_title(st)))
                lines += ["    " + _text(t) for t in _blocks(self._render_tools(st))]
            lines += strip_text(self._timeline_rows())
            lines += [_text(b) for b in _blocks(self._render_footer())]
        return "\n".join(ln for ln in lines if ln.strip())

    def summary_html(self) -> str:
        """The collapsed view as static HTML: header, step titles, tool calls, answer, usage; no reasoning.

        For pages without widgets: GitHub, nbviewer, a reader without the kernel.
        """
        with self._lock:
            steps = []
            for _, st in sorted(self._steps.items()):
                note = _reasoning_note(st, self._keeps_text())
                steps.append(f"{self._render_step_title(st)}{note}{self._render_tools(st)}")
            timeline = strip_html(self._timeline_rows())
            body = self._render_header() + "".join(steps) + timeline + self._render_footer()
        width = "flex:1 1 0;min-width:260px" if self._compact else ""
        return (
            f'<div class="agentlab-view agentlab-static" style="{UI_FONT};border:1px solid '
            f'{PALETTE["grey"]}55;padding:4px;box-sizing:border-box;{width}">{body}</div>'
        )


_MODEL_COLUMN = {
    "flex": "1 1 0",
    "min_width": "260px",
    "width": "auto",
    "padding": "4px",
    "border": f"1px solid {PALETTE['grey']}55",
}
"""A model's column of a compare with repeats: set at creation, as a run view's column layout is."""


class CompareView(_SavedView):
    """Several run views side by side, one column per model, streaming concurrently.

    With ``repeats=N`` a model's column holds its N runs compactly: one summary line per repeat
    (status, steps, tokens, cost, time), each above its full run view folded in an accordion, so
    five models by three repeats read as five columns, not fifteen full views. ``columns`` is then
    one run view per run, model by model (``labels`` the models, ``titles`` one per run).
    """

    def __init__(
        self,
        titles: Sequence[str],
        *,
        task: str | None = None,
        keep_text: bool | None = None,
        repeats: int = 1,
    ) -> None:
        self.labels = list(titles)
        self.repeats = repeats
        grouped = repeats > 1
        self.columns = [
            RunView(f"r{k + 1}" if grouped else t, keep_text=keep_text, compact=True, line=grouped)
            for t in titles
            for k in range(repeats)
        ]
        # Shared layouts and styles (one model per distinct value, see ``_shared``): made on the
        # caller's thread before any run starts, every model is on the compare's wall time.
        head = _html(
            f'<div style="font-size:13px;{UI_FONT}"><b>Compare</b> · {html.escape(self.shape)}'
            + (f" · task: {html.escape(_clip(task, 200))}" if task else "")
            + "</div>"
        )
        row = widgets.HBox(
            children=self._model_columns() if grouped else self.columns,
            # Columns share the width (at least 260 px each) and wrap onto a new row when the page is
            # too narrow for all of them (three providers on a laptop screen), instead of overflowing.
            layout=shared.layout(width="100%", align_items="flex-start", flex_flow="row wrap"),
        )
        self._display: Any = None
        super().__init__(
            children=[head, row], layout=shared.layout(width="100%"), _dom_classes=["agentlab-view"]
        )

    @property
    def shape(self) -> str:
        """``5 models × 3 repeats`` (or ``2 models``): what the header says."""
        n = len(self.labels)
        models = f"{n} model{'s' if n != 1 else ''}"
        return models if self.repeats == 1 else f"{models} × {self.repeats} repeats"

    def _runs_of(self, i: int) -> list[RunView]:
        return self.columns[i * self.repeats : (i + 1) * self.repeats]

    def _model_columns(self) -> list[widgets.VBox]:
        """One column per model: its name, then per repeat the summary line over the folded full view."""
        out = []
        for i, label in enumerate(self.labels):
            parts: list[widgets.Widget] = [
                _html(_wrap(f'<div style="font-size:13px"><b>{html.escape(label)}</b></div>'))
            ]
            for v in self._runs_of(i):
                assert v.line is not None
                fold = widgets.Accordion(
                    children=[v], titles=(f"{v.title}: full run view",), layout=shared.layout()
                )
                parts += [v.line, fold]
            out.append(
                widgets.VBox(children=parts, layout=shared.layout(**_MODEL_COLUMN)),
            )
        return out

    def __repr__(self) -> str:
        return f"<CompareView {self.labels}{f' x{self.repeats}' if self.repeats > 1 else ''}>"

    def summary_text(self) -> str:
        """Every column's final state as plain text (no reasoning); a repeat is its summary line."""
        if self.repeats == 1:
            return "\n".join(c.summary_text() for c in self.columns)
        lines = [f"Compare · {self.shape}"]
        for i, label in enumerate(self.labels):
            lines.append(label)
            lines += ["  " + _text(v.line_html()) for v in self._runs_of(i)]
        return "\n".join(lines)

    def summary_html(self) -> str:
        """The columns' collapsed views side by side, as static HTML (no reasoning).

        With repeats: one column per model, a line per repeat over its run view in a closed
        ``<details>`` (expandable without a kernel, on GitHub or in nbconvert's HTML).
        """
        if self.repeats == 1:
            cols = "".join(c.summary_html() for c in self.columns)
        else:
            cols = "".join(self._model_html(i, label) for i, label in enumerate(self.labels))
        head = f'<div style="font-size:13px;{UI_FONT}"><b>Compare</b> · {html.escape(self.shape)}</div>'
        return (
            f'<div class="agentlab-compare">{head}<div class="agentlab-row" style="display:flex;'
            f'flex-flow:row wrap;gap:4px;width:100%">{cols}</div></div>'
        )

    def _model_html(self, i: int, label: str) -> str:
        runs = "".join(
            f"{v.line_html()}<details><summary style='font-size:11px;opacity:0.75'>{html.escape(v.title)}: "
            f"full run view</summary>{v.summary_html()}</details>"
            for v in self._runs_of(i)
        )
        return (
            f'<div style="{UI_FONT};border:1px solid {PALETTE["grey"]}55;padding:4px;box-sizing:border-box;'
            f'flex:1 1 0;min-width:260px"><div style="font-size:13px"><b>{html.escape(label)}</b></div>'
            f"{runs}</div>"
        )

    @property
    def panels(self) -> list[ReasoningPanel]:
        """Every column's reasoning panels, column by column."""
        return [p for c in self.columns for p in c.panels]
