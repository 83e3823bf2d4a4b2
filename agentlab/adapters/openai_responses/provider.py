"""OpenAI's registry entry: what the rest of agentlab needs to know about this provider.

Imports no SDK (the registry reads this module to route ``openai:*`` model strings).
"""

from __future__ import annotations

from typing import Any

from agentlab.adapters.openai_responses import _azure, _deepseek, _local, _mantle, _xai
from agentlab.adapters.openai_responses._dialect import API, OPENAI, ResponsesDialect
from agentlab.adapters.option_rules import OptionRules
from agentlab.adapters.registry import ProviderSpec
from agentlab.adapters.wire_dialect import dialect_spec

__all__ = [
    "AZURE",
    "DEEPSEEK_RESPONSES",
    "LMSTUDIO_RESPONSES",
    "MANTLE",
    "OLLAMA_RESPONSES",
    "SPEC",
    "VLLM_RESPONSES",
    "XAI",
]

# Each owned key would silently break statelessness or the adapter's own mapping.
_PKG = "agentlab.adapters.openai_responses"

_SIMULATED = "agentlab.sim:RESPONSES_MODELS"

_STATELESS = "agentlab is stateless: store=false, full input every call, no previous_response_id"

OPTIONS = OptionRules(
    owned=dict.fromkeys(
        (
            "model",
            "input",
            "stream",
            "store",
            "previous_response_id",
            "conversation",
            "instructions",
            "tools",
        ),
        _STATELESS,
    ),
    types={
        "include": list,
        "metadata": dict,
        "reasoning": dict,
        "text": dict,
        "max_output_tokens": int,
        "top_logprobs": int,
        "temperature": float,
        "top_p": float,
        "service_tier": str,
        "safety_identifier": str,
        "prompt_cache_key": str,
        "truncation": str,
        "parallel_tool_calls": bool,
        "tool_choice": (str, dict),
    },
    neutral={
        "max_output_tokens": "max_output_tokens",
        "temperature": "temperature",
        "top_p": "top_p",
        "reasoning": "reasoning",
        "metadata": "metadata",
        "safety_identifier": "user_id",
        "service_tier": "service_tier",
        "tool_choice": "tool_choice",
        "parallel_tool_calls": "parallel_tool_calls",
    },
)


def _spec(dialect: ResponsesDialect, cls: str, check: str, **own: Any) -> ProviderSpec:
    """One Responses dialect's spec (``_dialect.py``) on the shared adapter and OpenAI's option rules.

    ``own``: the rest (prices, OpenTelemetry name, batch API). The OpenAI simulator serves each
    dialect's ``sim-*`` models by their profile (its entry of the simulator's ``RESPONSES_MODELS``;
    OpenAI's own are the simulator's ``OPENAI_MODELS``, given in ``own``).

    Responses accepts a tool loop without its reasoning items, on every host (xAI answers 200, only
    the answer suffers; the others as OpenAI), so ``drop`` is a real ablation on all of them.
    """
    own.setdefault("simulated_models", f"{_SIMULATED}[{dialect.name}]")
    return dialect_spec(
        dialect,
        API,
        f"{_PKG}._adapter:{cls}",
        reasoning_block_type="reasoning",
        drop_with_reasoning=True,
        options=OPTIONS,
        check_options=f"{_PKG}.{check}",
        simulator="agentlab.sim:openai_client",
        **own,
    )


SPEC = _spec(
    OPENAI, "OpenAIResponsesAdapter", "_request:check_options", simulated_models="agentlab.sim:OPENAI_MODELS",
    price_provider="openai", batch=f"{_PKG}._batch:OpenAIBatchAPI",
)  # fmt: skip
XAI = _spec(_xai.XAI, "XAIAdapter", "_xai:check_options", price_provider="x-ai", otel_name="x_ai")
DEEPSEEK_RESPONSES = _spec(
    _deepseek.DEEPSEEK_RESPONSES, "DeepSeekResponsesAdapter", "_deepseek:check_options",
    price_provider="deepseek", otel_name="deepseek",
)  # fmt: skip
AZURE = _spec(
    _azure.AZURE, "AzureAdapter", "_azure:check_options", price_provider="azure", otel_name="azure.ai.openai"
)
MANTLE = _spec(_mantle.MANTLE, "MantleAdapter", "_mantle:check_options", otel_name="aws.bedrock")
VLLM_RESPONSES = _spec(_local.VLLM_RESPONSES, "VLLMResponsesAdapter", "_local:check_vllm")
OLLAMA_RESPONSES = _spec(_local.OLLAMA_RESPONSES, "OllamaResponsesAdapter", "_local:check_ollama")
LMSTUDIO_RESPONSES = _spec(_local.LMSTUDIO_RESPONSES, "LMStudioResponsesAdapter", "_local:check_lmstudio")
