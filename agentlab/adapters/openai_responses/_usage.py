"""OpenAI Responses ``usage`` -> ``CallUsage`` (agentlab's convention: ``agentlab.neutral.usage``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlab.neutral.usage import CallUsage, token_count

__all__ = ["usage_from_openai"]


def usage_from_openai(usage: Mapping[str, Any]) -> CallUsage:
    """Normalize an OpenAI Responses ``usage`` object (``input_tokens`` already includes cached).

    OpenAI bills no cache-write surcharge, so the writes are 0 by definition, not unknown; with no
    input figure at all (a response that ended without usage) its parts are unknown too.
    """
    details = usage.get("input_tokens_details") or {}
    out_details = usage.get("output_tokens_details") or {}
    reasoning = token_count(out_details, "reasoning_tokens")
    prompt = token_count(usage, "input_tokens")
    cached = token_count(details, "cached_tokens")  # read (so a malformed one fails typed) either way
    known = prompt is not None
    return CallUsage(
        input_tokens=prompt,
        cache_read_tokens=(cached or 0) if known else None,
        cache_write_tokens=0 if known else None,
        cache_write_1h_tokens=0 if known else None,
        output_tokens=token_count(usage, "output_tokens"),
        reasoning_tokens=reasoning,
        reasoning_source="reported" if reasoning is not None else "unknown",
    )
