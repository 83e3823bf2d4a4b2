"""``ToyAssembler``: toy events -> agentlab's events and one ``ModelResponse``, on the shared contract.

The base (:class:`agentlab.assembly.assembler.Assembler`) builds, stamps and times the events, owns
the policies (an unknown event is ignored with one ``unsupported_content`` diagnostic; tool-call
arguments that are not a JSON object are kept with one ``invalid_tool_arguments``) and makes the
``ModelResponse``; this class only maps the toy's event types and says what it assembled.
"""

from __future__ import annotations

import json
from typing import Any

from agentlab.assembly.assembler import Assembler, Completion
from agentlab.neutral._shapes import shaped_repr
from agentlab.neutral.error_text import wire_error_text
from agentlab.neutral.events import AdapterEvent, StopReason
from agentlab.neutral.items import AssistantTextItem, ProviderReasoningItem, ToolCallItem
from tests.providers.toy._usage import usage_from_toy
from tests.providers.toy.provider import SPEC

__all__ = ["ToyAssembler"]

_BROKEN = (ValueError, LookupError, TypeError, AttributeError)
"""What reading an event of the wrong shape raises (not JSON, a missing field, a wrong type)."""


class ToyAssembler(Assembler):
    """One toy call: ``feed`` one event's JSON (streamed) or ``feed_body`` the JSON array, then ``finish``."""

    provider = SPEC.name
    api = SPEC.api
    final_event = "done"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.text_parts: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.opaque: list[Any] = []
        self.done: dict[str, Any] | None = None

    def __repr__(self) -> str:
        # A local of the adapter's frames: text and opaque payloads are shown by shape only.
        return shaped_repr(
            self, ("model", "request_id"), model=self.model, request_id=self.request_id,
            text_parts=self.text_parts, calls=len(self.calls), opaque=self.opaque,
        )  # fmt: skip

    def feed(self, data: bytes | str) -> AdapterEvent | None:
        """One streamed event; an event of the wrong shape is a value-free ``StreamInterruptedError``."""
        try:
            return self._map(json.loads(data))
        except _BROKEN as e:
            bad = wire_error_text(e)
        # Raised outside the handler: the original exception holds the event's values.
        raise self.interrupted(f"malformed toy event ({bad}); nothing of this call was kept")

    def feed_body(self, body: bytes) -> list[AdapterEvent]:
        """The non-streaming answer: the same events as one JSON array, mapped the same way."""
        try:
            mapped = [self._map(event) for event in json.loads(body)]
            return [out for out in mapped if out is not None]
        except _BROKEN as e:
            bad = wire_error_text(e)
        raise self.interrupted(f"malformed toy body ({bad}); nothing of this call was kept")

    def _map(self, event: dict[str, Any]) -> AdapterEvent | None:
        kind = event["type"]
        if kind == "thinking":
            return self.reasoning(event["text"], "0")
        if kind == "text":
            self.text_parts.append(event["text"])
            return self.text(event["text"])
        if kind == "call":
            self.calls.append(event)
            return self.tool_delta(event["id"], event["name"], event["arguments"])
        if kind == "opaque":
            self.opaque.append(event["data"])
            return None
        if kind == "done":
            self.done = event
            return None
        return self.unsupported("event", kind)  # a future event type: ignored, said once

    def complete(self, notes: list[AdapterEvent]) -> Completion:
        """What the call assembled; no ``done`` event means the stream was cut (nothing is kept)."""
        if self.done is None:
            raise self.interrupted(
                "the toy stream ended before its 'done' event; nothing of this call was kept"
            )
        turn = str(self.done["id"])
        reasoning = tuple(
            ProviderReasoningItem(
                json.dumps(data).encode(),
                provider=self.provider,
                api=self.api,
                model=self.model,
                block_type=SPEC.reasoning_block_type,
                turn_id=turn,
                index=k,
                base_url=self.base_url,
            )
            for k, data in enumerate(self.opaque)
        )
        items: list[AssistantTextItem | ToolCallItem] = []
        if self.text_parts:
            items.append(AssistantTextItem(text="".join(self.text_parts), turn_id=turn, index=len(reasoning)))
        for c in self.calls:
            items.append(self.tool_call(
                notes, call_id=c["id"], name=c["name"], arguments=c["arguments"], turn_id=turn,
                index=len(reasoning) + len(items), item_id=None,
            ))  # fmt: skip
        stop: StopReason = "tool_use" if self.done.get("stop") == "tool_use" else "end_turn"
        return Completion(
            items=tuple(items),
            reasoning=reasoning,
            stop_reason=stop,
            stop_detail=None,
            usage=usage_from_toy(self.done.get("usage") or {}),
            response_id=turn,
        )
