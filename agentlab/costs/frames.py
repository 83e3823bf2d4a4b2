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
reasoning_tokens_per_s     float64   reasoning tokens / (first answer delta, else response end, minus
                                     first reasoning delta); NaN when either side is unknown, and
                                     for an unpaced simulator (no ``+tps=``: its timing is not real)
answer_tokens_per_s        float64   non-reasoning output tokens / (response end - first answer
                                     delta); NaN when not measurable (no streamed answer text, or
                                     an unpaced simulator)
=========================  ========  ==========================================================

Time to first reasoning token and to first answer token are ``first_reasoning_s`` and
``first_text_s``; per run (or per model), ``usage_by(df, "run_id")`` gives the same figures over
the group (see there).

The frame is a complete ``pandas.DataFrame`` (a :class:`UsageFrame`); only its notebook display is
short: the columns people read first (``UsageFrame.MAIN_COLUMNS``), formatted, with a note naming
the rest. ``df.frame(all_columns=True)`` shows every column formatted; ``pd.DataFrame(df)`` the raw one.

Accepted records: ``CallRecord``s, ``RunResult``s (their calls), ``ModelCallCompletedEvent``s (cost
recomputed from the current price table), or an iterable mixing them. The frame reads the loop's
records through two small protocols, :class:`PricedCall` and :class:`RunCalls`, which ``CallRecord``
and ``RunResult`` satisfy: ``costs`` sits below ``loop`` on the data path and never imports it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agentlab.costs.throughput import CallTimes

if TYPE_CHECKING:
    import pandas as pd

    from agentlab.costs.pricing import Cost
    from agentlab.neutral.usage import CallUsage

__all__ = [
    "THROUGHPUT_COLUMNS",
    "TOKEN_COST_COLUMNS",
    "USAGE_COLUMNS",
    "PricedCall",
    "RunCalls",
    "usage_by",
    "usage_frame",
]


@runtime_checkable
class PricedCall(CallTimes, Protocol):
    """What a row is read from: one priced model call (``agentlab.loop.result.CallRecord``).

    The timings and ``model`` are :class:`~agentlab.costs.throughput.CallTimes`'s; here the usage
    and model are known, and the call says where it belongs and what it cost.
    """

    @property
    def run_id(self) -> str | None:
        """The run the call belongs to."""

    @property
    def step(self) -> int | None:
        """1-based model call number within the run."""

    @property
    def provider(self) -> str:
        """The provider that answered."""

    @property
    def model(self) -> str:
        """The model that answered."""

    @property
    def usage(self) -> CallUsage:
        """Token counts in agentlab's convention (unknown stays ``None``)."""

    @property
    def cost(self) -> Cost:
        """The call's cost, priced when it was recorded."""

    @property
    def reasoning_items_dropped(self) -> int:
        """Opaque items not sent back for this call."""

    @property
    def provider_cost_usd(self) -> float | None:
        """The provider's own cost figure, or ``None``."""

    @property
    def stop_reason(self) -> str | None:
        """Why the model stopped."""


@runtime_checkable
class RunCalls(Protocol):
    """A record holding its calls (``agentlab.loop.result.RunResult``): one row per call."""

    @property
    def calls(self) -> Sequence[PricedCall]:
        """The run's priced calls, in order."""


_TOKEN_BUCKETS = ("input", "cache_read", "cache_write", "output", "reasoning")
_COST_PARTS = (*_TOKEN_BUCKETS, "total")

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


def token_cost_values(
    usage: CallUsage, cost: Cost, reasoning_items_dropped: int, provider_cost_usd: float | None
) -> dict[str, Any]:
    """The :data:`TOKEN_COST_COLUMNS` of one call or run, in that order.

    A usage frame row and a sweep results row fill them alike; one function keeps the two from
    drifting apart when a bucket is added.
    """
    tokens = {f"{b}_tokens": getattr(usage, f"{b}_tokens") for b in _TOKEN_BUCKETS}
    costs = {f"{part}_cost_usd": getattr(cost, part) for part in _COST_PARTS}
    return {
        **tokens,
        "reasoning_source": usage.reasoning_source,
        "reasoning_items_dropped": reasoning_items_dropped,
        **costs,
        "provider_cost_usd": provider_cost_usd,
    }


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

