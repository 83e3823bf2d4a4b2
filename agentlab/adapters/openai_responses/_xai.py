"""xAI (``xai:<model>``, ``https://api.x.ai/v1/responses``): Grok on the Responses format.

xAI's documented rule for reasoning continuity: keep every output item exactly as it arrived, in
order, taking the items from ``response.completed`` when streaming (:attr:`items_from_completed`).
Reasoning items carry ``encrypted_content`` on request (``include``). Dropping them does not fail:
the API answers 200 and only the answer gets worse, which is why the continuity guard and the
simulator's lost-plan effect matter here. xAI stores responses for 30 days unless ``store: false``,
which agentlab always sends.

Usage: OpenAI's shape (``output_tokens`` includes ``reasoning_tokens``; ``total_tokens`` = input +
output, unlike xAI's Chat Completions), plus ``num_sources_used``/``num_server_side_tools_used`` and
``cost_in_usd_ticks``: the billed cost in units of 10^-10 USD, kept as the provider-reported cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from agentlab.adapters.openai_responses._dialect import ResponsesDialect
from agentlab.adapters.openai_responses._request import check_options as _check
from agentlab.adapters.wire_dialect import XAI_HOST

__all__ = ["TICKS_PER_USD", "XAI", "check_options", "cost_from_ticks"]

TICKS_PER_USD = 10**10


def cost_from_ticks(usage: Mapping[str, Any]) -> float | None:
    """``cost_in_usd_ticks`` in USD; ``None`` (unknown) when absent or not a number."""
    ticks = usage.get("cost_in_usd_ticks")
    if isinstance(ticks, int | float) and not isinstance(ticks, bool):
        return ticks / TICKS_PER_USD
    return None


XAI = ResponsesDialect(
    name="xai",
    label="xAI",
    host=XAI_HOST,
    items_from_completed=True,
    provider_cost=cost_from_ticks,
)


check_options = partial(_check, dialect=XAI)
"""The shared Responses checks (``ProviderSpec.check_options``), under this dialect's name."""
