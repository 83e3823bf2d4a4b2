"""OpenRouter (``openrouter:<vendor>/<model>``): ``reasoning_details`` items, per backing model.

Its rule: the ``reasoning_details`` of an assistant message (``reasoning.text`` with ``signature``,
``reasoning.encrypted``, ``reasoning.summary``; each with ``format`` and ``index``) must go back on
that message, unchanged, for the models behind it that need them: Gemini (400 "Gemini models require
OpenRouter reasoning details to be preserved in each request"), Anthropic (its thinking-block rule),
OpenAI reasoning models (quality only). Streams carry them in pieces, merged by ``index``
(:mod:`._details`). Their text is display only.

A loop resumed from portable items (a restored checkpoint, a released continuation, a session that
moves here mid-loop) has tool-call turns whose details are gone: :func:`continuity` states the
backing model's rule, and the turns it requires go as plain text (``agentlab.neutral.recovery``).

Settings: ``reasoning: {effort | max_tokens, exclude, enabled}``. Usage: ``prompt_tokens`` includes
``prompt_tokens_details.cached_tokens`` (read) and ``cache_write_tokens`` (write);
``completion_tokens`` includes ``completion_tokens_details.reasoning_tokens``; ``cost`` is
OpenRouter's own figure in USD, kept beside agentlab's computed one (``provider_reported_cost``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlab.adapters.openai_chat._dialect import Dialect, cached_tokens, completion_usage, reasoning_off
from agentlab.adapters.wire_dialect import Host
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.recovery import NOTHING_REQUIRED, ContinuityRule
from agentlab.neutral.request import ReasoningSettings
from agentlab.neutral.usage import CallUsage, token_count

__all__ = ["CLAUDE_RULE", "GEMINI_RULE", "OPENROUTER", "continuity", "drop_rule", "usage_from_openrouter"]

_GEMINI = (
    "OpenRouter's Gemini models require each assistant message's reasoning_details back, unchanged, "
    "within the tool loop (OpenRouter answers 400 'Gemini models require OpenRouter reasoning details')"
)
_CLAUDE = (
    "OpenRouter's Anthropic models require the last assistant tool-use turn's reasoning_details "
    "(thinking with its signature) back, unchanged (the upstream answers 400 otherwise)"
)


def _backing(model: str) -> str | None:
    """``gemini`` or ``claude`` for the backing models whose reasoning_details are required, else None."""
    name = model.lower()
    if name.startswith(("google/", "sim-router-gemini")) or "/gemini" in name:
        return "gemini"
    if name.startswith(("anthropic/", "sim-router-claude")) or "/claude" in name:
        return "claude"
    return None


GEMINI_RULE = ContinuityRule(
    requires="current_turn",
    unexplained="send",
    source="OpenRouter: 'Gemini models require OpenRouter reasoning details to be preserved in each request'",
)
"""Gemini validates the signature of every function call of the current turn. The remedy is the
exchange as text, not Google's dummy signature: OpenRouter documents no way to send that dummy (a
``reasoning.encrypted`` detail is its own item), while plain text leaves no call to validate. A
live loop missing a signature for no known reason is sent as it is: the 400 shows the bug."""
CLAUDE_RULE = ContinuityRule(
    requires="last_turn",
    source="Anthropic: 'a final assistant message must start with a thinking block'",
)
"""Anthropic's rule on the last assistant turn holding tool calls, and its documented recovery."""


def continuity(model: str) -> ContinuityRule:
    """The backing model's rule (``Dialect.continuity``): Gemini's, Claude's, or nothing required."""
    backing = _backing(model)
    if backing == "gemini":
        return GEMINI_RULE
    return CLAUDE_RULE if backing == "claude" else NOTHING_REQUIRED


def drop_rule(model: str) -> str | None:
    """Whether ``drop`` can run with reasoning on for this backing model (``ProviderSpec.drop_rule``).

    Gemini- and Claude-backed models refuse it (their items are required); the others (OpenAI
    reasoning models, open models) accept a loop without them, so ``drop`` is a real ablation there.
    """
    backing = _backing(model)
    if backing == "gemini":
        return _GEMINI
    return _CLAUDE if backing == "claude" else None


def reasoning_body(model: str, r: ReasoningSettings | None) -> dict[str, Any]:
    """OpenRouter's unified ``reasoning`` object for the neutral settings (None: send none)."""
    if r is None:
        return {}
    if reasoning_off(r):
        return {"reasoning": {"enabled": False}}
    if r.budget_tokens is not None and r.effort is not None:
        raise InvalidSettingsError(
            "openrouter: reasoning takes effort or budget_tokens (OpenRouter's reasoning.effort or "
            "reasoning.max_tokens), not both; give one"
        )
    reasoning: dict[str, Any] = {}
    if r.budget_tokens is not None:
        reasoning["max_tokens"] = r.budget_tokens
    elif r.effort is not None:
        reasoning["effort"] = "xhigh" if r.effort == "max" else r.effort
    else:
        reasoning["enabled"] = True
    if r.display == "omitted":
        reasoning["exclude"] = True
    return {"reasoning": reasoning}


def usage_from_openrouter(usage: Mapping[str, Any]) -> CallUsage:
    """OpenRouter usage (cached and written prompt tokens inside ``prompt_tokens``)."""
    prompt = token_count(usage, "prompt_tokens")
    read = cached_tokens(usage) or 0
    write = token_count(usage.get("prompt_tokens_details") or {}, "cache_write_tokens") or 0
    return completion_usage(usage, prompt, cache_read=read if prompt is not None else None, cache_write=write)


OPENROUTER = Dialect(
    name="openrouter",
    label="OpenRouter",
    carry="details",
    reasoning_body=reasoning_body,
    usage=usage_from_openrouter,
    host=Host("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    reports_cost=True,
    continuity=continuity,
)
