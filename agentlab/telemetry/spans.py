"""One run's events as a tree of OpenTelemetry spans, opened and closed as the events arrive.

A :class:`RunSpans` is a ``Run.subscribe`` callback. The tree, per the GenAI semantic conventions::

    invoke_agent agentlab        (RunStartedEvent .. RunCompletedEvent)
    ├── chat {model}             (ModelCallStartedEvent .. ModelCallCompletedEvent), one per step
    ├── execute_tool {tool}      (ToolCallEvent .. ToolResultEvent), one per tool call
    └── ...

Start and end times are the moments the events reach the subscriber (the run delivers them as they
happen), so a span's duration is the call's or tool's real wall time. The run span's parent is the
context current where the ``Run`` was *built* (a user's ``with tracer.start_as_current_span(...)``
around ``al.run``/``al.compare`` holds the runs), not where its loop happens to execute.

Dispatch is by exact event type: the handled types are durable records, which hold portable data
only. Transient events (reasoning and text deltas, the adapter's completed response with its opaque
continuation) have no handler and are never looked at, whatever ``include_content`` says.

A subscriber that raises would end the run (``Run.subscribe``), so every failure here is logged and
swallowed: tracing never changes a run's outcome. :meth:`RunSpans.close` is called when the run's
loop has ended (the run observer's closer): a run whose closing records never arrived (the event
log refused them, and with them their delivery) still gets its spans ended, with the outcome taken
from ``run.result``.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

import agentlab.telemetry.attributes as attrs
from agentlab.neutral.events import (
    DiagnosticEvent,
    ErrorEvent,
    ModelCallCompletedEvent,
    ModelCallStartedEvent,
    RunCompletedEvent,
    RunStartedEvent,
    ToolCallEvent,
    ToolResultEvent,
)

if TYPE_CHECKING:
    from agentlab.loop.runner import Run

__all__ = ["RunSpans"]

log = logging.getLogger(__name__)


class RunSpans:
    """The span tree of one run (see the module docstring); call it with each of the run's events."""

    def __init__(self, tracer: trace.Tracer, run: Run, *, include_content: bool = False) -> None:
        self._tracer = tracer
        self._include_content = include_content
        self._run_id = run.run_id
        self._run_ref: Callable[[], Run | None] = weakref.ref(run)  # never keeps a finished run alive
        self._parent = otel_context.get_current()
        self._run_span: Span | None = None
        self._run_ctx: otel_context.Context | None = None
        self._call: Span | None = None
        self._tools: dict[str, tuple[Span, int]] = {}
        """call id -> its open span and its start (ns): the end is start + the tool's own duration."""
        self._error: ErrorEvent | None = None

    def __call__(self, ev: object) -> None:
        """Handle one event of the run (the ``Run.subscribe`` callback); never raises."""
        handler = _HANDLERS.get(type(ev))
        if handler is None:
            return
        try:
            handler(self, ev)
        except Exception:
            log.warning(
                "run %s: tracing a %s failed; the run goes on", self._run_id, type(ev).__name__, exc_info=True
            )

    # ------------------------------------------------------------------ handlers

    def _run_started(self, ev: RunStartedEvent) -> None:
        span = self._tracer.start_span(
            f"invoke_agent {attrs.AGENT_NAME}",
            context=self._parent,
            kind=SpanKind.INTERNAL,
            attributes=attrs.run_start_attributes(ev, self._run_id),
        )
        if self._include_content and ev.task is not None:
            run = self._run_ref()
            items = run.checkpoint.history if run is not None else ()
            span.set_attribute("gen_ai.input.messages", attrs.input_messages(items))
        self._run_span = span
        self._run_ctx = trace.set_span_in_context(span, self._parent)

    def _call_started(self, ev: ModelCallStartedEvent) -> None:
        self._end_call()  # a call left open (cannot happen in a well-formed run) is closed first
        span = self._tracer.start_span(
            f"chat {ev.model}",
            context=self._run_ctx,
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": attrs.provider_name(ev.provider),
                "gen_ai.request.model": ev.model,
                "agentlab.step": ev.step if ev.step is not None else 0,
            },
        )
        if self._include_content:
            run = self._run_ref()
            if run is not None:  # the history this call is sent: portable items only
                span.set_attribute("gen_ai.input.messages", attrs.input_messages(run.checkpoint.history))
        self._call = span

    def _call_completed(self, ev: ModelCallCompletedEvent) -> None:
        span = self._call
        if span is None:
            return
        span.set_attributes(attrs.call_attributes(ev))
        if self._include_content:
            span.set_attribute("gen_ai.output.messages", attrs.call_output_messages(ev))
        self._call = None
        span.end()

    def _tool_call(self, ev: ToolCallEvent) -> None:
        call = ev.call
        start = time.time_ns()
        span = self._tracer.start_span(
            f"execute_tool {call.name}",
            context=self._run_ctx,
            kind=SpanKind.INTERNAL,
            attributes=attrs.tool_call_attributes(call, include_content=self._include_content),
            start_time=start,
        )
        run = self._run_ref()
        tool = run.tools.get(call.name) if run is not None else None
        if tool is not None and (source := tool.source) is not None:  # e.g. an MCP server's tool
            span.set_attributes(attrs.tool_source_attributes(source))
        self._tools[call.call_id] = (span, start)

    def _tool_result(self, ev: ToolResultEvent) -> None:
        open_span = self._tools.pop(ev.result.call_id, None)
        if open_span is None:
            return
        span, start = open_span
        extra = attrs.tool_result_attributes(ev.result, include_content=self._include_content)
        span.set_attributes(extra)
        if "error.type" in extra:
            span.set_status(Status(StatusCode.ERROR, "the tool failed"))
        # A step's results arrive together once every tool of it is done: each span ends when its
        # own tool did (its recorded duration), so parallel tools do not all end with the slowest.
        d = ev.duration_s
        span.end(end_time=start + int(d * 1e9) if d is not None and d >= 0 else None)

    def _diagnostic(self, ev: DiagnosticEvent) -> None:
        span = self._call or self._run_span
        if span is not None:  # the code only: a message may quote a tool's or a provider's words
            span.add_event("agentlab.diagnostic", {"agentlab.diagnostic.code": ev.code})

    def _errored(self, ev: ErrorEvent) -> None:
        self._error = ev

    def _run_completed(self, ev: RunCompletedEvent) -> None:
        self._end_call()
        for tool, _start in self._tools.values():
            _fail(tool, {"error.type": "abandoned"}, "the run ended before the tool returned")
            tool.end()
        self._tools.clear()
        span = self._run_span
        if span is None:
            return
        span.set_attributes(attrs.run_end_attributes(ev))
        if self._include_content and (out := attrs.run_output_messages(ev)) is not None:
            span.set_attribute("gen_ai.output.messages", out)
        if ev.status == "failed":
            err = self._error
            found = attrs.error_attributes(err) if err is not None else {"error.type": "_OTHER"}
            _fail(span, found, err.message if err is not None else "the run failed")
        elif ev.status == "cancelled":
            _fail(span, {"error.type": "cancelled"}, "the run was cancelled")
        self._run_span = None
        span.end()

    def close(self) -> None:
        """The run's loop ended: end what its closing records did not (a no-op after them); never raises."""
        if self._run_span is None:
            return
        try:
            run = self._run_ref()
            result = run.result if run is not None else None
            if result is not None and result.status == "failed" and self._error is None:
                self._error = ErrorEvent(error_type=result.error_type or "_OTHER", message="the run failed")
            if result is None:
                self._run_completed(RunCompletedEvent(status="failed"))
            else:
                self._run_completed(
                    RunCompletedEvent(status=result.status, steps=result.steps, usage=result.usage.tokens)
                )
        except Exception:
            log.warning("run %s: ending its spans failed", self._run_id, exc_info=True)

    def _end_call(self) -> None:
        """Close a model call the run left open (it failed or was cancelled mid-call)."""
        span, self._call = self._call, None
        if span is None:
            return
        err = self._error
        _fail(span, attrs.error_attributes(err) if err is not None else {"error.type": "_OTHER"}, None)
        span.end()


def _fail(span: Span, found: dict[str, Any], description: str | None) -> None:
    span.set_attributes(found)
    span.set_status(Status(StatusCode.ERROR, description))


_HANDLERS: dict[type, Callable[[RunSpans, Any], None]] = {
    RunStartedEvent: RunSpans._run_started,
    ModelCallStartedEvent: RunSpans._call_started,
    ModelCallCompletedEvent: RunSpans._call_completed,
    ToolCallEvent: RunSpans._tool_call,
    ToolResultEvent: RunSpans._tool_result,
    DiagnosticEvent: RunSpans._diagnostic,
    ErrorEvent: RunSpans._errored,
    RunCompletedEvent: RunSpans._run_completed,
}
"""Exact event type -> handler; any other type (every transient event) is ignored."""
