"""Raw Messages API events (plain dicts from ``json.loads``) -> agentlab events and one ``ModelResponse``.

Why dicts and not the SDK's typed events: the SDK validates every event into a pydantic union
(~40 µs/event, its ``messages.stream()`` helper ~100 µs); a thinking-heavy stream has thousands of
deltas. Here each event costs one ``json.loads`` plus a dict dispatch. The SDK still owns the request
(auth, headers, retries, HTTP errors); only the body is read here.

``MessageAssembler`` is the pure accumulation step (no I/O), on the shared contract
(:class:`agentlab.assembly.assembler.Assembler`: events built and timed by the base, diagnostics
returned, one finish, one policy for unknown events and malformed tool input): ``feed(data)``
returns at most one event and keeps per-block state keyed by the block ``index``, so
``[thinking, text, thinking]`` stays three blocks in that order. Opaque continuity comes only from
the blocks as received:

* ``thinking``: the ``content_block_start`` block with its ``thinking`` text set to the concatenated
  ``thinking_delta``s and its ``signature`` to the concatenated ``signature_delta``s (the signature is
  never display text). A block shown as omitted (empty thinking, signature only) still becomes a
  continuation item and yields no display text.
* ``redacted_thinking``: complete in ``content_block_start`` (``data``), kept as is.
* Non-streaming: each content block's JSON from the raw body (``add_block``), not an SDK model dump.

The continuation is never rebuilt from display events.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentlab.adapters.anthropic_messages._errors import PROVIDER, in_stream_error
from agentlab.adapters.anthropic_messages._usage import usage_from_anthropic
from agentlab.assembly import wire_json
from agentlab.assembly.assembler import Assembler, Completion
from agentlab.errors import AgentlabError, StreamInterruptedError
from agentlab.neutral._shapes import shaped_repr
from agentlab.neutral.error_text import WireFieldError, safe_name, type_name, wire_error_text
from agentlab.neutral.events import AdapterEvent, StopReason
from agentlab.neutral.items import AssistantTextItem, ProviderReasoningItem, ToolCallItem

__all__ = ["MessageAssembler"]

_loads = wire_json.loads
_fast: Callable[..., Any] = wire_json.FAST  # text too (the same values); what it refuses, ``_loads`` reads

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "pause_turn": "pause_turn",
    "stop_sequence": "stop_sequence",
    "model_context_window_exceeded": "max_tokens",
}

_THINKING = "thinking"
_REDACTED = "redacted_thinking"
_COMPACTION = "compaction"
"""Server-side compaction: provider state replacing the context before it, complete in its start
event; kept opaque (never display text) and sent back verbatim within the loop, like thinking."""
_TEXT = "text"
_TOOL = "tool_use"
_PIECES: dict[str, tuple[str, str]] = {
    "thinking_delta": ("thinking", _THINKING),
    "text_delta": ("text", _TEXT),
    "input_json_delta": ("partial_json", _TOOL),
}
"""The text-piece deltas: the field holding the piece, and the kind of block it must belong to."""


def _omitted(block: _Block) -> bool:
    """A thinking block with a signature and no text: display omitted (there was reasoning)."""
    return bool(
        block.kind == _THINKING and not block.parts and (block.sig_parts or block.start.get("signature"))
    )


def _tool_input_text(value: Any) -> str:
    """A ``tool_use`` block's ``input`` object as the arguments text of its ``ToolCallItem``.

    One form for both ways a message arrives: the API's ``input`` is an object, and the text is
    agentlab's rendering of it (compact JSON), so a streamed run (``partial_json`` pieces, spaced or
    not as the server chose) and a non-streamed one (the object itself) record the same arguments.
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _canonical_arguments(text: str) -> str:
    """Streamed tool input in the form of :func:`_tool_input_text`.

    Text that is not an object stays as received (it is kept, and answered with an error result).
    """
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return _tool_input_text(value) if isinstance(value, dict) else text


