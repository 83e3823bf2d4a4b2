"""Anthropic's registry entry: what the rest of agentlab needs to know about this provider.

Imports no SDK (the registry reads this module to route ``anthropic:*`` model strings).
"""

from __future__ import annotations

from agentlab.adapters.registry import ProviderSpec

__all__ = ["SPEC"]

SPEC = ProviderSpec(
    name="anthropic",
    api="messages",
    label="Anthropic",
    adapter="agentlab.adapters.anthropic_messages._adapter:AnthropicMessagesAdapter",
    usage="agentlab.adapters.anthropic_messages._usage:usage_from_anthropic",
    sdk_module="anthropic",
    sdk_loggers=("anthropic",),
    api_key_env="ANTHROPIC_API_KEY",
    reasoning_term="thinking",
    reasoning_block_type="thinking",
    # Rewriting the tool calls as plain text would make "drop" possible, but that is a different
    # experiment presented as this one; the honest Anthropic ablation is thinking off.
    drop_with_reasoning=False,
    drop_refusal=(
        "with thinking on, Anthropic requires the current tool loop's thinking blocks to go back "
        "unmodified (the API answers 400 otherwise)"
    ),
    check_options="agentlab.adapters.anthropic_messages._request:check_options",
    simulated_models="agentlab.sim:ANTHROPIC_MODELS",
    price_provider="anthropic",
    batch="agentlab.adapters.anthropic_messages._batch:AnthropicBatchAPI",
)
