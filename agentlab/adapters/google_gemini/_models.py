"""What each Gemini model family accepts in ``generationConfig.thinkingConfig``: one table, one lookup.

Why a table: Gemini 3 models take ``thinkingLevel`` (a named level), Gemini 2.5 models take
``thinkingBudget`` (a token count, ``-1`` for dynamic), and which levels, which budget range and
whether thinking can be turned off differ by model. The API answers a value a model cannot take with
400 INVALID_ARGUMENT after a round trip; the adapter (``_request.py``) asks here and refuses first.

Sources: the Gemini API thinking guide (ai.google.dev/gemini-api/docs/thinking) and the installed
SDK's ``types.ThinkingLevel`` (``MINIMAL``/``LOW``/``MEDIUM``/``HIGH``): Gemini 3 Pro takes ``low``
and ``high`` and cannot turn thinking off; Gemini 3.1 Pro added ``medium`` (still no ``minimal``,
no off); Gemini 3 Flash takes ``minimal`` ... ``high`` (``minimal`` still thinks a little: not "off");
2.5 Pro budgets 128-32768, cannot turn off; 2.5 Flash 0-24576
(0 = off); 2.5 Flash-Lite 512-24576 or 0 (off). Gemini 2.0 and earlier do not think.

Rows are matched first to last on the model name (a ``models/`` prefix and ``-latest``/``-preview``
/dated suffixes fall under their family row).

Default for a name no row knows (documented choice): ``gemini-<N>...`` with N >= 3 takes
``thinkingLevel`` with its levels not checked here (the API decides) and cannot be assumed to turn
thinking off; any other unknown name gets no ``thinkingConfig`` unless the request sets budget or
effort explicitly, in which case ``thinkingBudget`` is sent unchecked. Sending no config is always
accepted (the model's default), so an unknown model loses control, never a call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from agentlab.adapters._simulated import simulated_base

__all__ = ["SIMULATED_MODELS", "GeminiModel", "capabilities"]

SIMULATED_MODELS: tuple[str, ...] = ("sim-gemini", "sim-gemini-legacy")
"""The simulator's Gemini models: ``sim-gemini`` behaves as Gemini 3 (``thinkingLevel``, signatures
required back on functionCall parts), ``sim-gemini-legacy`` as Gemini 2.5 (``thinkingBudget``)."""

Thinking = Literal["level", "budget", "none"]
ALL_LEVELS: tuple[str, ...] = ("minimal", "low", "medium", "high")


@dataclass(frozen=True, slots=True)
class GeminiModel:
    """One family's thinking rules (``levels``/``budget`` ``None``: not checked here)."""

    pattern: str
    thinking: Thinking
    levels: frozenset[str] | None = None
    budget: tuple[int, int] | None = None
    can_off: bool = False
    signatures_required: bool = False
    """Whether a tool loop without its functionCall signatures is a 400 (Gemini 3)."""
    json_with_tools: bool | None = None
    """Whether function declarations and a JSON answer (``responseMimeType: application/json``) go in
    one request. False on Gemini 2.5 and earlier: the API answers 400 "Function calling with a response
    mime type: 'application/json' is unsupported" (quoted in googleapis/python-genai#867); Gemini 3
    combines structured outputs with tools (the Gemini 3 developer guide). None: not checked."""


_PRO3 = frozenset({"low", "high"})
_PRO31 = frozenset({"low", "medium", "high"})
_FLASH3 = frozenset(ALL_LEVELS)

_TABLE: tuple[GeminiModel, ...] = (
    GeminiModel(r"sim-gemini-legacy", "budget", budget=(0, 24576), can_off=True, json_with_tools=False),
    GeminiModel(r"sim-gemini", "level", levels=_FLASH3, signatures_required=True, json_with_tools=True),
    GeminiModel(r"gemini-3\.[1-9]\d*-pro", "level", levels=_PRO31, signatures_required=True),
    GeminiModel(r"gemini-3(\.0)?-pro", "level", levels=_PRO3, signatures_required=True),
    GeminiModel(r"gemini-3(\.\d+)?-flash", "level", levels=_FLASH3, signatures_required=True),
    GeminiModel(r"gemini-2\.5-pro", "budget", budget=(128, 32768), json_with_tools=False),
    GeminiModel(
        r"gemini-2\.5-flash-lite", "budget", budget=(512, 24576), can_off=True, json_with_tools=False
    ),
    GeminiModel(r"gemini-2\.5-flash", "budget", budget=(0, 24576), can_off=True, json_with_tools=False),
    GeminiModel(r"gemini-(1|2\.0)", "none", json_with_tools=False),
    GeminiModel(r"gemini-([3-9]|\d\d)", "level", signatures_required=True),  # the default for later ones
)
_UNKNOWN = GeminiModel(r".*", "budget")


def capabilities(model: str) -> GeminiModel:
    """The row for ``model`` (``models/`` prefix and simulator options ignored), or the default."""
    name = simulated_base(model.removeprefix("models/"))
    for row in _TABLE:
        if re.match(row.pattern, name):
            return row
    return _UNKNOWN
