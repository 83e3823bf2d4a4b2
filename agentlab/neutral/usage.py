"""Token usage as one convention across providers.

The convention (also in README):

* ``input_tokens`` is **inclusive**: every prompt token the call processed, cache reads and cache
  writes included. OpenAI reports it that way; Anthropic reports ``input_tokens`` *excluding* cache
  reads and writes, so its figure is normalized by adding them.
* ``cache_read_tokens`` and ``cache_write_tokens`` are parts of ``input_tokens``.
  ``cache_write_1h_tokens`` is the part of the writes made with a one-hour ttl (Anthropic prices them
  higher). OpenAI bills no cache-write surcharge, so its writes are 0 by definition.
* ``output_tokens`` is every billed output token; ``reasoning_tokens`` is the part of it spent on
  reasoning (never added on top, never a replacement). When a provider gives no figure it is
  ``None`` (shown as ``<NA>``) with ``reasoning_source="unknown"``: never 0, never guessed from the
  returned thinking text (which may be summarized or omitted).
* Unknown is ``None``, never 0. Sums of values where any part is unknown are unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "CallUsage",
    "ReasoningSource",
    "sum_usage",
    "usage_from_anthropic",
    "usage_from_openai",
]

ReasoningSource = Literal["reported", "estimated", "unknown"]


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


class CallUsage(BaseModel):
    """Tokens of one model call (or a sum of calls), in agentlab's convention (module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int | None = None
    """All prompt tokens, cache reads and writes included."""
    cache_read_tokens: int | None = None
    """Prompt tokens served from the provider's cache (part of ``input_tokens``)."""
    cache_write_tokens: int | None = None
    """Prompt tokens written to the cache (part of ``input_tokens``); 0 for OpenAI (no surcharge)."""
    cache_write_1h_tokens: int | None = None
    """Part of ``cache_write_tokens`` written with a one-hour ttl (Anthropic)."""
    output_tokens: int | None = None
    """All billed output tokens, reasoning included."""
    reasoning_tokens: int | None = None
    """Part of ``output_tokens`` spent reasoning; ``None`` when the provider gave no figure."""
    reasoning_source: ReasoningSource = "unknown"
    """Where ``reasoning_tokens`` came from: the provider (``reported``), an estimate, or nowhere."""

    @property
    def uncached_input_tokens(self) -> int | None:
        """Input billed at the base input rate (neither read from nor written to the cache)."""
        if self.input_tokens is None:
            return None
        return self.input_tokens - (self.cache_read_tokens or 0) - (self.cache_write_tokens or 0)

    @property
    def non_reasoning_output_tokens(self) -> int | None:
        """Output that is not reasoning (answer text, tool calls)."""
        return (
            None
            if self.output_tokens is None or self.reasoning_tokens is None
            else (self.output_tokens - self.reasoning_tokens)
        )

    @property
    def total_tokens(self) -> int | None:
        """Input plus output tokens; unknown when either is (cache buckets are inside input, not added)."""
        return _add(self.input_tokens, self.output_tokens)

    def _repr_html_(self) -> str:
        """Token buckets as a small table (renders without widgets: nbconvert, GitHub)."""
        from agentlab.render.html_tables import table_html

        def f(v: int | None) -> str:
            return "<NA>" if v is None else f"{v:,}"

        rows = [
            ("input (incl. cache)", f(self.input_tokens)),
            ("  cache read", f(self.cache_read_tokens)),
            ("  cache write", f(self.cache_write_tokens)),
            ("output (incl. reasoning)", f(self.output_tokens)),
            (f"  reasoning ({self.reasoning_source})", f(self.reasoning_tokens)),
        ]
        return table_html(("tokens", "count"), rows)

    def __add__(self, other: CallUsage) -> CallUsage:
        if not isinstance(other, CallUsage):
            return NotImplemented
        if self.reasoning_source == other.reasoning_source:
            src: ReasoningSource = self.reasoning_source
        elif "unknown" in (self.reasoning_source, other.reasoning_source):
            src = "unknown"
        else:
            src = "estimated"
        return CallUsage(
            input_tokens=_add(self.input_tokens, other.input_tokens),
            cache_read_tokens=_add(self.cache_read_tokens, other.cache_read_tokens),
            cache_write_tokens=_add(self.cache_write_tokens, other.cache_write_tokens),
            cache_write_1h_tokens=_add(self.cache_write_1h_tokens, other.cache_write_1h_tokens),
            output_tokens=_add(self.output_tokens, other.output_tokens),
            reasoning_tokens=_add(self.reasoning_tokens, other.reasoning_tokens),
            reasoning_source=src,
        )


def sum_usage(usages: Iterable[CallUsage]) -> CallUsage:
    """The sum of several calls; an empty sum is all zeros (nothing was billed)."""
    total = CallUsage(
        input_tokens=0,
        cache_read_tokens=0,
        cache_write_tokens=0,
        cache_write_1h_tokens=0,
        output_tokens=0,
        reasoning_tokens=0,
        reasoning_source="reported",
    )
    for u in usages:
        total = total + u
    return total


def _int(d: Mapping[str, Any] | None, key: str) -> int | None:
    if not d:
        return None
    v = d.get(key)
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def usage_from_openai(usage: Mapping[str, Any]) -> CallUsage:
    """Normalize an OpenAI Responses ``usage`` object (``input_tokens`` already includes cached)."""
    details = usage.get("input_tokens_details") or {}
    out_details = usage.get("output_tokens_details") or {}
    reasoning = _int(out_details, "reasoning_tokens")
    return CallUsage(
        input_tokens=_int(usage, "input_tokens"),
        cache_read_tokens=_int(details, "cached_tokens") or 0,
        cache_write_tokens=0,
        cache_write_1h_tokens=0,
        output_tokens=_int(usage, "output_tokens"),
        reasoning_tokens=reasoning,
        reasoning_source="reported" if reasoning is not None else "unknown",
    )


def usage_from_anthropic(usage: Mapping[str, Any]) -> CallUsage:
    """Normalize an Anthropic Messages ``usage`` object (its ``input_tokens`` excludes the cache)."""
    uncached = _int(usage, "input_tokens")
    read = _int(usage, "cache_read_input_tokens") or 0
    write = _int(usage, "cache_creation_input_tokens") or 0
    creation = usage.get("cache_creation") or {}
    write_1h = _int(creation, "ephemeral_1h_input_tokens") or 0
    out_details = usage.get("output_tokens_details") or {}
    thinking = _int(out_details, "thinking_tokens")
    return CallUsage(
        input_tokens=None if uncached is None else uncached + read + write,
        cache_read_tokens=read,
        cache_write_tokens=write,
        cache_write_1h_tokens=write_1h,
        output_tokens=_int(usage, "output_tokens"),
        reasoning_tokens=thinking,
        reasoning_source="reported" if thinking is not None else "unknown",
    )
