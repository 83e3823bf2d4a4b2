"""Responses API events (raw SSE ``data`` JSON) -> agentlab events and one ``ModelResponse``.

This is the hot path: one ``json.loads`` per event and a ``match`` on ``type``, no SDK models (the
SDK's typed event union costs several times the parse). Deltas become transient display events;
completed output items (``response.output_item.done``) become portable items, and reasoning items
become ``ProviderReasoningItem``s holding the item's raw JSON exactly as it stood in that event
(sliced from the line, never re-serialized; the copy in ``output_item.added`` is incomplete).

A non-streaming body goes through the same item/finish code (``feed_body``), so both paths
produce the same ``ModelResponse``. The contract (events built and timed by the base, diagnostics
returned, one finish, the policies for unknown events and malformed tool arguments) is
:class:`agentlab.assembly.assembler.Assembler`'s.
"""

from __future__ import annotations

from typing import Any

from agentlab.adapters.openai_responses._dialect import OPENAI, ResponsesDialect
from agentlab.adapters.openai_responses._errors import in_stream_error
from agentlab.adapters.openai_responses._raw import raw_array_elements, raw_member
from agentlab.adapters.openai_responses._request import API, PROVIDER
from agentlab.assembly import wire_json
from agentlab.assembly.assembler import Assembler, Completion
from agentlab.errors import AgentlabError, StreamInterruptedError
from agentlab.neutral._shapes import shaped_repr
from agentlab.neutral.error_text import WireFieldError, safe_name, wire_error_text
from agentlab.neutral.events import AdapterEvent, ResponseCompletedEvent, StopReason
from agentlab.neutral.items import AssistantTextItem, ProviderReasoningItem, ToolCallItem
from agentlab.neutral.usage import CallUsage

__all__ = ["ResponseAssembler", "assemble_body"]

_loads = wire_json.loads
_fast = wire_json.FAST

# Events that carry nothing agentlab maps (their content arrives again in a later event we do map).
_KNOWN_NOOP = frozenset(
    {
        "response.queued",
        "response.in_progress",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.done",
        "response.output_text.annotation.added",
        "response.refusal.done",
        "response.function_call_arguments.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.done",
    }
)

_INCOMPLETE: dict[str, StopReason] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
}


def _text(data: bytes | str) -> str:
    """An event's text for the raw-member reader (which keeps the original bytes of opaque items)."""
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


_OPAQUE = ("reasoning", "compaction")
"""Output items kept verbatim, opaque, for this loop only: reasoning, and server-side compaction."""


