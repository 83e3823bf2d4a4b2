"""Claude through the anthropic SDK's Bedrock and Vertex clients: the Messages adapter on another client.

Everything about the conversation (the body, thinking and its rules, verbatim thinking blocks, the
recovery of a dangling tool-use turn, cache breakpoints, the stream mapping, usage) is the Messages
adapter's (:mod:`agentlab.adapters.anthropic_messages`); a platform changes only what its client and
wire change, each stated once here:

* the client (``AsyncAnthropicBedrock``/``AsyncAnthropicVertex``), with credentials checked first
  (:mod:`._credentials`); the SDK moves the model into the URL, and on Bedrock the beta flags into
  the body's ``anthropic_beta`` list;
* the body's ``anthropic_version``, the platform's (``bedrock-2023-05-31``, ``vertex-2023-10-16``):
  the SDK's platform clients would otherwise send its own API version there, which the platforms
  refuse;
* the provider tag: each platform is a provider of its own (``anthropic_bedrock``,
  ``anthropic_vertex``), so its thinking blocks carry the platform as their provider and never go to
  Anthropic's API or the other platform (dropped there with a ``reasoning_item_dropped``
  diagnostic, like any provider switch); the endpoint (``base_url``, which names the region on
  Bedrock) is tagged too, as for every provider;
* Bedrock's stream framing (AWS's binary event stream, :mod:`._framing`) and error shape (AWS JSON
  errors, :mod:`._errors`).

The SDK still owns signing (SigV4 or the bearer API key on Bedrock, the OAuth token and its refresh
on Vertex), retries and HTTP errors.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, Unpack

import anthropic
import httpx2

from agentlab.adapters._simulated import is_simulated
from agentlab.adapters.anthropic_messages._adapter import MessagesAdapter, MessagesClient
from agentlab.adapters.anthropic_messages._stream import MessageAssembler
from agentlab.adapters.anthropic_platforms._credentials import BEDROCK, VERTEX, bedrock_access, vertex_access
from agentlab.adapters.anthropic_platforms._errors import translate_bedrock
from agentlab.adapters.anthropic_platforms._framing import EventStreamFraming, stream_errors
from agentlab.adapters.built_request import BuiltRequest
from agentlab.adapters.http_errors import broken_stream
from agentlab.adapters.sdk_adapter import AdapterOptions
from agentlab.assembly.assembler import WireCall
from agentlab.errors import AgentlabError, StreamInterruptedError
from agentlab.neutral.request import ModelRequest

__all__ = [
    "BEDROCK_VERSION",
    "VERTEX_VERSION",
    "AnthropicBedrockAdapter",
    "AnthropicVertexAdapter",
    "BedrockMessageAssembler",
    "VertexMessageAssembler",
]

BEDROCK_VERSION = "bedrock-2023-05-31"
VERTEX_VERSION = "vertex-2023-10-16"


class BedrockMessageAssembler(MessageAssembler):
    """The Messages assembler, its items and errors tagged ``anthropic_bedrock``."""

    provider = BEDROCK


class VertexMessageAssembler(MessageAssembler):
    """The Messages assembler, its items and errors tagged ``anthropic_vertex``."""

    provider = VERTEX


class _PlatformAdapter(MessagesAdapter[MessagesClient]):
    """What both platforms change: the body's ``anthropic_version`` and how the client authenticates."""

    platform_version: ClassVar[str]

    def build(self, request: ModelRequest) -> BuiltRequest[dict[str, Any]]:
        """The Messages body, carrying the platform's ``anthropic_version`` (no I/O)."""
        built = super().build(request)
        built.body["anthropic_version"] = self.platform_version  # provider_options cannot set it
        return built


