"""The provider's own cost figure beside agentlab's computed one, and a note when they disagree.

Some providers report what a call cost (xAI's ``cost_in_usd_ticks``, OpenRouter's ``usage.cost``);
the adapter keeps it as ``provider_cost_usd`` (a neutral field: any provider's figure, never a
special case). agentlab still computes its own from the usage and its price table, because that is
the one figure every provider has and a sweep compares. When both are known and differ by more than
:data:`TOLERANCE` of the larger, one ``provider_cost_differs`` diagnostic says so: a stale price row,
a tier or discount agentlab does not know, or usage read wrong. Unknown stays unknown: no figure on
either side, no comparison and no note.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from agentlab.neutral.diagnostics import diagnostic, register_code
from agentlab.neutral.events import DiagnosticEvent, EventOrigin

__all__ = ["TOLERANCE", "CostsDiffer", "cost_check"]

TOLERANCE = 0.01
"""The relative difference (of the larger figure) above which the two costs are said to differ."""


class CostsDiffer(BaseModel):
    """Both figures of one call, in USD, and who reported the one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    computed_usd: float
    reported_usd: float


register_code(
    "provider_cost_differs",
    "the provider's reported cost of a call differs from agentlab's computed cost by more than 1%",
    CostsDiffer,
)


def cost_check(
    computed: float | None, reported: float | None, *, provider: str, origin: EventOrigin | None = None
) -> DiagnosticEvent | None:
    """The ``provider_cost_differs`` note for one call, or ``None`` (they agree, or one is unknown)."""
    if computed is None or reported is None or math.isnan(computed) or math.isnan(reported):
        return None
    scale = max(abs(computed), abs(reported))
    if scale == 0 or abs(computed - reported) <= TOLERANCE * scale:
        return None
    return diagnostic(
        "provider_cost_differs",
        f"{provider} reported ${reported:.6g} for this call; agentlab computed ${computed:.6g} from its "
        "usage and price table (check the price row, a discount or tier, or the usage mapping)",
        origin=origin,
        provider=provider,
        computed_usd=computed,
        reported_usd=reported,
    )
