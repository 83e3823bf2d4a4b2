"""A run's state as a live view keeps it, and its rendering as HTML and text: no widget in here.

A run view (:class:`~agentlab.notebook.run_view.RunView`) and a compare's run both fold a run's
events into this state and render it with the same code; what each does on screen when the state
changes (which widgets, which frontend messages) is theirs, through the hooks of :class:`RunState`.
"""

from __future__ import annotations

import html
import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

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
from agentlab.notebook._live_text import TEXT_STYLE
from agentlab.notebook.display import PALETTE, UI_FONT, fmt_seconds, fmt_usd, usage_line
from agentlab.notebook.panel import NOT_DISPLAYED
from agentlab.notebook.timeline_strip import Rows, Span, strip_html, strip_text

if TYPE_CHECKING:
    import ipywidgets as widgets

    from agentlab.notebook.panel import ReasoningPanel

_MAX_CELL = 400  # characters of a tool argument/result shown in the timeline

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


def _wrap(v: str) -> str:
    return f'<div style="{UI_FONT}">{v}</div>' if v else ""


class RunState:
    """A run's events folded into view state (status, steps, usage, answer) and rendered as HTML/text.

    Thread-safe: events arrive from the run's thread, renders from the flusher's (``_lock``). What a
    change does on screen is the subclass's (the hooks below).
    """

    _lock: Any
    title: str
    _keep_text: bool | None
    _compact: bool
    _run_id: str | None
    _status: str
    _t0: float
    _t_end: float | None
    _feeders: set[threading.Thread]
    _steps: dict[int, _Step]
    _answer: str | None
    _errors: list[str]
    _error_types: list[str]
    _notes: list[str]
    _usage: CallUsage | None
    _cost: float | None
    _calls: int
    _partial: bool

    def _init_state(self, title: str, keep_text: bool | None, compact: bool, lock: Any = None) -> None:
        self._lock = threading.RLock() if lock is None else lock
        self._keep_text = keep_text
        self._compact = compact
        self.title = title
        self._run_id = None
        self._status = "waiting"
        self._t0 = time.monotonic()
        self._t_end = None
        self._feeders = set()
        """Worker threads that delivered this view's events (a run's loop): no widget is made there."""
        self._steps = {}
        self._answer = None
        self._errors = []
        self._error_types = []
        self._notes = []
        self._usage = None
        self._cost = None
        self._calls = 0
        self._partial = False

    # ------------------------------------------------------------------ hooks (the view's own)

    def _changed(self, *, slack: float | None = None) -> None:
        """The state changed: have it rendered at the frontend's pace (``slack``: how long it may wait)."""
        raise NotImplementedError

    def _render_now(self) -> None:
        """The state is final (for now): render it at once."""
        raise NotImplementedError

    def _call_progress(self, st: _Step) -> None:
        """A step's call streamed reasoning or text."""

    def _call_ended(self, st: _Step, event: ModelCallCompletedEvent) -> None:
        """A step's call completed (its usage is reported)."""

    def _steps_ended(self, steps: list[_Step]) -> None:
        """The run ended (``finish``), some of ``steps`` maybe cut off mid-call."""

    # ------------------------------------------------------------------ events (any thread)

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
            self._call_progress(st)
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
        self._changed()

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
        self._call_ended(st, event)

    def set_status(self, status: str) -> None:
        """Show a status before the run's first event (e.g. that the provider SDK is being imported)."""
        with self._lock:
            self._status = status
        self._render_now()

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
        self._steps_ended(steps)
        self._render_now()

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
        self._changed(slack=0.0)  # the new step's box must reach the frontend while reasoning streams
        return st

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

    @property
    def status(self) -> str:
        """``waiting``, ``running``, or how the run ended (``completed``, ``failed``, ...)."""
        return self._status

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
            body = self._render_header() + self.steps_html(notes=True) + self.tail_html()
        width = "flex:1 1 0;min-width:260px" if self._compact else ""
        return (
            f'<div class="agentlab-view agentlab-static" style="{UI_FONT};border:1px solid '
            f'{PALETTE["grey"]}55;padding:4px;box-sizing:border-box;{width}">{body}</div>'
        )

    def steps_html(self, *, notes: bool) -> str:
        """Each step's title and tool calls; with ``notes``, a line on its reasoning between them.

        The note says how much reasoning there was and that it is not saved (the text itself only
        where the view keeps it); a live view streams the text elsewhere and leaves ``notes`` off.
        """
        with self._lock:
            keep = self._keeps_text()
            return "".join(
                self._render_step_title(st)
                + (_reasoning_note(st, keep) if notes else "")
                + self._render_tools(st)
                for _, st in sorted(self._steps.items())
            )

    def tail_html(self) -> str:
        """The run's timeline strip and footer (errors, notes, answer, usage, throughput)."""
        with self._lock:
            return strip_html(self._timeline_rows()) + self._render_footer()
