"""Chat Completions chunks (plain dicts) -> agentlab events and one ``ModelResponse``, for every dialect.

A stream is ``chat.completion.chunk`` objects (``data: {...}``, ending ``data: [DONE]``; OpenRouter
interleaves ``: OPENROUTER PROCESSING`` comment lines, which the SSE framing skips), each with
``choices[0].delta``: ``content`` (answer text), ``reasoning_content`` or ``reasoning`` (reasoning
text: display only, and for the ``content`` dialects the continuity state too), ``reasoning_details``
(OpenRouter's items, merged by index), ``tool_calls`` (by ``index``: the first piece has ``id`` and
``function.name``, later ones append ``function.arguments``; several indexes are parallel calls),
and ``finish_reason``. With ``stream_options.include_usage`` the last chunk holds ``usage`` (and
usually no choices). A chunk with a top-level ``error`` is a failure inside a 200 stream. A
non-streaming body is one ``chat.completion`` with ``choices[0].message`` of the same fields.

``feed`` returns at most one event per chunk (reasoning first, then text, then a tool delta); a
chunk carrying several kinds still assembles them all. The opaque items: ``content`` dialects get
one ``ProviderReasoningItem`` per turn (``block_type`` = the field it arrived in, payload = the joined
text as a JSON string), OpenRouter one per merged detail (payload = the detail object, verbatim).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from agentlab.adapters.openai_chat._details import DetailsMerger
from agentlab.adapters.openai_chat._dialect import API, CONTENT_FIELDS, DETAILS, Dialect
from agentlab.adapters.openai_chat._errors import in_stream_error
from agentlab.assembly import wire_json
from agentlab.assembly.assembler import Assembler, Completion
from agentlab.errors import AgentlabError
from agentlab.neutral.error_text import WireFieldError, type_name, wire_error_text
from agentlab.neutral.events import AdapterEvent, StopReason
from agentlab.neutral.items import AssistantTextItem, ProviderReasoningItem, ToolCallItem

__all__ = ["ChatAssembler"]

_loads = wire_json.loads
_fast: Callable[..., Any] = wire_json.FAST  # text too (the same values); what it refuses, ``_loads`` reads


_KNOWN_CHUNK_KEYS = frozenset(
    {"id", "object", "created", "model", "choices", "usage", "system_fingerprint", "service_tier",
     "provider", "error", "timings", "prompt_filter_results", "citations", "kv_transfer_params",
     "prompt_logprobs", "prompt_token_ids", "request_id"}
)  # fmt: skip
"""Top-level chunk fields agentlab knows (OpenRouter ``provider``, llama.cpp ``timings``, vLLM's
extras, Z.AI's ``request_id``); another one is ignored with one ``unsupported_content`` note per
kind per call."""

_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


class _Call:
    __slots__ = ("args", "call_id", "name")
    _shaped_repr = True

    def __init__(self) -> None:
        self.call_id: str | None = None
        self.name: str | None = None
        self.args: list[str] = []

    def __repr__(self) -> str:
        return f"<_Call id={self.call_id!r} name={self.name!r} pieces={len(self.args)}>"


class ChatAssembler(Assembler):
    """One Chat Completions response, from its chunks or its body; repr shows ids and counts only."""

    api = API
    final_event = "a chunk with finish_reason"
    dialect: Dialect

    def __init__(self, *, dialect: Dialect, **kw: Any) -> None:
        self.provider = dialect.name
        super().__init__(**kw)
        self.dialect = dialect
        self.response_id: str | None = None
        self.text_pieces: list[str] = []
        self.reasoning_pieces: list[str] = []
        self.reasoning_field: str | None = None
        self.details = DetailsMerger()
        self.calls: dict[int, _Call] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.done = False

    def __repr__(self) -> str:
        return (
            f"<ChatAssembler {self.provider} model={self.model!r} response_id={self.response_id!r} "
            f"request_id={self.request_id!r} text={len(self.text_pieces)} "
            f"reasoning={len(self.reasoning_pieces)} calls={len(self.calls)} finish={self.finish_reason!r}>"
        )

    # ------------------------------------------------------------------ streaming

    def feed(self, data: bytes | str) -> AdapterEvent | None:
        """One SSE ``data`` (a chunk, or ``[DONE]``) -> at most one event.

        The hot path is this one frame down to the event's builder (issue 34: each Python level is a
        fixed cost per chunk): the fast decoder is called here rather than through
        :func:`agentlab.assembly.wire_json.loads`, which still decides whatever it refuses (text,
        ``[DONE]``, a form only the stdlib reads, a malformed chunk). A chunk with only known
        top-level fields (every chunk after the first of a kind) has no note to give before its
        delta's event, so it goes straight from its choice to its delta (:meth:`_choice`,
        :meth:`_delta`) without the general path's list of notes.
        """
        chunk: Any = None
        try:
            try:
                chunk = _fast(data)
            except (ValueError, TypeError):  # not bytes, not JSON, or a form only the stdlib reads
                if data == b"[DONE]" if data.__class__ is bytes else data == "[DONE]":
                    self.done = True
                    return None
                chunk = _loads(data)
            if chunk.__class__ is dict and _KNOWN_CHUNK_KEYS.issuperset(chunk):
                delta = self._choice(chunk, "delta")
                return None if delta is None else self._delta(delta)
            events = self._apply(chunk, "chunk")
            return events[0] if events else None
        except AgentlabError:
            raise
        except Exception as exc:  # not the documented shape
            bad = wire_error_text(exc)
        raise self._malformed(chunk, "chunk", bad)

    def feed_body(self, body: bytes) -> list[AdapterEvent]:
        """A whole ``chat.completion`` body -> its display events (the same mapping as a chunk)."""
        self.done = True
        chunk: Any = None
        try:
            chunk = _loads(body)
            return self._apply(chunk, "message")
        except AgentlabError:
            raise
        except Exception as exc:  # not the documented shape
            bad = wire_error_text(exc)
        raise self._malformed(chunk, "message", bad)

    def _malformed(self, chunk: Any, part: str, bad: str) -> AgentlabError:
        where = "not JSON" if chunk is None else f"<{type_name(chunk)}>"
        return self.interrupted(
            f"malformed {self.dialect.label} chat completion {part} ({where}: {bad}); nothing of this "
            "call was kept"
        )

    def _apply(self, chunk: Any, part: str) -> list[AdapterEvent]:
        """A chunk (or body) in general: a note per top-level field not known yet, then its delta's events."""
        if chunk.__class__ is not dict:
            raise WireFieldError(part, "object", chunk)
        out: list[AdapterEvent] = []
        if not _KNOWN_CHUNK_KEYS.issuperset(chunk):
            for key in chunk.keys() - _KNOWN_CHUNK_KEYS:
                note = self.unsupported("event", key)
                if note is not None:
                    out.append(note)
        delta = self._choice(chunk, "message" if part == "message" else "delta")
        if delta is not None:
            rest: list[AdapterEvent] = []
            first = self._delta(delta, rest)
            if first is not None:
                out.append(first)
            out += rest
        return out

    def _choice(self, chunk: dict[str, Any], where: str) -> dict[str, Any] | None:
        """What a chunk says of the whole call (id, usage, finish), then its first choice's ``where``."""
        if chunk.get("error") is not None:
            raise in_stream_error(chunk, provider=self.provider, request_id=self.request_id)
        if self.response_id is None and isinstance(chunk.get("id"), str):
            self.response_id = chunk["id"]
        usage = chunk.get("usage")
        if usage.__class__ is dict:
            self.usage = usage
        choices = chunk.get("choices")
        if not choices:
            return None
        choice = choices[0]
        if choice.__class__ is not dict:
            raise WireFieldError("choices[0]", "object", choice)
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])
        delta = choice.get(where)
        if delta is not None and delta.__class__ is not dict:
            raise WireFieldError(f"choices[0].{where}", "object", delta)
        return delta

    def _delta(self, delta: dict[str, Any], rest: list[AdapterEvent] | None = None) -> AdapterEvent | None:
        """A delta's events: reasoning (kept, or merged details), then text, then tool-call pieces.

        The first is returned and the others go to ``rest`` (a whole body shows them all; a streamed
        chunk shows its first, and everything in it is still assembled and timed). The common
        reasoning piece (``reasoning_content`` alone, the field this call keeps) is read inline;
        anything else with a reasoning field goes through :meth:`_reasoning_text`.
        """
        shown = delta.get("reasoning_content")
        if (
            shown.__class__ is str
            and shown
            and self.reasoning_field == "reasoning_content"
            and "reasoning" not in delta
        ):
            self.reasoning_pieces.append(shown)
        elif shown is not None or "reasoning" in delta:
            shown = self._reasoning_text(delta)
        else:
            shown = ""
        details = delta.get(DETAILS)
        if details:
            detail_text = self.details.add(details)  # merged whatever is shown
            shown = shown or detail_text
        first = self.reasoning(shown, "0") if shown else None
        text = delta.get("content")
        if text:
            if text.__class__ is not str:
                raise WireFieldError("content", "string", text)
            self.text_pieces.append(text)
            ev = self.text(text)
            if first is None:
                first = ev
            elif rest is not None:
                rest.append(ev)
        calls = delta.get("tool_calls")
        return self._calls(calls, first, rest) if calls else first

    def _reasoning_text(self, delta: dict[str, Any]) -> str:
        """The reasoning text fields in general; the text shown (the first non-empty one).

        The first field present is the one kept (and sent back), even when it is empty.
        """
        shown = ""
        for field in CONTENT_FIELDS:
            value = delta.get(field)
            if value is None:
                continue
            if value.__class__ is not str:
                raise WireFieldError(field, "string", value)
            if self.reasoning_field is None:
                self.reasoning_field = field  # present, even empty: it goes back
            if value:
                if field == self.reasoning_field:
                    self.reasoning_pieces.append(value)
                shown = shown or value
        return shown

    def _calls(
        self, calls: Any, first: AdapterEvent | None, rest: list[AdapterEvent] | None
    ) -> AdapterEvent | None:
        """A delta's tool-call pieces, each assembled: ``first`` if set, else the first piece's event."""
        if calls.__class__ is not list:
            raise WireFieldError("tool_calls", "array", calls)
        for position, piece in enumerate(calls):
            ev = self._call(piece, position)
            if first is None:
                first = ev
            elif rest is not None and ev is not None:
                rest.append(ev)
        return first

    def _call(self, piece: Any, position: int) -> AdapterEvent | None:
        if piece.__class__ is not dict:
            raise WireFieldError("tool_calls[]", "object", piece)
        index = piece.get("index", position)
        if not isinstance(index, int):
            raise WireFieldError("tool_calls[].index", "integer", index)
        call = self.calls.get(index)
        if call is None:
            call = self.calls[index] = _Call()
        if isinstance(piece.get("id"), str) and piece["id"]:
            call.call_id = piece["id"]
        fn = piece.get("function") or {}
        if fn.__class__ is not dict:
            raise WireFieldError("tool_calls[].function", "object", fn)
        if call.name is None and isinstance(fn.get("name"), str) and fn["name"]:
            call.name = fn["name"]
        args = fn.get("arguments")
        if args is not None and args.__class__ is not str:
            raise WireFieldError("tool_calls[].function.arguments", "string", args)
        if args:
            call.args.append(args)
        return self.tool_delta(self._call_id(call, index), call.name or "", args or "")

    # ------------------------------------------------------------------ result

    def _turn_id(self) -> str:
        if self.response_id:
            return self.response_id
        digest = hashlib.sha256(repr((self.text_pieces, [c.args for c in self.calls.values()])).encode())
        return f"chat-{digest.hexdigest()[:12]}"

    def _call_id(self, call: _Call, index: int) -> str:
        return call.call_id or f"call_{self.response_id or 'turn'}_{index}"

    def complete(self, notes: list[AdapterEvent]) -> Completion:
        """The assembled turn: text, tool calls in index order, the opaque reasoning items, usage."""
        if self.finish_reason is None:
            raise self.interrupted(
                f"the {self.dialect.label} stream ended before a chunk with finish_reason; nothing of "
                "this call was kept"
            )
        turn_id = self._turn_id()
        items: list[AssistantTextItem | ToolCallItem] = []
        if self.text_pieces:
            items.append(AssistantTextItem(text="".join(self.text_pieces), turn_id=turn_id, index=0))
        for n, index in enumerate(sorted(self.calls)):
            call = self.calls[index]
            if call.name is None:
                raise WireFieldError("tool_calls[].function.name", "string", None)
            items.append(self.tool_call(
                notes, call_id=self._call_id(call, index), name=call.name,
                arguments="".join(call.args) or "{}", turn_id=turn_id, index=n + 1, item_id=call.call_id,
            ))  # fmt: skip
        stop = _STOP.get(self.finish_reason, "incomplete")
        if stop == "end_turn" and self.calls:
            stop = "tool_use"
        usage = self.usage or {}
        return Completion(
            items=tuple(items),
            reasoning=self._opaque(turn_id),
            stop_reason=stop,
            stop_detail=self.finish_reason,
            usage=self.dialect.usage(usage),
            response_id=self.response_id,
            provider_cost_usd=self._cost(usage),
        )

    def _cost(self, usage: dict[str, Any]) -> float | None:
        """The provider's own cost (USD), kept beside agentlab's computed cost."""
        if self.dialect.provider_cost is not None:
            return self.dialect.provider_cost(usage)
        cost = usage.get("cost")
        if self.dialect.reports_cost and isinstance(cost, int | float) and not isinstance(cost, bool):
            return float(cost)
        return None

    def _item(self, payload: Any, block_type: str, turn_id: str, index: int) -> ProviderReasoningItem:
        raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        return ProviderReasoningItem(
            raw, provider=self.provider, api=self.api, model=self.model, block_type=block_type,
            turn_id=turn_id, index=index, base_url=self.base_url,
        )  # fmt: skip

    def _opaque(self, turn_id: str) -> tuple[ProviderReasoningItem, ...]:
        if self.dialect.carry == "details":
            return tuple(self._item(d, DETAILS, turn_id, i) for i, d in enumerate(self.details.items))
        if self.reasoning_field is None:
            return ()
        return (self._item("".join(self.reasoning_pieces), self.reasoning_field, turn_id, 0),)
