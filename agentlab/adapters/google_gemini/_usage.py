"""Gemini ``usageMetadata`` -> ``CallUsage`` (agentlab's convention: ``agentlab.neutral.usage``).

How Gemini's figures map, so the three providers' frames add up the same way:

* ``input_tokens`` = ``promptTokenCount`` + ``toolUsePromptTokenCount``: every prompt token the call
  processed. ``promptTokenCount`` already includes the cached part (implicit or explicit);
  ``toolUsePromptTokenCount`` is what the API's built-in tools (Google Search, code execution, URL
  context) fed back into the prompt, which Gemini bills as input, so it is input here too (it is
  absent for function calling, which is all agentlab sends);
* ``cache_read_tokens`` = ``cachedContentTokenCount`` (part of the input, billed at the cache-read
  price). Gemini bills no write surcharge on implicit caching, so ``cache_write_tokens`` is 0; an
  explicit cache's creation is added by the adapter to the call that created it (see
  ``_cache.py``);
* ``output_tokens`` = ``candidatesTokenCount`` + ``thoughtsTokenCount``: Gemini reports the answer
  and the thinking separately and bills both as output, while OpenAI's and Anthropic's
  ``output_tokens`` already include reasoning; adding them makes ``output_tokens`` "every billed
  output token, reasoning included" on all three;
* ``reasoning_tokens`` = ``thoughtsTokenCount`` (``reported``). The API writes usage as proto3 JSON,
  which leaves zero counts out, so an absent ``thoughtsTokenCount`` may be a zero or a figure not
  given. It is a *reported* 0 only when ``totalTokenCount`` proves it (total = prompt + tool-use
  prompt + candidates, as in the recorded 2.5 and 3 calls that answered without thinking); when the
  total exceeds that sum the difference is the thinking, reported as ``estimated`` (derived, not
  read); without a total it is unknown (``None``), and so is ``output_tokens``.

The modality breakdowns (``promptTokensDetails``, ``cacheTokensDetails``, ``candidatesTokensDetails``,
``toolUsePromptTokensDetails``) split these same totals by modality; they add nothing to the buckets
and are not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlab.neutral.usage import CallUsage, ReasoningSource, token_count

__all__ = ["usage_from_gemini"]


def _thoughts(
    usage: Mapping[str, Any], prompt: int | None, tool_prompt: int, answer: int
) -> tuple[int | None, ReasoningSource]:
    """``thoughtsTokenCount``, or what ``totalTokenCount`` says about an absent one (module docstring)."""
    thoughts = token_count(usage, "thoughtsTokenCount")
    if thoughts is not None:
        return thoughts, "reported"
    total = token_count(usage, "totalTokenCount")
    if total is None or prompt is None:
        return None, "unknown"
    rest = total - prompt - tool_prompt - answer
    if rest == 0:
        return 0, "reported"
    return (rest, "estimated") if rest > 0 else (None, "unknown")


def usage_from_gemini(usage: Mapping[str, Any]) -> CallUsage:
    """Normalize a Gemini ``usageMetadata`` object (camelCase, as the API sends it)."""
    prompt = token_count(usage, "promptTokenCount")
    tool_prompt = token_count(usage, "toolUsePromptTokenCount") or 0
    cached = token_count(usage, "cachedContentTokenCount") or 0
    answer = token_count(usage, "candidatesTokenCount") or 0
    thoughts, source = _thoughts(usage, prompt, tool_prompt, answer)
    return CallUsage(
        input_tokens=None if prompt is None else prompt + tool_prompt,
        cache_read_tokens=cached if prompt is not None else None,
        cache_write_tokens=0 if prompt is not None else None,
        cache_write_1h_tokens=0 if prompt is not None else None,
        output_tokens=None if thoughts is None else answer + thoughts,
        reasoning_tokens=thoughts,
        reasoning_source=source,
    )
