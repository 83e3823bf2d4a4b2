"""The Chat Completions dialects' registry entries: one ``ProviderSpec`` per model-string prefix.

``deepseek``, ``openrouter``, ``moonshot`` (alias ``kimi``), ``zai`` (alias ``glm``), ``xai_chat``,
``vllm``, ``llamacpp``, ``ollama`` and the generic ``chat`` (which needs ``base_url``) share one
package and one adapter implementation; each spec names its dialect's adapter
class and usage mapping. Imports no SDK (the registry reads this module to route model strings).
"""

from __future__ import annotations

from typing import Any

from agentlab.adapters.openai_chat import _deepseek, _local, _moonshot, _openrouter, _xai, _zai
from agentlab.adapters.openai_chat._dialect import API, DETAILS, Dialect
from agentlab.adapters.option_rules import OptionRules
from agentlab.adapters.registry import ProviderSpec, target_of
from agentlab.adapters.wire_dialect import dialect_spec

__all__ = ["CHAT", "DEEPSEEK", "LLAMACPP", "MOONSHOT", "OLLAMA", "OPENROUTER", "VLLM", "XAI_CHAT", "ZAI"]

_PKG = "agentlab.adapters.openai_chat"
_SIMULATOR = "agentlab.sim:chat_client"
"""Every dialect's simulator client: ``chat_client(dialect, ...)`` (the adapter passes its dialect)."""
_SIMULATED = "agentlab.sim:CHAT_MODELS"
"""The simulator's model names, a table by simulator dialect (each spec names its entry)."""
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


def _spec(dialect: Dialect, reasoning_keys: tuple[str, ...], **own: Any) -> ProviderSpec:
    """One dialect's spec: what its :class:`Dialect` already says, plus ``own`` (drop policy, prices...).

    Shared because it is one implementation: the adapter class of ``_CLASSES`` on the ``openai`` SDK,
    the Chat simulator, the options check ``_checks.check_<name>``. The opaque block type and
    simulated models follow from the dialect too.
    """
    return dialect_spec(
        dialect,
        API,
        f"{_PKG}._adapter:{_CLASSES[dialect.name]}",
        reasoning_block_type=DETAILS if dialect.carry == "details" else "reasoning_content",
        options=_options(reasoning_keys),
        check_options=f"{_PKG}._checks:check_{dialect.name}",
        simulated_models=f"{_SIMULATED}[{dialect.sim_dialect}]",
        simulator=_SIMULATOR,
        **own,
    )


DEEPSEEK = _spec(
    _deepseek.DEEPSEEK,
    ("thinking", "reasoning_effort"),
    reasoning_term="thinking",
    # Thinking mode answers a tool-call assistant message without its reasoning_content with 400.
    drop_with_reasoning=False,
    drop_refusal=(
        "DeepSeek's thinking mode requires each tool-call assistant message's reasoning_content back "
        "(the API answers 400 'The reasoning_content in the thinking mode must be passed back')"
    ),
    price_provider="deepseek",
)

OPENROUTER = _spec(
    _openrouter.OPENROUTER,
    ("reasoning",),
    # Provider-wide summary; the backing model decides (drop_rule): Gemini/Claude refuse, others can.
    drop_with_reasoning=False,
    drop_refusal="some models behind OpenRouter (Gemini, Claude) require their reasoning_details back",
    drop_rule=target_of(_openrouter.drop_rule),
    price_provider="openrouter",
)

MOONSHOT = _spec(
    _moonshot.MOONSHOT,
    ("thinking",),
    aliases=("kimi",),
    reasoning_term="thinking",
    # Thinking models answer a tool-call assistant message without its reasoning_content with 400.
    drop_with_reasoning=False,
    drop_refusal=(
        "Kimi's thinking models require each tool-call assistant message's reasoning_content back "
        "(the API answers 400 'thinking is enabled but reasoning_content is missing')"
    ),
    drop_rule=target_of(_moonshot.drop_rule),
    price_provider="moonshotai",
)

# Z.AI and xAI accept a tool loop without reasoning back (quality only): "drop" is a real ablation.
ZAI = _spec(_zai.ZAI, ("thinking",), aliases=("glm",), reasoning_term="thinking", price_provider="zai")
XAI_CHAT = _spec(_xai.XAI_CHAT, ("reasoning_effort",), price_provider="x-ai")

# Local servers take a tool loop without reasoning back: "drop" is a real ablation.
_LOCAL_KEYS = ("reasoning_effort", "chat_template_kwargs")
VLLM = _spec(_local.VLLM, _LOCAL_KEYS)
LLAMACPP = _spec(_local.LLAMACPP, _LOCAL_KEYS)
OLLAMA = _spec(_local.OLLAMA, _LOCAL_KEYS)
CHAT = _spec(_local.CHAT, _LOCAL_KEYS)
