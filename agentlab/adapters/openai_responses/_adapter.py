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
from agentlab.adapters.openai_sdk import OpenAIWireAdapter
from agentlab.errors import InvalidSettingsError, ProviderError
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


class OpenAIResponsesAdapter(OpenAIWireAdapter):
    """Adapter for the OpenAI Responses API on the official SDK (``openai``, httpx2 transport).

    Construction, the client (injected, the simulator's or a real one keyed from ``api_key`` or
    ``OPENAI_API_KEY``) and ``aclose`` are the base's (:class:`~agentlab.adapters.sdk_adapter.SDKAdapter`).
    """

    dialect: ClassVar[ResponsesDialect] = OPENAI
    """The host's dialect; a subclass that sets it is routed as ``dialect.name`` (its ``provider``)."""
    provider = PROVIDER
    api = API
    path = "/responses"
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
        # A host whose items go back without a token: every item is expected back as it is.
        if "dialect" in cls.__dict__ and cls.dialect.encrypted != "ciphertext":
            cls.continuity_layout = dataclasses.replace(cls.continuity_layout, needs={})

    def _real_client(self, api_key: str | None, base_url: str | None) -> openai.AsyncOpenAI:
        d = self.dialect
        url = base_url or d.host.base_url
        if url is None and d is not OPENAI:
            raise InvalidSettingsError(f"{d.name}: {d.label} needs base_url (its endpoint, ending in /v1)")
        return self._keyed_client(api_key, url)

    def build(self, request: ModelRequest) -> BuiltRequest[bytes]:
        """The wire body this adapter would send for ``request`` (no I/O); raises on bad settings."""
        check_request(self.provider, self.model, request)
        return build_request(request, model=self.model, base_url=self.base_url, dialect=self.dialect)

    def _translate_read(self, exc: BaseException, request_id: str | None) -> ProviderError:
        """A transport error while reading the answer (after its headers): see ``_errors.translate``."""
        return translate(exc, request_id=request_id, provider=self.provider)

    def _translate_post(self, exc: BaseException) -> ProviderError:
        return translate(exc, provider=self.provider)


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