THROUGHPUT_COLUMNS: dict[str, str] = {
    "reasoning_tokens_per_s": "float64",
    "answer_tokens_per_s": "float64",
}
"""Derived from the token and timing columns after the rows are built (see ``_throughput``)."""
USAGE_COLUMNS.update(THROUGHPUT_COLUMNS)


def _nan(v: float | None) -> float:
    return math.nan if v is None else float(v)


def _rows(records: Any) -> Iterable[dict[str, Any]]:
    from agentlab.costs.pricing import UnpricedModelWarning, price_call
    from agentlab.neutral.events import ModelCallCompletedEvent

    if isinstance(records, ModelCallCompletedEvent | RunCalls | PricedCall):
        records = [records]
    for r in records:
        if isinstance(r, ModelCallCompletedEvent):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnpricedModelWarning)
                cost = price_call(r.usage, r.provider, r.model)
        elif isinstance(r, RunCalls):
            yield from _rows(r.calls)
            continue
        elif isinstance(r, PricedCall):
            cost = r.cost
        else:
            raise TypeError(
                f"usage_frame takes CallRecord, RunResult or ModelCallCompletedEvent, got {type(r).__name__}"
            )
        run_id, step, dropped = r.run_id, r.step, r.reasoning_items_dropped
        latency, fr, ft = r.latency_s, r.first_reasoning_s, r.first_text_s
        yield {
            "run_id": run_id,
            "step": step,
            "provider": r.provider,
            "model": r.model,
            **token_cost_values(r.usage, cost, dropped, _nan(r.provider_cost_usd)),
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

    from agentlab.costs.usage_view import UsageFrame

    rows = list(_rows(records))
    cols = [c for c in USAGE_COLUMNS if c not in THROUGHPUT_COLUMNS]
    data = {c: pd.array([row[c] for row in rows], dtype=USAGE_COLUMNS[c]) for c in cols}
    data.update(_throughput(data))
    return UsageFrame({c: data[c] for c in USAGE_COLUMNS})


def _throughput(data: dict[str, Any]) -> dict[str, Any]:
    """Reasoning and answer tokens per second per call, vectorised (unknown stays NaN, never 0).

    The reasoning phase runs from the first reasoning delta to the first answer delta (or to the
    end of the response when no answer text streamed); the answer phase from the first answer
    delta to the end. Non-streamed calls have neither, so both rates are unknown; so are an unpaced
    simulator's (:func:`_timed`).
    """
    import numpy as np

    end = np.asarray(data["latency_s"], dtype="float64")
    fr = np.asarray(data["first_reasoning_s"], dtype="float64")
    ft = np.asarray(data["first_text_s"], dtype="float64")
    out = data["output_tokens"].to_numpy(dtype="float64", na_value=np.nan)
    reasoning = data["reasoning_tokens"].to_numpy(dtype="float64", na_value=np.nan)
    timed = _timed(data["model"])
    with np.errstate(invalid="ignore", divide="ignore"):
        r_win = np.where(np.isnan(ft), end, ft) - fr
        a_win = end - ft
        r_rate = np.where(timed & (r_win > 0), reasoning / r_win, np.nan)
        a_rate = np.where(timed & (a_win > 0), (out - reasoning) / a_win, np.nan)
    return {"reasoning_tokens_per_s": r_rate, "answer_tokens_per_s": a_rate}


def _timed(models: Any) -> Any:
    """Per row, whether the call's timing is real (``untimed_reason``): a boolean numpy array."""
    import numpy as np

    from agentlab.adapters._simulated import untimed_reason

    return np.array([untimed_reason(m if isinstance(m, str) else None) is None for m in models], dtype=bool)


_SOURCE_COLUMNS = ("reasoning_source", "price_source", "price_updated")
"""Text columns that describe where a figure came from: a group keeps its one value, else ``mixed``."""


def usage_by(frame: pd.DataFrame, by: str | list[str] = "model") -> pd.DataFrame:
    """Token and cost totals grouped by ``by`` (e.g. ``"provider"``, ``["model", "run_id"]``, ``"step"``).

    Why not a bare ``groupby().sum()``: it would concatenate the string columns ("reportedreported")
    and turn unknown reasoning (``<NA>``) into 0. Here only token/cost columns are summed, a group
    with any unknown value stays unknown, a ``calls`` column counts the model calls per group, and
    the source columns (``reasoning_source``, ``price_source``, ``price_updated``) keep the group's
    one value, ``mixed`` when its calls differ (``<NA>`` when none said).

    Timings, when the frame has them: ``latency_s`` is summed (model time of the group);
    ``first_reasoning_s`` / ``first_text_s`` are the mean time to first reasoning / answer token
    over the calls that measured one (per run: ``by="run_id"``); the tokens-per-second columns are
    the group's tokens over the group's measured phase time (calls without a measurement left out
    of both), NaN when no call measured one.
    """
    import pandas as pd

    keys = [by] if isinstance(by, str) else list(by)
    missing = [k for k in keys if k not in frame.columns]
    if missing:
        raise KeyError(f"usage_by: no column(s) {missing}; choose from {list(frame.columns)}")
    cols = [c for c in TOKEN_COST_COLUMNS if c in frame.columns and c not in _SOURCE_COLUMNS]
    frame = pd.DataFrame(frame)
    grouped = frame.groupby(keys, sort=False, dropna=False)
    out = grouped[cols].sum(min_count=1)
    # any unknown value in a group makes its total unknown (sum(min_count=1) would skip it)
    unknown = grouped[cols].agg(lambda s: s.isna().any())
    out = out.mask(unknown.astype(bool))
    for c in _SOURCE_COLUMNS:
        if c in frame.columns and c not in keys:
            out[c] = grouped[c].agg(_one_or_mixed).astype("string")
    if {"latency_s", "first_reasoning_s", "first_text_s"} <= set(frame.columns):
        out = out.join(_timings_by(frame, keys))
    out.insert(0, "calls", grouped.size().astype("Int64"))
    return out


def _one_or_mixed(s: pd.Series) -> Any:
    vals = s.dropna().unique()
    if len(vals) == 0:
        return None
    return str(vals[0]) if len(vals) == 1 else "mixed"


def _timings_by(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per-group timing figures (see ``usage_by``): phase windows summed where both ends are known."""
    import pandas as pd

    end, fr, ft = frame["latency_s"], frame["first_reasoning_s"], frame["first_text_s"]
    r_win = ft.where(ft.notna(), end) - fr
    a_win = end - ft
    reasoning = frame["reasoning_tokens"].astype("float64")
    answer = (frame["output_tokens"] - frame["reasoning_tokens"]).astype("float64")
    timed = _timed(frame["model"]) if "model" in frame.columns else True
    r_ok = r_win.gt(0) & reasoning.notna() & timed
    a_ok = a_win.gt(0) & answer.notna() & timed
    parts = pd.DataFrame(
        {
            "latency_s": end,
            "first_reasoning_s": fr,
            "first_text_s": ft,
            "_r_tok": reasoning.where(r_ok),
            "_r_win": r_win.where(r_ok),
            "_a_tok": answer.where(a_ok),
            "_a_win": a_win.where(a_ok),
        }
    )
    for k in keys:
        parts[k] = frame[k]
    g = parts.groupby(keys, sort=False, dropna=False)
    res = pd.DataFrame({"latency_s": g["latency_s"].sum(min_count=1)})
    res["first_reasoning_s"] = g["first_reasoning_s"].mean()
    res["first_text_s"] = g["first_text_s"].mean()
    res["reasoning_tokens_per_s"] = g["_r_tok"].sum(min_count=1) / g["_r_win"].sum(min_count=1)
    res["answer_tokens_per_s"] = g["_a_tok"].sum(min_count=1) / g["_a_win"].sum(min_count=1)
    return res.astype("float64")
