"""DeepSeek (``deepseek:<model>``): thinking mode with ``reasoning_content`` beside ``content``.

Its rule: in thinking mode every assistant message that made tool calls must carry its
``reasoning_content`` back, in every later request of the conversation, or the API answers 400 ("The
`reasoning_content` in the thinking mode must be passed back to the API."). agentlab keeps reasoning
for one tool loop only, so within the loop it goes back verbatim, and an earlier run's tool exchange
(portable items only) is sent as plain text (:data:`RULE`, every tool-call turn; README "DeepSeek").

Settings (DeepSeek's thinking-mode guide): ``thinking: {type: enabled|disabled}`` toggles it (on by
default), ``reasoning_effort`` is ``low``/``high``/``max`` (the API maps minimal->low,
medium/xhigh->high); a token budget has no field. Usage: ``prompt_cache_hit_tokens`` is the cache
read part of ``prompt_tokens``; ``completion_tokens`` includes ``reasoning_tokens``.

Structured output: DeepSeek has JSON mode only (``response_format: {type: json_object}``, the JSON
Output guide) and answers ``json_schema`` with 400 "This response_format type is unavailable now", so
``output_type`` (a schema the answer must hold to) is refused when the run is built (``NO_JSON_SCHEMA``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlab.adapters.openai_chat import _dialect
from agentlab.adapters.openai_chat._dialect import Dialect
from agentlab.adapters.wire_dialect import DEEPSEEK_HOST
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.recovery import ContinuityRule
from agentlab.neutral.request import ReasoningSettings
from agentlab.neutral.usage import CallUsage, token_count

__all__ = ["DEEPSEEK", "RULE", "continuity", "usage_from_deepseek"]

_EFFORT = {"minimal": "low", "low": "low", "medium": "high", "high": "high", "xhigh": "high", "max": "max"}


def reasoning_body(model: str, r: ReasoningSettings | None) -> dict[str, Any]:
    """``thinking`` and ``reasoning_effort`` for the neutral settings (None: the API's default)."""
    if r is None:
        return {}
    if _dialect.reasoning_off(r):
        return _dialect.thinking_switch(False)
    if r.budget_tokens is not None:
        raise InvalidSettingsError(
            "deepseek: DeepSeek has no thinking token budget; give effort ('low', 'high' or 'max') "
            "instead of budget_tokens"
        )
    body = _dialect.thinking_switch(True)
    if r.effort is not None:
        body["reasoning_effort"] = _EFFORT[r.effort]
    return body


def usage_from_deepseek(usage: Mapping[str, Any]) -> CallUsage:
    """DeepSeek usage: cache hits are part of the prompt; reasoning is part of the completion.

    DeepSeek bills no cache-write surcharge, so writes are 0 when the prompt is known.
    """
    prompt = token_count(usage, "prompt_tokens")
    hit = _dialect.cached_tokens(usage, "prompt_cache_hit_tokens")
    return _dialect.completion_usage(usage, prompt, cache_read=(hit or 0) if prompt is not None else None)


_FIX = (
    "agentlab: DeepSeek's thinking mode needs each tool-call assistant message's reasoning_content "
    "back; within a loop it is sent when the request's continuation holds that loop's reasoning items "
    "and send_reasoning is on (the default); an earlier run's tool exchange goes as text (Session), or "
    "turn thinking off (reasoning=False)"
)


def error_fix(message: str) -> str | None:
    """The fix for DeepSeek's reasoning_content 400 in either wording; ``None`` for other errors.

    The wordings: "The `reasoning_content` in the thinking mode must be passed back to the API." and
    the older "Missing `reasoning_content` field in the assistant message at message index N".
    """
    low = message.lower()
    if "reasoning_content" in low and ("passed back" in low or "missing" in low):
        return _FIX
    return None


RULE = ContinuityRule(
    requires="every_turn",
    source="DeepSeek's thinking-mode guide: reasoning_content back in all subsequent requests",
)


def continuity(model: str) -> ContinuityRule:
    """Thinking mode requires every tool-call turn's ``reasoning_content``, in every later request."""
    return RULE


NO_JSON_SCHEMA = (
    "DeepSeek has no schema-constrained output: it answers response_format json_schema with 400 "
    "'This response_format type is unavailable now' and takes only JSON mode (json_object, "
    "api-docs.deepseek.com/guides/json_mode); drop output_type, or ask for JSON in the prompt with "
    "provider_options={'deepseek_response_format': {'type': 'json_object'}} and validate it yourself"
)

DEEPSEEK = Dialect(
    name="deepseek",
    label="DeepSeek",
    continuity=continuity,
    reasoning_body=reasoning_body,
    usage=usage_from_deepseek,
    host=DEEPSEEK_HOST,
    error_fix=error_fix,
    no_json_schema=NO_JSON_SCHEMA,
)
