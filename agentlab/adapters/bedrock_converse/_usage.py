"""Converse ``usage`` (camelCase) -> ``CallUsage`` (agentlab's convention: ``agentlab.neutral.usage``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlab.neutral.usage import CallUsage, token_count

__all__ = ["usage_from_converse"]


def usage_from_converse(usage: Mapping[str, Any]) -> CallUsage:
    """Normalize a Converse ``usage`` object: ``inputTokens`` excludes the cache, as on Anthropic.

    ``totalTokens`` = input + output + cache reads + cache writes, so the inclusive input adds both
    back. Converse reports no reasoning-token count (its ``outputTokens`` includes the reasoning):
    ``reasoning_tokens`` stays unknown, never 0, and never guessed from the returned text.
    """
    uncached = token_count(usage, "inputTokens")
    read = token_count(usage, "cacheReadInputTokens")
    write = token_count(usage, "cacheWriteInputTokens")
    return CallUsage(
        input_tokens=None if uncached is None else uncached + (read or 0) + (write or 0),
        cache_read_tokens=read,
        cache_write_tokens=write,
        output_tokens=token_count(usage, "outputTokens"),
        reasoning_tokens=None,
        reasoning_source="unknown",
    )
