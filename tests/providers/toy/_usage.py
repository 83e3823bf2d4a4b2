"""The toy service's ``usage`` -> ``CallUsage``: the provider's usage normalizer lives in its package."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlab.neutral.usage import CallUsage, token_count

__all__ = ["usage_from_toy"]


def usage_from_toy(usage: Mapping[str, Any]) -> CallUsage:
    """``{"in", "out", "thought"}`` -> agentlab's buckets.

    The toy has no prompt cache: reads and writes are 0, not unknown; ``thought`` is the part of
    ``out`` spent reasoning.
    """
    thought = token_count(usage, "thought")
    return CallUsage(
        input_tokens=token_count(usage, "in"),
        cache_read_tokens=0,
        cache_write_tokens=0,
        cache_write_1h_tokens=0,
        output_tokens=token_count(usage, "out"),
        reasoning_tokens=thought,
        reasoning_source="reported" if thought is not None else "unknown",
    )
