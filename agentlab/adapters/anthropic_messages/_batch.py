"""Anthropic Message Batches for the batch sweep driver: ``/v1/messages/batches``.

Each request is the adapter's own body as ``params`` (thinking blocks with their signatures, exactly
as built, so the last assistant turn reaches Anthropic unmodified). Requests go in the JSON body of
the create call (no file on disk); the results JSONL is read from ``results_url`` into memory. The
batch is deleted at Anthropic on every exit of a round (``DELETE /v1/messages/batches/{id}``: its
requests and results hold the thinking blocks with their signatures). Anthropic deletes only an
ended batch, so a running one is cancelled first and deleted once it has ended.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx2

from agentlab.adapters.anthropic_messages._errors import _OVERLOADED_TYPES, PROVIDER, translate
from agentlab.adapters.anthropic_messages._stream import MessageAssembler
from agentlab.adapters.batch_api import BatchState, LineOutcome, PendingLine
from agentlab.adapters.http_errors import status_error
from agentlab.assembly.assembler import Assembler, WireCall, assembler_for
from agentlab.errors import AgentlabError, ProviderAPIError, ProviderError
from agentlab.neutral.error_text import provider_text
from agentlab.neutral.request import ModelRequest

if TYPE_CHECKING:
    from agentlab.adapters.anthropic_messages._adapter import AnthropicMessagesAdapter

__all__ = ["AnthropicBatchAPI"]

# The status a live call answers with for each error type (Anthropic's errors page).
_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicBatchAPI:
    """Message Batches through the adapter's own ``AsyncAnthropic`` client."""

    provider = PROVIDER
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024
    searchable = False  # a Message Batch has no metadata or name to carry the driver's intent tag

    def __init__(self, adapter: AnthropicMessagesAdapter) -> None:
        self._adapter = adapter
        self._client = adapter._client

    def __repr__(self) -> str:
        return f"<AnthropicBatchAPI model={self._adapter.model!r}>"

    def line_size(self, line: PendingLine) -> int:
        return len(json.dumps(line.built.body, ensure_ascii=False).encode()) + len(line.custom_id) + 32

    def assembler(self) -> Callable[[Any, ModelRequest, WireCall, float], Assembler]:
        return assembler_for(MessageAssembler, model=self._adapter.model, base_url=self._adapter.base_url)

    async def submit(self, lines: Sequence[PendingLine], *, metadata: Mapping[str, str]) -> str:
        headers = lines[0].built.headers if lines else {}
        requests = [{"custom_id": ln.custom_id, "params": ln.built.body} for ln in lines]
        failure: AgentlabError | None = None
        try:
            batch = await self._client.messages.batches.create(
                requests=requests,  # type: ignore[arg-type]  # the adapter's checked body, as sent live
                extra_headers=dict(headers) or None,
            )
        except Exception as e:  # translated outside: no chain to the SDK request (it holds the body)
            failure = translate(e)
        if failure is not None:
            raise failure
        return batch.id

    async def find(self, intent: str) -> list[str]:
        return []

    async def state(self, batch_id: str) -> BatchState:
        failure: AgentlabError | None = None
        try:
            b = await self._client.messages.batches.retrieve(batch_id)
        except Exception as e:
            failure = translate(e)
        if failure is not None:
            raise failure
        return BatchState(
            batch_id=batch_id,
            status=b.processing_status,
            ended=b.processing_status == "ended",
            counts=b.request_counts.model_dump(),
        )

    async def results(self, batch_id: str) -> list[LineOutcome]:
        failure: AgentlabError | None = None
        raw = b""
        try:
            b = await self._client.messages.batches.retrieve(batch_id)
            if b.results_url:
                get: Any = self._client.get
                resp: httpx2.Response = await get(
                    b.results_url,
                    cast_to=httpx2.Response,
                    options={"headers": {"Accept": "application/binary"}},
                )
                raw = await resp.aread() if not resp.is_closed else resp.content
        except Exception as e:
            failure = translate(e)
        if failure is not None:
            raise failure
        return [_outcome(line) for line in raw.splitlines() if line.strip()]

    async def delete(self, batch_id: str, *, ended: bool) -> bool:
        if not ended:
            return False  # "can only be deleted once they've finished processing"
        await _tolerating(self._client.messages.batches.delete(batch_id), ProviderError, 404)
        return True

    async def cancel(self, batch_id: str) -> None:
        await _tolerating(self._client.messages.batches.cancel(batch_id), ProviderAPIError, 409)


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _outcome(raw: bytes) -> LineOutcome:
    """One results line -> the live-equivalent Message body, or the typed error (fields, not values)."""
    obj = json.loads(raw)
    cid = str(obj.get("custom_id"))
    result = _dict(obj.get("result"))
    kind = result.get("type")
    if kind == "succeeded" and isinstance(result.get("message"), dict):
        return LineOutcome(cid, body=json.dumps(result["message"], ensure_ascii=False).encode())
    if kind == "errored":
        envelope = _dict(result.get("error"))
        inner = _dict(envelope.get("error")) or envelope
        etype = str(inner.get("type") or "api_error")
        msg = provider_text(str(inner.get("message") or f"batch request {etype}"))
        return LineOutcome(
            cid,
            error=status_error(
                _STATUS.get(etype, 500),
                msg,
                provider=PROVIDER,
                error_type=etype,
                request_id=rid if isinstance(rid := envelope.get("request_id"), str) else None,
                overloaded_types=_OVERLOADED_TYPES,
            ),
        )
    code = f"batch_{kind}" if isinstance(kind, str) else "batch_error"
    return LineOutcome(
        cid,
        error=ProviderError(
            f"batch line not answered ({code})",
            provider=PROVIDER,
            error_type=code,
            code=code,
            retryable=kind in ("canceled", "expired"),
        ),
    )


async def _tolerating(call: Awaitable[object], kind: type[ProviderError], status: int) -> None:
    """Await ``call``; its translated error is raised unless it is ``kind`` with ``status``.

    Deleting a batch already gone (404) or cancelling one already ended (409) is what was wanted.
    Translated inside ``except``, raised outside it (nothing of the SDK exception chained).
    """
    failure: AgentlabError | None = None
    try:
        await call
    except Exception as e:
        failure = translate(e)
    if failure is not None and not (isinstance(failure, kind) and failure.status == status):
        raise failure
