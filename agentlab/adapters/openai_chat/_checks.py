"""Each dialect's ``ProviderSpec.check_options``: the request's knobs, checked when a run is built.

The same checks ``build_request`` runs, so a knob a dialect has no field for fails before anything is
sent or logged. Imports no SDK.
"""

from __future__ import annotations

from agentlab.adapters.openai_chat._deepseek import DEEPSEEK
from agentlab.adapters.openai_chat._dialect import Dialect
from agentlab.adapters.openai_chat._local import CHAT, LLAMACPP, OLLAMA, VLLM
from agentlab.adapters.openai_chat._openrouter import OPENROUTER
from agentlab.adapters.openai_chat._request import check_knobs
from agentlab.neutral.request import ModelRequest

__all__ = ["check_chat", "check_deepseek", "check_llamacpp", "check_ollama", "check_openrouter", "check_vllm"]


def _check(dialect: Dialect, request: ModelRequest) -> None:
    check_knobs(dialect, request)


def check_deepseek(request: ModelRequest, adapter: object | None = None) -> None:
    """DeepSeek's knobs (``thinking``/``reasoning_effort``; no token budget)."""
    _check(DEEPSEEK, request)


def check_openrouter(request: ModelRequest, adapter: object | None = None) -> None:
    """OpenRouter's knobs (its unified ``reasoning`` object)."""
    _check(OPENROUTER, request)


def check_vllm(request: ModelRequest, adapter: object | None = None) -> None:
    """The knobs of a vLLM server."""
    _check(VLLM, request)


def check_llamacpp(request: ModelRequest, adapter: object | None = None) -> None:
    """llama.cpp's knobs."""
    _check(LLAMACPP, request)


def check_ollama(request: ModelRequest, adapter: object | None = None) -> None:
    """Ollama's knobs."""
    _check(OLLAMA, request)


def check_chat(request: ModelRequest, adapter: object | None = None) -> None:
    """A generic server's knobs."""
    _check(CHAT, request)
