"""The Chat Completions dialects' registry entries: one ``ProviderSpec`` per model-string prefix.

``deepseek``, ``openrouter``, ``moonshot`` (alias ``kimi``), ``zai`` (alias ``glm``), ``xai_chat``,
``vllm``, ``llamacpp``, ``ollama`` and the generic ``chat`` (which needs ``base_url``) share one
package and one adapter implementation; each spec names its dialect's adapter
class and usage mapping. Imports no SDK (the registry reads this module to route model strings).
"""

from __future__ import annotations

from typing import Any

from agentlab.adapters.option_rules import OptionRules
from agentlab.adapters.registry import ProviderSpec

__all__ = ["CHAT", "DEEPSEEK", "LLAMACPP", "MOONSHOT", "OLLAMA", "OPENROUTER", "VLLM", "XAI_CHAT", "ZAI"]

_PKG = "agentlab.adapters.openai_chat"
_LOCAL_USAGE = f"{_PKG}._local:usage_from_local"
_SIMULATOR = "agentlab.sim:chat_client"
"""Every dialect's simulator client: ``chat_client(dialect, ...)`` (the adapter passes its dialect)."""
_HISTORY = "the full history on every call"


def _options(reasoning_keys: tuple[str, ...]) -> OptionRules:
    """One dialect's ``provider_options`` rules; ``reasoning_keys``: the fields its reasoning knob sets."""
    return OptionRules(
        owned={
            **dict.fromkeys(("model", "messages", "tools", "tool_choice"), _HISTORY),
            **dict.fromkeys(("stream", "stream_options"), "the run's stream knob"),
        },
        types={
            "response_format": dict,
            "logit_bias": dict,
            "stop": (str, list),
            "max_tokens": int,
            "max_completion_tokens": int,
            "top_logprobs": int,
            "seed": int,
            "logprobs": bool,
            "parallel_tool_calls": bool,
            "temperature": float,
            "top_p": float,
            "user": str,
        },
        neutral={
            "max_tokens": "max_output_tokens",
            "max_completion_tokens": "max_output_tokens",
            "temperature": "temperature",
            "top_p": "top_p",
            "stop": "stop_sequences",
            "user": "user_id",
            "parallel_tool_calls": "parallel_tool_calls",
            "response_format": "output",
            **dict.fromkeys(reasoning_keys, "reasoning"),
        },
    )


_CLASSES = {
    "deepseek": "DeepSeekAdapter",
    "openrouter": "OpenRouterAdapter",
    "moonshot": "MoonshotAdapter",
    "zai": "ZAIAdapter",
    "xai_chat": "XAIChatAdapter",
    "vllm": "VLLMAdapter",
    "llamacpp": "LlamaCppAdapter",
    "ollama": "OllamaAdapter",
    "chat": "ChatAdapter",
}


def _spec(name: str, label: str, reasoning_keys: tuple[str, ...], **own: Any) -> ProviderSpec:
    """One dialect's spec: what every dialect shares, plus ``own`` (its usage, key, drop policy...).

    Shared because it is one implementation: the adapter class of ``_CLASSES`` on the ``openai`` SDK,
    the Chat simulator, the options check ``_checks.check_<name>``.
    """
    return ProviderSpec(
        name=name,
        api="chat_completions",
        label=label,
        adapter=f"{_PKG}._adapter:{_CLASSES[name]}",
        sdk_module="openai",
        sdk_loggers=("openai",),
        options=_options(reasoning_keys),
        check_options=f"{_PKG}._checks:check_{name}",
        simulator=_SIMULATOR,
        **own,
    )


DEEPSEEK = _spec(
    "deepseek",
    "DeepSeek",
    ("thinking", "reasoning_effort"),
    usage=f"{_PKG}._deepseek:usage_from_deepseek",
    api_key_env="DEEPSEEK_API_KEY",
    reasoning_term="thinking",
    reasoning_block_type="reasoning_content",
    # Thinking mode answers a tool-call assistant message without its reasoning_content with 400.
    drop_with_reasoning=False,
    drop_refusal=(
        "DeepSeek's thinking mode requires each tool-call assistant message's reasoning_content back "
        "(the API answers 400 'The reasoning_content in the thinking mode must be passed back')"
    ),
    simulated_models=f"{_PKG}._simnames:DEEPSEEK",
    price_provider="deepseek",
)

OPENROUTER = _spec(
    "openrouter",
    "OpenRouter",
    ("reasoning",),
    usage=f"{_PKG}._openrouter:usage_from_openrouter",
    api_key_env="OPENROUTER_API_KEY",
    reasoning_block_type="reasoning_details",
    # Provider-wide summary; the backing model decides (drop_rule): Gemini/Claude refuse, others can.
    drop_with_reasoning=False,
    drop_refusal="some models behind OpenRouter (Gemini, Claude) require their reasoning_details back",
    drop_rule=f"{_PKG}._openrouter:drop_rule",
    simulated_models=f"{_PKG}._simnames:OPENROUTER",
    price_provider="openrouter",
)

MOONSHOT = _spec(
    "moonshot",
    "Kimi",
    ("thinking",),
    aliases=("kimi",),
    usage=f"{_PKG}._moonshot:usage_from_moonshot",
    api_key_env="MOONSHOT_API_KEY",
    reasoning_term="thinking",
    reasoning_block_type="reasoning_content",
    # Thinking models answer a tool-call assistant message without its reasoning_content with 400.
    drop_with_reasoning=False,
    drop_refusal=(
        "Kimi's thinking models require each tool-call assistant message's reasoning_content back "
        "(the API answers 400 'thinking is enabled but reasoning_content is missing')"
    ),
    drop_rule=f"{_PKG}._moonshot:drop_rule",
    simulated_models=f"{_PKG}._simnames:MOONSHOT",
    price_provider="moonshotai",
)

ZAI = _spec(
    "zai",
    "GLM (Z.AI)",
    ("thinking",),
    aliases=("glm",),
    usage=f"{_PKG}._zai:usage_from_zai",
    api_key_env="ZAI_API_KEY",
    reasoning_term="thinking",
    reasoning_block_type="reasoning_content",
    # Z.AI accepts a tool loop without reasoning back (quality only): "drop" is a real ablation.
    drop_with_reasoning=True,
    simulated_models=f"{_PKG}._simnames:ZAI",
    price_provider="zai",
)

XAI_CHAT = _spec(
    "xai_chat",
    "xAI (Chat Completions)",
    ("reasoning_effort",),
    usage=f"{_PKG}._xai:usage_from_xai",
    api_key_env="XAI_API_KEY",
    reasoning_block_type="reasoning_content",
    # xAI accepts a tool loop without reasoning back (quality only): "drop" is a real ablation.
    drop_with_reasoning=True,
    simulated_models=f"{_PKG}._simnames:XAI_CHAT",
    price_provider="x-ai",
)


def _local(name: str, label: str) -> ProviderSpec:
    return _spec(
        name,
        label,
        ("reasoning_effort", "chat_template_kwargs"),
        usage=_LOCAL_USAGE,
        reasoning_block_type="reasoning_content",
        # Local servers take a tool loop without reasoning back: "drop" is a real ablation.
        drop_with_reasoning=True,
        simulated_models=f"{_PKG}._simnames:LOCAL",
    )


VLLM = _local("vllm", "vLLM")
LLAMACPP = _local("llamacpp", "llama.cpp")
OLLAMA = _local("ollama", "Ollama")
CHAT = _local("chat", "Chat Completions server")
