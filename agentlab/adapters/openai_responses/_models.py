"""What each OpenAI model family accepts on ``POST /v1/responses``: one table, one lookup.

Why a table: the rules differ by family (which models reason, which ``reasoning.effort`` values a
model takes, how a long cache lifetime is asked for, whether ``temperature`` is allowed) and OpenAI
adds families every few months. Every rule of the adapter (``_request.py``) asks here, so a new
family is one row, not a hunt through ``if`` chains.

Sources: the installed SDK's types (``openai/types/shared/chat_model.py`` and
``responses_model.py`` list the model ids; ``shared/reasoning_effort.py`` the effort values, now
``none`` ... ``xhigh`` and ``max``; ``responses/response_create_params.py``: ``prompt_cache_options``
"for gpt-5.6 and later", ``prompt_cache_retention`` deprecated, "only 24h" from gpt-5.5) and
OpenAI's reasoning and prompt-caching guides: models before gpt-5.1 default to ``medium`` and take
no ``none``; gpt-5.1 takes ``none``/``low``/``medium``/``high`` (``minimal`` is a 400); ``xhigh``
from gpt-5.1-codex-max on; gpt-5-pro takes only ``high``; gpt-5.4 and 5.5 take ``none`` ... ``xhigh``
(``minimal`` is a 400); the gpt-5.6 and gpt-6 families add ``max``; codex models have no ``none``;
sampling knobs (``temperature``/``top_p``) on gpt-5.1 ... gpt-5.5 only with effort ``none``.

Rows are matched first to last on the model's base name (a fine-tune ``ft:<base>:org::id`` is
judged by its base; a dated snapshot ``-2026-04-23`` or ``-latest`` by its family).

Default for a name no row knows (documented choice): ``gpt-<N>...`` with N >= 5 and ``o<digit>...``
are reasoning models whose effort values are not checked here (the API decides); any other unknown
name is a non-reasoning model. That is the safer side: treating a non-reasoning model as reasoning
sends ``include: ["reasoning.encrypted_content"]`` and ``reasoning``, which such a model answers with
a 400 on every call, while treating an unknown reasoning model as non-reasoning only costs
continuity (its reasoning items are dropped, with a diagnostic) until a row is added.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from agentlab.adapters._simulated import is_simulated, simulated_base

__all__ = [
    "ALL_EFFORTS",
    "OpenAIModel",
    "accepts_effort",
    "cache_mode",
    "capabilities",
    "is_reasoning_model",
    "sampling_allowed",
    "supports_effort_none",
]

CacheMode = Literal["options", "retention"]
Sampling = Literal["always", "effort_none", "never"]

ALL_EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""Every ``reasoning.effort`` value the SDK's ``ReasoningEffort`` type lists, in ascending order."""

_PRE_51 = frozenset({"minimal", "low", "medium", "high"})
_51 = frozenset({"none", "low", "medium", "high"})
_52 = frozenset({"none", "low", "medium", "high", "xhigh"})
_56 = frozenset({"none", "low", "medium", "high", "xhigh", "max"})
_CODEX = frozenset({"low", "medium", "high", "xhigh"})
_CODEX_51 = frozenset({"low", "medium", "high"})
_O = frozenset({"low", "medium", "high"})
_SIM = frozenset({"none", "minimal", "low", "medium", "high", "xhigh"})  # the simulator's levels


@dataclass(frozen=True)
class OpenAIModel:
    """One family's rules.

    ``efforts`` is None when the table does not know them (nothing refused before sending).
    ``cache`` says how a cache lifetime longer than the default is asked for: ``"options"``
    (``prompt_cache_options`` + explicit breakpoints), ``"retention"`` (``prompt_cache_retention:
    "24h"``), or None (only ``prompt_cache_key``). ``sampling`` says when ``temperature``/``top_p``
    are accepted: always, only with effort ``none``, or never. Reasoning models get
    ``include: ["reasoning.encrypted_content"]`` (``encrypted_reasoning``), the one way to carry
    reasoning across calls statelessly.
    """

    family: str
    reasoning: bool
    efforts: frozenset[str] | None
    cache: CacheMode | None
    sampling: Sampling
    known: bool = True

    @property
    def encrypted_reasoning(self) -> bool:
        """Whether requests ask for ``reasoning.encrypted_content`` (every reasoning model)."""
        return self.reasoning


def _r(
    family: str, efforts: frozenset[str] | None, cache: CacheMode | None, sampling: Sampling
) -> OpenAIModel:
    return OpenAIModel(family, True, efforts, cache, sampling)


def _plain(family: str, cache: CacheMode | None) -> OpenAIModel:
    return OpenAIModel(family, False, None, cache, "always")


_DATE = r"(?:-\d{4}-\d{2}-\d{2}|-latest)?$"

