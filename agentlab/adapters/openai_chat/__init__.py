"""OpenAI-compatible Chat Completions providers: DeepSeek, OpenRouter, Kimi, GLM, xAI and local servers.

* :mod:`.provider`: one ``ProviderSpec`` per prefix (``deepseek``, ``openrouter``, ``moonshot``,
  ``zai``, ``xai_chat``, ``vllm``, ``llamacpp``, ``ollama``, ``chat``). It imports no SDK.
* :mod:`._dialect` and the dialect modules :mod:`._deepseek`, :mod:`._openrouter`,
  :mod:`._moonshot`, :mod:`._zai`, :mod:`._xai`, :mod:`._local`:
  only what differs (where reasoning travels and whether it must go back, settings, usage).
* :mod:`._request`, :mod:`._stream`, :mod:`._details`, :mod:`._errors`, :mod:`._adapter`: one request
  builder, one stream assembler (``reasoning_details`` merged by index), one error translation and
  one adapter implementation on the official ``openai`` SDK, shared by every dialect.

The package root is a lazy facade because the registry imports :mod:`.provider`, and importing a
submodule runs this file first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentlab._lazy import lazy_exports

if TYPE_CHECKING:
    from agentlab.adapters.openai_chat._adapter import ChatAdapter as ChatAdapter
    from agentlab.adapters.openai_chat._adapter import ChatCompletionsAdapter as ChatCompletionsAdapter
    from agentlab.adapters.openai_chat._adapter import DeepSeekAdapter as DeepSeekAdapter
    from agentlab.adapters.openai_chat._adapter import LlamaCppAdapter as LlamaCppAdapter
    from agentlab.adapters.openai_chat._adapter import MoonshotAdapter as MoonshotAdapter
    from agentlab.adapters.openai_chat._adapter import OllamaAdapter as OllamaAdapter
    from agentlab.adapters.openai_chat._adapter import OpenRouterAdapter as OpenRouterAdapter
    from agentlab.adapters.openai_chat._adapter import VLLMAdapter as VLLMAdapter
    from agentlab.adapters.openai_chat._adapter import XAIChatAdapter as XAIChatAdapter
    from agentlab.adapters.openai_chat._adapter import ZAIAdapter as ZAIAdapter
    from agentlab.adapters.openai_chat._stream import ChatAssembler as ChatAssembler

_ADAPTER = "agentlab.adapters.openai_chat._adapter"
_EXPORTS: dict[str, str] = {
    "ChatAdapter": _ADAPTER,
    "ChatAssembler": "agentlab.adapters.openai_chat._stream",
    "ChatCompletionsAdapter": _ADAPTER,
    "DeepSeekAdapter": _ADAPTER,
    "LlamaCppAdapter": _ADAPTER,
    "MoonshotAdapter": _ADAPTER,
    "OllamaAdapter": _ADAPTER,
    "OpenRouterAdapter": _ADAPTER,
    "VLLMAdapter": _ADAPTER,
    "XAIChatAdapter": _ADAPTER,
    "ZAIAdapter": _ADAPTER,
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
