"""The Anthropic Messages adapter, on the official ``anthropic`` SDK.

The SDK stays in charge of what it is good at: credentials, headers, retries (bounded, honouring
``retry-after``/``retry-after-ms``, never re-routed) and HTTP error answers. The response body is read
raw (``with_streaming_response`` / ``with_raw_response``): SSE lines go through ``json.loads`` and a dict
dispatch in :mod:`._stream`, because the SDK's typed event union costs several times more per event
than the mapping itself. Streaming and non-streaming share the same assembler and produce the same
``ModelResponse``.

* :mod:`._request`: ``ModelRequest`` -> body (thinking config and its rules, verbatim thinking
  blocks, the documented recovery for a dangling tool-use turn, cache breakpoints).
* :mod:`._stream`: raw events -> display events + ``ModelResponse`` (portable items, opaque
  ``ProviderReasoningItem``s, usage, stop reason).
* :mod:`._errors`: the one place SDK exceptions become agentlab errors.

A stream that breaks after events were yielded raises ``StreamInterruptedError`` and is not retried
here: the caller (the run) keeps its checkpoint as it was before the call.
"""

from __future__ import annotations

import inspect
import os
from functools import partial
from typing import Any, TypeVar

import anthropic
import httpx2

from agentlab.adapters.anthropic_messages._errors import PROVIDER, translate
from agentlab.adapters.anthropic_messages._models import nonstreaming_limit
from agentlab.adapters.anthropic_messages._request import API_VERSION, build_request
from agentlab.adapters.anthropic_messages._stream import MessageAssembler
from agentlab.adapters.built_request import BuiltRequest, check_request
from agentlab.adapters.http_errors import broken_stream
from agentlab.adapters.sdk_adapter import SDKAdapter
from agentlab.assembly.assembler import WireCall
from agentlab.assembly.http_body import body_chunks
from agentlab.errors import (
    AgentlabError,
    InvalidSettingsError,
    MissingApiKeyError,
)
from agentlab.neutral.continuity import ContinuityLayout, OpaqueSite
from agentlab.neutral.request import ModelRequest

__all__ = ["AnthropicMessagesAdapter", "BuiltRequest", "MessageAssembler", "MessagesAdapter", "build_request"]

API = "messages"


def _create_params() -> frozenset[str]:
    """Body keys ``AsyncMessages.create`` takes as keyword arguments; others travel as ``extra_body``."""
    from anthropic.resources.messages import AsyncMessages

    skip = {"self", "stream", "extra_headers", "extra_query", "extra_body", "timeout"}
    return frozenset(p for p in inspect.signature(AsyncMessages.create).parameters if p not in skip)


_CREATE_PARAMS = _create_params()
_AUTH_HEADERS = frozenset({"authorization", "x-api-key"})


def _require_auth(client: anthropic.AsyncAnthropic) -> None:
    """``MissingApiKeyError`` now for a client that has no way to authenticate.

    The SDK finds out only when a request is built, and says so in the text of a ``TypeError``; the
    same rule is read here from the client's documented attributes: a key or token, a credentials
    provider (``custom_auth``), or an ``Authorization``/``X-Api-Key`` default header (an explicitly
    omitted one counts: the caller authenticates some other way).
    """
    if client.api_key or client.auth_token or client.auth_headers or client.custom_auth is not None:
        return
    if any(k.lower() in _AUTH_HEADERS for k in client.default_headers):
        return
    raise MissingApiKeyError(PROVIDER, "ANTHROPIC_API_KEY")


_OPAQUE_BLOCKS = ("thinking", "redacted_thinking", "compaction")


MessagesClient = TypeVar(
    "MessagesClient",
    bound="anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock | anthropic.AsyncAnthropicVertex",
)
"""The anthropic SDK's async clients that speak Messages: Anthropic's API, Bedrock's, Vertex's."""