# First match wins: specific rows (pro, codex, chat) before their family.
_ROWS: tuple[tuple[re.Pattern[str], OpenAIModel], ...] = tuple(
    (re.compile(pattern), row)
    for pattern, row in (
        (r"^gpt-(?:5(?:\.\d+)?)-chat", _plain("gpt-5 chat", "retention")),
        (r"^gpt-5-pro" + _DATE, _r("gpt-5-pro", frozenset({"high"}), "retention", "never")),
        (r"^gpt-5\.[2-5]-pro" + _DATE, _r("gpt-5.x-pro", None, "retention", "never")),
        (r"^gpt-5\.1-codex-max" + _DATE, _r("gpt-5.1-codex-max", _CODEX, "retention", "never")),
        (r"^gpt-5\.1-codex(?:-mini)?" + _DATE, _r("gpt-5.1-codex", _CODEX_51, "retention", "never")),
        (r"^gpt-5\.[2-5]-codex" + _DATE, _r("gpt-5.x-codex", _CODEX, "retention", "never")),
        (r"^gpt-5-codex" + _DATE, _r("gpt-5-codex", _O, "retention", "never")),
        (r"^gpt-(?:6|5\.6)(?:[.\-]|$)", _r("gpt-5.6 / gpt-6", _56, "options", "never")),
        (r"^gpt-5\.[45](?:-mini|-nano)?" + _DATE, _r("gpt-5.4 / gpt-5.5", _52, "retention", "effort_none")),
        (r"^gpt-5\.[23](?:-mini|-nano)?" + _DATE, _r("gpt-5.2 / gpt-5.3", _52, "retention", "effort_none")),
        (r"^gpt-5\.1(?:-mini)?" + _DATE, _r("gpt-5.1", _51, "retention", "effort_none")),
        (r"^gpt-5(?:-mini|-nano)?" + _DATE, _r("gpt-5", _PRE_51, "retention", "never")),
        (r"^o(?:1|3|4)(?:-mini|-pro)?" + _DATE, _r("o-series", _O, None, "never")),
        (r"^gpt-4\.1(?:-mini|-nano)?" + _DATE, _plain("gpt-4.1", "retention")),
        (r"^(?:gpt-4o|chatgpt-4o|gpt-4|gpt-3\.5)", _plain("gpt-4o / gpt-4 / gpt-3.5", None)),
    )
)

_SIM_ROW = OpenAIModel("simulated", True, _SIM, None, "never")
_VERSION = re.compile(r"^gpt-(\d+)(?:\.(\d+))?")


def _base_model(model: str) -> str:
    """The base model of a fine-tune (``ft:gpt-5-mini-2025-08-07:org::id`` -> ``gpt-5-mini-...``)."""
    m = model.lower()
    return m.split(":")[1] if m.startswith("ft:") and m.count(":") >= 1 else m


def _default(m: str) -> OpenAIModel:
    """The documented default for a name no row knows (module docstring)."""
    if "chat" in m:  # the -chat variants answer without reasoning
        return OpenAIModel("unknown chat", False, None, None, "always", known=False)
    v = _VERSION.match(m)
    if v is not None and int(v.group(1)) >= 5:
        version = (int(v.group(1)), int(v.group(2) or 0))
        cache: CacheMode = "options" if version >= (5, 6) else "retention"
        return OpenAIModel("unknown gpt-5+", True, None, cache, "never", known=False)
    if re.match(r"^o\d", m) or "codex" in m:
        return OpenAIModel("unknown o-series / codex", True, None, None, "never", known=False)
    return OpenAIModel("unknown", False, None, None, "always", known=False)


def capabilities(model: str) -> OpenAIModel:
    """The rules for ``model`` (a row of the table, or the documented default)."""
    m = _base_model(simulated_base(model))
    if is_simulated(m):
        return _SIM_ROW
    for pattern, row in _ROWS:
        if pattern.match(m):
            return row
    return _default(m)


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` takes ``reasoning`` and returns reasoning items (table, or the default)."""
    return capabilities(model).reasoning


def accepts_effort(model: str, effort: str) -> bool:
    """Whether ``reasoning.effort=effort`` is accepted (True when the table does not know)."""
    efforts = capabilities(model).efforts
    return effort in ALL_EFFORTS if efforts is None else effort in efforts


def supports_effort_none(model: str) -> bool:
    """Whether reasoning can be turned off (``effort: "none"``): gpt-5.1 and later, not codex/o."""
    return accepts_effort(model, "none")


def cache_mode(model: str) -> CacheMode | None:
    """How ``model`` takes a long cache lifetime: ``"options"``, ``"retention"`` or None.

    ``"options"``: ``prompt_cache_options`` and explicit breakpoints (gpt-5.6 and later); ``"retention"``:
    ``prompt_cache_retention`` (gpt-4.1, gpt-5.x before 5.6); ``None``: send only ``prompt_cache_key``.
    """
    return capabilities(model).cache


def sampling_allowed(model: str, effort: str | None) -> bool:
    """Whether ``temperature`` / ``top_p`` may be sent to ``model`` with this reasoning ``effort``.

    ``effort`` is the effort the request sends (None: the model's default, which is ``none`` from
    gpt-5.1 to gpt-5.4 and a reasoning effort elsewhere, so None counts as reasoning here).
    """
    rule = capabilities(model).sampling
    if rule == "always":
        return True
    return rule == "effort_none" and effort == "none"