class _Block:
    """One content block being assembled. ``parts`` holds text/thinking/partial-JSON pieces."""

    __slots__ = ("index", "key", "kind", "parts", "sig_parts", "start", "stopped")
    _shaped_repr = True

    def __init__(self, index: int, kind: str, start: dict[str, Any]) -> None:
        self.index = index
        self.key = str(index)
        self.kind = kind
        self.start = start
        self.parts: list[str] = []
        self.sig_parts: list[str] = []
        self.stopped = False

    def __repr__(self) -> str:
        # A local of every frame that assembles a stream: thinking text and signatures stay out.
        return shaped_repr(
            self, ("index", "kind", "stopped"), index=self.index, kind=self.kind, stopped=self.stopped,
            parts=self.parts, sig_parts=self.sig_parts,
        )  # fmt: skip


def _dumps(block: dict[str, Any]) -> bytes:
    return json.dumps(block, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class MessageAssembler(Assembler):
    """Accumulates one Messages API response from raw events (streaming) or a body (non-streaming).

    Its repr shows ids, counts and state, never block content (it is a local of the adapter's frames).
    """

    provider = PROVIDER
    api = "messages"
    final_event = "message_stop"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.message_id: str | None = None
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, _Block] = {}
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None
        self.started = False
        self.completed = False
        self.error: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return shaped_repr(
            self, ("model", "message_id", "request_id", "stop_reason", "completed"), model=self.model,
            message_id=self.message_id, request_id=self.request_id, stop_reason=self.stop_reason,
            completed=self.completed, blocks=list(self.blocks.values()),
        )  # fmt: skip

    # ------------------------------------------------------------------ streaming

    def feed(self, data: bytes | str) -> AdapterEvent | None:
        """Apply one raw stream event (an SSE ``data`` payload); return the event it produces, if any.

        Raises only agentlab errors: a malformed event (not JSON, wrong types, missing fields, a delta
        for a block never started or already stopped) is a ``StreamInterruptedError`` whose text
        names the event type, field and block index, never a value (see
        :mod:`agentlab.neutral.error_text`).
        """
        ev: Any = None
        try:
            try:  # msgspec here, not through ``wire_json.loads`` (a level per event); it decides the rest
                ev = _fast(data)
            except (ValueError, TypeError):  # text, not JSON, or a form only the stdlib reads
                ev = _loads(data)
            if ev.get("type") == "content_block_delta":  # nearly every event: straight to its block
                return self._delta(ev["index"], ev["delta"])
            return self._apply(ev)
        except AgentlabError:
            raise
        except Exception as exc:  # any reading error: the event did not have the documented shape
            bad = wire_error_text(exc)
        # Raised here, outside the handler: the original (which holds the value) is not chained.
        raise self._malformed(ev, bad)

    def _malformed(self, ev: object, bad: str) -> StreamInterruptedError:
        if isinstance(ev, dict):
            where = safe_name(ev.get("type"))
        else:
            where = "not JSON" if ev is None else f"<{type_name(ev)}>"
        index = ev.get("index") if isinstance(ev, dict) else None
        at = f" at block {index}" if index.__class__ is int else ""
        return self.interrupted(
            f"malformed stream event ({where}{at}: {bad}); nothing from this call was kept"
        )

    def _apply(self, ev: dict[str, Any]) -> AdapterEvent | None:
        """Any event but a ``content_block_delta`` (:meth:`feed` sends those to :meth:`_delta`)."""
        t = ev.get("type")
        if t == "content_block_start":
            return self._start_block(ev["index"], ev["content_block"])
        if t == "content_block_stop":
            block = self.blocks.get(ev["index"])
            if block is not None:
                block.stopped = True
                if _omitted(block):
                    return self.reasoning_omitted(block.key)
            return None
        if t == "message_start":
            msg = ev.get("message") or {}
            self.started = True
            self.message_id = msg.get("id")
            self.usage = dict(msg.get("usage") or {})
            return None
        if t == "message_delta":
            delta = ev.get("delta") or {}
            if "stop_reason" in delta:
                self.stop_reason = delta["stop_reason"]
                self.stop_sequence = delta.get("stop_sequence")
            # message_delta usage is cumulative; later non-null figures replace earlier ones.
            for k, v in (ev.get("usage") or {}).items():
                if v is not None:
                    self.usage[k] = v
            return None
        if t == "message_stop":
            self.completed = True
            return None
        if t == "ping":
            return None
        if t == "error":
            self.error = ev
            raise in_stream_error(ev, request_id=self.request_id, provider=self.provider)
        # Unknown future event types are tolerated on purpose (the API adds them over time).
        return self.unsupported("event", t)

    def _delta(self, index: Any, d: dict[str, Any]) -> AdapterEvent | None:
        """One ``content_block_delta``, which must belong to a started, open block of its kind.

        Anything else is a malformed stream (a thinking delta in a text block would otherwise turn reasoning
        into durable assistant text). Unknown delta types stay tolerated. A text piece (thinking, text,
        tool input: nearly every event) is applied here, without a level of its own.
        """
        block = self.blocks.get(index) if index.__class__ is int else None
        if block is None:
            raise WireFieldError("index", "the index of a started block", index)
        if d.__class__ is not dict:
            raise WireFieldError("delta", "object", d)
        dt = d.get("type")
        piece = _PIECES.get(dt) if dt.__class__ is str else None
        if piece is None:
            return self._other_delta(block, d, dt)
        field, kind = piece
        text = d[field]
        if text.__class__ is not str:
            raise WireFieldError(f"delta.{field}", "string", text)
        if block.kind != kind or block.stopped:
            raise WireFieldError(f"delta.{field}", f"a delta of an open {kind} block", text)
        if not text:
            return None
        block.parts.append(text)
        if kind == _THINKING:
            return self.reasoning(text, block.key)
        if kind == _TEXT:
            return self.text(text)
        return self.tool_delta(block.start.get("id", ""), block.start.get("name", ""), text)

    def _other_delta(self, block: _Block, d: dict[str, Any], dt: Any) -> AdapterEvent | None:
        """A delta that is not a text piece: a thinking block's signature, or a type agentlab does not map."""
        if dt == "signature_delta":
            sig = d["signature"]
            if sig.__class__ is not str or block.kind != _THINKING or block.stopped:
                raise WireFieldError("delta.signature", "a string in an open thinking block", sig)
            block.sig_parts.append(sig)
            return None
        return self.unsupported("delta", dt)

    def _start_block(self, index: int, cb: dict[str, Any]) -> AdapterEvent | None:
        if index.__class__ is not int or index in self.blocks:
            raise WireFieldError("index", "the int index of a new block", index)
        if cb.__class__ is not dict:
            raise WireFieldError("content_block", "object", cb)
        kind = cb.get("type", "")
        block = _Block(index, kind, cb)
        self.blocks[index] = block
        if kind == _THINKING:
            first = cb.get("thinking") or ""
            if first:
                # Keep any text the start event carried; deltas append to it.
                block.parts.append(first)
                return self.reasoning(first, block.key)
            return None
        if kind == _TEXT:
            first = cb.get("text") or ""
            if first:
                block.parts.append(first)
                return self.text(first)
            return None
        if kind in (_TOOL, _REDACTED, _COMPACTION):
            return None
        return self.unsupported("block", kind)

    # ------------------------------------------------------------------ non-streaming

    def feed_body(self, body: bytes) -> list[AdapterEvent]:
        """Take a raw non-streaming response body (JSON text); return the display events it implies.

        A body that is not JSON is a ``StreamInterruptedError`` naming the position only (the decode
        error, which holds the whole body, is not chained); an error envelope is typed as in a stream.
        """
        try:
            msg = json.loads(body)
            bad = None
        except ValueError as exc:
            bad = wire_error_text(exc)
        if bad is not None:
            raise self.interrupted(f"the response body is not JSON (cut short?): {bad}")
        if not isinstance(msg, dict) or msg.get("type") == "error":
            raise in_stream_error(
                msg if isinstance(msg, dict) else {}, request_id=self.request_id, provider=self.provider
            )
        return self.add_message(msg)

    def add_message(self, msg: dict[str, Any]) -> list[AdapterEvent]:
        """Take a complete (non-streaming) message body; return the display events it implies.

        Raises ``StreamInterruptedError`` (value-free, as ``feed``) for a body of the wrong shape.
        """
        return self.guarded(
            self._add_message, msg, "malformed response body", "; nothing from this call was kept"
        )

    def _add_message(self, msg: dict[str, Any]) -> list[AdapterEvent]:
        self.started = True
        self.completed = True
        self.message_id = msg.get("id")
        self.usage = dict(msg.get("usage") or {})
        self.stop_reason = msg.get("stop_reason")
        self.stop_sequence = msg.get("stop_sequence")
        out: list[AdapterEvent] = []
        for index, cb in enumerate(msg.get("content") or []):
            ev = self._start_block(index, cb)
            if ev is not None:
                out.append(ev)
            block = self.blocks[index]
            block.stopped = True
            if block.kind == _THINKING:
                # The block as received is already complete: its own thinking/signature stand.
                block.parts = []
                if not cb.get("thinking") and cb.get("signature"):
                    out.append(self.reasoning_omitted(block.key))
            elif block.kind == _TEXT:
                block.parts = []
            elif block.kind == _TOOL:
                args = _tool_input_text(cb.get("input", {}))
                block.parts = [args]
                out.append(self.tool_delta(cb.get("id", ""), cb.get("name", ""), args))
        return out

    # ------------------------------------------------------------------ result

    def _reasoning_payload(self, block: _Block) -> bytes:
        if block.kind == _THINKING and (block.parts or block.sig_parts):
            full = dict(block.start)
            if block.parts:
                full["thinking"] = "".join(block.parts)
            if block.sig_parts:
                full["signature"] = "".join(block.sig_parts)
            return _dumps(full)
        return _dumps(block.start)

    def complete(self, notes: list[AdapterEvent]) -> Completion:
        """The parts of the assembled message.

        Tool input that is not a JSON object is kept with an ``invalid_tool_arguments`` diagnostic in
        ``notes`` (the policy of every adapter).
        """
        if not self.completed:
            # Not retryable (as in the OpenAI adapter): the server ended the answer early; only a
            # broken connection is worth a new call.
            raise self.interrupted("the stream ended before message_stop; nothing from this call was kept")
        turn_id = self.message_id or ""
        items: list[AssistantTextItem | ToolCallItem] = []
        reasoning: list[ProviderReasoningItem] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            kind = block.kind
            if kind == _TEXT:
                text = "".join(block.parts) if block.parts else (block.start.get("text") or "")
                if text:
                    items.append(AssistantTextItem(text=text, turn_id=turn_id, index=index))
            elif kind == _TOOL:
                items.append(self._tool_item(block, turn_id, notes))
            elif kind in (_THINKING, _REDACTED, _COMPACTION):
                reasoning.append(
                    ProviderReasoningItem(
                        self._reasoning_payload(block),
                        provider=self.provider,
                        api=self.api,
                        model=self.model,
                        block_type=kind,
                        turn_id=turn_id,
                        index=index,
                        base_url=self.base_url,
                    )
                )
        raw_stop = self.stop_reason
        return Completion(
            items=tuple(items),
            reasoning=tuple(reasoning),
            stop_reason=_STOP_REASONS.get(raw_stop or "", "incomplete"),
            stop_detail=self.stop_sequence if raw_stop == "stop_sequence" else raw_stop,
            usage=usage_from_anthropic(self.usage),
            response_id=self.message_id,
        )

    def _tool_item(self, block: _Block, turn_id: str, notes: list[AdapterEvent]) -> ToolCallItem:
        call_id = block.start.get("id") or ""
        text = _canonical_arguments("".join(block.parts))
        return self.tool_call(
            notes,
            call_id=call_id,
            name=block.start.get("name") or "",
            arguments=text if text.strip() else "{}",
            turn_id=turn_id,
            index=block.index,
            item_id=call_id,
        )
