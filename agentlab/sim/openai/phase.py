"""OpenAI assistant-message ``phase`` in the simulator: what a current model writes and reads.

The Responses API labels each assistant message ``"commentary"`` (intermediate text, such as the
preamble a model writes before its tool calls when asked to) or ``"final_answer"``, and asks
clients to preserve and resend ``phase`` on all assistant messages for gpt-5.3-codex and later:
"dropping it can degrade performance". It is a quality note, not a validation rule: a request
without it is answered as usual. So the simulator:

* labels every message ``sim-reasoner`` writes (the current-generation model); ``sim-reasoner-mini``
  writes none, like a model from before the label; a real name answered as simulated
  (:mod:`agentlab.sim.real_models`) decides by itself, whichever simulated model serves it: gpt-5.3
  (codex) and later, gpt-6 and later label, gpt-5 to gpt-5.2 and the o-series do not;
* writes a one-line ``commentary`` preamble before its tool calls when the instructions (or a
  developer/system message) ask for a preamble, as the prompting guides describe tool preambles;
* never refuses a request for a missing phase; it counts the assistant messages of the input that
  carry none in the diagnostic response header ``x-sim-phase-missing`` (absent when every one has
  it), so a test can see a client that drops the label.
"""

from __future__ import annotations

import re
from typing import Any

from agentlab.sim.real_models import requested_name

__all__ = ["MISSING_HEADER", "PHASED_MODELS", "labels_phase", "missing", "preamble", "wants_preamble"]

#: Simulated models that label their messages (like gpt-5.3-codex and later).
PHASED_MODELS = frozenset({"sim-reasoner"})
MISSING_HEADER = "x-sim-phase-missing"


#: The first real OpenAI generation that labels its messages (gpt-5.3-codex; the docs: "and later").
FIRST_PHASED_VERSION = (5, 3)
_GPT_VERSION = re.compile(r"gpt-(\d+)(?:\.(\d+))?(?![\d.])")


def labels_phase(model: str) -> bool:
    """Whether the model the client asked for writes ``phase`` on its messages and reads it back.

    ``model`` is the request's model as the handler sees it: a simulated name, or a real one in its
    simulated label (``gpt-5.1 (simulated by agentlab: sim-reasoner)``). The real name decides,
    since a client tests its own real-model profile: gpt-5.1 served by sim-reasoner writes none.
    """
    name = requested_name(model)
    if name.startswith("sim-"):
        return name in PHASED_MODELS
    m = _GPT_VERSION.match(name)
    return m is not None and (int(m.group(1)), int(m.group(2) or 0)) >= FIRST_PHASED_VERSION


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return " ".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def wants_preamble(req: dict[str, Any], items: list[dict[str, Any]]) -> bool:
    """Whether the instructions, or a developer/system message, ask for a preamble before tool calls."""
    texts = [str(req.get("instructions") or "")]
    texts += [
        _text(it.get("content"))
        for it in items
        if it.get("type") == "message" and it.get("role") in ("developer", "system")
    ]
    return any("preamble" in t.lower() for t in texts)


def preamble(calls: list[tuple[str, dict[str, Any]]]) -> str:
    """The one-line commentary written before ``calls``: what the model is about to check."""
    parts = [
        f"{name} for {', '.join(str(v) for v in args.values()) or 'no arguments'}" for name, args in calls
    ]
    return f"Checking {', '.join(parts)}."


def missing(items: list[dict[str, Any]]) -> int:
    """How many assistant messages of the input carry no ``phase``."""
    return sum(
        1
        for it in items
        if it.get("type") == "message" and it.get("role") == "assistant" and it.get("phase") is None
    )
