"""OpenAI's Batch API for the batch sweep driver: ``/v1/files`` + ``/v1/batches`` of ``/v1/responses``.

The input file is built in memory (a ``SpooledTemporaryFile``: it stays in RAM up to 64 MiB and
beyond that spills to an anonymous temp file that is unlinked from the moment it exists, mode 0600),
uploaded, and closed; nothing of it is logged. The request bodies go in byte for byte as the adapter
built them, so the reasoning items of the continuation reach OpenAI verbatim. Its results are read
into memory only. ``delete`` removes the input, output and error files at OpenAI (``DELETE
/v1/files/{id}``: they hold the prompts and the ``encrypted_content`` items with their summary
text) on every exit of a round; the input file goes as soon as the batch is cancelled, the output
and error files once it has ended (a cancelled batch still writes the lines it finished). The batch
object itself has no delete endpoint; it holds ids, counts and metadata only.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentlab.adapters.batch_api import BatchState, LineOutcome, PendingLine
from agentlab.adapters.http_errors import status_error
from agentlab.adapters.openai_responses._errors import _OVERLOADED_TYPES, PROVIDER, _body_error
from agentlab.adapters.openai_responses._errors import translate as translate_sdk
from agentlab.adapters.openai_responses._stream import ResponseAssembler
from agentlab.assembly.assembler import Assembler, WireCall, assembler_for
from agentlab.errors import AgentlabError, ProviderAPIError, ProviderError
from agentlab.neutral.error_text import provider_text
from agentlab.neutral.request import ModelRequest

if TYPE_CHECKING:
    from agentlab.adapters.openai_responses._adapter import OpenAIResponsesAdapter

__all__ = ["OpenAIBatchAPI"]

_LINE_HEAD = b',"method":"POST","url":"/v1/responses","body":'
_SPOOL_BYTES = 64 * 1024 * 1024
_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
# Line-level error codes a later round may well get through (the request itself was fine).
_RETRYABLE_CODES = frozenset({"batch_expired", "batch_cancelled", "server_error", "batch_failed"})


class OpenAIBatchAPI:
    """The Batch API through the adapter's own ``AsyncOpenAI`` client (its auth, retries, base URL)."""

    provider = PROVIDER
    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024
    searchable = True  # the batch's metadata carries the driver's intent tag

    def __init__(self, adapter: OpenAIResponsesAdapter) -> None:
        self._adapter = adapter
        self._client = adapter.client
        self._files: dict[str, str] = {}
        """batch id -> its input file id (deleted once the batch has ended)."""

    def __repr__(self) -> str:
        return f"<OpenAIBatchAPI model={self._adapter.model!r}>"

    @staticmethod
    def _line(line: PendingLine) -> bytes:
        # The adapter's body bytes, unparsed: a raw newline in JSON is whitespace, never inside a string.
        body: bytes = line.built.body.replace(b"\n", b" ")
        head = b'{"custom_id":' + json.dumps(line.custom_id).encode() + _LINE_HEAD
        return head + body + b"}\n"

    def line_size(self, line: PendingLine) -> int:
        return len(self._line(line))

    def assembler(self) -> Callable[[Any, ModelRequest, WireCall, float], Assembler]:
        return assembler_for(ResponseAssembler, model=self._adapter.model, base_url=self._adapter.base_url)

    async def submit(self, lines: Sequence[PendingLine], *, metadata: Mapping[str, str]) -> str:
        failure: AgentlabError | None = None
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES, mode="w+b") as f:
            for line in lines:
                f.write(self._line(line))
            f.seek(0)
            try:
                up = await self._client.files.create(
                    file=("agentlab-batch.jsonl", f, "application/jsonl"), purpose="batch"
                )
                batch = await self._client.batches.create(
                    input_file_id=up.id,
                    endpoint="/v1/responses",
                    completion_window="24h",
                    metadata=dict(metadata),
                )
            except Exception as e:  # translated outside: no chain to the SDK request (it holds the body)
                failure = translate_sdk(e)
        if failure is not None:
            raise failure
        self._files[batch.id] = up.id
        return batch.id

    async def find(self, intent: str) -> list[str]:
        failure: AgentlabError | None = None
        ids: list[str] = []
        try:
            page = await self._client.batches.list(limit=100)  # newest first; a restart comes soon
            ids = [b.id for b in page.data if (b.metadata or {}).get("agentlab_intent") == intent]
        except Exception as e:
            failure = translate_sdk(e)
        if failure is not None:
            raise failure
        return ids

    async def state(self, batch_id: str) -> BatchState:
        failure: AgentlabError | None = None
        try:
            b = await self._client.batches.retrieve(batch_id)
        except Exception as e:
            failure = translate_sdk(e)
        if failure is not None:
            raise failure
        counts = b.request_counts
        return BatchState(
            batch_id=batch_id,
            status=b.status,
            ended=b.status in _ENDED,
            counts={"total": counts.total, "completed": counts.completed, "failed": counts.failed}
            if counts is not None
            else {},
        )

    async def results(self, batch_id: str) -> list[LineOutcome]:
        failure: AgentlabError | None = None
        outcomes: list[LineOutcome] = []
        try:
            b = await self._client.batches.retrieve(batch_id)
            for file_id in (b.output_file_id, b.error_file_id):
                if file_id:
                    content = await self._client.files.content(file_id)
                    outcomes += [_outcome(raw) for raw in content.content.splitlines() if raw.strip()]
        except Exception as e:
            failure = translate_sdk(e)
        if failure is not None:
            raise failure
        return outcomes

    async def delete(self, batch_id: str, *, ended: bool) -> bool:
        failure: AgentlabError | None = None
        try:
            b = await self._client.batches.retrieve(batch_id)
            ids: list[str | None] = [self._files.get(batch_id) or b.input_file_id]
            if ended:
                ids += [b.output_file_id, b.error_file_id]
            for file_id in ids:
                if file_id:
                    await self._delete_file(file_id)
        except Exception as e:
            failure = translate_sdk(e)
        if failure is not None:
            if not _gone(failure):
                raise failure
            ended = True  # no such batch here: nothing of it is left to delete
        if ended:
            self._files.pop(batch_id, None)
        return ended

    async def _delete_file(self, file_id: str) -> None:
        """``DELETE /v1/files/{id}``; a file already gone is what was wanted."""
        import openai

        with contextlib.suppress(openai.NotFoundError):
            await self._client.files.delete(file_id)

    async def cancel(self, batch_id: str) -> None:
        failure: AgentlabError | None = None
        try:
            await self._client.batches.cancel(batch_id)
        except Exception as e:
            failure = translate_sdk(e)
        if failure is not None and not (isinstance(failure, ProviderAPIError) and failure.status == 409):
            raise failure  # 409: it had ended already, which is what cancel wanted


