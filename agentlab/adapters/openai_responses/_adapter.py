"""The OpenAI Responses adapter: ``ModelRequest`` -> ``POST /v1/responses`` -> agentlab events.

The official ``openai`` SDK stays in charge of what it is good at: auth, base URL, headers, bounded
retries honouring ``retry-after`` (``max_retries``), status errors. The adapter builds the body
itself (``_request``: reasoning items must go back byte for byte) and reads the raw SSE lines
itself (``_stream``: one ``json.loads`` per event instead of the SDK's typed event union, which
costs several times more per delta). SDK exceptions become agentlab errors in one place
(``_errors.translate``).

A stream that breaks after events were yielded is never retried here: it raises
``StreamInterruptedError`` and yields no ``ResponseCompletedEvent``, so a run's checkpoint never
receives half a response.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2
import openai

from agentlab.adapters._simulated import in_process, is_simulated, simulator_key
from agentlab.adapters.built_request import BuiltRequest, check_adapter_args, check_request
from agentlab.adapters.openai_responses._errors import translate
from agentlab.adapters.openai_responses._request import (
    API,
    PROVIDER,
    build_request,
    is_reasoning_model,
    strict_schema_ok,
)
from agentlab.adapters.openai_responses._stream import ResponseAssembler
from agentlab.assembly.assembler import WireCall, assemble, assembler_for
from agentlab.errors import MissingApiKeyError, ProviderError
from agentlab.neutral.events import AdapterEvent
from agentlab.neutral.request import ModelRequest
from agentlab.records.logs import install_redaction, stack_loggers

__all__ = [
    "OpenAIResponsesAdapter",
    "build_request",
    "is_reasoning_model",
    "strict_schema_ok",
]

_TRANSPORT_ERRORS = (openai.OpenAIError, httpx2.HTTPError, httpx2.StreamError)


def _translate_read(exc: BaseException, request_id: str | None) -> ProviderError:
    """A transport error while reading the answer (after its headers): see ``_errors.translate``."""
    return translate(exc, request_id=request_id)


class OpenAIResponsesAdapter:
    """Adapter for the OpenAI Responses API on the official SDK (``openai``, httpx2 transport).

    ``client`` is an ``openai.AsyncOpenAI`` to use as is (tests pass one on an
    ``httpx2.MockTransport``); without it a ``sim-*`` model gets the in-process simulator's client
    and a real model gets a client keyed from ``api_key`` or ``OPENAI_API_KEY``.
    ``max_retries``/``timeout``/``extra_headers`` apply to every request this adapter sends.
    """

    provider = PROVIDER
    api = API

    def __init__(
        self,
        model: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 3,
        timeout: float | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        check_adapter_args(
            PROVIDER,
            model,
            max_retries=max_retries,
            timeout=timeout,
            extra_headers=extra_headers,
            client=client,
            client_type=openai.AsyncOpenAI,
            api_key=api_key,
            base_url=base_url,
        )
        self.model = model
        self.max_retries = max_retries
        self.timeout = timeout
        self._headers = dict(extra_headers or {})
        self._owns_client = client is None
        if client is None and in_process(model, base_url):
            from agentlab.sim import openai_client

            client = openai_client(**({"api_key": api_key} if api_key else {}))
        elif client is None:
            env = os.environ.get("OPENAI_API_KEY")
            # A sim name here is the simulator served at base_url: never an environment key.
            key = simulator_key(api_key) if is_simulated(model) else api_key or env
            if not key:
                raise MissingApiKeyError("openai", "OPENAI_API_KEY")
            client = openai.AsyncOpenAI(api_key=key, base_url=base_url, max_retries=max_retries)
        self._client: openai.AsyncOpenAI = client
        install_redaction(*stack_loggers(client))  # the loggers this client can really reach
        self.base_url: str | None = str(client.base_url).rstrip("/")
        self._options: dict[str, Any] = {
            "max_retries": max_retries,
            "security": {"bearer_auth": True},
        }
        if self._headers:
            self._options["headers"] = self._headers
        if timeout is not None:
            self._options["timeout"] = timeout

    def __repr__(self) -> str:
        return f"<OpenAIResponsesAdapter model={self.model!r} base_url={self.base_url!r}>"

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client in use (e.g. to share its connection pool)."""
        return self._client

    def build(self, request: ModelRequest) -> BuiltRequest[bytes]:
        """The wire body this adapter would send for ``request`` (no I/O); raises on bad settings."""
        check_request(PROVIDER, self.model, request)
        return build_request(request, model=self.model, base_url=self.base_url)

    def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        """Send one request; yield display events and diagnostics, then one ``ResponseCompletedEvent``.

        The shared driver (:func:`agentlab.assembly.assembler.assemble`) does the streaming; this
        adapter only opens the HTTP answer (:meth:`_open`) and maps its events (``ResponseAssembler``).
        """
        return assemble(
            request,
            self.build,
            self._open,
            assembler_for(ResponseAssembler, model=self.model, base_url=self.base_url),
        )

    async def _open(self, built: BuiltRequest[bytes], request: ModelRequest) -> WireCall:
        """POST the body through the SDK (its auth, status checks and retries); the raw answer back.

        SDK exceptions are translated inside ``except`` but raised outside it: the agentlab error
        then has no ``__context__``/``__cause__`` leading to the SDK exception, whose ``.request``
        holds the auth header and the body (opaque items included), nor to its frames.
        """
        failure: ProviderError | None = None
        try:
            # ``cast_to=httpx2.Response`` makes the SDK hand back the raw response (unread when
            # streaming) after its own status checks and retries; the overloads cannot express that.
            post: Any = self._client.post
            resp: httpx2.Response = await post(
                "/responses",
                cast_to=httpx2.Response,
                content=built.body,
                options=self._options,
                stream=request.stream,
            )
        except _TRANSPORT_ERRORS as e:
            failure = translate(e)
        if failure is not None:
            raise failure
        streamed = request.stream and "event-stream" in resp.headers.get("content-type", "")
        return WireCall(
            request_id=resp.headers.get("x-request-id"),
            chunks=resp.aiter_text() if streamed else None,
            read=resp.aread,
            close=resp.aclose,
            errors=_TRANSPORT_ERRORS,
            translate=_translate_read,
        )

    async def aclose(self) -> None:
        """Close the SDK client if this adapter created it."""
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> OpenAIResponsesAdapter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
