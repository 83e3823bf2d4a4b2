"""The one assembler contract every adapter is built on, and the one driver that streams a call.

An adapter only maps: its ``Assembler`` subclass turns one decoded wire event (an SSE ``data``
payload, as text) into at most one neutral event, and a whole non-streaming body into a list of
them. Everything the two providers had each written for themselves lives here instead:

* **Events are built here** (:meth:`Assembler.reasoning`, :meth:`~Assembler.text`,
  :meth:`~Assembler.tool_delta`, :meth:`~Assembler.note`), each born with the ``run_id``/``step``
  of the request's ``origin`` (events are frozen; nothing stamps them later).
* **Timings are taken here, once**: the first reasoning delta, the first answer-text delta and the
  finish, all measured from when the request was sent (so they include time to first byte).
* **Diagnostics are returned, never queued**: ``feed`` returns the one event a wire event produced,
  delta or diagnostic; ``finish`` returns the diagnostics found while completing, then the
  ``ResponseCompletedEvent``.
* **One policy per fact**, the same on every provider:

  - unknown stream events, content blocks, deltas and output items (providers add them over time)
    are ignored, with one ``unsupported_content`` diagnostic per kind per call (:meth:`unsupported`),
    naming the wire type only, never quoting content;
  - tool-call arguments that are not a JSON object are kept as received, with one
    ``invalid_tool_arguments`` diagnostic (:meth:`tool_call`); the run answers that call with an
    error result without invoking the tool, so the model can correct itself;
  - reasoning items an adapter cannot send are counted per reason in one ``reasoning_item_dropped``
    per request (:func:`agentlab.neutral.diagnostics.add_dropped`).

* **One finish** (:meth:`Assembler.finish`) builds the neutral ``ModelResponse`` (usage included)
  from the subclass's :class:`Completion`; a final answer of the wrong shape is a value-free
  ``StreamInterruptedError``.

:func:`assemble` is the streaming driver: build, yield the request's diagnostics, open the HTTP
answer (the adapter's SDK call), frame its body into ``feed`` (SSE, :mod:`agentlab.assembly.sse`,
unless the call names another framing: Claude on Bedrock streams AWS's binary event stream), then
``finish``; it is the only generator level between the SDK's line iterator and the run.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, TypeVar

from pydantic import BaseModel

from agentlab.assembly.sse import SSEDecoder
from agentlab.assembly.wire_json import loads as _loads
from agentlab.errors import AgentlabError, StreamInterruptedError
from agentlab.neutral.continuity import ContinuityLayout, check_body
from agentlab.neutral.diagnostics import diagnostic
from agentlab.neutral.error_text import safe_name, wire_error_text
from agentlab.neutral.events import (
    AdapterEvent,
    DiagnosticEvent,
    Event,
    EventOrigin,
    ModelResponse,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    StopReason,
    TextDeltaEvent,
    ToolCallDeltaEvent,
)
from agentlab.neutral.items import AssistantTextItem, ProviderReasoningItem, ToolCallItem
from agentlab.neutral.request import ModelRequest
from agentlab.neutral.usage import CallUsage

__all__ = ["Assembler", "Completion", "Framing", "WireCall", "assemble", "assembler_for", "stamped"]

_perf = time.perf_counter
_new = object.__new__
# The four slots of every pydantic model, set through their descriptors: what ``object.__setattr__``
# ends up calling, without looking each name up along the event class's MRO (four per delta).
_put_dict = BaseModel.__dict__["__dict__"].__set__
_put_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_put_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_put_private = BaseModel.__dict__["__pydantic_private__"].__set__
E = TypeVar("E", bound=Event)
_In = TypeVar("_In")
_Out = TypeVar("_Out")
Where = Literal["event", "block", "delta", "item"]


def stamped(ev: E, origin: EventOrigin | None) -> E:
    """``ev`` if it already carries its origin (or there is none), else a stamped copy (never mutated).

    For events built before the origin was known (a request's diagnostics, built without it) and
    for adapters not built on :class:`Assembler`; the assembler's own events are born stamped.
    """
    if origin is None or ev.run_id is not None:
        return ev
    return ev.model_copy(update={"run_id": origin.run_id, "step": origin.step})


def _built(cls: type[E], fields: dict[str, Any], given: set[str]) -> E:
    """A delta event from values that already have their fields' types, without pydantic's validation.

    What the validated constructor makes (same ``__dict__`` in field order, same fields set), for
    the events built once per streamed delta; ``tests/assembly/test_hot_path.py`` checks that the
    two stay equal field for field, so a field added to an event cannot be skipped here.
    """
    ev = _new(cls)
    _put_dict(ev, fields)
    _put_fields_set(ev, given)
    _put_extra(ev, None)
    _put_private(ev, None)
    return ev


@dataclass(frozen=True, slots=True)
class Completion:
    """What a subclass has assembled when the call ends; :meth:`Assembler.finish` makes the response."""

    items: tuple[AssistantTextItem | ToolCallItem, ...]
    reasoning: tuple[ProviderReasoningItem, ...]
    stop_reason: StopReason
    stop_detail: str | None
    usage: CallUsage
    response_id: str | None
    provider_cost_usd: float | None = None
    """The provider's own cost figure for the call, when its usage carries one (OpenRouter)."""


class Assembler:
    """The state of one model call, fed one decoded wire event at a time (see the module docstring).

    Subclasses set ``provider``/``api`` and implement ``feed``, ``feed_body`` and ``complete``. Its
    repr is the subclass's (ids and counts only: it is a local of the adapter's frames).
    """

    provider: str
    api: str
    final_event: ClassVar[str] = "the end of the response"
    """The wire event that completes a call (named in the error for a stream cut before it)."""
    _shaped_repr = True

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None,
        request_id: str | None = None,
        origin: EventOrigin | None = None,
        started: float | None = None,
        reasoning_dropped: int = 0,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.request_id = request_id
        self.origin = origin
        self._rid = origin.run_id if origin is not None else None
        self._step = origin.step if origin is not None else None
        # ``started``: perf_counter() when the request was sent, so latencies include time to first byte.
        self._t0 = _perf() if started is None else started
        self.reasoning_dropped = reasoning_dropped
        self.first_reasoning_s: float | None = None
        self.first_text_s: float | None = None
        self._unsupported: set[tuple[str, str]] = set()
        # The delta events' fields and fields set as their validated constructors make them (the
        # order of the fields, ``run_id``/``step`` named when there is an origin), copied per delta.
        rid, step = self._rid, self._step
        self._reasoning_proto: dict[str, Any] = {
            "run_id": rid, "step": step, "kind": "reasoning_delta", "text": "", "block": "", "omitted": False,
        }  # fmt: skip
        self._text_proto: dict[str, Any] = {"run_id": rid, "step": step, "kind": "text_delta", "text": ""}
        ids = set() if rid is None else {"run_id", "step"}
        self._reasoning_given = {"text", "block", *ids}
        self._text_given = {"text", *ids}

    # ------------------------------------------------------------------ the contract

    def feed(self, data: bytes | str) -> AdapterEvent | None:
        """One SSE event's ``data`` -> at most one neutral event; raises only agentlab errors.

        ``bytes`` as the driver frames them (decoded by :func:`agentlab.assembly.wire_json.loads`);
        ``str`` is read the same way.
        """
        raise NotImplementedError

    def feed_body(self, body: bytes) -> list[AdapterEvent]:
        """A whole non-streaming body -> its display events and diagnostics (same mapping as ``feed``)."""
        raise NotImplementedError

    def complete(self, notes: list[AdapterEvent]) -> Completion:
        """The assembled parts at the end of the call (diagnostics found doing it go to ``notes``).

        Raises the agentlab error that says why there is no response (an error event, a stream
        that ended early); any other exception is reported by ``finish`` as a malformed answer.
        """
        raise NotImplementedError

    def interrupted(self, message: str) -> StreamInterruptedError:
        """The value-free error for this call (``message`` names wire types and fields, never values)."""
        return StreamInterruptedError(message, provider=self.provider, request_id=self.request_id)

    def guarded(self, read: Callable[[_In], _Out], value: _In, what: str, after: str = "") -> _Out:
        """``read(value)`` on a whole answer (a body, the final state), where only agentlab errors leave.

        Any other error (a wrong shape) becomes ``interrupted(f"{what} ({bad}){after}")``, raised
        outside the handler: the original holds the answer's values (a ``JSONDecodeError``'s ``doc``)
        and must not be chained. Once per call; the per-event parsers keep their own inline ``try``.
        """
        try:
            return read(value)
        except AgentlabError:
            raise
        except Exception as e:
            bad = wire_error_text(e)
        raise self.interrupted(f"{what} ({bad}){after}")

    # ------------------------------------------------------------------ events, built and timed here

    def reasoning(self, text: str, block: str) -> ReasoningDeltaEvent:
        """A reasoning delta (display only); the first one of the call is timed.

        Built without pydantic's validation when every value already has its field's type (the hot
        path: one per streamed delta); anything else goes through the model, which raises as before.
        """
        if self.first_reasoning_s is None:
            self.first_reasoning_s = _perf() - self._t0
        if text.__class__ is str and block.__class__ is str:
            # What ``_built`` does, written out, from the call's own copies of the fields (a dict copy
            # and two stores cost half what a six-key literal does; the order stays the fields').
            fields = self._reasoning_proto.copy()
            fields["text"] = text
            fields["block"] = block
            ev = _new(ReasoningDeltaEvent)
            _put_dict(ev, fields)
            _put_fields_set(ev, self._reasoning_given.copy())
            _put_extra(ev, None)
            _put_private(ev, None)
            return ev
        return ReasoningDeltaEvent(text=text, block=block, run_id=self._rid, step=self._step)

    def reasoning_omitted(self, block: str) -> ReasoningDeltaEvent:
        """A reasoning block the provider returned without its text (``ReasoningDeltaEvent.omitted``)."""
        if self.first_reasoning_s is None:
            self.first_reasoning_s = _perf() - self._t0
        return ReasoningDeltaEvent(text="", block=block, omitted=True, run_id=self._rid, step=self._step)

    def text(self, text: str) -> TextDeltaEvent:
        """An answer-text delta; the first one of the call is timed (built as :meth:`reasoning`)."""
        if self.first_text_s is None:
            self.first_text_s = _perf() - self._t0
        if text.__class__ is str:
            fields = self._text_proto.copy()  # as ``reasoning``: ``_built`` written out
            fields["text"] = text
            ev = _new(TextDeltaEvent)
            _put_dict(ev, fields)
            _put_fields_set(ev, self._text_given.copy())
            _put_extra(ev, None)
            _put_private(ev, None)
            return ev
        return TextDeltaEvent(text=text, run_id=self._rid, step=self._step)

    def tool_delta(self, call_id: str, name: str, arguments: str) -> ToolCallDeltaEvent:
        """Partial tool-call arguments (progress display only; built as :meth:`reasoning`).

        A long call streams its arguments in many pieces (Chat Completions, Responses), each one event.
        """
        if call_id.__class__ is str and name.__class__ is str and arguments.__class__ is str:
            fields = {
                "run_id": self._rid, "step": self._step, "kind": "tool_call_delta", "call_id": call_id,
                "name": name, "arguments_delta": arguments,
            }  # fmt: skip
            # The fields set of the validated call below, which names ``run_id`` and ``step`` even when None.
            given = {"call_id", "name", "arguments_delta", "run_id", "step"}
            return _built(ToolCallDeltaEvent, fields, given)
        return ToolCallDeltaEvent(
            call_id=call_id, name=name, arguments_delta=arguments, run_id=self._rid, step=self._step
        )

    def note(self, code: str, message: str, **payload: Any) -> DiagnosticEvent:
        """A diagnostic of this call (a registered code; ``payload`` validated by the registry)."""
        return diagnostic(code, message, origin=self.origin, **payload)

    def unsupported(self, where: Where, wire_type: object) -> DiagnosticEvent | None:
        """The forward-compatibility policy: ignore, and say so once per kind per call."""
        name = safe_name(wire_type)
        key = (where, name)
        if key in self._unsupported:
            return None
        self._unsupported.add(key)
        return self.note(
            "unsupported_content",
            f"{self.provider} {where} of type {name} is not mapped by agentlab; ignored",
            where=where,
            type=name,
            provider=self.provider,
        )

    def tool_call(
        self,
        notes: list[AdapterEvent],
        *,
        call_id: str,
        name: str,
        arguments: str,
        turn_id: str,
        index: int,
        item_id: str | None,
    ) -> ToolCallItem:
        """A completed tool call, kept as received.

        Arguments that are not a JSON object get one ``invalid_tool_arguments`` diagnostic, added to
        ``notes`` (the completion's; the run answers the call with an error result).
        """
        try:
            ok = isinstance(_loads(arguments), dict)
        except ValueError:
            ok = False
        if not ok:
            note = self.note(
                "invalid_tool_arguments",
                f"tool call {safe_name(name)} arguments are not a JSON object; the tool is not run "
                "and the model gets an error result",
                call_id=call_id,
                name=name,
            )
            notes.append(note)
        return ToolCallItem(
            call_id=call_id, name=name, arguments=arguments, turn_id=turn_id, index=index,
            provider_item_id=item_id,
        )  # fmt: skip

    # ------------------------------------------------------------------ end

    def feed_last(self, data: bytes | str) -> AdapterEvent | None:
        """The stream's last ``data``, which had no blank line after it.

        A complete event is fed; a cut one means the stream ended mid-event (raised without chaining the
        decode error, whose ``doc`` is the partial event).
        """
        try:
            _loads(data)
            cut = False
        except ValueError:
            cut = True
        if cut:
            raise self.interrupted(
                f"the {self.provider} stream was cut mid-event, before {self.final_event}; nothing of "
                "this call was kept"
            )
        return self.feed(data)

    def finish(self) -> list[AdapterEvent]:
        """The call's last events: diagnostics found while completing, then the ``ResponseCompletedEvent``.

        Only agentlab errors leave: a final answer of the wrong shape (usage, status, blocks) is a
        value-free ``StreamInterruptedError``, like a malformed event.
        """
        notes: list[AdapterEvent] = []
        done = self.guarded(
            self.complete,
            notes,
            f"malformed final {self.provider} response",
            "; nothing of this call was kept",
        )
        response = ModelResponse(
            provider=self.provider,
            api=self.api,
            model=self.model,
            response_id=done.response_id,
            request_id=self.request_id,
            items=done.items,
            reasoning=done.reasoning,
            stop_reason=done.stop_reason,
            stop_detail=done.stop_detail,
            usage=done.usage,
            reasoning_items_dropped=self.reasoning_dropped,
            provider_cost_usd=done.provider_cost_usd,
        )
        notes.append(
            ResponseCompletedEvent(
                response=response,
                latency_s=_perf() - self._t0,
                first_reasoning_s=self.first_reasoning_s,
                first_text_s=self.first_text_s,
                run_id=self._rid,
                step=self._step,
            )
        )
        return notes


# ---------------------------------------------------------------------- the driver


class Framing(Protocol):
    """Cuts a streamed body into the payloads ``Assembler.feed`` takes (``SSEDecoder``'s methods).

    A framing is said as data on the call (:attr:`WireCall.framing`), so a new one needs no branch here.
    """

    def chunk_bytes(self, raw: bytes) -> list[bytes]:
        """The payload of each event ``raw`` completes."""
        ...

    def event_bytes(self, raw: bytes) -> bytes | None:
        """The payload when ``raw`` is exactly one whole event and nothing is pending, else ``None``.

        The driver asks this first (no list per chunk, as servers flush one event per chunk) and
        gives :meth:`chunk_bytes` what it declines; a framing without such a case returns ``None``.
        """
        ...

    def chunk(self, text: str) -> Sequence[bytes | str]:
        """The same, for a body delivered as text."""
        ...

    def end_bytes(self) -> bytes | None:
        """What is left when the body ends (``None``: nothing)."""
        ...

    def end(self) -> str | None:
        """The same, for a body delivered as text."""
        ...


@dataclass(frozen=True, slots=True)
class WireCall:
    """An opened HTTP answer, as :func:`assemble` reads it (the adapter's SDK call made it).

    ``chunks``: the body of a streamed answer as it arrives, ``bytes`` (the adapters: ``aiter_bytes``)
    or decoded text (``None``: a whole body to ``read``). ``errors``:
    what reading may raise (transport errors), turned into agentlab errors by ``translate``.
    """

    request_id: str | None
    chunks: AsyncIterator[bytes] | AsyncIterator[str] | None
    read: Callable[[], Awaitable[bytes]]
    close: Callable[[], Awaitable[Any]]
    errors: tuple[type[BaseException], ...]
    translate: Callable[[BaseException, str | None], AgentlabError]
    framing: Callable[[], Framing] = SSEDecoder
    """How ``chunks`` are cut into events: SSE by default; a framing whose ``end_bytes`` returns what
    is left of a cut event makes that a cut stream (``Assembler.feed_last``)."""


class _Built(Protocol):
    @property
    def diagnostics(self) -> Sequence[DiagnosticEvent]: ...

    @property
    def reasoning_dropped(self) -> int: ...

    @property
    def body(self) -> Any: ...


B = TypeVar("B", bound=_Built)
A = TypeVar("A", bound=Assembler)


def assembler_for(
    cls: type[A], *, model: str, base_url: str | None
) -> Callable[[_Built, ModelRequest, WireCall, float], A]:
    """The ``new_assembler`` :func:`assemble` takes, for an ``Assembler`` subclass built from the call.

    Every adapter makes its call's assembler the same way (the request's origin, the answer's request
    id, when the request was sent, how many reasoning items building dropped), so it is written once.
    """

    def make(built: _Built, request: ModelRequest, call: WireCall, started: float) -> A:
        return cls(
            model=model,
            base_url=base_url,
            request_id=call.request_id,
            origin=request.origin,
            started=started,
            reasoning_dropped=built.reasoning_dropped,
        )

    return make


def _guarded(request: ModelRequest, built: B, layout: ContinuityLayout | None) -> B:
    """The built request, once the continuity guard found the last response's items in its body."""
    if layout is not None and request.continuity_expected:
        check_body(request.continuity_expected, request.continuation, built.body, layout)
    return built


async def _whole_body(call: WireCall) -> bytes:
    """A non-streamed answer's body; a transport error translated, raised outside its handler."""
    failure: AgentlabError | None = None
    body = b""
    try:
        body = await call.read()
    except call.errors as e:
        failure = call.translate(e, call.request_id)
    if failure is not None:
        raise failure
    return body


def _last_event(frame: Framing, asm: Assembler) -> AdapterEvent | None:
    """A last event without its blank line, once the body ended: complete, or cut mid-event."""
    last: bytes | str | None = frame.end_bytes()
    if last is None:
        last = frame.end()
    return None if last is None else asm.feed_last(last)


async def assemble(
    request: ModelRequest,
    build: Callable[[ModelRequest], B],
    open_call: Callable[[B, ModelRequest], Awaitable[WireCall]],
    new_assembler: Callable[[B, ModelRequest, WireCall, float], Assembler],
    layout: ContinuityLayout | None = None,
) -> AsyncGenerator[AdapterEvent, None]:
    """One model call, streamed: the request's diagnostics, the display events, then the completed one.

    ``open_call`` sends the request (raising the adapter's translated error on failure);
    ``new_assembler`` makes the call's assembler once the answer's headers are in. Errors raised
    while reading are translated inside ``except`` and raised outside it, so the agentlab error has
    no ``__context__`` leading to the SDK exception (whose request holds the auth header and body).
    ``layout``: where the adapter's body carries opaque items; the continuity guard then checks the
    built body against the request's ``continuity_expected`` before anything is sent.
    """
    built = _guarded(request, build(request), layout)
    origin = request.origin
    for diag in built.diagnostics:
        yield stamped(diag, origin)
    started = _perf()
    call = await open_call(built, request)
    failure: AgentlabError | None = None
    try:
        asm = new_assembler(built, request, call, started)
        if call.chunks is None:
            for ev in asm.feed_body(await _whole_body(call)):
                yield ev
        else:
            frame = call.framing()
            one, in_bytes, in_text = frame.event_bytes, frame.chunk_bytes, frame.chunk
            feed = asm.feed
            try:
                async for piece in call.chunks:
                    if piece.__class__ is bytes:
                        data: bytes | str | None = one(piece)
                        if data is not None:  # one whole event (how servers flush): no list
                            out = feed(data)
                            if out is not None:
                                yield out
                            continue
                    for data in in_bytes(piece) if piece.__class__ is bytes else in_text(piece):  # type: ignore[arg-type]
                        out = feed(data)
                        if out is not None:
                            yield out
            except call.errors as e:
                failure = call.translate(e, call.request_id)
            if failure is not None:
                raise failure
            out = _last_event(frame, asm)
            if out is not None:
                yield out
        for ev in asm.finish():
            yield ev
    finally:
        await call.close()