def _gone(e: AgentlabError) -> bool:
    return isinstance(e, ProviderError) and e.status == 404


def _outcome(raw: bytes) -> LineOutcome:
    """One output/error file line -> the live-equivalent body or the typed error (fields, not values)."""
    obj = json.loads(raw)
    cid = str(obj.get("custom_id"))
    resp = obj.get("response") if isinstance(obj.get("response"), dict) else None
    err = obj.get("error") if isinstance(obj.get("error"), dict) else None
    if resp is not None and resp.get("status_code") == 200 and isinstance(resp.get("body"), dict):
        body = json.dumps(resp["body"], ensure_ascii=False).encode()
        return LineOutcome(cid, body=body, request_id=resp.get("request_id"))
    if resp is not None and isinstance(resp.get("status_code"), int):
        info = _body_error(resp.get("body"))
        return LineOutcome(
            cid,
            request_id=resp.get("request_id"),
            error=status_error(
                resp["status_code"],
                provider_text(str(info.get("message") or f"HTTP {resp['status_code']}")),
                provider=PROVIDER,
                error_type=str(info["type"]) if info.get("type") else None,
                code=str(info["code"]) if info.get("code") else None,
                request_id=resp.get("request_id"),
                overloaded_types=_OVERLOADED_TYPES,
            ),
        )
    code = str((err or {}).get("code") or "batch_error")
    message = f"batch line not answered ({code})"
    retry = code in _RETRYABLE_CODES  # the request was fine; the batch ran out of time or was stopped
    return LineOutcome(
        cid, error=ProviderError(message, provider=PROVIDER, error_type=code, code=code, retryable=retry)
    )
