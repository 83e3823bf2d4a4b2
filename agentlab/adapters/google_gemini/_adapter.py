"""The Google Gemini adapter, on the official ``google-genai`` SDK (Gemini API and Vertex AI).

The SDK stays in charge of what it is good at: credentials (``x-goog-api-key``, or Application
Default Credentials on Vertex AI), the endpoint and API version, bounded retries (``HttpRetryOptions``
from ``max_retries``; 0 lets the run retry) and HTTP error answers (``errors.APIError``). The adapter
builds the body itself (``_request``: thought signatures must go back verbatim, on their part) and
reads the raw SSE text itself (``_stream``).

Why the SDK's API client and not ``client.aio.models.generate_content``: the typed path converts the
body through ``types.Content`` (it decodes ``thoughtSignature`` to bytes and re-encodes it as URL-safe
base64: not verbatim) and parses every chunk into pydantic models (costly per event), and
``async_request_streamed`` re-serializes each chunk. The SDK's API client is the layer under both:
it adds auth, the versioned URL (``v1beta/models/...``; on Vertex
``projects/P/locations/L/publishers/google/models/...``), timeouts and retries, posts the bytes
given and, streaming, hands back the unread ``httpx2.Response``. google-genai does not make it
public: :mod:`._api_client` is the one module that touches it, and says why.

Transport injection: ``client`` is a ``google.genai.Client`` to use as is (tests and the simulator
build one with ``types.HttpOptions(base_url=..., httpx_async_client=httpx2.AsyncClient(transport=...))``,
or ``async_client_args={"transport": ...}``; a client that would stream through aiohttp is refused);
without it a ``sim-*`` model gets the simulator's client (``agentlab.sim.gemini_client``) and a real
model a client keyed from ``api_key`` / ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``, or, with
``vertexai=True``, a Vertex AI client (``project``/``location`` or the SDK's environment variables, with
Application Default Credentials; or ``api_key`` alone: express mode).
Signatures are tagged with the endpoint (``base_url``), so one made on Vertex is never sent to the
Gemini API or back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from functools import partial
from typing import Any, Unpack

import httpx2
from google import genai
from google.auth import exceptions as google_auth_errors
from google.genai import errors as genai_errors
from google.genai import types

from agentlab.adapters.built_request import BuiltRequest, check_request
from agentlab.adapters.google_gemini import _api_client
from agentlab.adapters.google_gemini._cache import ExplicitCaches, wants_explicit
from agentlab.adapters.google_gemini._errors import PROVIDER, translate
from agentlab.adapters.google_gemini._request import build_request
from agentlab.adapters.google_gemini._stream import API, GeminiAssembler
from agentlab.adapters.http_errors import broken_stream
from agentlab.adapters.sdk_adapter import AdapterOptions, SDKAdapter
from agentlab.assembly.assembler import WireCall, assemble
from agentlab.assembly.http_body import body_chunks
from agentlab.errors import (
    AgentlabError,
    ConfigError,
    MissingApiKeyError,
    ProviderError,
)
from agentlab.neutral.continuity import ContinuityLayout, OpaqueSite
from agentlab.neutral.events import AdapterEvent, ResponseCompletedEvent
from agentlab.neutral.request import ModelRequest
from agentlab.records.logs import install_redaction, stack_loggers

__all__ = ["GoogleGeminiAdapter"]

GEMINI_API_VERSION = "v1beta"
"""The Gemini API version this adapter posts to (Vertex AI keeps the SDK's, ``v1beta1``)."""
_OPEN_ERRORS = (
    genai_errors.APIError,
    httpx2.HTTPError,
    httpx2.StreamError,
    google_auth_errors.GoogleAuthError,
)
_READ_ERRORS = (httpx2.HTTPError, httpx2.StreamError)


_broken = partial(broken_stream, provider=PROVIDER)
"""A connection that broke mid-stream: retryable (a new call may well succeed)."""


def _http_options(
    base_url: str | None, timeout: float | None, headers: Mapping[str, str], max_retries: int
) -> types.HttpOptions:
    kw: dict[str, Any] = {"retry_options": types.HttpRetryOptions(attempts=max_retries + 1)}
    if base_url is not None:
        kw["base_url"] = base_url
    if timeout is not None:
        kw["timeout"] = int(timeout * 1000)  # the SDK's timeout is in milliseconds
    if headers:
        kw["headers"] = dict(headers)
    return types.HttpOptions(**kw)


def _vertex_client(
    *, api_key: str | None, project: str | None, location: str | None, options: types.HttpOptions
) -> genai.Client:
    """A Vertex AI client: express mode (an API key, the global host) or project/location with ADC.

    The SDK takes one or the other (it refuses both); without either it asks Application Default
    Credentials for a project, and their absence is google.auth's exception: turned into a
    ``ConfigError`` naming what to set, raised outside the ``except`` (nothing of google.auth chained).
    """
    if api_key and (project or location):
        raise ConfigError(
            "google: Vertex AI takes either api_key (express mode) or project/location (Application "
            "Default Credentials), not both"
        )
    kw: dict[str, Any] = {"api_key": api_key} if api_key else {"project": project, "location": location}
    failure: ConfigError | None = None
    try:
        return genai.Client(vertexai=True, http_options=options, **kw)
    except google_auth_errors.GoogleAuthError as exc:
        failure = ConfigError(
            "google: no Vertex AI credentials: pass project= and location= (or set GOOGLE_CLOUD_PROJECT "
            "and GOOGLE_CLOUD_LOCATION) with Application Default Credentials, or api_key= for express "
            f"mode ({type(exc).__name__})"
        )
    raise failure


class GoogleGeminiAdapter(SDKAdapter[genai.Client]):
    """Adapter for Gemini ``generateContent`` / ``streamGenerateContent`` on the official SDK.

    Construction, the client and ``aclose`` are the base's (``agentlab.adapters.sdk_adapter``);
    ``vertexai``/``project``/``location`` choose a new real client's endpoint.
    ``max_retries``/``timeout``/``extra_headers`` apply to every request this adapter sends (on an
    injected client too: they are per-request options). The key is never shown in ``repr``.
    """

    provider = PROVIDER
    api = API
    client_type = genai.Client
    assembler_class = GeminiAssembler
    continuity_layout = ContinuityLayout(
        sites=(OpaqueSite(("contents", "*", "parts", "*", "thoughtSignature")),)
    )
    """A thought signature rides on the part it came with."""

    def __init__(
        self,
        model: str,
        *,
        vertexai: bool = False,
        project: str | None = None,
        location: str | None = None,
        **options: Unpack[AdapterOptions[genai.Client]],
    ) -> None:
        self.vertexai = vertexai
        self._vertex_place = (project, location)
        super().__init__(model, **options)

    def _real_client(self, api_key: str | None, base_url: str | None) -> genai.Client:
        options = _http_options(base_url, self.timeout, {}, self.max_retries)
        if self.vertexai:
            project, location = self._vertex_place
            return _vertex_client(api_key=api_key, project=project, location=location, options=options)
        key = self._key(api_key, "GEMINI_API_KEY", "GOOGLE_API_KEY")
        if not key:
            raise MissingApiKeyError(PROVIDER, "GEMINI_API_KEY")
        return genai.Client(api_key=key, http_options=options)

    def _connect(self) -> str | None:
        self._api: Any = _api_client.api_client(self._client)
        _api_client.use_httpx2(self._api, owned=self._owns_client)
        self.vertexai = bool(self._api.vertexai)
        self._options = _http_options(None, self.timeout, self._headers, self.max_retries)
        if not self.vertexai:
            # The SDK's default for the Gemini API is v1; thought signatures, thinkingConfig and
            # responseJsonSchema are documented (and recorded) on v1beta.
            self._options.api_version = GEMINI_API_VERSION
        self._caches = ExplicitCaches(self._client, self.model, self._options)
        # The SDK's loggers, and those of the HTTP stack this client really sends through.
        http = _api_client.httpx2_client(self._api)
        install_redaction("google_genai", *(stack_loggers(http) if http is not None else ()))
        return self._endpoint()

    def _endpoint(self) -> str:
        """The endpoint signatures are tagged with: base URL, plus project/location on Vertex AI."""
        base = _api_client.base_url(self._api)
        if self.vertexai and (self._api.project or self._api.location):
            return f"{base}/projects/{self._api.project}/locations/{self._api.location}"
        return base

    def __repr__(self) -> str:
        where = "vertexai" if self.vertexai else "gemini-api"
        return f"<GoogleGeminiAdapter model={self.model!r} endpoint={where} base_url={self.base_url!r}>"

    def build(self, request: ModelRequest) -> BuiltRequest[bytes]:
        """The wire body this adapter would send for ``request`` (no I/O); raises on bad settings."""
        check_request(PROVIDER, self.model, request)
        return build_request(request, base_url=self.base_url)

    def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        """Send one request; yield display events and diagnostics, then one ``ResponseCompletedEvent``."""
        return self._stream_cached(request) if wants_explicit(request) else super().stream(request)

    async def _stream_cached(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        """``stream`` with the loop's explicit cache (``_cache``): made or reused, then the call.

        A cache the API no longer has (its ttl ran out during a long tool step: 403 "CachedContent
        not found") is made again once, before anything of the call was shown.
        """
        for attempt in (0, 1):
            built = self.build(request)
            if attempt:
                built.diagnostics.clear()  # shown with the first attempt; only the new cache's now
            await self._caches.apply(request, built)
            events = assemble(request, _given(built), self._open, self._new_assembler, self.continuity_layout)
            try:
                async for ev in events:
                    yield self._caches.billed(request, ev) if type(ev) is ResponseCompletedEvent else ev
                return
            except ProviderError as exc:
                if attempt or not self._caches.lost(request, exc):
                    raise
            finally:
                await events.aclose()

    async def end_run(self, run_id: str) -> None:
        """The run ended: delete the explicit cache made for its loop, if any."""
        await self._caches.end(run_id)

    def _path(self, stream: bool) -> str:
        name = self.model if self.model.startswith(("models/", "publishers/", "projects/")) else None
        if name is None:
            name = f"publishers/google/models/{self.model}" if self.vertexai else f"models/{self.model}"
        return f"{name}:streamGenerateContent?alt=sse" if stream else f"{name}:generateContent"

    async def _open(self, built: BuiltRequest[bytes], request: ModelRequest) -> WireCall:
        """POST the body through the SDK's API client (auth, URL, retries, status errors).

        SDK exceptions are translated inside ``except`` but raised outside it: the agentlab error then
        has no ``__context__``/``__cause__`` leading to the SDK exception (its response holds the
        request, with the key header and the body).
        """
        failure: AgentlabError | None = None
        try:
            resp = await _api_client.send(
                self._api,
                "post",
                self._path(request.stream),
                self._options,
                built.body,
                stream=request.stream,
            )
        except _OPEN_ERRORS as exc:
            failure = translate(exc)
        if failure is not None:
            raise failure
        headers = resp.headers or {}
        rid = headers.get("x-request-id") or headers.get("x-goog-request-id")
        if request.stream:
            raw: httpx2.Response = resp.response_stream
            return WireCall(
                request_id=rid, chunks=body_chunks(raw), read=raw.aread, close=raw.aclose,
                errors=_READ_ERRORS, translate=_broken,
            )  # fmt: skip
        text = resp.response_stream[0] if resp.response_stream else ""
        body = text.encode("utf-8") if isinstance(text, str) else bytes(text)

        async def read() -> bytes:
            return body

        return WireCall(
            request_id=rid, chunks=None, read=read, close=_nothing, errors=_READ_ERRORS, translate=_broken
        )

    async def aclose(self) -> None:
        """Delete any explicit cache still held, and close the SDK client if this adapter created it."""
        await self._caches.end_all()
        await super().aclose()

    async def _close_client(self) -> None:
        """Close the SDK client and the httpx2 client under it, which the SDK leaves open.

        google-genai closes only an httpx client it made itself; the simulator's client names its own,
        and :func:`._api_client.use_httpx2` names the SDK's as the caller's. Both came with a client this
        adapter made, so they are this adapter's to close.
        """
        await self._client.aio.aclose()
        http = _api_client.httpx2_client(self._api)
        if http is not None:
            await http.aclose()


def _given(built: BuiltRequest[bytes]) -> Callable[[ModelRequest], BuiltRequest[bytes]]:
    """A ``build`` for ``assemble`` that hands back a body already built (and rewritten for a cache)."""

    def build(_request: ModelRequest) -> BuiltRequest[bytes]:
        return built

    return build


async def _nothing() -> None:
    """A non-streaming answer was read whole by the SDK: nothing is left open."""
