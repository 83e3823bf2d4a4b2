"""The documented stand-in ``thoughtSignature`` for a tool loop whose signatures are known to be gone.

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

The same holds for a loop whose continuation was released before it finished (a notebook cell ended
while the loop was paused; ``ModelRequest.continuation_released``, the run's ``continuation_released``
diagnostic): the signatures of the steps before the release are gone for good, and without the dummy
the resumed loop would be a 400. Steps made after the release keep their own signatures.

Only in those two cases (:data:`STAND_IN_RULE`, decided by ``agentlab.neutral.recovery``): in any
other verbatim request a missing signature is a bug (a continuation lost by the code, a history
edited by hand) and must reach the API as the 400 it is, never be papered over. Only on models whose
row in :mod:`._models` says signatures are required (Gemini 3): Gemini 2.5 accepts missing ones, so
nothing is sent there. Only on the current turn (the contents after the last user text): earlier
turns are not validated.
"""

from __future__ import annotations

from typing import Any

from agentlab.neutral.diagnostics import Count, diagnostic, register_code
from agentlab.neutral.events import DiagnosticEvent
from agentlab.neutral.recovery import ContinuityRule, GapCause

__all__ = ["STAND_IN", "STAND_IN_RULE", "STAND_IN_VALUES", "fill_stand_ins"]

STAND_IN = "skip_thought_signature_validator"
"""The dummy sent (documented for the Gemini API and for Vertex AI)."""
STAND_IN_VALUES = frozenset({STAND_IN, "context_engineering_is_the_way_to_go"})
"""Both values Google documents in place of a signature."""

register_code(
    "signature_stand_in",
    "functionCall parts of the current turn carry Google's documented dummy thought signature in "
    "place of the ones continuation_policy='drop' withheld or a released continuation lost",
    Count,
)

STAND_IN_RULE = ContinuityRule(
    requires="current_turn",
    remedy="stand_in",
    unexplained="send",
    source="Gemini 3: 'Function call is missing a thought_signature in functionCall parts'",
)
"""Gemini 3's rule: every step of the current turn, its first functionCall signed; the dummy stands
in only where the signature is known to be gone (a gap with no known cause reaches the API)."""

_WHY: dict[GapCause, str] = {
    "policy_drop": "continuation_policy='drop' withheld the real ones",
    "released": "the loop's continuation was released before it finished (continuation_released)",
    "earlier_loop": "they belong to an earlier tool loop",
    "unexplained": "they are missing",
}


def _current_turn(contents: list[dict[str, Any]]) -> int:
    """Index of the user content the current turn starts with (one holding more than tool responses)."""
    start = 0
    for i, c in enumerate(contents):
        if c["role"] == "user" and any("functionResponse" not in p for p in c["parts"]):
            start = i
    return start


def fill_stand_ins(
    contents: list[dict[str, Any]], diagnostics: list[DiagnosticEvent], why: GapCause = "policy_drop"
) -> int:
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
                f"({_WHY[why]}): the API accepts the loop, the model works without its earlier reasoning",
                count=filled,
            )
        )
    return filled
