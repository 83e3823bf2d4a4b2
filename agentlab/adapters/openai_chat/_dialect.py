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

from agentlab.neutral.recovery import NOTHING_REQUIRED, ContinuityRule
from agentlab.neutral.request import ReasoningSettings
from agentlab.neutral.usage import CallUsage

__all__ = ["API", "CONTENT_FIELDS", "DETAILS", "Dialect"]

API = "chat_completions"
DETAILS = "reasoning_details"
CONTENT_FIELDS = ("reasoning_content", "reasoning")
"""The text fields a server may put reasoning in (DeepSeek/llama.cpp ``reasoning_content``; vLLM and
Ollama also ``reasoning``); the item's ``block_type`` names the one it came in, and it goes back there."""


def _nothing_required(model: str) -> ContinuityRule:
    return NOTHING_REQUIRED


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect:
    """One Chat Completions dialect (the per-provider facts the shared code reads)."""

    name: str
    """The provider name (``deepseek``); the ``provider`` tag of its opaque items and errors."""
    label: str
    carry: Literal["content", "details"]
    """``content``: reasoning text fields (one opaque item per turn, block type = the field name);
    ``details``: OpenRouter ``reasoning_details`` (one opaque item per merged detail)."""
    send_back: bool
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
    usage: Callable[[Mapping[str, Any]], CallUsage]
    default_base_url: str | None
    """``None``: the user must give ``base_url`` (generic ``chat:``)."""
    api_key_env: str | None
    key_required: bool
    sim_dialect: str
    """The simulator's dialect (``agentlab.sim.chat_client(sim_dialect)``)."""
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

    def thinking_on(self, model: str, settings: ReasoningSettings | None) -> bool:
        """Whether this request runs with reasoning on (the continuity rules apply then)."""
        return settings is None or (settings.enabled and settings.effort != "none")

    def rule(self, model: str, settings: ReasoningSettings | None) -> ContinuityRule:
        """The continuity rule of this request: the dialect's for ``model``, none with reasoning off."""
        return self.continuity(model) if self.thinking_on(model, settings) else NOTHING_REQUIRED
