"""Anthropic's registry entry: what the rest of agentlab needs to know about this provider.

Imports no SDK (the registry reads this module to route ``anthropic:*`` model strings).
"""

from __future__ import annotations

from typing import Any

from agentlab.adapters.option_rules import OptionRules
from agentlab.adapters.registry import ProviderSpec

__all__ = ["SPEC", "claude_spec"]

_HISTORY = "the full history on every call"

OPTIONS = OptionRules(
    # ``thread`` too: agentlab is stateless (the loop's thinking kept locally), and a message thread
    # would hold the conversation on Anthropic's servers (not ZDR-eligible) and hand back thinking a
    # loop dropped.
    owned={
        "messages": _HISTORY,
        "model": "the run's model",
        "stream": "the run's stream knob",
        "thread": "agentlab is stateless: no server-held message thread",
    },
    types={
        "metadata": dict,
        "thinking": dict,
        "tool_choice": dict,
        "output_config": dict,
        "cache_control": dict,
        "system": (str, list),
        "stop_sequences": list,
        "max_tokens": int,
        "top_k": int,
        "temperature": float,
        "top_p": float,
        "service_tier": str,
    },
    neutral={
        "max_tokens": "max_output_tokens",
        "temperature": "temperature",
        "top_p": "top_p",
        "stop_sequences": "stop_sequences",
        "metadata": ("user_id", "metadata"),
        "thinking": "reasoning",
        "tool_choice": ("tool_choice", "parallel_tool_calls"),
        "service_tier": "service_tier",
    },
)


def claude_spec(**own: Any) -> ProviderSpec:
    """A spec for Claude's Messages API on any host: what Anthropic and the platforms share, plus ``own``.

    The body, usage mapping, SDK, the word for reasoning and its block type, the continuity policy
    and the simulator's models are the Messages API's, written once here; ``own`` is the host's
    (name, adapter, key, option rules, why ``drop`` is refused there, simulator client, prices...).
    """
    return ProviderSpec(
        api="messages",
        usage="agentlab.adapters.anthropic_messages._usage:usage_from_anthropic",
        sdk_module="anthropic",
        reasoning_term="thinking",
        reasoning_block_type="thinking",
        # Rewriting the tool calls as plain text would make "drop" possible, but that is a different
        # experiment presented as this one; the honest Claude ablation is thinking off.
        drop_with_reasoning=False,
        simulated_models="agentlab.sim:ANTHROPIC_MODELS",
        **own,
    )


SPEC = claude_spec(
    name="anthropic",
    label="Anthropic",
    adapter="agentlab.adapters.anthropic_messages._adapter:AnthropicMessagesAdapter",
    sdk_loggers=("anthropic",),
    api_key_env="ANTHROPIC_API_KEY",
    drop_refusal=(
        "with thinking on, Anthropic requires the current tool loop's thinking blocks to go back "
        "unmodified (the API answers 400 otherwise)"
    ),
    options=OPTIONS,
    check_options="agentlab.adapters.anthropic_messages._request:check_options",
    simulator="agentlab.sim:anthropic_client",
    price_provider="anthropic",
    batch="agentlab.adapters.anthropic_messages._batch:AnthropicBatchAPI",
)