class AnthropicBedrockAdapter(_PlatformAdapter[anthropic.AsyncAnthropicBedrock]):
    """Claude on AWS Bedrock (``InvokeModel``, ``...WithResponseStream``) via ``AsyncAnthropicBedrock``.

    ``aws_region``/``aws_profile`` default to the environment (``AWS_REGION``, ``AWS_PROFILE``);
    ``api_key`` is a Bedrock API key (else ``AWS_BEARER_TOKEN_BEDROCK``, else the AWS credentials
    chain). A missing region or credential is a ``ConfigError`` naming what to set.
    """

    provider = BEDROCK
    client_type = anthropic.AsyncAnthropicBedrock
    assembler_class = BedrockMessageAssembler
    platform_version = BEDROCK_VERSION

    def __init__(
        self,
        model: str,
        *,
        aws_region: str | None = None,
        aws_profile: str | None = None,
        **options: Unpack[AdapterOptions[anthropic.AsyncAnthropicBedrock]],
    ) -> None:
        self._aws_region = aws_region
        self._aws_profile = aws_profile
        super().__init__(model, **options)

    def _real_client(self, api_key: str | None, base_url: str | None) -> anthropic.AsyncAnthropicBedrock:
        token = self._key(api_key, "AWS_BEARER_TOKEN_BEDROCK")
        # A simulator served at base_url takes any region (and gets the placeholder key).
        region = self._aws_region or ("us-east-1" if is_simulated(self.model) else None)
        access = bedrock_access(token, region, self._aws_profile)
        kw = {**self._client_options(), **access.client_kwargs()}
        if base_url is not None:
            kw["base_url"] = base_url
        return anthropic.AsyncAnthropicBedrock(**kw)

    def _translate(self, exc: BaseException) -> AgentlabError:
        return translate_bedrock(exc, self.provider)

    def _request_id(self, sdk_id: str | None, headers: httpx2.Headers) -> str | None:
        """Bedrock's id is ``x-amzn-RequestId`` (the SDK looks for Anthropic's ``request-id``)."""
        return sdk_id or headers.get("x-amzn-requestid")

    def _broken(self, exc: BaseException, request_id: str | None) -> AgentlabError:
        """A stream that broke: the connection (retryable), or a frame that fails AWS's checks."""
        if isinstance(exc, stream_errors()):
            return StreamInterruptedError(
                f"a corrupted AWS event-stream frame ({type(exc).__name__}); nothing of this call was kept",
                provider=self.provider,
                request_id=request_id,
                retryable=True,
            )
        return broken_stream(exc, request_id, provider=self.provider)

    async def _open(self, built: BuiltRequest[dict[str, Any]], request: ModelRequest) -> WireCall:
        """The Messages call; a streamed answer is read as AWS's event stream, not SSE."""
        call = await super()._open(built, request)
        if call.chunks is None:
            return call
        return replace(
            call, framing=EventStreamFraming, errors=(*call.errors, *stream_errors()), translate=self._broken
        )


class AnthropicVertexAdapter(_PlatformAdapter[anthropic.AsyncAnthropicVertex]):
    """Claude on Google Vertex AI (``rawPredict``/``streamRawPredict``) via ``AsyncAnthropicVertex``.

    ``region``/``project_id`` default to ``CLOUD_ML_REGION``/``ANTHROPIC_VERTEX_PROJECT_ID``;
    ``api_key`` is an OAuth access token (else application default credentials). A missing region,
    project or credential is a ``ConfigError`` naming what to set.
    """

    provider = VERTEX
    client_type = anthropic.AsyncAnthropicVertex
    assembler_class = VertexMessageAssembler
    platform_version = VERTEX_VERSION

    def __init__(
        self,
        model: str,
        *,
        region: str | None = None,
        project_id: str | None = None,
        **options: Unpack[AdapterOptions[anthropic.AsyncAnthropicVertex]],
    ) -> None:
        self._region = region
        self._project_id = project_id
        super().__init__(model, **options)

    def _real_client(self, api_key: str | None, base_url: str | None) -> anthropic.AsyncAnthropicVertex:
        token = self._key(api_key)
        sim = is_simulated(self.model)  # a simulator served at base_url: any region and project
        region = self._region or ("us-east5" if sim else None)
        access = vertex_access(token, region, self._project_id or ("sim-project" if sim else None))
        kw = {**self._client_options(), **access.client_kwargs()}
        if base_url is not None:
            kw["base_url"] = base_url
        return anthropic.AsyncAnthropicVertex(**kw)