class ResponseAssembler(Assembler):
    """The state of one Responses call, fed one SSE ``data`` payload at a time.

    ``feed`` returns the one event a wire event produces (a delta, a diagnostic, or ``None``);
    ``finish`` returns the diagnostics found at the end and the ``ResponseCompletedEvent``, or raises
    when the call did not complete. Nothing half-built ever leaves: items exist only in ``finish``'s
    result. Its repr shows ids and counts only (it is a local of the adapter's frames).
    """

    provider = PROVIDER
    api = API
    final_event = "response.completed"

    def __init__(self, *, dialect: ResponsesDialect = OPENAI, **kw: Any) -> None:
        super().__init__(**kw)
        self.dialect = dialect
        self.provider = dialect.name
        self.response_id: str | None = None
        self._items: dict[int, AssistantTextItem | ToolCallItem] = {}
        self._reasoning: dict[int, ProviderReasoningItem] = {}
        self._calls: dict[str, tuple[str, str]] = {}  # item id -> (call_id, name)
        self._refusal: str | None = None
        self._final: dict[str, Any] | None = None
        self._final_raw: str | None = None
        self._error: dict[str, Any] | None = None
        self._failed = False
        self._skipped: set[int] = set()  # output indexes of items deliberately not kept

    def __repr__(self) -> str:
        return shaped_repr(
            self, ("model", "response_id", "request_id"), model=self.model, response_id=self.response_id,
            request_id=self.request_id, items=list(self._items.values()),
            reasoning=list(self._reasoning.values()),
        )  # fmt: skip

    # ------------------------------------------------------------------ streaming

    def feed(self, data: bytes | str) -> AdapterEvent | None:
        """Map one SSE ``data`` payload. Raises ``StreamInterruptedError`` on a malformed event.

        The hot path is this one frame down to the event's builder (issue 34: each Python level is a
        fixed cost per event): the fast decoder is called here, not through ``wire_json.loads`` (which
        still decides whatever it refuses), and the two deltas nearly every event is (reasoning
        summary text, answer text) are mapped before :meth:`_dispatch`, which maps every type.
        """
        etype: Any = None
        try:
            try:
                ev = _fast(data)
            except ValueError:  # not JSON, or a form only the stdlib reads: it decides
                ev = _loads(data)
            etype = ev["type"]
            if etype == "response.reasoning_summary_text.delta":
                return self.reasoning(ev["delta"], f"{ev['item_id']}:{ev['summary_index']}")
            if etype == "response.output_text.delta":
                return self.text(ev["delta"])
            return self._dispatch(ev, etype, data)
        except AgentlabError:
            raise
        except Exception as e:
            # Not JSON, no ``type``, or a known event missing a field (or of a type) it always has.
            bad = wire_error_text(e)
        # Raised outside the handler: the original holds the event's values (``JSONDecodeError.doc``).
        raise self.interrupted(
            f"malformed event in the OpenAI stream ({safe_name(etype) if etype else 'no type'}: {bad})"
        )

    def _dispatch(self, ev: dict[str, Any], etype: str, data: bytes | str) -> AdapterEvent | None:
        # Hot cases first: a ``match`` on strings tests its cases in order.
        match etype:
            case "response.function_call_arguments.delta":
                call_id, name = self._calls.get(ev["item_id"], (ev["item_id"], ""))
                return self.tool_delta(call_id, name, ev["delta"])
            case "response.reasoning_text.delta":
                return self.reasoning(ev["delta"], f"{ev['item_id']}:c{ev.get('content_index', 0)}")
            case "response.refusal.delta":
                return self.text(ev["delta"])
            case "response.output_item.added":
                item = ev["item"]
                if item.get("type") == "function_call":
                    call_id = self._call_id(item.get("call_id", ""))
                    self._calls[item.get("id", "")] = (call_id, item.get("name", ""))
                return None
            case "response.output_item.done":
                return self._done_item(ev["item"], raw_member(_text(data), "item"), ev["output_index"])
            case "response.created":
                self.response_id = ev["response"].get("id")
                return None
            case "response.completed" | "response.incomplete":
                self._final = ev["response"]
                self._final_raw = _text(data)
                return None
            case "response.failed":
                self._final = ev["response"]
                self._failed = True
                return None
            case "error":
                self._error = ev.get("error") or {k: v for k, v in ev.items() if k != "type"}
                return None
            case _ if etype in _KNOWN_NOOP:
                return None
            case _:
                # Providers add event types (hosted tools: code_interpreter, web_search, ...). They
                # are tolerated on purpose; their items still arrive as output_item.done.
                return self.unsupported("event", etype)

    # ------------------------------------------------------------------ items

    def _done_item(self, item: dict[str, Any], raw: str | None, index: int) -> AdapterEvent | None:
        itype = item.get("type")
        turn = self.response_id or ""
        if itype in _OPAQUE:  # reasoning, and compaction (provider state replacing earlier context)
            if raw is None:  # pragma: no cover - the item was parsed from this very text
                raise StreamInterruptedError(f"{itype} item without raw JSON", provider=self.provider)
            self._reasoning[index] = ProviderReasoningItem(
                raw.encode("utf-8"),
                provider=self.provider,
                api=API,
                model=self.model,
                block_type=itype,
                turn_id=turn,
                index=index,
                base_url=self.base_url,
            )
            return None
        if itype == "message":
            self._items[index] = self._message(item, turn, index)
            return None
        if itype == "function_call":
            notes: list[AdapterEvent] = []  # at most one: this item's
            self._items[index] = self.tool_call(
                notes,
                call_id=self._call_id(item.get("call_id") or item.get("id") or f"call_{index}"),
                name=item.get("name") or "",
                arguments=item.get("arguments") or "{}",
                turn_id=turn,
                index=index,
                item_id=item.get("id"),
            )
            return notes[0] if notes else None
        # Hosted tools (code_interpreter_call, web_search_call, ...) run server-side; their
        # results are not portable and are not sent back. Say so rather than drop silently.
        self._items.pop(index, None)
        self._reasoning.pop(index, None)
        self._skipped.add(index)
        return self.unsupported("item", itype)

    def _call_id(self, call_id: str) -> str:
        """The call id as the loop keeps it: scoped by the response where the host reuses ids (Mantle)."""
        if self.dialect.call_ids_per_response and call_id and self.response_id:
            return f"{self.response_id}:{call_id}"
        return call_id

    def _message(self, item: dict[str, Any], turn: str, index: int) -> AssistantTextItem:
        texts: list[str] = []
        refusals: list[str] = []
        for part in item.get("content") or ():
            ptype = part.get("type")
            if ptype == "output_text":
                texts.append(part.get("text") or "")
            elif ptype == "refusal":
                refusals.append(part.get("refusal") or "")
        if refusals:
            self._refusal = "".join(refusals)
        return AssistantTextItem(
            text="".join(texts) if texts or not refusals else "".join(refusals),
            turn_id=turn,
            index=index,
            provider_item_id=item.get("id"),
            phase=_phase(item),
        )

    # ------------------------------------------------------------------ end

    def complete(self, notes: list[AdapterEvent]) -> Completion:
        """The parts of a completed response, or the error that says why there is none."""
        if self._error is not None or self._failed:
            error = self._error
            if error is None and self._final is not None:
                error = self._final.get("error")
            raise in_stream_error(
                error, request_id=self.request_id, failed=self._failed, provider=self.provider
            )
        final = self._final
        if final is None:
            raise self.interrupted(
                "the OpenAI stream ended before response.completed; nothing of this call was kept"
            )
        if self.response_id is None:
            self.response_id = final.get("id")
        self._backfill(final, notes)
        if self.dialect.items_from_completed:
            self._from_completed(final)
        stop, stop_detail = self._stop(final)
        usage_raw = final.get("usage")
        usage = usage_raw if isinstance(usage_raw, dict) else None
        return Completion(
            items=tuple(self._items[i] for i in sorted(self._items)),
            reasoning=tuple(self._reasoning[i] for i in sorted(self._reasoning)),
            stop_reason=stop,
            stop_detail=stop_detail,
            usage=CallUsage() if usage is None else self.dialect.usage(usage),
            response_id=self.response_id,
            provider_cost_usd=None if usage is None else self.dialect.provider_cost(usage),
        )

    def _from_completed(self, final: dict[str, Any]) -> None:
        """Reasoning items and messages as ``response.completed`` holds them (xAI's rule), in its order.

        The ``output_item.done`` copies are replaced by the completed response's (sliced raw, never
        re-serialized); a stream without the raw final text (a non-streaming body) already used it.
        """
        if self._final_raw is None:
            return
        raw_resp = raw_member(self._final_raw, "response")
        raw_out = raw_member(raw_resp, "output") if raw_resp else None
        raws = raw_array_elements(raw_out) if raw_out else []
        for i, item in enumerate(final.get("output") or []):
            if isinstance(item, dict) and item.get("type") in ("reasoning", "message") and i < len(raws):
                self._done_item(item, raws[i], i)

    def _stop(self, final: dict[str, Any]) -> tuple[StopReason, str | None]:
        status = final.get("status")
        if status == "incomplete":
            reason = (final.get("incomplete_details") or {}).get("reason") or "unknown"
            return _INCOMPLETE.get(reason, "incomplete"), reason
        if status != "completed":
            raise self.interrupted(f"OpenAI response ended with status {safe_name(status)}")
        if self._refusal is not None:
            return "refusal", self._refusal
        if any(isinstance(i, ToolCallItem) for i in self._items.values()):
            return "tool_use", None
        return "end_turn", None

    def _backfill(self, final: dict[str, Any], notes: list[AdapterEvent]) -> None:
        """Items present in the final response but never announced by ``output_item.done``."""
        output = final.get("output") or []
        seen = set(self._items) | set(self._reasoning) | self._skipped
        if all(i in seen for i in range(len(output))) or self._final_raw is None:
            return
        raw_resp = raw_member(self._final_raw, "response")
        raw_out = raw_member(raw_resp, "output") if raw_resp else None
        raws = raw_array_elements(raw_out) if raw_out else []
        for i, item in enumerate(output):
            if i not in seen and isinstance(item, dict):
                note = self._done_item(item, raws[i] if i < len(raws) else None, i)
                if note is not None:
                    notes.append(note)

    # ------------------------------------------------------------------ non-streaming

    def feed_body(self, body: bytes) -> list[AdapterEvent]:
        """A non-streaming response body -> its display events and diagnostics; same mapping as streams.

        Raises only agentlab errors; a body of the wrong shape (or not UTF-8) is a value-free
        ``StreamInterruptedError``.
        """
        try:
            text: str | None = body.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None:  # outside the handler: a UnicodeDecodeError's ``object`` is the body
            raise self.interrupted("OpenAI response body is not UTF-8")
        # A JSONDecodeError's ``doc`` is the whole body, reasoning included: never chained.
        return self.guarded(self._feed_body, text, "malformed OpenAI response body")

    def _feed_body(self, text: str) -> list[AdapterEvent]:
        body = _loads(text)
        if not isinstance(body, dict):
            raise WireFieldError("<root>", "object", body)
        raw_out = raw_member(text, "output")
        raws = raw_array_elements(raw_out) if raw_out else []
        self.response_id = body.get("id")
        events = self._add_output(body.get("output") or [], raws)
        self._final = body
        if body.get("status") == "failed":
            self._failed = True
            self._error = body.get("error") if isinstance(body.get("error"), dict) else None
        return events

    def _add_output(self, output: list[Any], raw_output: list[str]) -> list[AdapterEvent]:
        """Take a whole ``output`` array; return display events (and diagnostics) for its content."""
        events: list[AdapterEvent] = []
        for i, item in enumerate(output):
            if not isinstance(item, dict):
                continue
            if item.get("type") == "reasoning":
                iid = item.get("id", str(i))
                for n, part in enumerate(item.get("summary") or ()):
                    if part.get("text"):
                        events.append(self.reasoning(part["text"], f"{iid}:{n}"))
                for n, part in enumerate(item.get("content") or ()):
                    if part.get("text"):
                        events.append(self.reasoning(part["text"], f"{iid}:c{n}"))
            note = self._done_item(item, raw_output[i] if i < len(raw_output) else None, i)
            done = self._items.get(i)
            if isinstance(done, AssistantTextItem) and done.text:
                events.append(self.text(done.text))
            elif isinstance(done, ToolCallItem):
                events.append(self.tool_delta(done.call_id, done.name, done.arguments))
            if note is not None:
                events.append(note)
        return events


def _phase(item: dict[str, Any]) -> str | None:
    """The message's ``phase`` as received (any string, so a future label is kept too)."""
    phase = item.get("phase")
    return phase if isinstance(phase, str) else None


def assemble_body(
    text: str | bytes,
    *,
    model: str,
    base_url: str | None,
    request_id: str | None,
    started: float | None = None,
    reasoning_dropped: int = 0,
) -> tuple[list[AdapterEvent], ResponseCompletedEvent]:
    """A non-streaming response body -> (display events and diagnostics, completed event).

    Raises only agentlab errors (see ``ResponseAssembler.feed_body``).
    """
    asm = ResponseAssembler(
        model=model,
        base_url=base_url,
        request_id=request_id,
        started=started,
        reasoning_dropped=reasoning_dropped,
    )
    events = asm.feed_body(text.encode("utf-8") if isinstance(text, str) else text)
    *notes, completed = asm.finish()
    assert isinstance(completed, ResponseCompletedEvent)
    return [*events, *notes], completed
