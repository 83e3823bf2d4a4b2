"""OpenAI's registry entry: what the rest of agentlab needs to know about this provider.

Imports no SDK (the registry reads this module to route ``openai:*`` model strings).
"""

from __future__ import annotations

from agentlab.adapters.option_rules import OptionRules
from agentlab.adapters.registry import ProviderSpec

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

SPEC = ProviderSpec(
    name="openai",
    api="responses",
    label="OpenAI",
    adapter="agentlab.adapters.openai_responses._adapter:OpenAIResponsesAdapter",
    usage="agentlab.adapters.openai_responses._usage:usage_from_openai",
    sdk_module="openai",
    sdk_loggers=("openai",),
    api_key_env="OPENAI_API_KEY",
    reasoning_block_type="reasoning",
    # Responses accepts a tool loop without its reasoning items: "drop" is a real ablation here.
    drop_with_reasoning=True,
    options=OPTIONS,
    check_options="agentlab.adapters.openai_responses._request:check_options",
    simulated_models="agentlab.sim:OPENAI_MODELS",
    simulator="agentlab.sim:openai_client",
    price_provider="openai",
    batch="agentlab.adapters.openai_responses._batch:OpenAIBatchAPI",
)



_PKG = "agentlab.adapters.openai_responses"


def _dialect(
    name: str,
    label: str,
    cls: str,
    check: str,
    *,
    usage: str = "_usage:usage_from_openai",
    api_key_env: str | None = None,
    price_provider: str | None = None,
    otel_name: str | None = None,
) -> ProviderSpec:
    """One Responses dialect's spec (``_dialect.py``) on the shared adapter and OpenAI's option rules.

    The OpenAI simulator serves each dialect's ``sim-*`` models by their profile.

    Every dialect takes a tool loop without its reasoning items (xAI answers 200, only the answer
    suffers; the others as OpenAI), so ``drop`` is a real ablation on all of them.
    """
    return ProviderSpec(
        name=name,
        api="responses",
        label=label,
        adapter=f"{_PKG}._adapter:{cls}",
        usage=f"{_PKG}.{usage}",
        sdk_module="openai",
        sdk_loggers=("openai",),
        api_key_env=api_key_env,
        reasoning_block_type="reasoning",
        drop_with_reasoning=True,
        options=OPTIONS,
        check_options=f"{_PKG}.{check}",
        simulated_models=f"{_PKG}._simnames:{name.upper()}",
        simulator="agentlab.sim:openai_client",
        price_provider=price_provider,
        otel_name=otel_name,
    )


XAI = _dialect(
    "xai", "xAI", "XAIAdapter", "_xai:check_options", api_key_env="XAI_API_KEY", price_provider="x-ai",
    otel_name="x_ai",
)  # fmt: skip
DEEPSEEK_RESPONSES = _dialect(
    "deepseek_responses", "DeepSeek (Responses)", "DeepSeekResponsesAdapter", "_deepseek:check_options",
    api_key_env="DEEPSEEK_API_KEY", price_provider="deepseek", otel_name="deepseek",
)  # fmt: skip
AZURE = _dialect(
    "azure", "Azure OpenAI", "AzureAdapter", "_azure:check_options", api_key_env="AZURE_OPENAI_API_KEY",
    price_provider="azure", otel_name="azure.ai.openai",
)  # fmt: skip
MANTLE = _dialect(
    "mantle", "Bedrock Mantle", "MantleAdapter", "_mantle:check_options",
    usage="_mantle:usage_from_mantle", api_key_env="AWS_BEARER_TOKEN_BEDROCK", otel_name="aws.bedrock",
)  # fmt: skip
_LOCAL_USAGE = "_local:usage_from_local"
VLLM_RESPONSES = _dialect(
    "vllm_responses", "vLLM (Responses)", "VLLMResponsesAdapter", "_local:check_vllm", usage=_LOCAL_USAGE
)
OLLAMA_RESPONSES = _dialect(
    "ollama_responses", "Ollama (Responses)", "OllamaResponsesAdapter", "_local:check_ollama",
    usage=_LOCAL_USAGE,
)  # fmt: skip
LMSTUDIO_RESPONSES = _dialect(
    "lmstudio_responses", "LM Studio (Responses)", "LMStudioResponsesAdapter", "_local:check_lmstudio",
    usage=_LOCAL_USAGE,
)  # fmt: skip
