"""Sweep results as pandas: the per-run frame, and a summary per model and setting.

Conventions follow ``agentlab.costs.frames.usage_frame``: token columns are nullable ``Int64`` (unknown is
``<NA>``, never 0), costs are ``float64`` (NaN: unknown/unpriced), text columns are ``string``, and
``success`` is nullable ``boolean`` (``<NA>``: not scored, i.e. no checker, or the run failed with an
error before the model gave a final verdict).

The summary's success rate is ``solved / scored`` where *scored* runs are those that ended with a
verdict (completed or step limit) on a task with a checker; runs that failed with a provider or
configuration error are counted in ``errors`` and left out of the rate (an outage says nothing about
the model). The interval is Wilson's score interval (95% by default), which behaves at 0% and 100%
and for small n, unlike the normal approximation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentlab.render.intervals import bootstrap_mean_interval, mean_interval, wilson_interval
from agentlab.sweeps.store import ROW_FIELDS, read_rows, row_key

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SPREAD_COLUMNS",
    "SPREAD_METRICS",
    "SUMMARY_COLUMNS",
    "bootstrap_mean_interval",
    "load_results",
    "mean_interval",
    "rows_frame",
    "spread",
    "summarize",
    "summarize_sweep",
    "typed_rows_frame",
    "wilson_interval",
]

SUMMARY_COLUMNS: dict[str, str] = {
    "runs": "Int64",
    "errors": "Int64",
    "scored": "Int64",
    "solved": "Int64",
    "success_rate": "float64",
    "success_ci_low": "float64",
    "success_ci_high": "float64",
    "mean_steps": "float64",
    "mean_tool_calls": "float64",
    "input_tokens": "Int64",
    "cache_read_tokens": "Int64",
    "output_tokens": "Int64",
    "reasoning_tokens": "Int64",
    "reasoning_share": "float64",
    "total_cost_usd": "float64",
    "provider_cost_usd": "float64",
    "cost_per_run_usd": "float64",
    "cost_per_solved_usd": "float64",
    "price_source": "string",
    "mean_latency_s": "float64",
}




SPREAD_METRICS = ("total_cost_usd", "input_tokens", "output_tokens", "reasoning_tokens", "latency_s")
"""What :func:`spread` gives a mean and interval for (columns of a results frame)."""

SPREAD_COLUMNS: dict[str, str] = {
    f"{m}_{part}": "float64" for m in SPREAD_METRICS for part in ("mean", "ci_low", "ci_high")
}


def spread(results: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """:func:`summarize` per group plus, per run, each of :data:`SPREAD_METRICS` as mean and 95% interval.

    For repeated runs of one configuration (``compare(..., repeats=N)``, a sweep's ``repeats``):
    the success rate with its Wilson interval comes from :func:`summarize`; cost, tokens and
    latency per run as ``<metric>_mean`` / ``_ci_low`` / ``_ci_high``, the interval a percentile
    bootstrap (:func:`bootstrap_mean_interval`): these values are never negative and their few
    repeats are skewed, so a symmetric t interval (:func:`mean_interval`) reaches below 0. Unknown
    values are left out of the mean, never counted as 0. The frame's ``attrs["ci_method"]`` says so.
    """
    import pandas as pd

    base = summarize(results, by=by)
    rows: list[dict[str, float]] = []
    groups = list(results.groupby(list(by), sort=False, dropna=False))
    for _key, g in groups:
        row: dict[str, float] = {}
        for m in SPREAD_METRICS:
            mean, lo, hi = bootstrap_mean_interval(g[m].tolist())
            row.update({f"{m}_mean": mean, f"{m}_ci_low": lo, f"{m}_ci_high": hi})
        rows.append(row)
    keys = [k if isinstance(k, tuple) else (k,) for k, _ in groups]
    index = (
        pd.MultiIndex.from_tuples(keys, names=list(by))
        if len(by) > 1
        else pd.Index([k[0] for k in keys], name=by[0])
    )
    extra = pd.DataFrame(
        {c: pd.array([r[c] for r in rows], dtype=t) for c, t in SPREAD_COLUMNS.items()}, index=index
    )
    out = base.join(extra)
    out.attrs["ci_method"] = SPREAD_CI_METHOD
    return out


SPREAD_CI_METHOD = (
    "success: Wilson 95% score interval; cost, tokens, latency: 95% percentile bootstrap interval of "
    "the mean over runs (scipy.stats.bootstrap, 9,999 resamples, seed 0), within the observed range"
)


def load_results(path: str | Path, *, superseded: bool = False) -> pd.DataFrame:
    """The results file as a frame, one row per run key (the last row wins).

    Columns as in :data:`agentlab.sweeps.store.ROW_FIELDS`; ``started_at`` is a UTC timestamp.

    ``superseded=True`` keeps every row (earlier failed attempts too), e.g. to account for all money
    spent. A torn final line is skipped with a ``TornLineWarning``; a row that is not a valid results
    row (:func:`~agentlab.sweeps.store.check_row`) raises ``ConfigError`` naming the file and line:
    a frame built around a corrupt row would be silently wrong.
    """
    rows: dict[Any, dict[str, Any]] | list[dict[str, Any]]
    if superseded:
        rows = list(read_rows(path))
        values = rows
    else:
        rows = {}
        for r in read_rows(path):
            key = row_key(r)
            rows.pop(key, None)  # keep file order of the winning rows
            rows[key] = r
        values = list(rows.values())
    return rows_frame(values)


def rows_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Checked results rows as a frame with :data:`ROW_FIELDS`' dtypes (what ``load_results`` returns)."""
    import pandas as pd

    df = typed_rows_frame(rows)
    df["started_at"] = pd.to_datetime(df["started_at"], utc=True, format="ISO8601")
    return df


def typed_rows_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Every column of :data:`ROW_FIELDS` with its dtype (a missing float is NaN).

    A sweep's rows and a comparison's runs share it, so their frames have the same columns and the
    same summaries.
    """
    import pandas as pd

    cols: dict[str, Any] = {}
    for name, dtype in ROW_FIELDS.items():
        data = [r.get(name) for r in rows]
        if dtype == "float64":
            cols[name] = pd.array([math.nan if v is None else float(v) for v in data], dtype="float64")
        else:
            cols[name] = pd.array(data, dtype=dtype)
    return pd.DataFrame(cols)


def _sum_known(s: pd.Series) -> Any:
    """Sum of an Int64 column; ``<NA>`` if any part is unknown (the usage convention)."""
    import pandas as pd

    if len(s) and s.isna().any():
        return pd.NA
    return int(s.sum())


def _sum_all(g: pd.DataFrame, column: str) -> float:
    """A column's group total, NaN when any run lacks it (or the file predates the column)."""
    if column not in g.columns or g[column].isna().any():
        return math.nan
    return float(g[column].sum())


def _price_sources(s: pd.Series) -> str | None:
    """What priced a group's runs: each distinct source once, in order (None: none known).

    A run's own ``price_source`` already joins its calls' sources with ``"; "``, as a cost sum does.
    """
    parts = [p for v in s.dropna() for p in str(v).split("; ")]
    return "; ".join(dict.fromkeys(parts)) or None


def summarize(
    results: pd.DataFrame | str | Path, by: Sequence[str] = ("model", "setting"), *, z: float = 1.959964
) -> pd.DataFrame:
    """One row per group (default model x setting), columns :data:`SUMMARY_COLUMNS` (module docstring).

    ``reasoning_share`` is reasoning tokens / output tokens over the runs whose reasoning figure is
    known (NaN when none is); ``cost_per_solved_usd`` is the group's total cost (every run, failed
    ones included: they were paid for) divided by solved runs (NaN when none was solved);
    ``price_source`` lists what priced the group's runs (each source once, ``"; "``-joined; ``<NA>``
    when none is known).
    """
    import pandas as pd

    df = load_results(results) if isinstance(results, str | Path) else results
    by = list(by)
    missing = [c for c in by if c not in df.columns]
    if missing:
        raise KeyError(f"cannot group by {missing}; columns are {list(df.columns)}")
    out: list[dict[str, Any]] = []
    keys: list[tuple[Any, ...]] = []
    for key, g in df.groupby(by, sort=False, dropna=False):
        keys.append(key if isinstance(key, tuple) else (key,))
        verdict = g["success"].dropna()
        n, k = len(verdict), int(verdict.astype(bool).sum())
        lo, hi = wilson_interval(k, n, z=z)
        known = g[g["reasoning_tokens"].notna() & g["output_tokens"].notna()]
        out_known = int(known["output_tokens"].sum())
        cost = (
            float(g["total_cost_usd"].sum(min_count=1)) if not g["total_cost_usd"].isna().any() else math.nan
        )
        out.append(
            {
                "runs": len(g),
                "errors": int((g["status"] == "failed").sum()),
                "scored": n,
                "solved": k,
                "success_rate": k / n if n else math.nan,
                "success_ci_low": lo,
                "success_ci_high": hi,
                "mean_steps": float(g["steps"].mean()) if len(g) else math.nan,
                "mean_tool_calls": float(g["tool_calls"].mean()) if len(g) else math.nan,
                "input_tokens": _sum_known(g["input_tokens"]),
                "cache_read_tokens": _sum_known(g["cache_read_tokens"]),
                "output_tokens": _sum_known(g["output_tokens"]),
                "reasoning_tokens": _sum_known(g["reasoning_tokens"]),
                "reasoning_share": int(known["reasoning_tokens"].sum()) / out_known
                if out_known
                else math.nan,
                "total_cost_usd": cost,
                "provider_cost_usd": _sum_all(g, "provider_cost_usd"),
                "cost_per_run_usd": cost / len(g) if len(g) else math.nan,
                "cost_per_solved_usd": cost / k if k else math.nan,
                "price_source": _price_sources(g["price_source"]),
                "mean_latency_s": float(g["latency_s"].mean()) if len(g) else math.nan,
            }
        )
    # Groups in order of first appearance of each level's values (models as given, then settings).
    ranks = [{v: i for i, v in enumerate(dict.fromkeys(df[c].tolist()))} for c in by]
    order = sorted(
        range(len(keys)), key=lambda i: tuple(r.get(v, -1) for r, v in zip(ranks, keys[i], strict=True))
    )
    keys, out = [keys[i] for i in order], [out[i] for i in order]
    index = (
        pd.MultiIndex.from_tuples(keys, names=by)
        if len(by) > 1
        else pd.Index([k[0] for k in keys], name=by[0])
    )
    frame = pd.DataFrame(
        {c: pd.array([r[c] for r in out], dtype=t) for c, t in SUMMARY_COLUMNS.items()}, index=index
    )
    return frame


summarize_sweep = summarize
"""The name ``agentlab.summarize_sweep`` (``summarize`` alone would be ambiguous at the top level)."""
