"""Anthropic Messages ``usage`` -> ``CallUsage`` (agentlab's convention: ``agentlab.neutral.usage``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlab.neutral.usage import CallUsage, token_count

__all__ = ["usage_from_anthropic"]


def usage_from_anthropic(usage: Mapping[str, Any]) -> CallUsage:
    """Normalize an Anthropic Messages ``usage`` object (its ``input_tokens`` excludes the cache).

    The inclusive convention needs cache reads and writes added back; the one-hour-ttl writes are
    the part of the writes Anthropic prices higher. With no input figure at all the cache parts
    are unknown too (never a 0 beside an unknown whole).
    """
    uncached = token_count(usage, "input_tokens")
    read = token_count(usage, "cache_read_input_tokens") or 0
    write = token_count(usage, "cache_creation_input_tokens") or 0
    creation = usage.get("cache_creation") or {}
    write_1h = token_count(creation, "ephemeral_1h_input_tokens") or 0
    out_details = usage.get("output_tokens_details") or {}
    thinking = token_count(out_details, "thinking_tokens")
    known = uncached is not None
    return CallUsage(
        input_tokens=None if uncached is None else uncached + read + write,
        cache_read_tokens=read if known else None,
        cache_write_tokens=write if known else None,
        cache_write_1h_tokens=write_1h if known else None,
        output_tokens=token_count(usage, "output_tokens"),
        reasoning_tokens=thinking,
        reasoning_source="reported" if thinking is not None else "unknown",
    )
