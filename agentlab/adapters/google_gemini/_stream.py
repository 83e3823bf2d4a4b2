"""Raw Gemini ``GenerateContentResponse`` chunks (plain dicts) -> agentlab events and one ``ModelResponse``.

Each SSE event of ``streamGenerateContent?alt=sse`` is a complete response chunk
(``candidates[0].content.parts[]``, ``usageMetadata`` on every chunk, ``finishReason`` on the last);
a non-streaming ``generateContent`` body is one chunk of the same shape. ``GeminiAssembler`` folds
the chunks' parts into the parts of one model turn, each with its position (``index``):

* ``{text, thought: true}``: a thought summary, display only (``ReasoningDeltaEvent`` with the part's
  index as its block); consecutive thought pieces are one part. Never sent back.
* ``{text}``: answer text; consecutive pieces are one part (a streamed answer and the same answer
  non-streamed give the same part). An otherwise empty text part carrying only a
  ``thoughtSignature`` (how a stream ends) completes the text part before it, or stands as its own
  empty part when none is open.
* ``{functionCall: {name, args, id?}}``: one tool call per part. The API's ``id`` is kept as the call
  id (and ``provider_item_id``, so it goes back); without one a stable id is made from the turn and
  the position (``gc_<turn>_<index>``, the turn being the ``responseId`` or, without one, a digest of
  the turn's first signature), which is never sent.
* ``thoughtSignature`` on any part: a ``ProviderReasoningItem`` (``block_type``
  ``thought_signature:<kind>``, turn id + part index) holding the JSON string exactly as received
  (standard base64 as the API sends it; nothing re-encodes it). The request builder puts it back on
  the part at that position, and only there. A part gets at most one signature; a second one
  starts a new part.

Wire casing: responses are camelCase; snake_case spellings (``function_call``, ``thought_signature``)
are read too, as recorded clients send them.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from agentlab.adapters.google_gemini._errors import PROVIDER, in_stream_error
from agentlab.adapters.google_gemini._usage import usage_from_gemini
from agentlab.assembly import wire_json
from agentlab.assembly.assembler import Assembler, Completion
from agentlab.errors import AgentlabError
from agentlab.neutral._shapes import shaped_repr
from agentlab.neutral.error_text import WireFieldError, type_name, wire_error_text
from agentlab.neutral.events import AdapterEvent, StopReason
from agentlab.neutral.items import AssistantTextItem, ProviderReasoningItem, ToolCallItem

__all__ = ["API", "SIGNATURE", "GeminiAssembler", "signature_kind"]

API = "generate_content"
SIGNATURE = "thought_signature"
_loads = wire_json.loads
_fast = wire_json.FAST

TEXT, THOUGHT, CALL = "text", "thought", "functionCall"
_KNOWN_CHUNK_KEYS = frozenset({"candidates", "usageMetadata", "promptFeedback", "modelVersion", "responseId"})

_STOP: dict[str, StopReason] = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "LANGUAGE": "refusal",
    "MALFORMED_FUNCTION_CALL": "incomplete",
    "UNEXPECTED_TOOL_CALL": "incomplete",
    "OTHER": "incomplete",
}


def signature_kind(block_type: str) -> str | None:
    """The part kind a signature item names (``None``: any, e.g. a scripted item)."""
    head, _, kind = block_type.partition(":")
    return kind or None if head == SIGNATURE else None


def _get(d: dict[str, Any], camel: str, snake: str) -> Any:
    value = d.get(camel)
    return d.get(snake) if value is None else value


def _snake(name: str) -> str:
    """A camelCase wire field as its proto (snake_case) name, the form diagnostics show names in."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _arguments(args: Any) -> str:
    """A functionCall's ``args`` as arguments text: an object as compact JSON (the documented form).

    Anything else is kept as received (a string is its own text, another value its JSON), so the
    shared policy (``Assembler.tool_call``: not an object -> ``invalid_tool_arguments``) applies.
    """
    if args is None:
        return "{}"
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


