"""OpenAI's registry entry: what the rest of agentlab needs to know about this provider.

Imports no SDK (the registry reads this module to route ``openai:*`` model strings).
"""

from __future__ import annotations

from agentlab.adapters.option_rules import OptionRules
from agentlab.adapters.registry import ProviderSpec

__all__ = ["SPEC"]

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
