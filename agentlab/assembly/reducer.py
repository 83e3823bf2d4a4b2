"""The live state of one model call, folded from its neutral events: ``accumulate(snapshot, event)``.

Why a pure fold: a view that renders at its own pace (the notebook's coalescing flusher sends at
most ~20 frames a second) must still show the right state when it skips frames. So nothing is
kept as "what changed since the last frame": the state after ``n`` events is
``accumulate(...accumulate(accumulate(None, e1), e2)..., en)``, and a view renders whichever
snapshot is current. The same function serves the run, the run view and the reasoning panel, so
they cannot disagree about what a call has produced so far.

Cost per event is O(1) (plus O(tool calls) for a tool-call delta): snapshots are immutable and
share structure. Streamed text is a chain of pieces (:class:`Chunks`), not a string rebuilt at
each delta; reading ``.text`` joins the pieces once and compacts the chain, so repeated reads while
a call streams cost the new pieces only. An old snapshot stays valid (and reads the same text)
after newer ones were made from it.

Privacy: a snapshot holds display text (answer, reasoning for display, tool arguments and results)
in memory for the views, never opaque provider state (``ResponseCompletedEvent.response.reasoning``
is not kept). Its repr shows sizes, counts and ids only (the rule of :mod:`agentlab.neutral._shapes`),
and it refuses to be pickled: reasoning text is display-only and is never serialized.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, Literal

from agentlab.errors import PrivacyError
from agentlab.neutral._shapes import Shape, shaped_repr
from agentlab.neutral.events import (
    DiagnosticEvent,
    ErrorEvent,
    ModelCallCompletedEvent,
    ModelCallStartedEvent,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    StopReason,
    TextDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentlab.neutral.items import AssistantTextItem, ToolCallItem
from agentlab.neutral.usage import CallUsage

__all__ = ["EMPTY", "CallSnapshot", "CallStatus", "Chunks", "ToolCallState", "accumulate", "fold"]

CallStatus = Literal["waiting", "started", "streaming", "completed", "failed"]
"""``waiting``: nothing seen; ``started``: the call was sent; ``streaming``: deltas arrived;
``completed``: the response is complete (``ResponseCompletedEvent`` or ``ModelCallCompletedEvent``);
``failed``: an ``ErrorEvent`` for the call."""

BLOCK_SEPARATOR = "\n\n"
"""Put between two reasoning blocks (Anthropic content blocks, OpenAI summary parts) for display."""


class _NoPickle:
    """Reasoning text is display-only: a snapshot (or a piece chain) is never serialized."""

    __slots__ = ()

    def __reduce__(self) -> Any:
        raise PrivacyError(f"{type(self).__name__} holds display-only text and cannot be serialized")


class Chunks(_NoPickle):
    """Immutable text built by appending: O(1) per append, the pieces joined on first read.

    ``_link`` is one ``(previous chain or None, piece)`` pair, replaced in one assignment when a read
    compacts the chain into a single piece (the text is unchanged, so older and newer snapshots
    sharing this node still read the same text, from any thread).
    """

    __slots__ = ("_link", "size")

    def __init__(self, prev: Chunks | None, piece: str, size: int) -> None:
        self._link: tuple[Chunks | None, str] = (prev, piece)
        self.size = size
        """Characters in the text (known without joining)."""

    def add(self, piece: str) -> Chunks:
        """This text followed by ``piece`` (a new chain sharing this one)."""
        return Chunks(self, piece, self.size + len(piece))

    @property
    def text(self) -> str:
        """The text; the first read joins the pieces and compacts the chain."""
        prev, piece = self._link
        if prev is None:
            return piece
        parts = [piece]
        node: Chunks | None = prev
        while node is not None:
            node, piece = node._link
            parts.append(piece)
        parts.reverse()
        text = "".join(parts)
        self._link = (None, text)
        return text

    def __repr__(self) -> str:
        return f"<Chunks {self.size} chars>"


def _chunks(text: str) -> Chunks:
    return Chunks(None, text, len(text))


@dataclasses.dataclass(slots=True, eq=False, repr=False)
class ToolCallState(_NoPickle):
    """One tool call of the call: its arguments as they stream, then complete, then its result."""

    call_id: str
    name: str
    args: Chunks
    """The arguments' pieces (read them joined as ``arguments``)."""
    complete: bool = False
    """True once the call is final (``ToolCallEvent`` or the completed response)."""
    output: str | None = None
    """The tool's result text, once a ``ToolResultEvent`` arrived."""
    is_error: bool = False
    duration_s: float | None = None

    @property
    def arguments(self) -> str:
        """The arguments' JSON text so far (complete when ``complete``)."""
        return self.args.text

    @property
    def argument_chars(self) -> int:
        """Characters of the arguments so far, counted as they stream: no join of the pieces."""
        return self.args.size

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolCallState):
            return NotImplemented
        return _tool_key(self) == _tool_key(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return shaped_repr(
            self,
            ("call_id", "name", "complete", "is_error", "duration_s"),
            call_id=self.call_id,
            name=self.name,
            arguments=self.arguments,
            complete=self.complete,
            output=self.output,
            is_error=self.is_error,
            duration_s=self.duration_s,
        )


def _tool_key(t: ToolCallState) -> tuple[Any, ...]:
    return (t.call_id, t.name, t.arguments, t.complete, t.output, t.is_error, t.duration_s)


_EMPTY_TEXT = _chunks("")


class CallSnapshot(_NoPickle):
    """What one model call has produced so far. Immutable; build it with :func:`accumulate`.

    Text fields are read through properties (``text``, ``reasoning``) that join on first read; the
    ``*_chars`` counters are known without joining. ``usage``, ``stop_reason``, ids and timings are
    ``None`` until the response (or the run's record of it) says.
    """

    run_id: str | None
    step: int | None
    status: CallStatus
    provider: str | None
    model: str | None
    _text: Chunks
    _reasoning: Chunks
    block: str | None
    """The reasoning block the last reasoning delta belonged to."""
    reasoning_blocks: int
    reasoning_omitted: int
    """Reasoning blocks the provider returned without their text (display omitted): there was
    reasoning, with nothing to show for it (a panel says so instead of showing an empty block)."""
    tool_calls: tuple[ToolCallState, ...]
    """In the order the calls first appeared."""
    usage: CallUsage | None
    cost_usd: float | None
    stop_reason: StopReason | None
    response_id: str | None
    request_id: str | None
    latency_s: float | None
    first_reasoning_s: float | None
    first_text_s: float | None
    diagnostics: tuple[str, ...]
    """Codes of the call's diagnostics, in order (the messages are the event log's)."""
    error: str | None
    """``error_type`` of the call's ``ErrorEvent``, when it failed."""
    events: int
    """Events folded in (ignored ones not counted)."""
    text_deltas: int
    reasoning_deltas: int
    tool_call_deltas: int

    @property
    def text(self) -> str:
        """The answer text so far (the completed response's text once it is known)."""
        return self._text.text

    @property
    def text_chars(self) -> int:
        """Characters of answer text so far, counted as it streams: a view can show it every frame."""
        return self._text.size

    @property
    def reasoning(self) -> str:
        """Reasoning text for display, blocks separated by a blank line. Never serialized."""
        return self._reasoning.text

    @property
    def reasoning_chars(self) -> int:
        """Characters of reasoning text, block separators included."""
        return self._reasoning.size

    @property
    def done(self) -> bool:
        """True once the call ended, either way (``completed`` or ``failed``); later tool results keep it."""
        return self.status in ("completed", "failed")

    def replace(self, **changes: Any) -> CallSnapshot:
        """A new snapshot with ``changes`` (field names); this one is unchanged."""
        unknown = set(changes) - set(_FIELDS)
        if unknown:
            raise TypeError(f"CallSnapshot has no field(s) {sorted(unknown)}")
        new = _new(CallSnapshot)
        d = new.__dict__
        d.update(self.__dict__)
        d.update(changes)
        return new

    def _state(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in ("_text", "_reasoning")}
        d["text"], d["reasoning"] = self.text, self.reasoning
        return d

    def __eq__(self, other: object) -> bool:
        """Same content (texts compared as text, not as piece chains)."""
        if not isinstance(other, CallSnapshot):
            return NotImplemented
        return self._state() == other._state()

    __hash__ = None  # type: ignore[assignment]

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"CallSnapshot is immutable; use accumulate() or replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("CallSnapshot is immutable")

    def __repr__(self) -> str:
        return shaped_repr(
            self,
            _SHOWN,
            step=self.step,
            status=self.status,
            text=_chars(self.text_chars),
            reasoning=_chars(self.reasoning_chars),
            reasoning_blocks=self.reasoning_blocks,
            reasoning_omitted=self.reasoning_omitted,
            tool_calls=self.tool_calls,
            usage=self.usage,
            stop_reason=self.stop_reason,
            response_id=self.response_id,
            diagnostics=len(self.diagnostics),
            events=self.events,
        )


def _chars(n: int) -> Shape:
    """``<N chars>`` without building the text."""
    return Shape(f"<{n} chars>")


_SHOWN = (
    "step",
    "status",
    "reasoning_blocks",
    "usage",
    "stop_reason",
    "response_id",
    "diagnostics",
    "events",
)
_FIELDS: tuple[str, ...] = tuple(CallSnapshot.__annotations__)
_new = object.__new__


def _empty() -> CallSnapshot:
    snap = _new(CallSnapshot)
    values: dict[str, Any] = dict.fromkeys(_FIELDS)
    values.update(
        status="waiting",
        _text=_EMPTY_TEXT,
        _reasoning=_EMPTY_TEXT,
        reasoning_blocks=0,
        reasoning_omitted=0,
        tool_calls=(),
        diagnostics=(),
        events=0,
        text_deltas=0,
        reasoning_deltas=0,
        tool_call_deltas=0,
    )
    snap.__dict__.update(values)
    return snap


EMPTY = _empty()
"""The state before any event (``accumulate(None, e)`` starts from it)."""


# ---------------------------------------------------------------- the fold


def accumulate(snapshot: CallSnapshot | None, event: object) -> CallSnapshot:
    """The call's state after ``event``; ``snapshot`` (``None``: nothing yet) is left unchanged.

    Pure: no clock, no I/O. An event this fold does not use (a run-level record, another type)
    returns ``snapshot`` itself, so ``new is old`` tells a view nothing changed.
    """
    snap = EMPTY if snapshot is None else snapshot
    handler = _HANDLERS.get(type(event))
    if handler is None:
        return snap
    return handler(snap, event)


def fold(events: Iterable[object], snapshot: CallSnapshot | None = None) -> CallSnapshot:
    """``accumulate`` over ``events`` (from ``snapshot``, or from nothing)."""
    snap = EMPTY if snapshot is None else snapshot
    for ev in events:
        handler = _HANDLERS.get(type(ev))
        if handler is not None:
            snap = handler(snap, ev)
    return snap


def _touch(snap: CallSnapshot, event: Any) -> CallSnapshot:
    """A copy counting ``event``, carrying its run id and step when the snapshot has none yet."""
    new = _new(CallSnapshot)
    nd = new.__dict__
    nd.update(snap.__dict__)
    nd["events"] = snap.events + 1
    if snap.step is None and event.step is not None:
        nd["step"] = event.step
    if snap.run_id is None and event.run_id is not None:
        nd["run_id"] = event.run_id
    if snap.status in ("waiting", "started"):
        nd["status"] = "streaming"
    return new


def _on_text(snap: CallSnapshot, ev: TextDeltaEvent) -> CallSnapshot:
    sd = snap.__dict__
    if sd["status"] != "streaming" or (sd["step"] is None and ev.step is not None):
        new = _touch(snap, ev)
        nd = new.__dict__
    else:  # the hot path: one dict copy, no checks left to make
        new = _new(CallSnapshot)
        nd = new.__dict__
        nd.update(sd)
        nd["events"] = sd["events"] + 1
    chain: Chunks = sd["_text"]
    text = ev.text
    nd["_text"] = Chunks(chain, text, chain.size + len(text))
    nd["text_deltas"] = sd["text_deltas"] + 1
    return new


def _on_reasoning(snap: CallSnapshot, ev: ReasoningDeltaEvent) -> CallSnapshot:
    new = _touch(snap, ev)
    nd = new.__dict__
    if ev.omitted:
        nd["reasoning_omitted"] = snap.reasoning_omitted + 1
        nd["reasoning_deltas"] = snap.reasoning_deltas + 1
        return new
    chain = snap._reasoning
    if ev.block != snap.block:
        if snap.block is not None and chain.size:
            chain = chain.add(BLOCK_SEPARATOR)
        nd["block"] = ev.block
        nd["reasoning_blocks"] = snap.reasoning_blocks + 1
    nd["_reasoning"] = chain.add(ev.text)
    nd["reasoning_deltas"] = snap.reasoning_deltas + 1
    return new


def _find(tools: tuple[ToolCallState, ...], call_id: str) -> int:
    for i in range(len(tools) - 1, -1, -1):
        if tools[i].call_id == call_id:
            return i
    return -1


def _put(tools: tuple[ToolCallState, ...], i: int, tool: ToolCallState) -> tuple[ToolCallState, ...]:
    return (*tools, tool) if i < 0 else (*tools[:i], tool, *tools[i + 1 :])


def _on_tool_delta(snap: CallSnapshot, ev: ToolCallDeltaEvent) -> CallSnapshot:
    new = _touch(snap, ev)
    nd = new.__dict__
    tools = snap.tool_calls
    i = _find(tools, ev.call_id)
    if i < 0:
        tool = ToolCallState(ev.call_id, ev.name, _chunks(ev.arguments_delta))
    else:
        old = tools[i]
        # one per argument delta: built directly (dataclasses.replace re-reads every field by name)
        args, name = old.args.add(ev.arguments_delta), old.name or ev.name
        tool = ToolCallState(old.call_id, name, args, old.complete, old.output, old.is_error, old.duration_s)
    nd["tool_calls"] = _put(tools, i, tool)
    nd["tool_call_deltas"] = snap.tool_call_deltas + 1
    return new


def _complete_calls(
    tools: tuple[ToolCallState, ...], calls: Iterable[ToolCallItem]
) -> tuple[ToolCallState, ...]:
    for c in calls:
        i = _find(tools, c.call_id)
        if i < 0:
            tool = ToolCallState(c.call_id, c.name, _chunks(c.arguments), complete=True)
        else:
            tool = dataclasses.replace(tools[i], args=_chunks(c.arguments), name=c.name, complete=True)
        tools = _put(tools, i, tool)
    return tools


def _on_tool_call(snap: CallSnapshot, ev: ToolCallEvent) -> CallSnapshot:
    new = _touch(snap, ev)
    nd = new.__dict__
    nd["tool_calls"] = _complete_calls(snap.tool_calls, (ev.call,))
    return new


def _on_tool_result(snap: CallSnapshot, ev: ToolResultEvent) -> CallSnapshot:
    new = _touch(snap, ev)
    nd = new.__dict__
    r = ev.result
    tools = snap.tool_calls
    i = _find(tools, r.call_id)
    base = tools[i] if i >= 0 else ToolCallState(r.call_id, r.name or "?", _EMPTY_TEXT)
    tool = dataclasses.replace(base, output=r.output, is_error=r.is_error, duration_s=ev.duration_s)
    nd["tool_calls"] = _put(tools, i, tool)
    nd["status"] = snap.status  # a tool result does not make the call stream again
    return new


def _final_text(snap: CallSnapshot, text: str) -> Chunks:
    """The authoritative final text; the streamed chain when it already says the same."""
    return snap._text if snap._text.size == len(text) and snap._text.text == text else _chunks(text)


#: What a finished call's snapshot takes from its answer: the live response or, on replay, its record.
_ANSWER_FIELDS = ("provider", "model", "response_id", "request_id", "stop_reason", "usage")


def _completed(
    snap: CallSnapshot,
    ev: ResponseCompletedEvent | ModelCallCompletedEvent,
    answer: Any,
    text: Chunks,
    calls: Iterable[ToolCallItem],
) -> CallSnapshot:
    """The snapshot of a finished call; the live response and its durable record fill it alike."""
    new = _touch(snap, ev)
    nd = new.__dict__
    nd["status"] = "completed"
    nd["_text"] = text
    nd["tool_calls"] = _complete_calls(snap.tool_calls, calls)
    for name in _ANSWER_FIELDS:
        nd[name] = getattr(answer, name)
    nd["latency_s"] = ev.latency_s
    nd["first_reasoning_s"] = ev.first_reasoning_s
    nd["first_text_s"] = ev.first_text_s
    return new


def _on_response(snap: CallSnapshot, ev: ResponseCompletedEvent) -> CallSnapshot:
    r = ev.response  # its opaque reasoning items are not kept
    return _completed(snap, ev, r, _final_text(snap, r.text), r.tool_calls)


def _on_call_completed(snap: CallSnapshot, ev: ModelCallCompletedEvent) -> CallSnapshot:
    calls = [i for i in ev.items if isinstance(i, ToolCallItem)]
    texts = [i.text for i in ev.items if isinstance(i, AssistantTextItem)]
    text = _final_text(snap, "".join(texts)) if ev.items else snap._text
    new = _completed(snap, ev, ev, text, calls)
    new.__dict__["cost_usd"] = ev.cost_usd
    return new


def _on_call_started(snap: CallSnapshot, ev: ModelCallStartedEvent) -> CallSnapshot:
    new = _touch(snap, ev)
    nd = new.__dict__
    nd["provider"] = ev.provider
    nd["model"] = ev.model
    nd["status"] = "started" if snap.status in ("waiting", "started") else snap.status
    return new


def _on_diagnostic(snap: CallSnapshot, ev: DiagnosticEvent) -> CallSnapshot:
    new = _touch(snap, ev)
    nd = new.__dict__
    nd["diagnostics"] = (*snap.diagnostics, ev.code)
    nd["status"] = snap.status
    return new


def _on_error(snap: CallSnapshot, ev: ErrorEvent) -> CallSnapshot:
    new = _touch(snap, ev)
    nd = new.__dict__
    nd["status"] = "failed"
    nd["error"] = ev.error_type
    if ev.request_id is not None:
        nd["request_id"] = ev.request_id
    return new


_Handler = Callable[[CallSnapshot, Any], CallSnapshot]
_HANDLERS: dict[type, _Handler] = {
    TextDeltaEvent: _on_text,
    ReasoningDeltaEvent: _on_reasoning,
    ToolCallDeltaEvent: _on_tool_delta,
    ToolCallEvent: _on_tool_call,
    ToolResultEvent: _on_tool_result,
    ResponseCompletedEvent: _on_response,
    ModelCallCompletedEvent: _on_call_completed,
    ModelCallStartedEvent: _on_call_started,
    DiagnosticEvent: _on_diagnostic,
    ErrorEvent: _on_error,
}
"""Exact types: events are final classes (``DURABLE_TYPES`` is matched the same way)."""