class _Part:
    """One part of the model turn being assembled (text pieces, or one call)."""

    __slots__ = ("block", "call", "index", "kind", "pieces", "signature")
    _shaped_repr = True

    def __init__(self, index: int, kind: str, call: dict[str, Any] | None = None) -> None:
        self.index = index
        self.block = str(index)  # a thought part's display block, made once per part, not per piece
        self.kind = kind
        self.pieces: list[str] = []
        self.call = call
        self.signature: str | None = None

    def __repr__(self) -> str:
        return shaped_repr(
            self, ("index", "kind"), index=self.index, kind=self.kind, pieces=self.pieces,
            signed=self.signature is not None,
        )  # fmt: skip


class GeminiAssembler(Assembler):
    """Accumulates one Gemini response from its chunks (streaming) or its body (non-streaming).

    Its repr shows ids, counts and state, never content (it is a local of the adapter's frames).
    """

    provider = PROVIDER
    api = API
    final_event = "a chunk with finishReason"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.response_id: str | None = None
        self.model_version: str | None = None
        self.usage: dict[str, Any] = {}
        self.parts: list[_Part] = []
        self.finish_reason: str | None = None
        self.block_reason: str | None = None

    def __repr__(self) -> str:
        return shaped_repr(
            self, ("model", "response_id", "request_id", "finish_reason"), model=self.model,
            response_id=self.response_id, request_id=self.request_id,
            finish_reason=self.finish_reason, parts=self.parts,
        )  # fmt: skip

    # ------------------------------------------------------------------ streaming

    def feed(self, data: bytes | str) -> AdapterEvent | None:
        """One SSE ``data`` (a response chunk) -> at most one event (the chunk's first display event).

        A chunk holds the parts generated since the last one; the API sends one part per chunk when
        streaming, so a chunk with several parts yields the first event here and the rest are still
        assembled (their text is in the response; :meth:`feed_body` yields every event).

        The streamed piece (one part: text, or text + ``thought``, nearly every chunk) is mapped
        here, inline: one Python call (:meth:`_parts`) between the decoded chunk and its event,
        instead of one per level of the general path (:meth:`_part`), which every other part takes.
        """
        chunk: Any = None
        try:
            try:  # the fast decoder here, not through ``wire_json.loads`` (a level per chunk)
                chunk = _fast(data)
            except ValueError:  # not JSON, or a form only the stdlib reads: it decides
                chunk = _loads(data)
            parts = self._parts(chunk)
            part: Any = parts[0] if parts.__class__ is list and len(parts) == 1 else None
            text = part.get("text") if part.__class__ is dict else None
            if text.__class__ is str and text and (len(part) == 1 or (len(part) == 2 and "thought" in part)):
                kind = THOUGHT if len(part) == 2 and part["thought"] is True else TEXT
                last = self.parts[-1] if self.parts else None
                if last is None or last.kind != kind or last.signature is not None or last.call is not None:
                    last = self._open(kind)
                last.pieces.append(text)
                return self.reasoning(text, last.block) if kind is THOUGHT else self.text(text)
            events = self._events(chunk, parts)
            return events[0] if events else None
        except AgentlabError:
            raise
        except Exception as exc:  # the chunk did not have the documented shape
            bad = wire_error_text(exc)
        raise self._malformed(chunk, bad)

    def _malformed(self, chunk: Any, bad: str) -> AgentlabError:
        where = "not JSON" if chunk is None else f"<{type_name(chunk)}>"
        return self.interrupted(
            f"malformed Gemini response chunk ({where}: {bad}); nothing of this call was kept"
        )

    def _chunk_events(self, data: str | bytes) -> list[AdapterEvent]:
        chunk: Any = None
        try:
            chunk = _loads(data)
            return self._events(chunk, self._parts(chunk))
        except AgentlabError:
            raise
        except Exception as exc:  # the chunk did not have the documented shape
            bad = wire_error_text(exc)
        raise self._malformed(chunk, bad)

    def _parts(self, chunk: Any) -> Any:
        """What a chunk says of the whole response (ids, usage, finish), then its first candidate's parts.

        ``None``: the chunk has no candidate (:meth:`_events` decides what it is).
        """
        if chunk.__class__ is not dict:
            raise WireFieldError("chunk", "object", chunk)
        if "error" in chunk:
            raise in_stream_error(chunk, request_id=self.request_id)
        self.response_id = chunk.get("responseId") or self.response_id
        self.model_version = chunk.get("modelVersion") or self.model_version
        usage = chunk.get("usageMetadata")
        if usage.__class__ is dict:
            self.usage = usage  # cumulative: the last chunk's figures stand
        if "promptFeedback" in chunk:
            feedback = chunk["promptFeedback"]
            if isinstance(feedback, dict) and feedback.get("blockReason"):
                self.block_reason = str(feedback["blockReason"])
        candidates = chunk.get("candidates")
        if not candidates:
            return None
        cand = candidates[0]
        if cand.__class__ is not dict:
            raise WireFieldError("candidates[0]", "object", cand)
        if cand.get("finishReason"):
            self.finish_reason = str(cand["finishReason"])
        content = cand.get("content") or {}
        return content.get("parts") or ()

    def _events(self, chunk: dict[str, Any], parts: Any) -> list[AdapterEvent]:
        """The events of a chunk's parts (read by :meth:`_parts`), or the note for an unknown chunk."""
        out: list[AdapterEvent] = []
        if parts is None:
            if not chunk.keys() & _KNOWN_CHUNK_KEYS:  # a kind of chunk agentlab does not know yet
                note = self.unsupported("event", _snake(next(iter(chunk), "empty")))
                if note is not None:
                    out.append(note)
            return out
        for part in parts:
            ev = self._part(part)
            if ev is not None:
                out.append(ev)
        return out

    def _open(self, kind: str, call: dict[str, Any] | None = None) -> _Part:
        part = _Part(len(self.parts), kind, call)
        self.parts.append(part)
        return part

    def _current(self, kind: str) -> _Part | None:
        """The last part, when a piece of ``kind`` continues it (same kind, not closed by a signature)."""
        last = self.parts[-1] if self.parts else None
        if last is not None and last.kind == kind and last.signature is None and last.call is None:
            return last
        return None

    def _part(self, part: Any) -> AdapterEvent | None:
        if part.__class__ is not dict:
            raise WireFieldError("parts[]", "object", part)
        sig = _get(part, "thoughtSignature", "thought_signature")
        if sig is not None and sig.__class__ is not str:
            raise WireFieldError("parts[].thoughtSignature", "string", sig)
        call = _get(part, "functionCall", "function_call")
        if call is not None:
            if call.__class__ is not dict or not isinstance(call.get("name"), str):
                raise WireFieldError("parts[].functionCall", "an object with a name", call)
            p = self._open(CALL, call)
            p.signature = sig
            args = _arguments(call.get("args"))
            p.pieces.append(args)
            return self.tool_delta(self._call_id(p), call["name"], args)
        if "text" in part:
            return self._text(part, sig)
        if sig is not None:  # a signature on a part of no kind agentlab maps: kept on an empty text part
            self._open(TEXT).signature = sig
        kind = next((k for k in part if k not in ("thoughtSignature", "thought_signature")), "empty")
        return self.unsupported("block", _snake(kind))

    def _text(self, part: dict[str, Any], sig: str | None) -> AdapterEvent | None:
        text = part["text"]
        if text.__class__ is not str:
            raise WireFieldError("parts[].text", "string", text)
        kind = THOUGHT if part.get("thought") is True else TEXT
        p = self._current(kind)
        if p is None:
            if not text and sig is None:
                return None  # an empty piece closes nothing and holds nothing
            p = self._open(kind)
        if sig is not None:
            p.signature = sig
        if not text:
            return None
        p.pieces.append(text)
        if kind == THOUGHT:
            return self.reasoning(text, p.block)
        return self.text(text)

    # ------------------------------------------------------------------ non-streaming

    def feed_body(self, body: bytes) -> list[AdapterEvent]:
        """A whole ``generateContent`` body -> its display events (the same mapping as a chunk)."""
        return self._chunk_events(body)

    # ------------------------------------------------------------------ result

    def _turn_id(self) -> str:
        """The API's ``responseId``; without one, a digest of the turn's parts *and signatures*.

        Signatures are keyed on (turn, part): two look-alike turns (one call, same arguments, a loop
        polling a tool) must not share a turn id, and their signatures (unique per response) differ.
        """
        if self.response_id:
            return self.response_id
        parts = repr([(p.kind, p.pieces, p.call, p.signature) for p in self.parts])
        return "gemini-" + hashlib.sha256(parts.encode()).hexdigest()[:12]

    def _call_id(self, part: _Part) -> str:
        call = part.call or {}
        api_id = call.get("id")
        if isinstance(api_id, str) and api_id:
            return api_id
        return f"gc_{self.response_id or self._signed_key()}_{part.index}"

    def _signed_key(self) -> str:
        """Without a ``responseId``: a digest of the turn's first signature so far (the first call's).

        Known when the call arrives (it is on that call's part, or an earlier one), unique per
        response, and the same for the same bytes: invented ids stay stable and differ between turns.
        """
        sig = next((p.signature for p in self.parts if p.signature is not None), None)
        return "turn" if sig is None else hashlib.sha256(sig.encode()).hexdigest()[:12]

    def complete(self, notes: list[AdapterEvent]) -> Completion:
        """The parts of the assembled turn (tool calls with arguments that are not an object noted)."""
        if self.finish_reason is None and self.block_reason is None:
            raise self.interrupted(
                "the Gemini stream ended before a chunk with finishReason; nothing of this call was kept"
            )
        turn_id = self._turn_id()
        items: list[AssistantTextItem | ToolCallItem] = []
        reasoning: list[ProviderReasoningItem] = []
        for p in self.parts:
            if p.kind == TEXT and p.pieces:
                items.append(AssistantTextItem(text="".join(p.pieces), turn_id=turn_id, index=p.index))
            elif p.kind == CALL:
                items.append(self._tool_item(p, turn_id, notes))
            if p.signature is not None:
                reasoning.append(self._signature(p, turn_id))
        calls = any(isinstance(i, ToolCallItem) for i in items)
        reason = self.finish_reason or ""
        stop: StopReason = "tool_use" if calls and reason == "STOP" else _STOP.get(reason, "incomplete")
        if self.block_reason is not None and self.finish_reason is None:
            stop = "content_filter"
        return Completion(
            items=tuple(items),
            reasoning=tuple(reasoning),
            stop_reason=stop,
            stop_detail=self.block_reason or self.finish_reason,
            usage=usage_from_gemini(self.usage),
            response_id=self.response_id,
        )

    def _signature(self, p: _Part, turn_id: str) -> ProviderReasoningItem:
        return ProviderReasoningItem(
            json.dumps(p.signature).encode("ascii"),
            provider=self.provider,
            api=self.api,
            model=self.model,
            block_type=f"{SIGNATURE}:{p.kind}",
            turn_id=turn_id,
            index=p.index,
            base_url=self.base_url,
        )

    def _tool_item(self, p: _Part, turn_id: str, notes: list[AdapterEvent]) -> ToolCallItem:
        call = p.call or {}
        api_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        return self.tool_call(
            notes,
            call_id=self._call_id(p),
            name=call["name"],
            arguments="".join(p.pieces) or "{}",
            turn_id=turn_id,
            index=p.index,
            item_id=api_id,
        )
