"""A comparison's runs as a sweep-results frame, and its spread (``repeats=N``) as table rows.

Why a sweep-results frame: the sweeps already summarise repeated runs (success rate with a Wilson
interval, cost per solved task; :mod:`agentlab.sweeps.analysis`). Giving a comparison's runs the
same columns lets ``Comparison.spread`` call those summaries rather than compute its own, so a
compare and a sweep of the same models report the same numbers the same way.

Only whitelisted scalars go into a row (status, counts, token buckets, cost): never events'
text, history or reasoning.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentlab.adapters.base import parse_model
from agentlab.loop.tools import servers_label
from agentlab.neutral.events import ToolCallEvent

if TYPE_CHECKING:
    import pandas as pd

    from agentlab.sweeps.compare import ComparisonEntry

__all__ = ["SPREAD_HEADER", "runs_frame", "spread_rows"]

_TOKENS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens")
_COSTS = ("input", "cache_read", "cache_write", "output", "reasoning", "total")


def _row(e: ComparisonEntry) -> dict[str, Any]:
    row: dict[str, Any] = {
        "task_id": "compare",
        "model": e.label,
        "setting": "default",
        "repeat": e.repeat,
        "provider": parse_model(e.model).provider,
        "latency_s": e.duration_s,
        "success": e.solved,
        "status": e.status,
    }
    r = e.result
    if r is None:
        row.update(steps=0, tool_calls=0, error_type=(e.error or "").split(":", 1)[0] or None)
        return row
    u, cost = r.usage.tokens, r.usage.cost
    row.update({k: getattr(u, k) for k in _TOKENS})
    row.update({f"{k}_cost_usd": getattr(cost, k) for k in _COSTS})
    row.update(
        run_id=r.run_id,
        steps=r.steps,
        tool_calls=sum(isinstance(ev, ToolCallEvent) for ev in r.events),
        reasoning_source=u.reasoning_source,
        price_source=cost.source,
        price_updated=cost.updated,
        stop_reason=r.stop_reason,
        error_type=r.error_type,
        tool_servers=servers_label(r.tool_sources),
    )
    return row


def runs_frame(entries: Sequence[ComparisonEntry]) -> pd.DataFrame:
    """One row per run, every column of :data:`agentlab.sweeps.store.ROW_FIELDS` with its dtype."""
    from agentlab.sweeps.analysis import typed_rows_frame

    return typed_rows_frame([_row(e) for e in entries])


SPREAD_HEADER = ("model", "runs", "failed", "solved", "success (95% CI)", "cost / run", "output tok / run",
                 "reasoning tok / run", "time / run")  # fmt: skip


def _pm(row: Any, metric: str, fmt: Any) -> str:
    """``mean [low–high]``: the interval is a bootstrap one, not symmetric (``± half`` would misstate it).

    The mean alone when there is no interval; ``mean ± 0`` when the runs were identical.
    """
    mean, lo, hi = (float(row[f"{metric}_{p}"]) for p in ("mean", "ci_low", "ci_high"))
    if math.isnan(mean):
        return "<NA>"
    if math.isnan(lo) or math.isnan(hi):
        return f"{fmt(mean)} (1 run)"
    if abs(hi - lo) <= 1e-9 * abs(mean):  # identical runs: float noise (2.6e-19), not a spread
        return f"{fmt(mean)} ± {fmt(0.0)}"
    return f"{fmt(mean)} [{fmt(lo)}–{fmt(hi)}]"


def _rate(row: Any) -> str:
    if not int(row["scored"]):
        return "<NA> (no check)"
    return f"{row['success_rate']:.0%} [{row['success_ci_low']:.0%}–{row['success_ci_high']:.0%}]"


def spread_rows(frame: pd.DataFrame) -> list[list[str]]:
    """The spread frame (``Comparison.spread()``) as text rows under :data:`SPREAD_HEADER`."""
    from agentlab.render.html_tables import fmt_seconds, fmt_usd

    def tok(v: float) -> str:
        return f"{v:,.0f}"

    out = []
    for label, row in frame.iterrows():
        out.append(
            [
                str(label),
                str(int(row["runs"])),
                str(int(row["errors"])),
                f"{int(row['solved'])}/{int(row['scored'])}",
                _rate(row),
                _pm(row, "total_cost_usd", fmt_usd),
                _pm(row, "output_tokens", tok),
                _pm(row, "reasoning_tokens", tok),
                _pm(row, "latency_s", fmt_seconds),
            ]
        )
    return out
