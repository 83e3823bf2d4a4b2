"""What the two adapters on the ``openai`` SDK share (Responses, and the Chat Completions dialects).

Both post a body they built themselves through ``client.post(..., cast_to=httpx2.Response)``, so the
SDK's own options travel per request, and both meet the same SDK exceptions besides status errors;
written once here, so both send the same options and name the same failures the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import httpx2
import openai

from agentlab.adapters.built_request import BuiltRequest
from agentlab.adapters.http_errors import connection_error
from agentlab.adapters.sdk_adapter import SDKAdapter
from agentlab.adapters.wire_dialect import WireDialect
from agentlab.assembly.assembler import Assembler, WireCall
from agentlab.assembly.http_body import body_chunks
from agentlab.errors import AgentlabError, MissingApiKeyError, ProviderAPIError, ProviderError
from agentlab.neutral.error_text import provider_text, wire_error_text
from agentlab.neutral.request import ModelRequest

__all__ = ["TRANSPORT_ERRORS", "OpenAIWireAdapter", "request_options", "sdk_error"]

TRANSPORT_ERRORS = (openai.OpenAIError, httpx2.HTTPError, httpx2.StreamError)
"""What a raw post through the SDK, or reading its answer, may raise (translated, never chained)."""


def request_options(max_retries: int, timeout: float | None, headers: Mapping[str, str]) -> dict[str, Any]:
    """The SDK's per-request options for a raw ``client.post``: retries, bearer auth, headers, timeout.

    Per request, not on the client, so they hold on an injected client too.
    """
    options: dict[str, Any] = {"max_retries": max_retries, "security": {"bearer_auth": True}}
    if headers:
        options["headers"] = dict(headers)
    if timeout is not None:
        options["timeout"] = timeout
    return options


def sdk_error(exc: BaseException, provider: str, schema: str) -> ProviderError:
    """An exception that is neither a status error nor a broken stream, as an agentlab error.

    ``schema``: what the answer failed to match (``"the Responses API"``). An exception that is not the
    SDK's (a pydantic or JSON error while the SDK read or wrote a body, a bug) may quote the body it
    touched: described by type and position only.
    """
    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError included
        return connection_error(provider, exc, timed_out=isinstance(exc, openai.APITimeoutError))
    if isinstance(exc, openai.APIResponseValidationError):
        return ProviderAPIError(
            f"response did not match {schema} schema", provider=provider, status=exc.status_code
        )
    if isinstance(exc, openai.OpenAIError):
        return ProviderError(provider_text(str(exc)), provider=provider)
    return ProviderError(f"{type(exc).__name__}: {wire_error_text(exc)}", provider=provider)


class OpenAIWireAdapter(SDKAdapter[openai.AsyncOpenAI]):
    """An adapter posting the body it built through the ``openai`` SDK, for one dialect of a wire format.

    The Responses hosts and the Chat Completions dialects differ in their body, their stream and
    their errors; how they reach the host is the same and written here: the dialect's key variable
    (refused when missing where a key is required), the SDK's per-request options, the raw post to
    ``path`` and the answer handed to the assembler. A subclass that sets ``dialect`` is routed as
    ``dialect.name`` (its ``provider``).
    """

    dialect: ClassVar[WireDialect]
    """The dialect: its ``name`` and its ``host`` (default ``base_url``, key variable)."""
    path: ClassVar[str]
    """The endpoint the body is posted to, under the client's ``base_url``."""
    client_type = openai.AsyncOpenAI

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "dialect" in cls.__dict__:
            cls.provider = cls.dialect.name

    def _keyed_client(self, api_key: str | None, base_url: str | None) -> openai.AsyncOpenAI:
        """A client for the real host at ``base_url``, keyed from the caller or the dialect's variable."""
        d = self.dialect
        env = d.host.api_key_env
        key = self._key(api_key, *((env,) if env else ()))
        if not key and d.host.key_required:
            raise MissingApiKeyError(d.name, env or "api_key")
        # A local server without --api-key gets a placeholder: the SDK needs a non-empty key.
        return openai.AsyncOpenAI(api_key=key or "no-key", base_url=base_url, max_retries=self.max_retries)

    def _connect(self) -> str | None:
        self._options = request_options(self.max_retries, self.timeout, self._headers)
        return super()._connect()

    def _new_assembler(
        self, built: BuiltRequest[Any], request: ModelRequest, call: WireCall, started: float
    ) -> Assembler:
        make: Any = self.assembler_class  # the dialect's assembler takes the dialect too
        assembler: Assembler = make(
            dialect=self.dialect, model=self.model, base_url=self.base_url, request_id=call.request_id,
            origin=request.origin, started=started, reasoning_dropped=built.reasoning_dropped,
        )  # fmt: skip
        return assembler

    def _translate_post(self, exc: BaseException) -> ProviderError:
        """An SDK or transport exception of the post itself, as an agentlab error."""
        raise NotImplementedError(f"{type(self).__name__} must define _translate_post")

    def _translate_read(self, exc: BaseException, request_id: str | None) -> AgentlabError:
        """A transport error while reading the answer (after its headers), as an agentlab error."""
        raise NotImplementedError(f"{type(self).__name__} must define _translate_read")

    def _request_id(self, headers: httpx2.Headers) -> str | None:
        return headers.get("x-request-id")

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
                self.path, cast_to=httpx2.Response, content=built.body, options=self._options,
                stream=request.stream,
            )  # fmt: skip
        except TRANSPORT_ERRORS as e:
            failure = self._translate_post(e)
        if failure is not None:
            raise failure
        streamed = request.stream and "event-stream" in resp.headers.get("content-type", "")
        return WireCall(
            request_id=self._request_id(resp.headers),
            chunks=body_chunks(resp) if streamed else None,
            read=resp.aread,
            close=resp.aclose,
            errors=TRANSPORT_ERRORS,
            translate=self._translate_read,
        )
