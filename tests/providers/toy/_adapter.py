"""``ToyAdapter``: the toy provider's adapter. It only maps: request -> toy body, toy events -> agentlab's.

What it shows a new provider's author, in one small file: the ``Adapter`` protocol's attributes
(``provider``/``api``/``model``/``base_url``/``max_retries``), the continuation filter (another
provider's opaque items are dropped, counted in one ``reasoning_item_dropped`` diagnostic, never
sent), one ``translate`` from the service's error answers to agentlab's error tree, bounded retries
honouring the server's hint, and one completed response last (or a typed error, and no completed
response).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from agentlab.adapters.http_errors import status_error
from agentlab.errors import ProviderError, StreamInterruptedError
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
from agentlab.neutral.request import ModelRequest
from tests.providers.toy._usage import usage_from_toy
from tests.providers.toy.provider import SPEC
from tests.providers.toy.server import ToyServer, ToyStatus

__all__ = ["ToyAdapter", "translate"]


def translate(e: ToyStatus) -> ProviderError:
    """The toy service's error answers through agentlab's one status ladder.

    Only the service's own dialect is declared here: its error body fields and the error type name
    that means "overloaded" whatever the status.
    """
    return status_error(
        e.status,
        e.message,
        provider=SPEC.name,
        error_type=e.error_type,
        request_id=e.request_id,
        headers={"retry-after": str(e.retry_after_s)} if e.retry_after_s is not None else None,
        overloaded_types=("overloaded_error",),
    )


class ToyAdapter:
    """Adapter for the toy service (``.server``); satisfies ``agentlab.adapters.Adapter``."""

    provider = SPEC.name
    api = SPEC.api

    def __init__(self, model: str, *, server: ToyServer | None = None, max_retries: int = 0) -> None:
        self.model = model
        self.server = server or ToyServer()
        self.base_url: str | None = "toy://local"
        self.max_retries = max_retries
        """The toy has no SDK: these are the adapter's own retries of retryable error answers."""

    async def aclose(self) -> None:
        """Nothing to release: the toy service is in process."""

    def _body(self, request: ModelRequest) -> tuple[bytes, list[DiagnosticEvent], int]:
        """The toy wire body; opaque items this service did not make are dropped and counted."""
        sent: list[Any] = []
        for item in request.continuation:
            if item.matches(provider=self.provider, api=self.api, model=self.model, base_url=self.base_url):
                sent.append(json.loads(item.unseal(provider=self.provider, api=self.api)))
        dropped = len(request.continuation) - len(sent)
        diags = []
        if dropped:
            diags.append(
                DiagnosticEvent(
                    code="reasoning_item_dropped",
                    message=f"{dropped} opaque reasoning item(s) not sent: made by another provider or model",
                    data={"count": dropped, "reason": "other_provider", "provider": self.provider},
                )
            )
        body = {
            "model": request.model,
            "input": [i.model_dump(mode="json") for i in request.items],
            "tools": [t.name for t in request.tools],
            "reasoning": sent,
            "stream": request.stream,
        }
        return json.dumps(body).encode(), diags, dropped

    async def _send(self, body: bytes) -> Iterator[bytes]:
        """The answer's lines; retryable error answers are retried ``max_retries`` times."""
        for attempt in range(self.max_retries + 1):
            try:
                return self.server.respond(body)
            except ToyStatus as e:
                err = translate(e)
                if not err.retryable or attempt == self.max_retries:
                    raise err from None
                await asyncio.sleep(err.retry_after or 0.0)
        raise AssertionError("unreachable")  # pragma: no cover

    async def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        """Send one request; yield its display events, then one ``ResponseCompletedEvent``."""
        body, diags, dropped = self._body(request)
        for diag in diags:
            yield diag
        started = time.perf_counter()
        lines = await self._send(body)
        call = _Call(self, started, dropped)
        for event in _events(lines, request.stream):
            for out in call.feed(event):
                yield out
        if call.completed is None:
            raise StreamInterruptedError(
                "the toy stream ended before its 'done' event", provider=self.provider
            )
        yield call.completed


def _events(lines: Iterable[bytes], streamed: bool) -> Iterator[dict[str, Any]]:
    """Toy events from the answer's lines (a JSON array when not streamed)."""
    try:
        for line in lines:
            decoded = json.loads(line)
            yield from (decoded if not streamed else [decoded])
    except (ValueError, ConnectionError) as e:
        raise StreamInterruptedError(
            f"the toy stream broke: {type(e).__name__}", provider=SPEC.name
        ) from None


class _Call:
    """The state of one model call: toy events in, agentlab display events out, then the response."""

    def __init__(self, adapter: ToyAdapter, started: float, dropped: int) -> None:
        self.adapter = adapter
        self.started = started
        self.dropped = dropped
        self.text: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.opaque: list[Any] = []
        self.first_reasoning_s: float | None = None
        self.first_text_s: float | None = None
        self.completed: ResponseCompletedEvent | None = None

    def _since(self) -> float:
        return time.perf_counter() - self.started

    def feed(self, event: dict[str, Any]) -> list[AdapterEvent]:
        kind = event.get("type")
        if kind == "thinking":
            if self.first_reasoning_s is None:
                self.first_reasoning_s = self._since()
            return [ReasoningDeltaEvent(text=event["text"])]
        if kind == "text":
            if self.first_text_s is None:
                self.first_text_s = self._since()
            self.text.append(event["text"])
            return [TextDeltaEvent(text=event["text"])]
        if kind == "call":
            self.calls.append(event)
            return [
                ToolCallDeltaEvent(
                    call_id=event["id"], name=event["name"], arguments_delta=event["arguments"]
                )
            ]
        if kind == "opaque":
            self.opaque.append(event["data"])
            return []
        if kind == "done":
            self.completed = self._finish(event)
            return []
        return []  # a future event type: nothing in it is for this adapter (documented toy policy)

    def _finish(self, done: dict[str, Any]) -> ResponseCompletedEvent:
        a, turn = self.adapter, str(done["id"])
        reasoning = tuple(
            ProviderReasoningItem(
                json.dumps(data).encode(),
                provider=a.provider,
                api=a.api,
                model=a.model,
                block_type=SPEC.reasoning_block_type,
                turn_id=turn,
                index=k,
                base_url=a.base_url,
            )
            for k, data in enumerate(self.opaque)
        )
        pos = len(reasoning)
        items: list[AssistantTextItem | ToolCallItem] = []
        if self.text:
            items.append(AssistantTextItem(text="".join(self.text), turn_id=turn, index=pos))
            pos += 1
        for k, c in enumerate(self.calls):
            items.append(
                ToolCallItem(
                    call_id=c["id"], name=c["name"], arguments=c["arguments"], turn_id=turn, index=pos + k
                )
            )
        stop: StopReason = "tool_use" if done.get("stop") == "tool_use" else "end_turn"
        response = ModelResponse(
            provider=a.provider,
            api=a.api,
            model=a.model,
            response_id=turn,
            items=tuple(items),
            reasoning=reasoning,
            stop_reason=stop,
            usage=usage_from_toy(done.get("usage") or {}),
            reasoning_items_dropped=self.dropped,
        )
        return ResponseCompletedEvent(
            response=response,
            latency_s=self._since(),
            first_reasoning_s=self.first_reasoning_s,
            first_text_s=self.first_text_s,
        )
