"""The Chat Completions adapters: ``ModelRequest`` -> ``POST /chat/completions`` -> agentlab events.

One class per dialect (``DeepSeekAdapter``, ``OpenRouterAdapter``, ``MoonshotAdapter``,
``ZAIAdapter``, ``XAIChatAdapter``, ``VLLMAdapter``, ``LlamaCppAdapter``, ``OllamaAdapter``,
``ChatAdapter``) over one implementation: only the
:class:`~agentlab.adapters.openai_chat._dialect.Dialect` differs. The official ``openai`` SDK stays in
charge of what it is good at: auth, base URL, headers, bounded retries honouring ``retry-after``
(``max_retries``), status errors. The adapter builds the body itself (``_request``: reasoning goes
back verbatim on its message) and reads the raw SSE text itself (``_stream``), as the OpenAI Responses
adapter does (``client.post(..., cast_to=httpx2.Response)``): the SDK's typed chunk models would
cost more per event and drop the fields it does not know (``reasoning_content``,
``reasoning_details``).

Transport injection: ``client`` is an ``openai.AsyncOpenAI`` used as is (tests build one on an
``httpx2.MockTransport``); without it a ``sim-*`` model gets the simulator's client
(``agentlab.sim.chat_client(dialect)``) and a real one a client on ``base_url`` (the dialect's
default; the generic ``chat:`` has none and requires it) keyed from ``api_key`` or the dialect's
environment variable (local servers take none: a placeholder is sent). The key is never in ``repr``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Unpack

import httpx2
import openai

from agentlab.adapters._simulated import is_simulated
from agentlab.adapters.built_request import BuiltRequest, check_request
from agentlab.adapters.openai_chat._deepseek import DEEPSEEK
from agentlab.adapters.openai_chat._dialect import API, Dialect
from agentlab.adapters.openai_chat._errors import translate
from agentlab.adapters.openai_chat._local import CHAT, LLAMACPP, OLLAMA, VLLM
from agentlab.adapters.openai_chat._moonshot import MOONSHOT
from agentlab.adapters.openai_chat._openrouter import OPENROUTER
from agentlab.adapters.openai_chat._request import build_request
from agentlab.adapters.openai_chat._stream import ChatAssembler
from agentlab.adapters.openai_chat._xai import XAI_CHAT
from agentlab.adapters.openai_chat._zai import ZAI
from agentlab.adapters.openai_sdk import OpenAIWireAdapter
from agentlab.adapters.sdk_adapter import AdapterOptions
from agentlab.errors import (
    AgentlabError,
    InvalidSettingsError,
    ProviderError,
)
from agentlab.neutral.continuity import ContinuityLayout, OpaqueSite
from agentlab.neutral.request import ModelRequest

__all__ = [
    "ChatAdapter",
    "ChatCompletionsAdapter",
    "DeepSeekAdapter",
    "LlamaCppAdapter",
    "MoonshotAdapter",
    "OllamaAdapter",
    "OpenRouterAdapter",
    "VLLMAdapter",
    "XAIChatAdapter",
    "ZAIAdapter",
]


_LAYOUT = ContinuityLayout(
    sites=tuple(
        OpaqueSite(("messages", "*", *path))
        for path in (("reasoning_content",), ("reasoning",), ("reasoning_details", "*"))
    )
)
"""Where the reasoning of an assistant message goes back: its field as it arrived, or its details."""


class ChatCompletionsAdapter(OpenAIWireAdapter):
    """Adapter for one Chat Completions dialect on the official ``openai`` SDK (httpx2 transport).

    Construction, the client and ``aclose`` are the base's (``agentlab.adapters.sdk_adapter``).
    ``send_reasoning``: put this loop's reasoning back on its assistant messages (default: the
    dialect's, True for all; DeepSeek requires it). ``max_retries``/``timeout``/``extra_headers``
    apply to every request this adapter sends.
    """

    dialect: ClassVar[Dialect]
    """The dialect; a subclass that sets it is routed as ``dialect.name`` (its ``provider``)."""
    provider: str
    api = API
    path = "/chat/completions"
    assembler_class = ChatAssembler

    def __init__(
        self,
        model: str,
        *,
        send_reasoning: bool | None = None,
        **options: Unpack[AdapterOptions[openai.AsyncOpenAI]],
    ) -> None:
        super().__init__(model, **options)
        if send_reasoning is not None and not isinstance(send_reasoning, bool):
            raise InvalidSettingsError(f"{self.provider}: send_reasoning must be True, False or None")
        self.send_reasoning = self.dialect.send_back if send_reasoning is None else send_reasoning
        # Only an adapter that sends reasoning back has a place for it in its body (the guard's data).
        self.continuity_layout = _LAYOUT if self.send_reasoning else None

    def _simulator_args(self) -> tuple[Any, ...]:
        return (self.dialect.sim_dialect,)

    def _real_client(self, api_key: str | None, base_url: str | None) -> openai.AsyncOpenAI:
        d = self.dialect
        if is_simulated(self.model):  # the simulator served at base_url: its dialect header
            return openai.AsyncOpenAI(
                api_key=self._key(api_key), base_url=base_url, max_retries=self.max_retries,
                default_headers={"x-agentlab-chat-dialect": d.sim_dialect},
            )  # fmt: skip
        url = base_url or d.host.base_url
        if url is None:
            raise InvalidSettingsError(
                f"{d.name}: a generic Chat Completions server needs base_url "
                "(e.g. base_url='http://localhost:8000/v1')"
            )
        return self._keyed_client(api_key, url)

    def build(self, request: ModelRequest) -> BuiltRequest[bytes]:
        """The wire body this adapter would send for ``request`` (no I/O); raises on bad settings."""
        check_request(self.provider, self.model, request)
        return build_request(
            request, dialect=self.dialect, base_url=self.base_url, send_reasoning=self.send_reasoning
        )

    def _translate_read(self, exc: BaseException, request_id: str | None) -> AgentlabError:
        return translate(exc, self.provider, request_id)

    def _translate_post(self, exc: BaseException) -> ProviderError:
        return translate(exc, self.provider, model=self.model, fix=self.dialect.error_fix)

    def _request_id(self, headers: httpx2.Headers) -> str | None:
        return headers.get("x-request-id") or headers.get("x-ds-trace-id")


class DeepSeekAdapter(ChatCompletionsAdapter):
    """DeepSeek (``deepseek:<model>``): ``reasoning_content``, required back on tool-call turns."""

    dialect = DEEPSEEK


class OpenRouterAdapter(ChatCompletionsAdapter):
    """OpenRouter (``openrouter:<vendor>/<model>``): ``reasoning_details`` back on their message."""

    dialect = OPENROUTER


class MoonshotAdapter(ChatCompletionsAdapter):
    """Kimi (``moonshot:<model>``/``kimi:``): ``reasoning_content``, required back on tool-call turns."""

    dialect = MOONSHOT


class ZAIAdapter(ChatCompletionsAdapter):
    """GLM by Z.AI (``zai:<model>``/``glm:``): ``reasoning_content`` back on its message (interleaved)."""

    dialect = ZAI


class XAIChatAdapter(ChatCompletionsAdapter):
    """xAI Grok over Chat Completions (``xai_chat:<model>``): ``reasoning_content`` back, usage apart."""

    dialect = XAI_CHAT


class VLLMAdapter(ChatCompletionsAdapter):
    """vLLM's OpenAI-compatible server (``vllm:<model>``; default ``http://localhost:8000/v1``)."""

    dialect = VLLM


class LlamaCppAdapter(ChatCompletionsAdapter):
    """llama.cpp's ``llama-server`` (``llamacpp:<model>``; default ``http://localhost:8080/v1``)."""

    dialect = LLAMACPP


class OllamaAdapter(ChatCompletionsAdapter):
    """Ollama's OpenAI-compatible endpoint (``ollama:<model>``; default ``http://localhost:11434/v1``)."""

    dialect = OLLAMA


class ChatAdapter(ChatCompletionsAdapter):
    """Any other Chat Completions server (``chat:<model>``; ``base_url`` required)."""

    dialect = CHAT
