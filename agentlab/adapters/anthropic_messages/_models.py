"""What each Claude model family accepts on ``POST /v1/messages``: one table, one lookup.

Why a table: which ``thinking`` types a model takes (budgeted ``enabled`` / ``adaptive``), which
``output_config.effort`` values, and whether budgeted thinking interleaves with tool calls differ by
family, and a wrong guess is a 400 after a round trip. Every thinking rule of ``_request.py`` asks
here.

Sources: the installed SDK (``anthropic/types/model_param.py`` lists the model ids;
``output_config_param.py`` the effort values ``low`` ... ``xhigh``, ``max``; ``thinking_config_param``
says the accepted types "depend on the model"; the SDK warns when a model it steers from
``enabled`` to ``adaptive`` gets ``enabled``: a test sends every ``ModelParam`` through the real SDK
and checks that each model it warns for defaults to adaptive here), Anthropic's adaptive-thinking
and effort docs (adaptive on Opus 4.6 / Sonnet 4.6 and later, where ``enabled`` +
``budget_tokens`` is deprecated; Opus 4.7, Mythos Preview and the Fable / Mythos 5 families take
adaptive only; Sonnet 4.5, Opus 4.5 and older take
budgeted thinking only; ``max`` from Opus 4.6, ``xhigh`` from Opus 4.7; Sonnet 4.5 and Haiku 4.5
take no effort), and a recorded 400 for ``xhigh`` on claude-opus-4-6 ("This model does not support
effort level 'xhigh'. Supported levels: high, low, max, medium.", ``../shared/fixtures/errors``).

Default for a name no row knows (documented choice): nothing is refused before sending (thinking,
both types and any effort allowed; budgeted unless adaptive is asked for). Refusing on a guess
would block a new model the API accepts; sending a setting the new model does not take gets the
API's own 400, which names the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentlab.adapters._simulated import is_simulated, simulated_base

__all__ = [
    "ALL_EFFORTS",
    "AnthropicModel",
    "accepts_effort",
    "adaptive_preferred",
    "capabilities",
    "family_id",
    "nonstreaming_limit",
]

ALL_EFFORTS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")
"""Every ``output_config.effort`` value the SDK's ``OutputConfigParam`` lists, in ascending order."""

_E5 = frozenset(ALL_EFFORTS)
_E46 = frozenset({"low", "medium", "high", "max"})
_E45 = frozenset({"low", "medium", "high"})
_NONE: frozenset[str] = frozenset()


@dataclass(frozen=True)
class AnthropicModel:
    """One family's thinking rules.

    ``budgeted``/``adaptive``: whether ``thinking.type`` ``enabled`` (with ``budget_tokens``) /
    ``adaptive`` is accepted (None: not known, so not refused). ``adaptive_default``: budgeted
    thinking is deprecated there, so a request that names no budget and no effort gets adaptive.
    ``efforts``: the ``output_config.effort`` values taken (None: not checked). ``interleaved_beta``:
    budgeted thinking can interleave with tool calls (beta header ``interleaved-thinking-2025-05-14``;
    adaptive thinking interleaves by itself).
    """

    family: str
    thinking: bool
    budgeted: bool | None
    adaptive: bool | None
    adaptive_default: bool
    efforts: frozenset[str] | None
    interleaved_beta: bool
    known: bool = True
    structured: bool | None = None
    """Structured outputs (``output_config.format``): False where the API refuses the format (the
    structured-outputs guide lists Claude 4.1+ families; Claude 3.x and 2 are not among them), None
    where not known (not refused before sending)."""


_D = r"(?:-\d{8}|-latest|-v\d+(?::\d+)?)?$"

