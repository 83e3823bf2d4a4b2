"""Responses API events (raw SSE ``data`` JSON) -> agentlab events and one ``ModelResponse``.

This is the hot path: one ``json.loads`` per event and a ``match`` on ``type``, no SDK models (the
SDK's typed event union costs several times the parse). Deltas become transient display events;
completed output items (``response.output_item.done``) become portable items, and reasoning items
become ``ProviderReasoningItem``s holding the item's raw JSON exactly as it stood in that event
(sliced from the line, never re-serialized; the copy in ``output_item.added`` is incomplete).

A non-streaming body goes through the same item/finish code (``assemble_body``), so both paths
produce the same ``ModelResponse``.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from agentlab.adapters.openai_responses._errors import in_stream_error
from agentlab.adapters.openai_responses._raw import raw_array_elements, raw_member
from agentlab.adapters.openai_responses._request import API, PROVIDER
from agentlab.adapters.openai_responses._usage import usage_from_openai
from agentlab.errors import AgentlabError, StreamInterruptedError
from agentlab.neutral._shapes import shaped_repr
from agentlab.neutral.error_text import WireFieldError, safe_name, wire_error_text
from agentlab.neutral.events import (
    AdapterEvent,
    DiagnosticEvent,
    ModelResponse,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    StopReason,
    TextDeltaEvent,
    ToolCallDeltaEvent,
)
from agentlab.neutral.items import AssistantTextItem, ProviderReasoningItem, ToolCallItem
from agentlab.neutral.usage import CallUsage

__all__ = ["ResponseAssembler", "assemble_body"]

log = logging.getLogger("agentlab.adapters.openai_responses")

_loads = json.loads
_perf = time.perf_counter

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


def _str_or_none(value: object) -> str | None:
    """A wire id or name for a durable diagnostic: a string as is, anything else is not recorded."""
    return value if isinstance(value, str) else None


class ResponseAssembler:
    """The state of one Responses call, fed one event at a time.

    ``feed`` returns the display event for a delta (or ``None``) and queues rarer events
    (diagnostics) in ``pending``; ``finish`` returns the ``ResponseCompletedEvent`` or raises when
    the call did not complete. Nothing half-built ever leaves: items exist only in ``finish``'s result.
    Its repr shows ids and counts only (it is a local of the adapter's frames).
    """

    _shaped_repr = True

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None,
        request_id: str | None = None,
        started: float | None = None,
        reasoning_dropped: int = 0,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.request_id = request_id
        self.response_id: str | None = None
        self.pending: list[AdapterEvent] = []
        self._items: dict[int, AssistantTextItem | ToolCallItem] = {}
        self._reasoning: dict[int, ProviderReasoningItem] = {}
        self._calls: dict[str, tuple[str, str]] = {}  # item id -> (call_id, name)
        self._refusal: str | None = None
        self._final: dict[str, Any] | None = None
        self._final_raw: str | None = None
        self._error: dict[str, Any] | None = None
        self._failed = False
        self._unknown: set[str] = set()
        self._skipped: set[int] = set()  # output indexes of items deliberately not kept
        # ``started``: perf_counter() when the request was sent, so latencies include time to first byte.
        self._t0 = _perf() if started is None else started
        self._dropped = reasoning_dropped
        self.first_reasoning_s: float | None = None
        self.first_text_s: float | None = None

    def __repr__(self) -> str:
        return shaped_repr(
            self, ("model", "response_id", "request_id"), model=self.model, response_id=self.response_id,
            request_id=self.request_id, items=list(self._items.values()),
            reasoning=list(self._reasoning.values()), pending=self.pending,
        )  # fmt: skip

    # ------------------------------------------------------------------ streaming

    def feed(self, data: str) -> AdapterEvent | None:
        """Map one SSE ``data`` payload. Raises ``StreamInterruptedError`` on a malformed event."""
        etype: Any = None
        try:
            ev = _loads(data)
            etype = ev["type"]
            return self._dispatch(ev, etype, data)
        except AgentlabError:
            raise
        except Exception as e:
            # Not JSON, no ``type``, or a known event missing a field (or of a type) it always has.
            bad = wire_error_text(e)
        # Raised outside the handler: the original holds the event's values (``JSONDecodeError.doc``).
        raise StreamInterruptedError(
            f"malformed event in the OpenAI stream ({safe_name(etype) if etype else 'no type'}: {bad})",
            provider=PROVIDER,
            request_id=self.request_id,
        )

    def feed_last(self, data: str) -> AdapterEvent | None:
        """The stream's last ``data`` payload, which had no blank line after it: a complete event is
        fed; a cut one means the stream ended mid-event (raised without chaining the decode error,
        whose ``doc`` is the partial event)."""
        try:
            _loads(data)
            cut = False
        except ValueError:
            cut = True
        if cut:
            raise StreamInterruptedError(
                "the OpenAI stream was cut mid-event, before response.completed; nothing of this "
                "call was kept",
                provider=PROVIDER,
                request_id=self.request_id,
            )
        return self.feed(data)

    def _dispatch(self, ev: dict[str, Any], etype: str, data: str) -> AdapterEvent | None:  # noqa: C901 - hot-path mapper: one match case per wire event type (a call per case would cost per event)
        # Hot cases first: a ``match`` on strings tests its cases in order.
        match etype:
            case "response.reasoning_summary_text.delta":
                if self.first_reasoning_s is None:
                    self.first_reasoning_s = _perf() - self._t0
                return ReasoningDeltaEvent(text=ev["delta"], block=f"{ev['item_id']}:{ev['summary_index']}")
            case "response.output_text.delta":
                if self.first_text_s is None:
                    self.first_text_s = _perf() - self._t0
                return TextDeltaEvent(text=ev["delta"])
            case "response.function_call_arguments.delta":
                call_id, name = self._calls.get(ev["item_id"], (ev["item_id"], ""))
                return ToolCallDeltaEvent(call_id=call_id, name=name, arguments_delta=ev["delta"])
            case "response.reasoning_text.delta":
                if self.first_reasoning_s is None:
                    self.first_reasoning_s = _perf() - self._t0
                return ReasoningDeltaEvent(
                    text=ev["delta"], block=f"{ev['item_id']}:c{ev.get('content_index', 0)}"
                )
            case "response.refusal.delta":
                if self.first_text_s is None:
                    self.first_text_s = _perf() - self._t0
                return TextDeltaEvent(text=ev["delta"])
            case "response.output_item.added":
                item = ev["item"]
                if item.get("type") == "function_call":
                    self._calls[item.get("id", "")] = (item.get("call_id", ""), item.get("name", ""))
                return None
            case "response.output_item.done":
                raw = raw_member(data, "item")
                self._done_item(ev["item"], raw, ev["output_index"])
                return None
            case "response.created":
                self.response_id = ev["response"].get("id")
                return None
            case "response.completed" | "response.incomplete":
                self._final = ev["response"]
                self._final_raw = data
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
                if etype not in self._unknown:
                    self._unknown.add(etype)
                    log.debug("ignoring OpenAI stream event type %s", safe_name(etype))
                return None

    # ------------------------------------------------------------------ items

    def _done_item(self, item: dict[str, Any], raw: str | None, index: int) -> None:
        itype = item.get("type")
        turn = self.response_id or ""
        if itype == "reasoning":
            if raw is None:  # pragma: no cover - the item was parsed from this very text
                raise StreamInterruptedError("reasoning item without raw JSON", provider=PROVIDER)
            self._reasoning[index] = ProviderReasoningItem(
                raw.encode("utf-8"),
                provider=PROVIDER,
                api=API,
                model=self.model,
                block_type="reasoning",
                turn_id=turn,
                index=index,
                base_url=self.base_url,
            )
        elif itype == "message":
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
            self._items[index] = AssistantTextItem(
                text="".join(texts) if texts or not refusals else "".join(refusals),
                turn_id=turn,
                index=index,
                provider_item_id=item.get("id"),
            )
        elif itype == "function_call":
            arguments = item.get("arguments") or "{}"
            try:
                ok = isinstance(_loads(arguments), dict)
            except ValueError:
                ok = False
            if not ok:
                # Kept as received: the run's tool layer answers the model with a validation error,
                # which is how the model gets to fix its call.
                self.pending.append(
                    DiagnosticEvent(
                        code="invalid_tool_arguments",
                        message=f"tool call {safe_name(item.get('name'))} arguments are not a JSON object",
                        data={
                            "call_id": _str_or_none(item.get("call_id")),
                            "name": _str_or_none(item.get("name")),
                        },
                    )
                )
            self._items[index] = ToolCallItem(
                call_id=item.get("call_id") or item.get("id") or f"call_{index}",
                name=item.get("name") or "",
                arguments=arguments,
                turn_id=turn,
                index=index,
                provider_item_id=item.get("id"),
            )
        else:
            # Hosted tools (code_interpreter_call, web_search_call, ...) run server-side; their
            # results are not portable and are not sent back. Say so rather than drop silently.
            self.pending.append(
                DiagnosticEvent(
                    code="output_item_not_kept",
                    message=f"OpenAI output item of type {safe_name(itype)} is not kept in history",
                    data={"type": safe_name(itype), "id": _str_or_none(item.get("id")), "index": index},
                )
            )
            self._items.pop(index, None)
            self._reasoning.pop(index, None)
            self._skipped.add(index)

    # ------------------------------------------------------------------ end

    def finish(self, *, streamed: bool = True) -> ResponseCompletedEvent:
        """The one completed event, or the error that says why there is none.

        Only agentlab errors leave: a final response of the wrong shape (usage, status, output) is a
        value-free ``StreamInterruptedError``, like a malformed event.
        """
        try:
            return self._finish(streamed)
        except AgentlabError:
            raise
        except Exception as e:
            bad = wire_error_text(e)
        raise StreamInterruptedError(
            f"malformed final OpenAI response ({bad}); nothing of this call was kept",
            provider=PROVIDER,
            request_id=self.request_id,
        )

    def _finish(self, streamed: bool) -> ResponseCompletedEvent:
        if self._error is not None or self._failed:
            error = self._error
            if error is None and self._final is not None:
                error = self._final.get("error")
            raise in_stream_error(error, request_id=self.request_id, failed=self._failed)
        final = self._final
        if final is None:
            raise StreamInterruptedError(
                "the OpenAI stream ended before response.completed; nothing of this call was kept",
                provider=PROVIDER,
                request_id=self.request_id,
            )
        if self.response_id is None:
            self.response_id = final.get("id")
        if streamed:
            self._backfill(final)
        status = final.get("status")
        stop_detail: str | None = None
        if status == "incomplete":
            reason = (final.get("incomplete_details") or {}).get("reason") or "unknown"
            stop: StopReason = _INCOMPLETE.get(reason, "incomplete")
            stop_detail = reason
        elif status == "completed":
            if self._refusal is not None:
                stop, stop_detail = "refusal", self._refusal
            elif any(isinstance(i, ToolCallItem) for i in self._items.values()):
                stop = "tool_use"
            else:
                stop = "end_turn"
        else:
            raise StreamInterruptedError(
                f"OpenAI response ended with status {safe_name(status)}",
                provider=PROVIDER,
                request_id=self.request_id,
            )
        usage_raw = final.get("usage")
        usage = usage_from_openai(usage_raw) if isinstance(usage_raw, dict) else CallUsage()
        response = ModelResponse(
            provider=PROVIDER,
            api=API,
            model=self.model,
            response_id=self.response_id,
            request_id=self.request_id,
            items=tuple(self._items[i] for i in sorted(self._items)),
            reasoning=tuple(self._reasoning[i] for i in sorted(self._reasoning)),
            stop_reason=stop,
            stop_detail=stop_detail,
            usage=usage,
            reasoning_items_dropped=self._dropped,
        )
        return ResponseCompletedEvent(
            response=response,
            latency_s=_perf() - self._t0,
            first_reasoning_s=self.first_reasoning_s,
            first_text_s=self.first_text_s,
        )

    def _backfill(self, final: dict[str, Any]) -> None:
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
                self._done_item(item, raws[i] if i < len(raws) else None, i)

    def add_output(self, output: list[Any], raw_output: list[str]) -> list[AdapterEvent]:
        """Non-streaming: take a whole ``output`` array; return display events for its content."""
        events: list[AdapterEvent] = []
        for i, item in enumerate(output):
            if not isinstance(item, dict):
                continue
            itype = item.get("type")
            iid = item.get("id", str(i))
            if itype == "reasoning":
                for n, part in enumerate(item.get("summary") or ()):
                    if part.get("text"):
                        events.append(ReasoningDeltaEvent(text=part["text"], block=f"{iid}:{n}"))
                for n, part in enumerate(item.get("content") or ()):
                    if part.get("text"):
                        events.append(ReasoningDeltaEvent(text=part["text"], block=f"{iid}:c{n}"))
            self._done_item(item, raw_output[i] if i < len(raw_output) else None, i)
            done = self._items.get(i)
            if isinstance(done, AssistantTextItem) and done.text:
                events.append(TextDeltaEvent(text=done.text))
            elif isinstance(done, ToolCallItem):
                events.append(
                    ToolCallDeltaEvent(call_id=done.call_id, name=done.name, arguments_delta=done.arguments)
                )
        return events


def assemble_body(
    text: str | bytes,
    *,
    model: str,
    base_url: str | None,
    request_id: str | None,
    started: float | None = None,
    reasoning_dropped: int = 0,
) -> tuple[list[AdapterEvent], ResponseCompletedEvent]:
    """A non-streaming response body -> (display events, completed event); same mapping as streams.

    Raises only agentlab errors; a body of the wrong shape (or not UTF-8) is a value-free
    ``StreamInterruptedError``.
    """
    if isinstance(text, bytes):
        try:
            decoded: str | None = text.decode("utf-8")
        except UnicodeDecodeError:
            decoded = None
        if decoded is None:  # outside the handler: a UnicodeDecodeError's ``object`` is the body
            raise StreamInterruptedError(
                "OpenAI response body is not UTF-8", provider=PROVIDER, request_id=request_id
            )
        text = decoded
    try:
        return _assemble_body(text, model, base_url, request_id, started, reasoning_dropped)
    except AgentlabError:
        raise
    except Exception as e:
        bad = wire_error_text(e)
    # Outside the handler: a JSONDecodeError's ``doc`` is the whole body, reasoning included.
    raise StreamInterruptedError(
        f"malformed OpenAI response body ({bad})", provider=PROVIDER, request_id=request_id
    )


def _assemble_body(
    text: str,
    model: str,
    base_url: str | None,
    request_id: str | None,
    started: float | None,
    reasoning_dropped: int,
) -> tuple[list[AdapterEvent], ResponseCompletedEvent]:
    body = _loads(text)
    if not isinstance(body, dict):
        raise WireFieldError("<root>", "object", body)
    raw_out = raw_member(text, "output")
    raws = raw_array_elements(raw_out) if raw_out else []
    asm = ResponseAssembler(
        model=model,
        base_url=base_url,
        request_id=request_id,
        started=started,
        reasoning_dropped=reasoning_dropped,
    )
    asm.response_id = body.get("id")
    events = asm.add_output(body.get("output") or [], raws)
    asm._final = body
    if body.get("status") == "failed":
        asm._failed = True
        asm._error = body.get("error") if isinstance(body.get("error"), dict) else None
    completed = asm.finish(streamed=False)
    return [*events, *asm.pending], completed
