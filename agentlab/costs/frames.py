"""``usage_frame(records)``: one pandas row per model call (pandas is imported on first call only).

Columns and dtypes (the order is fixed):

=========================  ========  ==========================================================
column                     dtype     meaning
=========================  ========  ==========================================================
run_id                     string    the run
step                       Int64     1-based model call number within the run
provider, model            string    what answered (``provider:model`` split)
input_tokens               Int64     all prompt tokens, cache reads and writes included
cache_read_tokens          Int64     part of input served from cache
cache_write_tokens         Int64     part of input written to cache
output_tokens              Int64     all billed output, reasoning included
reasoning_tokens           Int64     part of output spent reasoning; <NA> when the provider gave no figure
reasoning_source           string    reported / estimated / unknown
reasoning_items_dropped    Int64     opaque items not sent back for this call
input_cost_usd             float64   uncached input cost
cache_read_cost_usd        float64
cache_write_cost_usd       float64
output_cost_usd            float64   includes reasoning
reasoning_cost_usd         float64   part of output_cost_usd (NaN when reasoning tokens are unknown)
total_cost_usd             float64   input + cache read + cache write + output (NaN: unpriced model)
provider_cost_usd          float64   the provider's own figure for the call, beside the computed one
                                     (OpenRouter's ``usage.cost``); NaN when the provider reports none
price_source               string    what priced the call: ``genai-prices <version>``, ``agentlab
                                     simulated``, ``user override`` (or the source a user gave);
                                     <NA> when unpriced
price_updated              string    the date of that price (library release or fetch date, the
                                     simulated table's date, or the ``as_of`` a user gave); <NA>
                                     when not known
latency_s                  float64   request start to completed response
first_reasoning_s          float64   time to the first reasoning delta (NaN: none streamed)
first_text_s               float64   time to the first answer-text delta (NaN: none streamed)
stop_reason                string
=========================  ========  ==========================================================

Accepted records: ``CallRecord``s, ``RunResult``s (their calls), ``ModelCallCompletedEvent``s (cost
recomputed from the current price table), or an iterable mixing them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TOKEN_COST_COLUMNS", "USAGE_COLUMNS", "usage_by", "usage_frame"]

TOKEN_COST_COLUMNS: dict[str, str] = {
    "input_tokens": "Int64",
    "cache_read_tokens": "Int64",
    "cache_write_tokens": "Int64",
    "output_tokens": "Int64",
    "reasoning_tokens": "Int64",
    "reasoning_source": "string",
    "reasoning_items_dropped": "Int64",
    "input_cost_usd": "float64",
    "cache_read_cost_usd": "float64",
    "cache_write_cost_usd": "float64",
    "output_cost_usd": "float64",
    "reasoning_cost_usd": "float64",
    "total_cost_usd": "float64",
    "provider_cost_usd": "float64",
}
"""Token buckets and cost columns, shared by the usage frame and sweep results (same conventions)."""

USAGE_COLUMNS: dict[str, str] = {
    "run_id": "string",
    "step": "Int64",
    "provider": "string",
    "model": "string",
    **TOKEN_COST_COLUMNS,
    "price_source": "string",
    "price_updated": "string",
    "latency_s": "float64",
    "first_reasoning_s": "float64",
    "first_text_s": "float64",
    "stop_reason": "string",
}


def _nan(v: float | None) -> float:
    return math.nan if v is None else float(v)


def _rows(records: Any) -> Iterable[dict[str, Any]]:
    from agentlab.costs.pricing import UnpricedModelWarning, price_call
    from agentlab.loop.result import CallRecord, RunResult
    from agentlab.neutral.events import ModelCallCompletedEvent

    if isinstance(records, CallRecord | RunResult | ModelCallCompletedEvent):
        records = [records]
    for r in records:
        if isinstance(r, RunResult):
            yield from _rows(r.calls)
            continue
        if isinstance(r, ModelCallCompletedEvent):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnpricedModelWarning)
                cost = price_call(r.usage, r.provider, r.model)
            run_id, step, dropped = r.run_id, r.step, r.reasoning_items_dropped
            latency, fr, ft = r.latency_s, r.first_reasoning_s, r.first_text_s
        elif isinstance(r, CallRecord):
            cost = r.cost
            run_id, step, dropped = r.run_id, r.step, r.reasoning_items_dropped
            latency, fr, ft = r.latency_s, r.first_reasoning_s, r.first_text_s
        else:
            raise TypeError(
                f"usage_frame takes CallRecord, RunResult or ModelCallCompletedEvent, got {type(r).__name__}"
            )
        u = r.usage
        yield {
            "run_id": run_id,
            "step": step,
            "provider": r.provider,
            "model": r.model,
            "input_tokens": u.input_tokens,
            "cache_read_tokens": u.cache_read_tokens,
            "cache_write_tokens": u.cache_write_tokens,
            "output_tokens": u.output_tokens,
            "reasoning_tokens": u.reasoning_tokens,
            "reasoning_source": u.reasoning_source,
            "reasoning_items_dropped": dropped,
            "input_cost_usd": cost.input,
            "cache_read_cost_usd": cost.cache_read,
            "cache_write_cost_usd": cost.cache_write,
            "output_cost_usd": cost.output,
            "reasoning_cost_usd": cost.reasoning,
            "total_cost_usd": cost.total,
            "provider_cost_usd": _nan(r.provider_cost_usd),
            "price_source": cost.source,
            "price_updated": cost.updated,
            "latency_s": _nan(latency),
            "first_reasoning_s": _nan(fr),
            "first_text_s": _nan(ft),
            "stop_reason": r.stop_reason,
        }


def usage_frame(records: Any) -> pd.DataFrame:
    """A DataFrame with the columns and dtypes in the module docstring (empty input: empty frame)."""
    import pandas as pd

    rows = list(_rows(records))
    data = {c: [row[c] for row in rows] for c in USAGE_COLUMNS}
    return pd.DataFrame({c: pd.array(v, dtype=USAGE_COLUMNS[c]) for c, v in data.items()})


def usage_by(frame: pd.DataFrame, by: str | list[str] = "model") -> pd.DataFrame:
    """Token and cost totals grouped by ``by`` (e.g. ``"provider"``, ``["model", "run_id"]``, ``"step"``).

    Why not a bare ``groupby().sum()``: it would concatenate the string columns and turn unknown
    reasoning (``<NA>``) into 0. Here only token/cost columns are summed, a group with any unknown
    value stays unknown, and a ``calls`` column counts the model calls per group.
    """
    keys = [by] if isinstance(by, str) else list(by)
    missing = [k for k in keys if k not in frame.columns]
    if missing:
        raise KeyError(f"usage_by: no column(s) {missing}; choose from {list(frame.columns)}")
    cols = [c for c in TOKEN_COST_COLUMNS if c in frame.columns]
    grouped = frame.groupby(keys, sort=False, dropna=False)
    out = grouped[cols].sum(min_count=1)
    # any unknown value in a group makes its total unknown (sum(min_count=1) would skip it)
    unknown = grouped[cols].agg(lambda s: s.isna().any())
    out = out.mask(unknown.astype(bool))
    out.insert(0, "calls", grouped.size().astype("Int64"))
    return out
