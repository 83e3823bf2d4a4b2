"""Kimi by Moonshot AI (``moonshot:<model>``, alias ``kimi:``): ``reasoning_content``, required back.

Its rule: with thinking on (``kimi-k2.5``/``kimi-k2.6`` by default, ``kimi-k2-thinking`` always),
every assistant message that made tool calls must carry its ``reasoning_content`` in every later
request, or the API answers 400 "thinking is enabled but reasoning_content is missing in assistant
tool call message at index N" (``{"error": {"message", "type": "invalid_request_error"}}``; an
empty string counts as missing on k2.5/k2.6). So within the loop it goes back verbatim under the
field it came in, and an earlier run's tool exchange goes as plain text (:data:`RULE`, every
tool-call turn, as DeepSeek). Models that do not think (``kimi-k2-0905-preview``,
``moonshot-v1-*``) require nothing.

Settings (platform.kimi.ai "Model Parameter Reference"): ``thinking: {type: enabled|disabled}``
on the k2.5 generation and later; no effort level and no token budget are documented, so those are
refused before sending. Usage: ``prompt_tokens`` includes the cache hits (``cached_tokens``, at the
top level or in ``prompt_tokens_details``); ``completion_tokens`` includes the reasoning, whose
count is reported only in ``completion_tokens_details.reasoning_tokens`` when present (else
unknown, never 0).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentlab.adapters.openai_chat import _dialect
from agentlab.adapters.openai_chat._dialect import Dialect
from agentlab.adapters.wire_dialect import Host
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.recovery import NOTHING_REQUIRED, ContinuityRule
from agentlab.neutral.request import ReasoningSettings
from agentlab.neutral.usage import CallUsage, token_count

__all__ = ["MOONSHOT", "RULE", "continuity", "drop_rule", "thinks", "usage_from_moonshot"]

_THINKING = re.compile(r"(thinking|kimi-k2\.[5-9]|kimi-k[3-9]|^sim-kimi)", re.IGNORECASE)


def thinks(model: str) -> bool:
    """Whether ``model`` runs with thinking on by default (the k2.5 generation on, ``*-thinking``)."""
    return _THINKING.search(model) is not None


def _forced(model: str) -> bool:
    return "thinking" in model.lower()


def reasoning_body(model: str, r: ReasoningSettings | None) -> dict[str, Any]:
    """``thinking: {type}`` for the neutral settings (None: the model's default)."""
    if r is None:
        return {}
    if r.budget_tokens is not None or r.effort not in (None, "none"):
        raise InvalidSettingsError(
            "moonshot: Kimi turns thinking on or off only (thinking: {type: enabled|disabled}); it "
            "has no effort level or token budget: give reasoning=True or reasoning=False"
        )
    if _dialect.reasoning_off(r):
        if _forced(model):
            raise InvalidSettingsError(
                f"moonshot: {model!r} always thinks (Kimi's *-thinking models); use kimi-k2.5 or "
                "later to turn thinking off"
            )
        return _dialect.thinking_switch(False)
    return _dialect.thinking_switch(True)


def usage_from_moonshot(usage: Mapping[str, Any]) -> CallUsage:
    """Kimi usage: cache hits inside the prompt; reasoning inside the completion (count if reported).

    Moonshot bills no cache-write surcharge, so writes are 0 when the prompt is known.
    """
    prompt = token_count(usage, "prompt_tokens")
    hit = _dialect.cached_tokens(usage, "cached_tokens")
    return _dialect.completion_usage(usage, prompt, cache_read=hit if prompt is not None else None)


RULE = ContinuityRule(
    requires="every_turn",
    source="Kimi: 'thinking is enabled but reasoning_content is missing in assistant tool call message'",
)


def continuity(model: str) -> ContinuityRule:
    """Thinking models require every tool-call turn's ``reasoning_content``; the others nothing."""
    return RULE if thinks(model) else NOTHING_REQUIRED


_REQUIRED = (
    "Kimi's thinking models require each tool-call assistant message's reasoning_content back (the "
    "API answers 400 'thinking is enabled but reasoning_content is missing in assistant tool call "
    "message')"
)


def drop_rule(model: str) -> str | None:
    """``drop`` with reasoning on: refused for the thinking models, a real ablation for the others."""
    return _REQUIRED if thinks(model) else None


_FIX = (
    "agentlab: Kimi's thinking mode needs each tool-call assistant message's reasoning_content back; "
    "within a loop it is sent when the request's continuation holds that loop's reasoning items and "
    "send_reasoning is on (the default); an earlier run's tool exchange goes as text (Session), or "
    "turn thinking off (reasoning=False, kimi-k2.5 and later)"
)


def error_fix(message: str) -> str | None:
    """The fix for Kimi's reasoning_content 400; ``None`` for other errors."""
    low = message.lower()
    return _FIX if "reasoning_content is missing" in low else None


MOONSHOT = Dialect(
    name="moonshot",
    label="Kimi",
    continuity=continuity,
    reasoning_body=reasoning_body,
    usage=usage_from_moonshot,
    host=Host("https://api.moonshot.ai/v1", "MOONSHOT_API_KEY"),
    error_fix=error_fix,
)
