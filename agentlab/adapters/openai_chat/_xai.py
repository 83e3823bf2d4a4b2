"""xAI Grok over Chat Completions (``xai_chat:<model>``): ``reasoning_content`` (grok-3-mini), sent back.

The Responses API is xAI's primary surface (``xai:``, its own dialect); this one is the
OpenAI-compatible ``https://api.x.ai/v1/chat/completions``. Only grok-3-mini returns
``message.reasoning_content`` there (docs.x.ai "Reasoning"); later models reason without showing it.
Nothing is refused when reasoning is not sent back (the request is accepted, only the plan is
lost), so the loop's reasoning goes back verbatim on its message, as the recorded accepted request
has it, and nothing is recovered as text (the continuity rule requires nothing).

Settings: ``reasoning_effort``; grok-3-mini takes ``low`` or ``high`` only and always reasons, later
models ``none``/``low``/``medium``/``high``; a token budget has no field. Usage, unlike OpenAI's:
``completion_tokens`` *excludes* ``completion_tokens_details.reasoning_tokens`` (``total_tokens`` =
prompt + completion + reasoning), so the billed output is their sum; ``cost_in_usd_ticks`` is the
billed cost in 10^-10 USD, kept as the provider's figure beside agentlab's computed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlab.adapters.openai_chat._dialect import Dialect, cached_tokens, completion_usage, reasoning_off
from agentlab.adapters.openai_responses._xai import TICKS_PER_USD, cost_from_ticks
from agentlab.adapters.wire_dialect import XAI_HOST
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.request import ReasoningSettings
from agentlab.neutral.usage import CallUsage, token_count

__all__ = ["TICKS_PER_USD", "XAI_CHAT", "cost_from_ticks", "usage_from_xai"]

_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high"}


def _mini(model: str) -> bool:
    return "grok-3-mini" in model.lower()


def reasoning_body(model: str, r: ReasoningSettings | None) -> dict[str, Any]:
    """``reasoning_effort`` for the neutral settings (None: the model's default)."""
    if r is None:
        return {}
    if r.budget_tokens is not None:
        raise InvalidSettingsError(
            "xai_chat: xAI has no thinking token budget; give effort ('low', 'medium' or 'high') instead"
        )
    effort = "none" if reasoning_off(r) else _EFFORT.get(r.effort or "")
    if _mini(model) and effort not in (None, "low", "high"):
        raise InvalidSettingsError(
            f"xai_chat: {model!r} always reasons and takes reasoning_effort 'low' or 'high' only "
            f"(docs.x.ai Reasoning), not {r.effort or 'off'!r}"
        )
    return {} if effort is None else {"reasoning_effort": effort}


def usage_from_xai(usage: Mapping[str, Any]) -> CallUsage:
    """Usage of xAI: cache hits inside the prompt; reasoning *outside* ``completion_tokens``.

    Billed output is completion + reasoning; with the reasoning count missing it is what the total
    says beyond the prompt, and unknown when neither is there. No cache-write surcharge.
    """
    prompt = token_count(usage, "prompt_tokens")
    read = completion_usage(usage, prompt, cache_read=cached_tokens(usage))
    completion, reasoning = read.output_tokens, read.reasoning_tokens
    total = token_count(usage, "total_tokens")
    if completion is not None and reasoning is not None:
        output: int | None = completion + reasoning
    elif total is not None and prompt is not None:
        output = total - prompt
    else:
        output = None
    return read.model_copy(update={"output_tokens": output})


XAI_CHAT = Dialect(
    name="xai_chat",
    label="xAI (Chat Completions)",
    reasoning_body=reasoning_body,
    usage=usage_from_xai,
    host=XAI_HOST,
    provider_cost=cost_from_ticks,
)
