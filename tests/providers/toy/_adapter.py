"""``ToyAdapter``: the toy provider's adapter. It only maps: request -> toy body, answer -> a ``WireCall``.

What it shows a new provider's author, in one small file: what an adapter writes on the shared base
(:class:`agentlab.adapters.sdk_adapter.SDKAdapter`, which gives construction, ``stream`` as the
shared driver :func:`agentlab.assembly.assembler.assemble` and ``aclose``): its client class and
assembler (:mod:`._stream`), how to make a new client, ``build`` and ``_open``; the continuation
filter (another provider's opaque items are dropped, counted in one ``reasoning_item_dropped``
diagnostic by :func:`agentlab.neutral.diagnostics.add_dropped`, never sent), one ``translate`` from
the service's error answers to agentlab's error tree (:func:`agentlab.adapters.http_errors.status_error`),
and bounded retries honouring the server's hint.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from agentlab.adapters.built_request import BuiltRequest, check_request
from agentlab.adapters.http_errors import status_error
from agentlab.adapters.sdk_adapter import SDKAdapter
from agentlab.assembly.assembler import WireCall
from agentlab.errors import ProviderError, StreamInterruptedError
from agentlab.neutral.diagnostics import add_dropped
from agentlab.neutral.events import DiagnosticEvent
from agentlab.neutral.request import ModelRequest
from tests.providers.toy._stream import ToyAssembler
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


class ToyAdapter(SDKAdapter[ToyServer]):
    """Adapter for the toy service (``.server``); satisfies ``agentlab.adapters.Adapter``.

    Construction (``client=``: a ``ToyServer`` to use, e.g. with faults; else a new one), ``stream``
    and ``aclose`` are the shared base's (``agentlab.adapters.sdk_adapter.SDKAdapter``).
    ``max_retries``: the toy has no SDK, so these are the adapter's own retries of retryable answers.
    """

    provider = SPEC.name
    api = SPEC.api
    client_type = ToyServer
    assembler_class = ToyAssembler

    def _real_client(self, api_key: str | None, base_url: str | None) -> ToyServer:
        return ToyServer()

    def build(self, request: ModelRequest) -> BuiltRequest[bytes]:
        """The toy wire body; opaque items this service did not make are dropped and counted."""
        check_request(self.provider, self.model, request)
        sent: list[Any] = []
        for item in request.continuation:
            if item.matches(provider=self.provider, api=self.api, model=self.model, base_url=self.base_url):
                sent.append(json.loads(item.unseal(provider=self.provider, api=self.api)))
        dropped = len(request.continuation) - len(sent)
        diags: list[DiagnosticEvent] = []
        why = "made by another provider or model"
        add_dropped(diags, reason="other_provider", provider=self.provider, detail=why, count=dropped)
        body = {
            "model": request.model,
            "input": [i.model_dump(mode="json") for i in request.items],
            "tools": [t.name for t in request.tools],
            "reasoning": sent,
            "stream": request.stream,
        }
        return BuiltRequest(
            json.dumps(body).encode(), diagnostics=diags, reasoning_sent=len(sent), reasoning_dropped=dropped
        )

    async def _open(self, built: BuiltRequest[bytes], request: ModelRequest) -> WireCall:
        """Send the body; retryable error answers are retried ``max_retries`` times, after the hint."""
        attempt = 0
        while True:
            try:
                answer = self.client.respond(built.body)
                break
            except ToyStatus as e:
                err = translate(e)
            if not err.retryable or attempt == self.max_retries:
                raise err
            attempt += 1
            await asyncio.sleep(err.retry_after or 0.0)
        return _wire(answer, streamed=request.stream)


def _wire(answer: Iterator[str], *, streamed: bool) -> WireCall:
    """The toy's answer as ``assemble`` reads it: SSE text chunks, or one whole JSON body."""

    async def chunks() -> AsyncIterator[str]:
        for chunk in answer:
            yield chunk

    async def read() -> bytes:
        return "".join(answer).encode()

    async def close() -> None:
        """Nothing to release: the toy service is in process."""

    return WireCall(
        request_id=None,
        chunks=chunks() if streamed else None,
        read=read,
        close=close,
        errors=(ConnectionError,),
        translate=_broken,
    )


def _broken(exc: BaseException, request_id: str | None) -> StreamInterruptedError:
    """A connection that broke mid-answer: retryable (a new call may well succeed)."""
    return StreamInterruptedError(
        f"the toy connection broke ({type(exc).__name__}); nothing of this call was kept",
        provider=SPEC.name,
        request_id=request_id,
        retryable=True,
    )
