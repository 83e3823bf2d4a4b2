"""Gemini batch mode for the batch sweep driver: ``models/{model}:batchGenerateContent``, inlined.

Through the SDK's API client, as the adapter sends a live call (auth, versioned URL, retries): the
requests are the adapter's own body bytes spliced into the create body, so every thought signature
reaches Google byte for byte (the SDK's typed ``batches.create`` would re-encode them). Inlined
requests are limited to 20 MB per batch; the results come back inlined in the batch operation and
are read into memory only. The batch is deleted at Google on every exit of a round (``DELETE
batches/{id}``: the operation holds the requests and responses with their thought signatures);
deleting does not cancel a running batch, so the driver cancels it first. Inlined input and output
leave no file at Google (a ``responsesFile``, should one be named, is deleted too). Vertex AI batch
prediction (Cloud Storage / BigQuery in and out) is a different API and is refused here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentlab.adapters.batch_api import BatchState, LineOutcome, PendingLine
from agentlab.adapters.google_gemini import _api_client
from agentlab.adapters.google_gemini._errors import PROVIDER, translate
from agentlab.adapters.google_gemini._stream import GeminiAssembler
from agentlab.adapters.http_errors import status_error
from agentlab.assembly.assembler import Assembler, WireCall, assembler_for
from agentlab.errors import AgentlabError, ConfigError, ProviderError
from agentlab.neutral.error_text import provider_text
from agentlab.neutral.request import ModelRequest

if TYPE_CHECKING:
    from agentlab.adapters.google_gemini._adapter import GoogleGeminiAdapter

__all__ = ["GeminiBatchAPI"]

_ENDED = frozenset(
    {"BATCH_STATE_SUCCEEDED", "BATCH_STATE_FAILED", "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED"}
)
# google.rpc.Code -> the HTTP status a live call answers with (the API's documented mapping).
_HTTP = {1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 13: 500,
         14: 503, 16: 401}  # fmt: skip


class GeminiBatchAPI:
    """Batch mode (Gemini API) through the adapter's own ``google.genai`` API client."""

    provider = PROVIDER
    max_requests = 100_000
    max_bytes = 20 * 1024 * 1024  # inlined requests; larger rounds are cut into several batches
    searchable = True  # the display name ends with the driver's intent tag

    def __init__(self, adapter: GoogleGeminiAdapter) -> None:
        if adapter.vertexai:
            raise ConfigError(
                "google: backend='batch' runs on the Gemini API's batch mode; Vertex AI batch prediction "
                "(Cloud Storage / BigQuery) is not supported here"
            )
        self._adapter = adapter
        self._api: Any = adapter._api
        self._options = adapter._options

    def __repr__(self) -> str:
        return f"<GeminiBatchAPI model={self._adapter.model!r}>"

    @staticmethod
    def _item(line: PendingLine) -> bytes:
        body: bytes = line.built.body.replace(b"\n", b" ")
        return b'{"request":' + body + b',"metadata":{"key":' + json.dumps(line.custom_id).encode() + b"}}"

    def line_size(self, line: PendingLine) -> int:
        return len(self._item(line)) + 1

    def assembler(self) -> Callable[[Any, ModelRequest, WireCall, float], Assembler]:
        return assembler_for(GeminiAssembler, model=self._adapter.model, base_url=self._adapter.base_url)

    async def _call(self, method: str, path: str, data: bytes | None = None) -> dict[str, Any]:
        failure: AgentlabError | None = None
        try:
            resp = await _api_client.send(self._api, method, path, self._options, data, stream=False)
            text = resp.response_stream[0] if resp.response_stream else ""
        except Exception as e:  # translated outside: no chain to the SDK request (key, body)
            failure = translate(e)
        if failure is not None:
            raise failure
        obj = json.loads(text or "{}")
        return obj if isinstance(obj, dict) else {}

    def _model_path(self) -> str:
        m = self._adapter.model
        return m if m.startswith("models/") else f"models/{m}"

    async def submit(self, lines: Sequence[PendingLine], *, metadata: Mapping[str, str]) -> str:
        name = f"agentlab round {metadata.get('agentlab_round', '?')} {metadata.get('agentlab_intent', '')}"
        items = b",".join(self._item(ln) for ln in lines)
        body = (
            b'{"batch":{"displayName":' + json.dumps(name).encode()
            + b',"inputConfig":{"requests":{"requests":[' + items + b"]}}}}"
        )  # fmt: skip
        op = await self._call("post", f"{self._model_path()}:batchGenerateContent", body)
        return str(op.get("name") or (op.get("metadata") or {}).get("name"))

    async def find(self, intent: str) -> list[str]:
        listing = await self._call("get", "batches?pageSize=100")  # newest first; a restart comes soon
        ops = [_dict(op) for op in listing.get("operations") or []]
        return [str(op.get("name")) for op in ops
                if str(_dict(op.get("metadata")).get("displayName", "")).endswith(f" {intent}")]  # fmt: skip

    async def state(self, batch_id: str) -> BatchState:
        op = await self._call("get", batch_id)
        meta = _dict(op.get("metadata"))
        status = str(meta.get("state", "BATCH_STATE_UNSPECIFIED"))
        stats = _dict(meta.get("batchStats"))
        return BatchState(
            batch_id=batch_id,
            status=status,
            ended=status in _ENDED or bool(op.get("done")),
            counts={k: int(v) for k, v in stats.items() if str(v).isdigit()},
        )

    async def results(self, batch_id: str) -> list[LineOutcome]:
        op = await self._call("get", batch_id)
        inlined = _dict(_dict(op.get("response")).get("inlinedResponses")).get("inlinedResponses") or []
        return [_outcome(item) for item in inlined if isinstance(item, dict)]

    async def delete(self, batch_id: str, *, ended: bool) -> bool:
        try:
            op = await self._call("get", batch_id)
        except ProviderError as e:
            if e.status != 404:
                raise
            return True
        output = _dict(op.get("response")).get("responsesFile")
        if isinstance(output, str) and output:
            await self._delete(output)
        await self._delete(batch_id)
        return True  # deleting does not cancel: the caller cancelled it already if it was running

    async def _delete(self, name: str) -> None:
        """``DELETE`` a batch or a file; one already gone is what was wanted."""
        try:
            await self._call("delete", name)
        except ProviderError as e:
            if e.status != 404:
                raise

    async def cancel(self, batch_id: str) -> None:
        try:
            await self._call("post", f"{batch_id}:cancel", b"{}")
        except ProviderError as e:
            if e.status != 400:  # FAILED_PRECONDITION: it had ended already, which is what cancel wanted
                raise


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _outcome(item: dict[str, Any]) -> LineOutcome:
    """One inlined response -> the live-equivalent ``GenerateContentResponse`` body, or the typed error."""
    cid = str(_dict(item.get("metadata")).get("key"))
    if isinstance(item.get("response"), dict):
        return LineOutcome(cid, body=json.dumps(item["response"], ensure_ascii=False).encode())
    err = _dict(item.get("error"))
    code = err["code"] if isinstance(err.get("code"), int) else 2
    message = provider_text(str(err.get("message") or f"batch request failed (rpc code {code})"))
    if code == 1:  # CANCELLED: the request was fine, the batch was stopped
        return LineOutcome(
            cid, error=ProviderError(message, provider=PROVIDER, error_type="CANCELLED", retryable=True)
        )
    return LineOutcome(cid, error=status_error(_HTTP.get(code, 500), message, provider=PROVIDER))
