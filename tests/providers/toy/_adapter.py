"""``ToyAdapter``: the toy provider's adapter. It only maps: request -> toy body, answer -> a ``WireCall``.

What it shows a new provider's author, in one small file: the ``Adapter`` protocol's attributes
(``provider``/``api``/``model``/``base_url``/``max_retries``), ``stream`` as the shared driver
(:func:`agentlab.assembly.assembler.assemble`: build, open, feed the assembler of :mod:`._stream`,
finish), the continuation filter (another provider's opaque items are dropped, counted in one
``reasoning_item_dropped`` diagnostic by :func:`agentlab.neutral.diagnostics.add_dropped`, never
sent), one ``translate`` from the service's error answers to agentlab's error tree
(:func:`agentlab.adapters.http_errors.status_error`), and bounded retries honouring the server's hint.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from agentlab.adapters.built_request import BuiltRequest, check_request
from agentlab.adapters.http_errors import status_error
from agentlab.assembly.assembler import WireCall, assemble, assembler_for
from agentlab.errors import ProviderError, StreamInterruptedError
from agentlab.neutral.diagnostics import add_dropped
from agentlab.neutral.events import AdapterEvent, DiagnosticEvent
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

    def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        """Send one request; yield its display events, then one ``ResponseCompletedEvent``."""
        return assemble(
            request,
            self.build,
            self._open,
            assembler_for(ToyAssembler, model=self.model, base_url=self.base_url),
        )

    async def _open(self, built: BuiltRequest[bytes], request: ModelRequest) -> WireCall:
        """Send the body; retryable error answers are retried ``max_retries`` times, after the hint."""
        attempt = 0
        while True:
            try:
                answer = self.server.respond(built.body)
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
