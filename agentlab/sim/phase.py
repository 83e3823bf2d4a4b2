"""OpenAI assistant-message ``phase`` in the simulator: what a current model writes and reads.

The Responses API labels each assistant message ``"commentary"`` (intermediate text, such as the
preamble a model writes before its tool calls when asked to) or ``"final_answer"``, and asks
clients to preserve and resend ``phase`` on all assistant messages for gpt-5.3-codex and later:
"dropping it can degrade performance". It is a quality note, not a validation rule: a request
without it is answered as usual. So the simulator:

* labels every message ``sim-reasoner`` writes (the current-generation model); ``sim-reasoner-mini``
  writes none, like a model from before the label;
* writes a one-line ``commentary`` preamble before its tool calls when the instructions (or a
  developer/system message) ask for a preamble, as the prompting guides describe tool preambles;
* never refuses a request for a missing phase; it counts the assistant messages of the input that
  carry none in the diagnostic response header ``x-sim-phase-missing`` (absent when every one has
  it), so a test can see a client that drops the label.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MISSING_HEADER", "PHASED_MODELS", "labels_phase", "missing", "preamble", "wants_preamble"]

#: Simulated models that label their messages (like gpt-5.3-codex and later).
PHASED_MODELS = frozenset({"sim-reasoner"})
MISSING_HEADER = "x-sim-phase-missing"


def labels_phase(model: str) -> bool:
    """Whether ``model`` writes ``phase`` on its messages and reads it back."""
    return model in PHASED_MODELS


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
