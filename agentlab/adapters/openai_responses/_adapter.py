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

import dataclasses
from typing import Any, ClassVar

import httpx2
import openai

from agentlab.adapters.built_request import BuiltRequest, check_request
from agentlab.adapters.openai_responses._azure import AZURE
from agentlab.adapters.openai_responses._deepseek import DEEPSEEK_RESPONSES
from agentlab.adapters.openai_responses._dialect import OPENAI, ResponsesDialect
from agentlab.adapters.openai_responses._errors import translate
from agentlab.adapters.openai_responses._local import LMSTUDIO_RESPONSES, OLLAMA_RESPONSES, VLLM_RESPONSES
from agentlab.adapters.openai_responses._mantle import MANTLE
from agentlab.adapters.openai_responses._request import (
    API,
    PROVIDER,
    build_request,
    is_reasoning_model,
    strict_schema_ok,
)
from agentlab.adapters.openai_responses._stream import ResponseAssembler
from agentlab.adapters.openai_responses._xai import XAI
from agentlab.adapters.openai_sdk import request_options
from agentlab.adapters.sdk_adapter import SDKAdapter
from agentlab.assembly.assembler import WireCall
from agentlab.errors import InvalidSettingsError, MissingApiKeyError, ProviderError
from agentlab.neutral.continuity import ContinuityLayout, OpaqueSite
from agentlab.neutral.request import ModelRequest

__all__ = [
    "AzureAdapter",
    "DeepSeekResponsesAdapter",
    "LMStudioResponsesAdapter",
    "MantleAdapter",
    "OllamaResponsesAdapter",
    "OpenAIResponsesAdapter",
    "VLLMResponsesAdapter",
    "XAIAdapter",
    "build_request",
    "is_reasoning_model",
    "strict_schema_ok",
]

_TRANSPORT_ERRORS = (openai.OpenAIError, httpx2.HTTPError, httpx2.StreamError)


class OpenAIResponsesAdapter(SDKAdapter[openai.AsyncOpenAI]):
    """Adapter for the OpenAI Responses API on the official SDK (``openai``, httpx2 transport).

    Construction, the client (injected, the simulator's or a real one keyed from ``api_key`` or
    ``OPENAI_API_KEY``) and ``aclose`` are the base's (:class:`~agentlab.adapters.sdk_adapter.SDKAdapter`).
    """

    dialect: ClassVar[ResponsesDialect] = OPENAI
    """The host's dialect; a subclass that sets it is routed as ``dialect.name`` (its ``provider``)."""
    provider = PROVIDER
    api = API
    client_type = openai.AsyncOpenAI
    assembler_class = ResponseAssembler
    continuity_layout = ContinuityLayout(
        sites=(OpaqueSite(("input", "*"), frozenset({"reasoning", "compaction"})),),
        needs={"reasoning": "encrypted_content", "compaction": "encrypted_content"},
        follower="next",
    )
    """Reasoning and compaction items sit in ``input``; one without ``encrypted_content`` cannot go
    back statelessly (the request drops it with a diagnostic), so the guard does not expect it."""

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "dialect" in cls.__dict__:
            cls.provider = cls.dialect.name
            if cls.dialect.encrypted != "ciphertext":  # its items go back without a token: all expected
                cls.continuity_layout = dataclasses.replace(cls.continuity_layout, needs={})

    def _real_client(self, api_key: str | None, base_url: str | None) -> openai.AsyncOpenAI:
        d = self.dialect
        url = base_url or d.default_base_url
        if url is None and d is not OPENAI:
            raise InvalidSettingsError(f"{d.name}: {d.label} needs base_url (its endpoint, ending in /v1)")
        key = self._key(api_key, *((d.api_key_env,) if d.api_key_env else ()))
        if not key and d.key_required:
            raise MissingApiKeyError(d.name, d.api_key_env or "api_key")
        return openai.AsyncOpenAI(api_key=key or "no-key", base_url=url, max_retries=self.max_retries)

    def _connect(self) -> str | None:
        self._options = request_options(self.max_retries, self.timeout, self._headers)
        return super()._connect()

    def build(self, request: ModelRequest) -> BuiltRequest[bytes]:
        """The wire body this adapter would send for ``request`` (no I/O); raises on bad settings."""
        check_request(self.provider, self.model, request)
        return build_request(request, model=self.model, base_url=self.base_url, dialect=self.dialect)

    def _new_assembler(
        self, built: BuiltRequest[Any], request: ModelRequest, call: WireCall, started: float
    ) -> ResponseAssembler:
        return ResponseAssembler(
            dialect=self.dialect, model=self.model, base_url=self.base_url, request_id=call.request_id,
            origin=request.origin, started=started, reasoning_dropped=built.reasoning_dropped,
        )  # fmt: skip

    def _translate_read(self, exc: BaseException, request_id: str | None) -> ProviderError:
        """A transport error while reading the answer (after its headers): see ``_errors.translate``."""
        return translate(exc, request_id=request_id, provider=self.provider)

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
            failure = translate(e, provider=self.provider)
        if failure is not None:
            raise failure
        streamed = request.stream and "event-stream" in resp.headers.get("content-type", "")
        return WireCall(
            request_id=resp.headers.get("x-request-id"),
            chunks=resp.aiter_bytes() if streamed else None,
            read=resp.aread,
            close=resp.aclose,
            errors=_TRANSPORT_ERRORS,
            translate=self._translate_read,
        )


class XAIAdapter(OpenAIResponsesAdapter):
    """xAI (``xai:<model>``): items from ``response.completed``, ``store: false``, cost in ticks."""

    dialect = XAI


class DeepSeekResponsesAdapter(OpenAIResponsesAdapter):
    """DeepSeek's Responses endpoint (``deepseek_responses:<model>``): ``reasoning_text`` content."""

    dialect = DEEPSEEK_RESPONSES


class AzureAdapter(OpenAIResponsesAdapter):
    """Azure OpenAI v1 (``azure:<deployment>``; ``base_url`` required): null payloads never sent."""

    dialect = AZURE


class MantleAdapter(OpenAIResponsesAdapter):
    """Bedrock Mantle (``mantle:<model>``): ``rsn_`` payloads, call ids scoped per response."""

    dialect = MANTLE


class VLLMResponsesAdapter(OpenAIResponsesAdapter):
    """vLLM's ``/v1/responses`` (``vllm_responses:<model>``; default ``http://localhost:8000/v1``)."""

    dialect = VLLM_RESPONSES


class OllamaResponsesAdapter(OpenAIResponsesAdapter):
    """Ollama's ``/v1/responses`` (``ollama_responses:<model>``; default ``http://localhost:11434/v1``)."""

    dialect = OLLAMA_RESPONSES


class LMStudioResponsesAdapter(OpenAIResponsesAdapter):
    """LM Studio's ``/v1/responses`` (``lmstudio_responses:<model>``; default ``http://localhost:1234/v1``)."""

    dialect = LMSTUDIO_RESPONSES
