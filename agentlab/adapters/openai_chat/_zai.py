"""GLM by Z.AI (``zai:<model>``, alias ``glm:``): ``reasoning_content`` beside ``content``, sent back.

Its rule (docs.z.ai "Thinking Mode"): thinking is on by default from GLM-4.7; with tools it is
*interleaved*, and "thinking blocks should be explicitly preserved and returned together with the
tool results". No Z.AI error for a missing ``reasoning_content`` is documented or reported: the
model loses its plan, the request is not refused. So the loop's reasoning goes back verbatim on its
message (the recorded accepted request carries it there), and nothing is recovered as text when it
is gone (the continuity rule requires nothing; ``drop`` is a real ablation).

Endpoints: the general API ``https://api.z.ai/api/paas/v4`` (the default) and the coding plan's
``https://api.z.ai/api/coding/paas/v4`` (give it as ``base_url``; there "preserved thinking" of
earlier turns is on). Settings: ``thinking: {type: enabled|disabled}``; no effort level and no token
budget are documented, so those are refused before sending (an effort can still be sent as
``provider_options={"zai_reasoning_effort": ...}``). Usage: ``prompt_tokens`` includes
``prompt_tokens_details.cached_tokens``; ``completion_tokens`` includes
``completion_tokens_details.reasoning_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlab.adapters.openai_chat import _dialect
from agentlab.adapters.openai_chat._dialect import Dialect
from agentlab.adapters.wire_dialect import Host
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.request import ReasoningSettings
from agentlab.neutral.usage import CallUsage

__all__ = ["ZAI", "usage_from_zai"]


def reasoning_body(model: str, r: ReasoningSettings | None) -> dict[str, Any]:
    """``thinking: {type}`` for the neutral settings (None: the model's default)."""
    if r is None:
        return {}
    if _dialect.reasoning_off(r):
        return _dialect.thinking_switch(False)
    if r.budget_tokens is not None or r.effort is not None:
        raise InvalidSettingsError(
            "zai: GLM turns thinking on or off only (thinking: {type: enabled|disabled}); it has no "
            "documented effort level or token budget: give reasoning=True or reasoning=False (or "
            "provider_options={'zai_reasoning_effort': ...} to send one anyway)"
        )
    return _dialect.thinking_switch(True)


def usage_from_zai(usage: Mapping[str, Any]) -> CallUsage:
    """GLM usage: cache hits inside the prompt, reasoning inside the completion.

    Z.AI bills no cache-write surcharge, so writes are 0 when the prompt is known; a cache read
    not reported stays unknown.
    """
    return _dialect.reported_usage(usage)


ZAI = Dialect(
    name="zai",
    label="GLM (Z.AI)",
    reasoning_body=reasoning_body,
    usage=usage_from_zai,
    host=Host("https://api.z.ai/api/paas/v4", "ZAI_API_KEY"),
)
