"""The Chat Completions adapters: ``ModelRequest`` -> ``POST /chat/completions`` -> agentlab events.

One class per dialect (``DeepSeekAdapter``, ``OpenRouterAdapter``, ``VLLMAdapter``,
``LlamaCppAdapter``, ``OllamaAdapter``, ``ChatAdapter``) over one implementation: only the
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

import os
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, ClassVar

import httpx2
import openai

from agentlab.adapters._simulated import in_process, is_simulated, simulator_key
from agentlab.adapters.built_request import BuiltRequest, check_adapter_args, check_request
from agentlab.adapters.openai_chat._deepseek import DEEPSEEK
from agentlab.adapters.openai_chat._dialect import API, Dialect
from agentlab.adapters.openai_chat._errors import translate
from agentlab.adapters.openai_chat._local import CHAT, LLAMACPP, OLLAMA, VLLM
from agentlab.adapters.openai_chat._openrouter import OPENROUTER
from agentlab.adapters.openai_chat._request import build_request
from agentlab.adapters.openai_chat._stream import ChatAssembler
from agentlab.assembly.assembler import WireCall, assemble
from agentlab.errors import (
    AgentlabError,
    ConfigError,
    InvalidSettingsError,
    MissingApiKeyError,
    ProviderError,
)
from agentlab.neutral.events import AdapterEvent
from agentlab.neutral.request import ModelRequest
from agentlab.records.logs import install_redaction, stack_loggers

__all__ = [
    "ChatAdapter",
    "ChatCompletionsAdapter",
    "DeepSeekAdapter",
    "LlamaCppAdapter",
    "OllamaAdapter",
    "OpenRouterAdapter",
    "VLLMAdapter",
]

_TRANSPORT_ERRORS = (openai.OpenAIError, httpx2.HTTPError, httpx2.StreamError)
_NO_KEY = "no-key"
"""What a local server without ``--api-key`` is sent (the SDK needs a non-empty key; it checks none)."""


def _client(dialect: Dialect, model: str, api_key: str | None, base_url: str | None, retries: int) -> Any:
    if in_process(model, base_url):
        import agentlab.sim as sim

        make = getattr(sim, "chat_client", None)
        if make is None:  # pragma: no cover - the simulator ships with agentlab
            raise ConfigError(f"{dialect.name}: the simulator has no Chat Completions client")
        return make(dialect.sim_dialect, **({"api_key": api_key} if api_key else {}))
    if is_simulated(model):  # the simulator served at base_url: its dialect header, never an env key
        return openai.AsyncOpenAI(
            api_key=simulator_key(api_key), base_url=base_url, max_retries=retries,
            default_headers={"x-agentlab-chat-dialect": dialect.sim_dialect},
        )  # fmt: skip
    url = base_url or dialect.default_base_url
    if url is None:
        raise InvalidSettingsError(
            f"{dialect.name}: a generic Chat Completions server needs base_url "
            "(e.g. base_url='http://localhost:8000/v1')"
        )
    key = api_key or (os.environ.get(dialect.api_key_env) if dialect.api_key_env else None)
    if not key and dialect.key_required:
        raise MissingApiKeyError(dialect.name, dialect.api_key_env or "api_key")
    return openai.AsyncOpenAI(api_key=key or _NO_KEY, base_url=url, max_retries=retries)


class ChatCompletionsAdapter:
    """Adapter for one Chat Completions dialect on the official ``openai`` SDK (httpx2 transport).

    ``send_reasoning``: put this loop's reasoning back on its assistant messages (default: the
    dialect's, True for all; DeepSeek requires it). ``max_retries``/``timeout``/``extra_headers``
    apply to every request this adapter sends.
    """

    dialect: ClassVar[Dialect]
    provider: str
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
        send_reasoning: bool | None = None,
    ) -> None:
        name = self.dialect.name
        check_adapter_args(
            name, model, max_retries=max_retries, timeout=timeout, extra_headers=extra_headers,
            client=client, client_type=openai.AsyncOpenAI, api_key=api_key, base_url=base_url,
        )  # fmt: skip
        if send_reasoning is not None and not isinstance(send_reasoning, bool):
            raise InvalidSettingsError(f"{name}: send_reasoning must be True, False or None")
        self.model = model
        self.max_retries = max_retries
        self.send_reasoning = self.dialect.send_back if send_reasoning is None else send_reasoning
        self._owns_client = client is None
        if client is None:
            client = _client(self.dialect, model, api_key, base_url, max_retries)
        self._client: openai.AsyncOpenAI = client
        install_redaction("openai", *stack_loggers(client))
        self.base_url: str | None = str(client.base_url).rstrip("/")
        self._options: dict[str, Any] = {"max_retries": max_retries, "security": {"bearer_auth": True}}
        if extra_headers:
            self._options["headers"] = dict(extra_headers)
        if timeout is not None:
            self._options["timeout"] = timeout

    def __repr__(self) -> str:
        return f"<{type(self).__name__} model={self.model!r} base_url={self.base_url!r}>"

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client in use."""
        return self._client

    def build(self, request: ModelRequest) -> BuiltRequest[bytes]:
        """The wire body this adapter would send for ``request`` (no I/O); raises on bad settings."""
        check_request(self.provider, self.model, request)
        return build_request(
            request, dialect=self.dialect, base_url=self.base_url, send_reasoning=self.send_reasoning
        )

    def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        """Send one request; yield display events and diagnostics, then one ``ResponseCompletedEvent``."""
        return assemble(request, self.build, self._open, self._assembler)

    def _assembler(
        self, built: BuiltRequest[bytes], request: ModelRequest, call: WireCall, started: float
    ) -> ChatAssembler:
        return ChatAssembler(
            dialect=self.dialect, model=self.model, base_url=self.base_url, request_id=call.request_id,
            origin=request.origin, started=started, reasoning_dropped=built.reasoning_dropped,
        )  # fmt: skip

    def _translate_read(self, exc: BaseException, request_id: str | None) -> AgentlabError:
        return translate(exc, self.provider, request_id)

    async def _open(self, built: BuiltRequest[bytes], request: ModelRequest) -> WireCall:
        """POST the body through the SDK (its auth, status checks and retries); the raw answer back.

        SDK exceptions are translated inside ``except`` and raised outside it (never chained).
        """
        failure: ProviderError | None = None
        try:
            post: Any = self._client.post
            resp: httpx2.Response = await post(
                "/chat/completions", cast_to=httpx2.Response, content=built.body,
                options=self._options, stream=request.stream,
            )  # fmt: skip
        except _TRANSPORT_ERRORS as e:
            failure = translate(e, self.provider, model=self.model, fix=self.dialect.error_fix)
        if failure is not None:
            raise failure
        streamed = request.stream and "event-stream" in resp.headers.get("content-type", "")
        read: Callable[[BaseException, str | None], AgentlabError] = self._translate_read
        return WireCall(
            request_id=resp.headers.get("x-request-id") or resp.headers.get("x-ds-trace-id"),
            chunks=resp.aiter_text() if streamed else None,
            read=resp.aread,
            close=resp.aclose,
            errors=_TRANSPORT_ERRORS,
            translate=read,
        )

    async def aclose(self) -> None:
        """Close the SDK client if this adapter created it."""
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> ChatCompletionsAdapter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class DeepSeekAdapter(ChatCompletionsAdapter):
    """DeepSeek (``deepseek:<model>``): ``reasoning_content``, required back on tool-call turns."""

    dialect = DEEPSEEK
    provider = "deepseek"


class OpenRouterAdapter(ChatCompletionsAdapter):
    """OpenRouter (``openrouter:<vendor>/<model>``): ``reasoning_details`` back on their message."""

    dialect = OPENROUTER
    provider = "openrouter"


class VLLMAdapter(ChatCompletionsAdapter):
    """vLLM's OpenAI-compatible server (``vllm:<model>``; default ``http://localhost:8000/v1``)."""

    dialect = VLLM
    provider = "vllm"


class LlamaCppAdapter(ChatCompletionsAdapter):
    """llama.cpp's ``llama-server`` (``llamacpp:<model>``; default ``http://localhost:8080/v1``)."""

    dialect = LLAMACPP
    provider = "llamacpp"


class OllamaAdapter(ChatCompletionsAdapter):
    """Ollama's OpenAI-compatible endpoint (``ollama:<model>``; default ``http://localhost:11434/v1``)."""

    dialect = OLLAMA
    provider = "ollama"


class ChatAdapter(ChatCompletionsAdapter):
    """Any other Chat Completions server (``chat:<model>``; ``base_url`` required)."""

    dialect = CHAT
    provider = "chat"
