"""The documented stand-in ``thoughtSignature`` for a tool loop whose signatures were dropped on purpose.

Why: Gemini 3 validates that the first ``functionCall`` part of every step of the current turn
carries its thought signature, and answers 400 without it. Under ``continuation_policy="drop"`` the
run withholds the signatures to measure what they are worth, which would make that ablation a 400.
Google documents a recovery for function calls whose signatures are not available (history from
another model, calls injected by the client): set ``thoughtSignature`` to a dummy value, either
``"context_engineering_is_the_way_to_go"`` or ``"skip_thought_signature_validator"``
(ai.google.dev/gemini-api/docs/thought-signatures, FAQ; Vertex AI's page documents the second one:
docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures). The second is sent, because
both endpoints of this adapter take it. The API then accepts the request, but the model works without
the reasoning of the earlier steps (the API's own 400 text warns that a missing signature "may lead
to degraded model performance"): that loss is what the ablation measures.

Only under ``drop``: in a verbatim request a missing signature is a bug (a released loop, a history
edited by hand) and must reach the API as the 400 it is, never be papered over. Only on models whose
row in :mod:`._models` says signatures are required (Gemini 3): Gemini 2.5 accepts missing ones, so
nothing is sent there. Only on the current turn (the contents after the last user text): earlier
turns are not validated.
"""

from __future__ import annotations

from typing import Any

from agentlab.neutral.diagnostics import Count, diagnostic, register_code
from agentlab.neutral.events import DiagnosticEvent

__all__ = ["STAND_IN", "STAND_IN_VALUES", "fill_stand_ins"]

STAND_IN = "skip_thought_signature_validator"
"""The dummy sent (documented for the Gemini API and for Vertex AI)."""
STAND_IN_VALUES = frozenset({STAND_IN, "context_engineering_is_the_way_to_go"})
"""Both values Google documents in place of a signature."""

register_code(
    "signature_stand_in",
    "functionCall parts of the current turn carry Google's documented dummy thought signature in "
    "place of the ones continuation_policy='drop' withheld",
    Count,
)


def _current_turn(contents: list[dict[str, Any]]) -> int:
    """Index of the user content the current turn starts with (one holding more than tool responses)."""
    start = 0
    for i, c in enumerate(contents):
        if c["role"] == "user" and any("functionResponse" not in p for p in c["parts"]):
            start = i
    return start


def fill_stand_ins(contents: list[dict[str, Any]], diagnostics: list[DiagnosticEvent]) -> int:
    """Put the stand-in on each current-turn step's first unsigned ``functionCall`` part; say so once.

    Returns how many parts got it. A part that carries a signature keeps it (never overwritten).
    """
    filled = 0
    for c in contents[_current_turn(contents) :]:
        if c["role"] != "model":
            continue
        first = next((p for p in c["parts"] if "functionCall" in p), None)
        if first is not None and "thoughtSignature" not in first:
            first["thoughtSignature"] = STAND_IN
            filled += 1
    if filled:
        diagnostics.append(
            diagnostic(
                "signature_stand_in",
                f"{filled} functionCall part(s) sent with Google's documented dummy thought signature "
                "(continuation_policy='drop' withheld the real ones): the API accepts the loop, the "
                "model works without its earlier reasoning",
                count=filled,
            )
        )
    return filled
