"""Converse events (and a whole Converse body) -> agentlab's display events and ``ModelResponse``.

One event is ``{"<eventType>": payload}`` (as :mod:`._framing` cuts it, and as botocore's parsed
events look). Reasoning blocks have no start event: their ``text`` deltas are joined and their one
``signature`` (or ``redactedContent``) delta taken; each becomes a ``ProviderReasoningItem`` whose
payload is the block as the request must carry it back, ``{"reasoningContent": {...}}``, with
``redactedContent`` as the base64 text of the wire. Converse has no response id: the request id
(``x-amzn-RequestId``) names the turn, or a local ``bedrock-<uuid>`` when the answer carries none (a
recording, a proxy that drops the header): each turn's items must be told apart by ``turn_id``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from agentlab.adapters.bedrock_converse._errors import PROVIDER, in_stream_error
from agentlab.adapters.bedrock_converse._usage import usage_from_converse
from agentlab.assembly.assembler import Assembler, Completion
from agentlab.assembly.wire_json import loads as _loads
from agentlab.errors import AgentlabError
from agentlab.neutral.error_text import safe_name, wire_error_text
from agentlab.neutral.events import AdapterEvent, StopReason
from agentlab.neutral.items import AssistantTextItem, ProviderReasoningItem, ToolCallItem

__all__ = ["API", "ConverseAssembler"]

API = "converse"
_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "model_context_window_exceeded": "max_tokens",
}
_REASONING = "reasoningText"
_REDACTED = "redactedContent"


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


class _Block:
    __slots__ = ("index", "kind", "parts", "redacted", "signature", "tool")

    def __init__(self, index: int, kind: str) -> None:
        self.index = index
        self.kind = kind  # "text" | "toolUse" | reasoningText | redactedContent
        self.parts: list[str] = []
        self.signature: str | None = None
        self.redacted: str | None = None
        self.tool: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"<block {self.index} {self.kind} parts={len(self.parts)}>"


class ConverseAssembler(Assembler):
    """Accumulates one Converse answer; its repr shows counts and ids only."""

    provider = PROVIDER
    api = API
    final_event = "messageStop"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.blocks: dict[int, _Block] = {}
        self.stop_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self.stopped = False
        self.turn_id = self.request_id or f"bedrock-{uuid.uuid4().hex}"

    def __repr__(self) -> str:
        rid, n, stop = self.request_id, len(self.blocks), self.stop_reason
        return f"<ConverseAssembler request_id={rid!r} blocks={n} stop={stop!r}>"

    def feed(self, data: bytes | str) -> AdapterEvent | None:
        """One event, ``{"<type>": payload}``; a malformed one is a value-free ``StreamInterruptedError``."""
        name: Any = None
        try:
            ev = _loads(data)
            ((name, body),) = ev.items()
            return self._apply(name, body)
        except AgentlabError:
            raise
        except Exception as exc:
            bad = wire_error_text(exc)
        raise self.interrupted(
            f"malformed stream event ({safe_name(name)}: {bad}); nothing of this call was kept"
        )

    def _block(self, index: int, kind: str) -> _Block:
        block = self.blocks.get(index)
        if block is None:
            block = self.blocks[index] = _Block(index, kind)
        return block

    def _apply(self, name: str, body: dict[str, Any]) -> AdapterEvent | None:
        if name == "contentBlockDelta":
            return self._delta(body["contentBlockIndex"], body["delta"])
        if name == "contentBlockStart":
            use = (body.get("start") or {}).get("toolUse")
            if use is not None:
                self._block(body["contentBlockIndex"], "toolUse").tool = dict(use)
            return None
        if name == "messageStop":
            self.stop_reason = body.get("stopReason")
            self.stopped = True
            return None
        if name == "metadata":
            self.usage = dict(body.get("usage") or {})
            return None
        if name in ("messageStart", "contentBlockStop"):
            return None
        if name == "__exception__":
            raise in_stream_error(body, self.request_id)
        return self.unsupported("event", name)

    def _delta(self, index: int, d: dict[str, Any]) -> AdapterEvent | None:
        if "text" in d:
            self._block(index, "text").parts.append(d["text"])
            return self.text(d["text"])
        rc = d.get("reasoningContent")
        if rc is not None:
            return self._reasoning_delta(index, rc)
        use = d.get("toolUse")
        if use is not None:
            block = self._block(index, "toolUse")
            block.parts.append(use["input"])
            return self.tool_delta(
                str(block.tool.get("toolUseId", "")), str(block.tool.get("name", "")), use["input"]
            )
        return self.unsupported("delta", next(iter(d), "empty"))

    def _reasoning_delta(self, index: int, rc: dict[str, Any]) -> AdapterEvent | None:
        if _REDACTED in rc:
            self._block(index, _REDACTED).redacted = rc[_REDACTED]
            return None
        block = self._block(index, _REASONING)
        if "signature" in rc:
            block.signature = rc["signature"]
            return None
        text = rc.get("text")
        if not isinstance(text, str):
            return self.unsupported("delta", next(iter(rc), "empty"))
        block.parts.append(text)
        return self.reasoning(text, _REASONING) if text else None

    def feed_body(self, body: bytes) -> list[AdapterEvent]:
        """A whole ``Converse`` answer: the same events a stream of it would have produced."""
        return self.guarded(self._feed_body, body, f"malformed {PROVIDER} response body")

    def _feed_body(self, body: bytes) -> list[AdapterEvent]:
        answer = _loads(body)
        out: list[AdapterEvent] = []
        for k, block in enumerate(answer["output"]["message"]["content"]):
            out.extend(e for e in self._body_block(k, block) if e is not None)
        self.stop_reason = answer.get("stopReason")
        self.usage = dict(answer.get("usage") or {})
        self.stopped = True
        return out

    def _body_block(self, k: int, block: dict[str, Any]) -> list[AdapterEvent | None]:
        if "reasoningContent" in block:
            rc = block["reasoningContent"]
            if _REDACTED in rc:
                return [self._reasoning_delta(k, rc)]
            rt = rc.get(_REASONING) or {}
            out = [self._reasoning_delta(k, {"text": rt.get("text", "")})]
            if "signature" in rt:
                self._reasoning_delta(k, {"signature": rt["signature"]})
            return out
        if "text" in block:
            return [self._delta(k, {"text": block["text"]})]
        if "toolUse" in block:
            use = block["toolUse"]
            self._block(k, "toolUse").tool = {"toolUseId": use["toolUseId"], "name": use["name"]}
            return [self._delta(k, {"toolUse": {"input": _dumps(use.get("input", {})).decode()}})]
        return [self.unsupported("block", next(iter(block), "empty"))]

    def _reasoning_item(self, block: _Block, turn_id: str) -> ProviderReasoningItem:
        payload: dict[str, Any]
        if block.kind == _REDACTED:
            payload = {"reasoningContent": {_REDACTED: block.redacted}}
        else:
            rt: dict[str, Any] = {"text": "".join(block.parts)}
            if block.signature is not None:
                rt["signature"] = block.signature
            payload = {"reasoningContent": {_REASONING: rt}}
        return ProviderReasoningItem(
            _dumps(payload), provider=self.provider, api=self.api, model=self.model, block_type=block.kind,
            turn_id=turn_id, index=block.index, base_url=self.base_url,
        )  # fmt: skip

    def complete(self, notes: list[AdapterEvent]) -> Completion:
        """The assembled parts; a stream that ended before ``messageStop`` kept nothing."""
        if not self.stopped:
            raise self.interrupted("the stream ended before messageStop; nothing of this call was kept")
        turn_id = self.turn_id
        items: list[AssistantTextItem | ToolCallItem] = []
        reasoning: list[ProviderReasoningItem] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.kind == "text":
                text = "".join(block.parts)
                if text:
                    items.append(AssistantTextItem(text=text, turn_id=turn_id, index=index))
            elif block.kind == "toolUse":
                call_id = str(block.tool.get("toolUseId", ""))
                raw = "".join(block.parts)
                items.append(self.tool_call(
                    notes, call_id=call_id, name=str(block.tool.get("name", "")),
                    arguments=raw if raw.strip() else "{}", turn_id=turn_id, index=index, item_id=call_id,
                ))  # fmt: skip
            else:
                reasoning.append(self._reasoning_item(block, turn_id))
        return Completion(
            items=tuple(items),
            reasoning=tuple(reasoning),
            stop_reason=_STOP.get(self.stop_reason or "", "incomplete"),
            stop_detail=self.stop_reason,
            usage=usage_from_converse(self.usage),
            response_id=turn_id,
        )