class MessagesAdapter(SDKAdapter[MessagesClient]):
    """Maps ``ModelRequest`` onto a Messages call and its answer back onto agentlab events.

    On any of the SDK's Messages clients: :class:`AnthropicMessagesAdapter` is Anthropic's API, and
    :mod:`agentlab.adapters.anthropic_platforms` the Bedrock and Vertex clients. Construction, the
    client and ``aclose`` are the base's (``agentlab.adapters.sdk_adapter``); ``max_retries``/
    ``timeout`` are the client's settings here.
    """

    provider = PROVIDER
    api = API
    assembler_class = MessageAssembler
    continuity_layout = ContinuityLayout(
        sites=(OpaqueSite(("messages", "*", "content", "*"), frozenset(_OPAQUE_BLOCKS)),),
        follower="later",
    )
    """Thinking, redacted thinking and compaction blocks sit in the messages' content lists."""

    def _client_options(self) -> dict[str, Any]:
        return {
            "max_retries": self.max_retries,
            **({"timeout": self.timeout} if self.timeout is not None else {}),
        }

    def _simulator_options(self, api_key: str | None) -> dict[str, Any]:
        return {**self._client_options(), **super()._simulator_options(api_key)}

    def _connect(self) -> str | None:
        # The SDK retries HTTP errors itself; the run reads this to avoid retrying them again.
        self.max_retries = int(self._client.max_retries)
        return super()._connect()

    @property
    def api_version(self) -> str:
        """The ``anthropic-version`` this adapter's requests carry.

        The SDK's, unless pinned by ``extra_headers``; it decides whether sampling knobs exist
        (see ``_request.takes_sampling``).
        """
        return self._headers.get("anthropic-version", API_VERSION)

    def build(self, request: ModelRequest) -> BuiltRequest[dict[str, Any]]:
        """The body this adapter would send for ``request`` (no I/O); raises ``InvalidSettingsError``."""
        check_request(self.provider, self.model, request)
        return build_request(
            request, base_url=self.base_url, extra_headers=self._headers, provider=self.provider
        )

    def _check_nonstreaming(self, max_tokens: int) -> None:
        """Refuse a non-streaming call the SDK would refuse, before it is called.

        At the SDK's default timeout the SDK refuses a non-streaming call it expects to run over 10
        minutes (:func:`._models.nonstreaming_limit`) and says so only in a ``ValueError``'s text;
        ``_open`` passes the client's timeout explicitly, so that decision is made here alone. A
        client with a timeout of its own takes any size, as with the SDK; so does a batch line (the
        batch path builds with this adapter but never opens a call here).
        """
        if self._client.timeout != anthropic.DEFAULT_TIMEOUT:
            return
        limit = nonstreaming_limit(self.model)
        if max_tokens > limit:
            raise InvalidSettingsError(
                f"anthropic: max_output_tokens={max_tokens} is too large for a non-streaming call on "
                f"{self.model} (at most {limit}: the SDK estimates it could exceed its 10-minute "
                "timeout); use stream=True, lower max_output_tokens, or give the client a timeout"
            )

    def _call_kwargs(self, built: BuiltRequest[dict[str, Any]], *, stream: bool) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for k, v in built.body.items():
            (kwargs if k in _CREATE_PARAMS else extra)[k] = v
        if extra:
            kwargs["extra_body"] = extra
        if built.headers:
            kwargs["extra_headers"] = built.headers
        if stream:
            kwargs["stream"] = True
        return kwargs

    def _request_id(self, sdk_id: str | None, headers: httpx2.Headers) -> str | None:
        """The answer's request id: the SDK reads Anthropic's ``request-id`` header (a platform, its own)."""
        return sdk_id

    def _translate(self, exc: BaseException) -> AgentlabError:
        """The one translation of this adapter's SDK exceptions (a platform client reads its own shapes)."""
        return translate(exc, self.provider)

    async def _open(self, built: BuiltRequest[dict[str, Any]], request: ModelRequest) -> WireCall:
        """Send the body through the SDK (credentials, retries, status errors); the raw answer back.

        SDK exceptions are translated inside ``except`` but raised outside it: the agentlab error
        then has no ``__context__``/``__cause__`` leading to the SDK exception, whose ``.request``
        holds the x-api-key header and the body (thinking blocks included), nor to its frames.
        """
        if not request.stream:
            self._check_nonstreaming(int(built.body["max_tokens"]))
        failure: AgentlabError | None = None
        try:
            if request.stream:
                cm = self._client.messages.with_streaming_response.create(
                    **self._call_kwargs(built, stream=True)
                )
                resp = await cm.__aenter__()
                return WireCall(
                    request_id=self._request_id(resp.request_id, resp.http_response.headers),
                    chunks=body_chunks(resp.http_response),
                    read=resp.read,
                    close=lambda: cm.__aexit__(None, None, None),
                    errors=(httpx2.HTTPError,),
                    # A connection that broke mid-stream: retryable (a new call may well succeed).
                    translate=partial(broken_stream, provider=self.provider),
                )
            raw = await self._client.messages.with_raw_response.create(
                **self._call_kwargs(built, stream=False), timeout=self._client.timeout
            )
            return WireCall(
                request_id=self._request_id(raw.request_id, raw.http_response.headers),
                chunks=None,
                read=raw.read,
                close=_nothing,
                errors=(Exception,),
                translate=lambda exc, _rid: self._translate(exc),
            )
        except Exception as exc:
            failure = self._translate(exc)
        raise failure


async def _nothing() -> None:
    """A non-streaming raw response holds no open stream (the SDK read it whole)."""


class AnthropicMessagesAdapter(MessagesAdapter[anthropic.AsyncAnthropic]):
    """``POST /v1/messages`` on Anthropic's API, through ``anthropic.AsyncAnthropic``.

    A new real client needs ``api_key`` or ``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_AUTH_TOKEN``;
    ``MissingApiKeyError`` otherwise).
    """

    client_type = anthropic.AsyncAnthropic

    def _real_client(self, api_key: str | None, base_url: str | None) -> anthropic.AsyncAnthropic:
        key = self._key(api_key, "ANTHROPIC_API_KEY")
        if not (key or os.environ.get("ANTHROPIC_AUTH_TOKEN")):  # the SDK reads the token itself
            raise MissingApiKeyError(PROVIDER, "ANTHROPIC_API_KEY")
        kw = self._client_options()
        if key:
            kw["api_key"] = key
        if base_url is not None:
            kw["base_url"] = base_url
        return anthropic.AsyncAnthropic(**kw)

    def _connect(self) -> str | None:
        _require_auth(self._client)
        return super()._connect()
