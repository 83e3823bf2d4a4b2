"""Real model names the simulator may answer to, each mapped to the simulated model that behaves like it.

Why: outside clients (pydantic-ai, LiteLLM, LangChain, the Agents SDK) pick their request features
from the model name (whether to send ``include`` or ``thinking``, whether temperature is allowed),
so testing one's own client code offline needs it to send its *real* model name. With the
simulator's ``real_models`` switch on (the default of the loopback server ``python -m agentlab.sim
serve``, off with ``--sim-names-only``; ``Simulator(real_models=True)`` in process), these names are
served by the simulated model named here and every reply says so: the ``x-agentlab-simulated`` header
names the simulated model, and the reply's ``model`` field reads ``<real name> (simulated by
agentlab: <sim model>)`` (see :func:`label`). Off (in process by default): a real name gets the
provider's "model not found", as it always did.

Only reasoning models are listed (the simulated models are reasoning models: they refuse
``temperature`` as OpenAI's reasoning models do), from the model lists of the installed SDKs
(``openai.types.shared.ChatModel``, ``anthropic.types.Model``) and the providers' model pages. The
``-mini``/``-nano`` tiers map to ``sim-reasoner-mini``; Claude models map to ``sim-thinker``, except
Claude 3.7 Sonnet (its responses carry no thinking-token figure: ``sim-thinker-legacy``), and keep
their own thinking modes (:data:`ANTHROPIC_TABLE`; the other mode is the API's 400, see
:func:`anthropic_model_rules`). This table is the
simulator's only knowledge of real names; agentlab's routing (``openai:gpt-5.5`` goes to the real
API, ``sim-*`` to the simulator) never reads it.
"""

from __future__ import annotations

import re
from typing import Any

from agentlab.sim.errors import SimError

OPENAI_REAL_MODELS: dict[str, str] = {
    **dict.fromkeys(
        (
            "gpt-6.2-astra", "gpt-6.2-sol", "gpt-6.1-sol", "gpt-6.1-terra", "gpt-6-astra", "gpt-6-sol",
            "gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.5", "gpt-5.5-2026-04-23", "gpt-5.4", "gpt-5.2",
            "gpt-5.2-2025-12-11", "gpt-5.2-pro", "gpt-5.1", "gpt-5.1-2025-11-13", "gpt-5.1-codex",
            "gpt-5", "gpt-5-2025-08-07", "o3", "o3-2025-04-16",
        ),
        "sim-reasoner",
    ),
    **dict.fromkeys(
        (
            "gpt-6-luna", "gpt-5.6-luna", "gpt-5.4-mini", "gpt-5.4-nano", "gpt-5.4-mini-2026-03-17",
            "gpt-5.4-nano-2026-03-17", "gpt-5-mini", "gpt-5-mini-2025-08-07", "gpt-5-nano",
            "gpt-5-nano-2025-08-07", "o4-mini", "o4-mini-2025-04-16", "o3-mini", "o3-mini-2025-01-31",
        ),
        "sim-reasoner-mini",
    ),
}  # fmt: skip

#: ``thinking.type`` values each Claude model takes (Anthropic's adaptive-thinking docs, "supported
#: models", and the API's refusals): budgeted only before 4.6, both on Opus/Sonnet 4.6, adaptive
#: only from Opus 4.7 and the 5 family on.
BUDGETED = frozenset({"enabled", "disabled"})
BOTH = frozenset({"enabled", "adaptive", "disabled"})
ADAPTIVE = frozenset({"adaptive", "disabled"})

#: Real Claude name -> (the simulated model serving it, the ``thinking.type`` values it takes).
ANTHROPIC_TABLE: dict[str, tuple[str, frozenset[str]]] = {
    **dict.fromkeys(
        (
            "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5", "claude-sonnet-5",
            "claude-opus-4-8", "claude-opus-4-7",
        ),
        ("sim-thinker", ADAPTIVE),
    ),
    **dict.fromkeys(("claude-opus-4-6", "claude-sonnet-4-6"), ("sim-thinker", BOTH)),
    **dict.fromkeys(
        (
            "claude-opus-4-5", "claude-opus-4-5-20251101", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929",
            "claude-haiku-4-5", "claude-haiku-4-5-20251001", "claude-opus-4-1", "claude-opus-4-1-20250805",
            "claude-sonnet-4-0", "claude-sonnet-4-20250514", "claude-opus-4-0", "claude-opus-4-20250514",
        ),
        ("sim-thinker", BUDGETED),
    ),
    **dict.fromkeys(
        ("claude-3-7-sonnet-latest", "claude-3-7-sonnet-20250219"), ("sim-thinker-legacy", BUDGETED)
    ),
}  # fmt: skip

ANTHROPIC_REAL_MODELS: dict[str, str] = {name: served for name, (served, _) in ANTHROPIC_TABLE.items()}

_ENABLED_UNSUPPORTED = (
    '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
    '"output_config.effort" to control thinking behavior.'
)
_ADAPTIVE_UNSUPPORTED = "adaptive thinking is not supported on this model"


def anthropic_model_rules(name: str, req: dict[str, Any]) -> None:
    """Refuse the thinking mode a real Claude model does not take, with the API's 400 texts.

    The simulated model takes both modes; a real name must fail where that model fails in
    production (a client sending budgeted thinking to Opus 4.7, or adaptive to Sonnet 4.5).
    """
    entry = ANTHROPIC_TABLE.get(name)
    thinking = req.get("thinking")
    ttype = thinking.get("type") if isinstance(thinking, dict) else None
    if entry is None or not isinstance(ttype, str) or ttype in entry[1]:
        return
    message = _ENABLED_UNSUPPORTED if ttype == "enabled" else _ADAPTIVE_UNSUPPORTED
    raise SimError(400, "invalid_request_error", message)


HEADER = "x-agentlab-simulated"


def label(requested: str, served: str) -> str:
    """The ``model`` field of a reply: the simulated name itself, or the real one marked simulated.

    Why this form: both SDKs type ``model`` as a free string, and the real APIs already answer a
    different string than the one asked (``gpt-5`` -> ``gpt-5-2025-08-07``), so clients accept it;
    it starts with the real name (prefix checks still match) and reads as simulated in any log or
    trace that records it, so a simulated reply is never mistaken for a real one.
    """
    return requested if requested == served else f"{requested}{_LABEL.format(served)}"


_LABEL = " (simulated by agentlab: {})"
_LABELLED = re.compile(re.escape(_LABEL).replace(re.escape("{}"), r"[a-z0-9-]+") + "$")


def requested_name(model: str) -> str:
    """The name the client asked for, from a handler's ``model`` (the inverse of :func:`label`).

    Handlers behave as the simulated model they are given, but a few labels the real model decides
    (``phase``, see :mod:`agentlab.sim.openai.phase`) follow the real name a client sent.
    """
    return _LABELLED.sub("", model)
