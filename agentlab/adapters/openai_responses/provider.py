"""OpenAI's registry entry: what the rest of agentlab needs to know about this provider.

Imports no SDK (the registry reads this module to route ``openai:*`` model strings).
"""

from __future__ import annotations

from agentlab.adapters.registry import ProviderSpec

__all__ = ["SPEC"]

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
    check_options="agentlab.adapters.openai_responses._request:check_options",
    simulated_models="agentlab.sim:OPENAI_MODELS",
    price_provider="openai",
    batch="agentlab.adapters.openai_responses._batch:OpenAIBatchAPI",
)