_ROWS: tuple[tuple[re.Pattern[str], AnthropicModel], ...] = tuple(
    (re.compile(pattern), row)
    for pattern, row in (
        (r"^claude-mythos-preview" + _D, AnthropicModel("mythos", True, False, True, True, _E5, False)),
        (
            r"^claude-(?:fable|mythos)-5(?:-\d+)?" + _D,
            AnthropicModel("fable/mythos 5", True, False, True, True, _E5, False),
        ),
        (r"^claude-opus-4-7" + _D, AnthropicModel("opus 4.7", True, False, True, True, _E5, False)),
        (
            r"^claude-(?:opus-4-8|(?:opus|sonnet|haiku)-5(?:-\d+)?)" + _D,
            AnthropicModel("opus 4.8 / claude 5", True, None, True, True, _E5, True),
        ),
        (r"^claude-(?:opus|sonnet)-4-6" + _D, AnthropicModel("4.6", True, True, True, True, _E46, True)),
        (r"^claude-opus-4-5" + _D, AnthropicModel("opus 4.5", True, True, False, False, _E45, True)),
        (
            r"^claude-(?:(?:sonnet|haiku)-4-5|opus-4-1|(?:opus|sonnet)-4(?:-0)?)" + _D,
            AnthropicModel("claude 4 (budgeted)", True, True, False, False, _NONE, True),
        ),
        (
            r"^claude-3-7-sonnet" + _D,
            AnthropicModel("sonnet 3.7", True, True, False, False, _NONE, False, structured=False),
        ),
        (
            r"^claude-(?:3-5|3)-",
            AnthropicModel("claude 3 / 3.5", False, False, False, False, _NONE, False, structured=False),
        ),
        (
            r"^claude-(?:2|instant)",
            AnthropicModel("claude 2", False, False, False, False, _NONE, False, structured=False),
        ),
    )
)

_SIM_ROW = AnthropicModel("simulated", True, True, True, False, _E46, True)
#: The simulated stand-in for the older Claude models: no structured outputs (``agentlab.sim.structured``).
_SIM_LEGACY_ROW = AnthropicModel("simulated legacy", True, True, True, False, _E46, True, structured=False)
_SIM_LEGACY = "sim-thinker-legacy"
_UNKNOWN = AnthropicModel("unknown", True, None, None, False, None, True, known=False)


_PLATFORM_PREFIX = re.compile(r"^(?:[a-z-]+\.)?anthropic\.")
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")


def family_id(model: str) -> str:
    """A platform's id for a Claude model in Anthropic's spelling, which the table's rows read.

    Bedrock: ``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` (an inference profile's region prefix,
    ``anthropic.``, a ``-v1:0`` version); Vertex: ``claude-sonnet-4-5@20250929``. Both name the same
    models, with the same thinking rules, as ``claude-sonnet-4-5-20250929``.
    """
    m = _PLATFORM_PREFIX.sub("", model)
    if m != model:
        m = _BEDROCK_VERSION.sub("", m)
    return m.replace("@", "-")


def capabilities(model: str) -> AnthropicModel:
    """The rules for ``model`` (a row of the table, or the documented default); platform ids too."""
    m = simulated_base(model).lower()
    if is_simulated(m):
        return _SIM_LEGACY_ROW if m == _SIM_LEGACY else _SIM_ROW
    m = family_id(m)
    for pattern, row in _ROWS:
        if pattern.match(m):
            return row
    return _UNKNOWN


def adaptive_preferred(model: str) -> bool:
    """Whether a request naming no budget and no effort gets adaptive thinking on ``model``."""
    return capabilities(model).adaptive_default


NONSTREAMING_MAX_TOKENS = 21_333
"""The largest ``max_tokens`` of a non-streaming call at the SDK's default 10-minute timeout.

The SDK estimates an hour per 128,000 output tokens and refuses, before sending, a non-streaming
call it expects to outlast its default timeout ("long requests" in the SDK's README). agentlab makes
that decision itself, before the SDK is called (``_adapter``): the SDK says it only in the text of a
``ValueError``, a form no release promises to keep."""

_NONSTREAMING_CAPS: dict[str, int] = dict.fromkeys(
    (
        "claude-opus-4-20250514",
        "claude-opus-4-0",
        "claude-4-opus-20250514",
        "anthropic.claude-opus-4-20250514-v1:0",
        "claude-opus-4@20250514",
        "anthropic.claude-opus-4-1-20250805-v1:0",
        "claude-opus-4-1@20250805",
    ),
    8192,
)
"""Models with a lower non-streaming ceiling (the SDK's per-model table for Claude Opus 4 and 4.1);
a test checks the real SDK refuses exactly where this module does."""


def nonstreaming_limit(model: str) -> int:
    """The largest ``max_tokens`` a non-streaming call to ``model`` may ask for (default timeout)."""
    return min(NONSTREAMING_MAX_TOKENS, _NONSTREAMING_CAPS.get(model, NONSTREAMING_MAX_TOKENS))


def accepts_effort(model: str, effort: str) -> bool:
    """Whether ``output_config.effort=effort`` is accepted (any SDK value when the table does not know)."""
    efforts = capabilities(model).efforts
    return effort in ALL_EFFORTS if efforts is None else effort in efforts
