"""Gemini ``usageMetadata`` -> ``CallUsage`` (agentlab's convention: ``agentlab.neutral.usage``).

How Gemini's figures map, so the three providers' frames add up the same way:

* ``input_tokens`` = ``promptTokenCount`` + ``toolUsePromptTokenCount``: every prompt token the call
  processed (``promptTokenCount`` already includes the implicitly or explicitly cached part);
* ``cache_read_tokens`` = ``cachedContentTokenCount`` (part of the input); Gemini bills no cache
  write surcharge on implicit caching, so ``cache_write_tokens`` is 0;
* ``output_tokens`` = ``candidatesTokenCount`` + ``thoughtsTokenCount``: Gemini reports the answer
  and the thinking separately and bills both as output, while OpenAI's and Anthropic's
  ``output_tokens`` already include reasoning; adding them makes ``output_tokens`` "every billed
  output token, reasoning included" on all three;
* ``reasoning_tokens`` = ``thoughtsTokenCount`` (``reported``); a response without the field (thinking
  off, or a model that did not think on this call) reports 0 when ``candidatesTokenCount`` is given
  (Gemini omits zero counts), else unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlab.neutral.usage import CallUsage, token_count

__all__ = ["usage_from_gemini"]


def usage_from_gemini(usage: Mapping[str, Any]) -> CallUsage:
    """Normalize a Gemini ``usageMetadata`` object (camelCase, as the API sends it)."""
    prompt = token_count(usage, "promptTokenCount")
    tool_prompt = token_count(usage, "toolUsePromptTokenCount") or 0
    cached = token_count(usage, "cachedContentTokenCount") or 0
    answer = token_count(usage, "candidatesTokenCount")
    thoughts = token_count(usage, "thoughtsTokenCount")
    output = None if answer is None and thoughts is None else (answer or 0) + (thoughts or 0)
    if thoughts is None and output is not None:
        thoughts = 0  # Gemini leaves zero counts out
    return CallUsage(
        input_tokens=None if prompt is None else prompt + tool_prompt,
        cache_read_tokens=cached if prompt is not None else None,
        cache_write_tokens=0 if prompt is not None else None,
        cache_write_1h_tokens=0 if prompt is not None else None,
        output_tokens=output,
        reasoning_tokens=thoughts,
        reasoning_source="reported" if thoughts is not None else "unknown",
    )
