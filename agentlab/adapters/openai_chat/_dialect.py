"""What one Chat Completions dialect is: the few facts in which its servers differ.

The request builder (:mod:`._request`), the stream assembler (:mod:`._stream`) and the adapter
(:mod:`._adapter`) are shared; each dialect module (:mod:`._deepseek`, :mod:`._openrouter`,
:mod:`._moonshot`, :mod:`._zai`, :mod:`._xai`, :mod:`._local`) declares one :class:`Dialect` holding
only what is its own: where reasoning travels
(``reasoning_content``/``reasoning`` text, or OpenRouter's ``reasoning_details`` items), whether the
server needs it back within a tool loop, how the neutral reasoning settings map onto its fields, how
its usage reads, and where it lives. Imports no SDK (``provider.py`` names these modules' functions).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentlab.adapters.wire_dialect import WireDialect
from agentlab.neutral.recovery import NOTHING_REQUIRED, ContinuityRule
from agentlab.neutral.request import ReasoningSettings
from agentlab.neutral.usage import CallUsage, token_count

__all__ = [
    "API",
    "CONTENT_FIELDS",
    "DETAILS",
    "Dialect",
    "cached_tokens",
    "completion_usage",
    "reasoning_off",
    "reported_usage",
    "thinking_switch",
]

API = "chat_completions"
DETAILS = "reasoning_details"
CONTENT_FIELDS = ("reasoning_content", "reasoning")
"""The text fields a server may put reasoning in (DeepSeek/llama.cpp ``reasoning_content``; vLLM and
Ollama also ``reasoning``); the item's ``block_type`` names the one it came in, and it goes back there."""


def _nothing_required(model: str) -> ContinuityRule:
    return NOTHING_REQUIRED


def reasoning_off(r: ReasoningSettings) -> bool:
    """Whether the neutral settings turn reasoning off (``enabled=False`` or effort ``none``)."""
    return not r.enabled or r.effort == "none"


def thinking_switch(on: bool) -> dict[str, Any]:
    """``thinking: {type: enabled|disabled}``, the switch DeepSeek, Kimi and GLM share."""
    return {"thinking": {"type": "enabled" if on else "disabled"}}


def cached_tokens(usage: Mapping[str, Any], top_level: str | None = None) -> int | None:
    """The cache hits inside ``prompt_tokens`` (None when not reported).

    ``top_level``: the dialect's own field, read first (DeepSeek ``prompt_cache_hit_tokens``, Kimi
    ``cached_tokens``); else OpenAI's ``prompt_tokens_details.cached_tokens``.
    """
    hit = token_count(usage, top_level) if top_level else None
    return hit if hit is not None else token_count(usage.get("prompt_tokens_details") or {}, "cached_tokens")


def completion_usage(
    usage: Mapping[str, Any], prompt: int | None, *, cache_read: int | None, cache_write: int | None = 0
) -> CallUsage:
    """The usage every dialect reads alike, given its own ``prompt_tokens`` and cache-read figures.

    ``completion_tokens`` is the output (xAI's differs: it replaces it), with the reported
    ``completion_tokens_details.reasoning_tokens`` inside (unknown when not reported, never 0). The
    dialects bill no cache-write surcharge unless they say otherwise (``cache_write``, OpenRouter),
    so writes are that figure when the prompt is known and unknown with it.
    """
    reasoning = token_count(usage.get("completion_tokens_details") or {}, "reasoning_tokens")
    known = prompt is not None
    return CallUsage(
        input_tokens=prompt,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write if known else None,
        cache_write_1h_tokens=0 if known else None,
        output_tokens=token_count(usage, "completion_tokens"),
        reasoning_tokens=reasoning,
        reasoning_source="reported" if reasoning is not None else "unknown",
    )


def reported_usage(usage: Mapping[str, Any]) -> CallUsage:
    """The usage of a dialect with no figure of its own: cache reads as reported (else unknown)."""
    return completion_usage(usage, token_count(usage, "prompt_tokens"), cache_read=cached_tokens(usage))


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect(WireDialect):
    """One Chat Completions dialect (the per-provider facts the shared code reads)."""

    carry: Literal["content", "details"] = "content"
    """``content``: reasoning text fields (one opaque item per turn, block type = the field name);
    ``details``: OpenRouter ``reasoning_details`` (one opaque item per merged detail)."""
    send_back: bool = True
    """Default of the adapter's ``send_reasoning``: put this loop's reasoning back on its assistant
    messages (DeepSeek requires it on tool-call turns; local servers: the documented default)."""
    continuity: Callable[[str], ContinuityRule] = _nothing_required
    """``(model) -> ContinuityRule``: which tool-call turns the server (or the model behind it)
    requires back with their reasoning while reasoning is on, and the remedy when a turn has none
    (:mod:`agentlab.neutral.recovery` decides which turns; the request builder renders the remedy).
    DeepSeek: every tool-call turn; OpenRouter: per backing model; local servers: nothing."""
    reasoning_body: Callable[[str, ReasoningSettings | None], dict[str, Any]]
    """``(model, settings)`` -> the body fields for the neutral reasoning settings, or
    ``InvalidSettingsError`` for one the dialect has no field for."""
    sim_dialect: str = ""
    """The simulator's dialect (``agentlab.sim.chat_client(sim_dialect)``); empty: ``name``."""
    reports_cost: bool = False
    """The usage carries the provider's own ``cost`` (OpenRouter), kept beside agentlab's."""
    provider_cost: Callable[[Mapping[str, Any]], float | None] | None = None
    """``(usage) -> USD | None``: the provider's own figure in another field or unit (xAI's
    ``cost_in_usd_ticks``), kept beside agentlab's computed cost; ``None``: only ``reports_cost``."""
    no_json_schema: str | None = None
    """Why ``output_type`` is refused before sending (``None``: the dialect takes ``response_format``
    of type ``json_schema``): a server with JSON mode only cannot hold the answer to a schema."""
    error_fix: Callable[[str], str | None] | None = None
    """``(API error message) -> clause | None``: what to do about an error the API words as its own
    rule only (DeepSeek's reasoning_content 400), appended to the typed error's message."""

    def __post_init__(self) -> None:
        if not self.sim_dialect:  # each hosted dialect has its own simulator dialect, by its name
            object.__setattr__(self, "sim_dialect", self.name)

    def thinking_on(self, model: str, settings: ReasoningSettings | None) -> bool:
        """Whether this request runs with reasoning on (the continuity rules apply then)."""
        return settings is None or not reasoning_off(settings)

    def rule(self, model: str, settings: ReasoningSettings | None) -> ContinuityRule:
        """The continuity rule of this request: the dialect's for ``model``, none with reasoning off."""
        return self.continuity(model) if self.thinking_on(model, settings) else NOTHING_REQUIRED
