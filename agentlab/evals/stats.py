"""Paired statistics between models on the same tasks, following Miller (2024).

Miller, "Adding Error Bars to Evals: A Statistical Approach to Language Model Evaluations"
(arXiv:2411.00640). The input is any results form (a compare result, a sweep report, an evaluation,
a results file, a ``load_results`` frame: :func:`agentlab.evals.results.as_results`), used as its tidy
runs table: one row per run with ``task_id``, ``model``,
``repeat`` and metric columns (scores in [0, 1] or bool, ``total_cost_usd``, tokens, ``latency_s``),
optionally a ``cluster`` column when tasks come in groups (several questions on one passage).

Choices, and why:

- **Repeats are averaged per task first.** Repeats of one task are not independent samples of the
  task universe; counting them as such shrinks the standard error by up to sqrt(repeats). The
  per-task mean is the unit (Miller's "resampling" section), and the within-task variance of the
  repeats is reported beside it: it is the part of the variance more repeats would remove.
- **Paired.** Every model ran the same tasks, so the difference is computed task by task and its
  standard error comes from the paired differences (Miller's paired-differences section). Whether
  two per-model intervals overlap is the wrong test for paired data: it ignores the correlation
  between models on a task, which is usually large and positive.
- **Clustered** standard errors (Miller's eq. for SE_clustered) when a ``cluster`` column is given:
  the within-cluster cross products of the deviations are added to the CLT variance.
- **Intervals** are Student t intervals on the per-task (or per-cluster) degrees of freedom
  (``n - 1``), stated in the ``ci_method`` column: with tens of tasks the normal 1.96 is too narrow.
- **Tests**: binary scores get McNemar's exact test (``scipy.stats.binomtest`` on the discordant
  tasks, p = 0.5), a task counting as solved when the mean of its repeats is above 0.5 (a strict
  majority; a 50/50 tie on an even number of repeats is not solved). Other metrics get the
  Wilcoxon signed-rank test (``scipy.stats.wilcoxon``) and a paired percentile bootstrap CI
  (``scipy.stats.bootstrap`` over tasks, or over clusters, with a fixed seed).
- **Holm's** step-down correction is applied across the model pairs of each metric (one family per
  metric): scipy has no Holm.
- Unknown values (``<NA>`` cost of an unpriced model) stay unknown: a task is left out of a pair's
  metric when either side is unknown or did not run it, and counted in ``n_unknown``. No CI is
  given on fewer than two tasks: the cell is NaN and ``note`` says why.

scipy is imported inside the functions: ``import agentlab`` never loads it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from agentlab.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pandas as pd

__all__ = [
    "DEFAULT_METRICS",
    "METHOD",
    "clustered_se",
    "holm_adjust",
    "is_binary",
    "mcnemar_exact",
    "model_means",
    "paired_bootstrap_ci",
    "paired_tests",
    "state_finding",
    "tasks_needed",
    "tasks_needed_observed",
]

DEFAULT_METRICS = ("total_cost_usd", "output_tokens", "reasoning_tokens", "latency_s")
"""Compared besides the ``score*`` columns when ``metrics`` is not given (those present in the frame)."""

_KEYS = ("task_id", "model", "repeat")


# ---------------------------------------------------------------- input


def _runs_of(runs: Any, what: str) -> pd.DataFrame:
    """Every results form as its tidy runs table (:func:`agentlab.evals.results.as_results`)."""
    from agentlab.evals.results import as_results

    return as_results(runs, what=what).runs()


def _check_runs(runs: pd.DataFrame, metrics: Sequence[str]) -> None:
    missing = [c for c in (*_KEYS, *metrics) if c not in runs.columns]
    if missing:
        raise ConfigError(
            f"runs frame lacks column(s) {missing}: one row per run with task_id, model, repeat"
        )


def _metrics_of(runs: pd.DataFrame, metrics: Sequence[str] | None) -> list[str]:
    if metrics is not None:
        return list(metrics)
    scores = [c for c in runs.columns if str(c).startswith("score")]
    return scores + [m for m in DEFAULT_METRICS if m in runs.columns]


def _numeric(s: pd.Series) -> pd.Series:
    """A metric column as float, unknowns as NaN (bool True/False become 1.0/0.0).

    A value that is neither a number, a bool nor unknown is an error: turned into NaN it would be
    counted as unknown and quietly shrink the sample.
    """
    import pandas as pd

    out = pd.to_numeric(s.astype("object").where(s.notna(), None), errors="coerce").astype("float64")
    bad = s.notna() & out.isna()
    if bad.any():
        raise ConfigError(f"metric column {s.name!r} holds a non-numeric value: {s[bad].iloc[0]!r}")
    return out


def is_binary(values: pd.Series) -> bool:
    """A score is binary when every known run value is 0 or 1 (bool columns included)."""
    known = _numeric(values).dropna()
    return len(known) > 0 and bool(known.isin([0.0, 1.0]).all())


def _task_table(runs: pd.DataFrame, metric: str, cluster: str | None) -> pd.DataFrame:
    """Per model and task: mean over known repeats, their count and sample variance, the cluster."""
    frame = runs[[*_KEYS, *([cluster] if cluster else [])]].copy()
    frame["_v"] = _numeric(runs[metric])
    g = frame.groupby(["model", "task_id"], sort=False)["_v"]
    out = g.agg(mean="mean", k="count", var="var")  # var: ddof=1, NaN with one known repeat
    if cluster:
        out["cluster"] = frame.groupby(["model", "task_id"], sort=False)[cluster].first()
    return out.reset_index()


# ---------------------------------------------------------------- standard errors


def clustered_se(values: Sequence[float], clusters: Sequence[Any] | None = None) -> float:
    """Miller's SE: sqrt(SE_CLT^2 + 1/n^2 * sum_c sum_{i != j in c} (s_i - mean)(s_j - mean)).

    Without clusters (or all singletons) this is the CLT standard error sd(ddof=1)/sqrt(n). NaN on
    fewer than two values: no spread can be estimated from one task.
    """
    xs = [float(v) for v in values]
    n = len(xs)
    if n < 2:
        return math.nan
    mean = sum(xs) / n
    dev = [x - mean for x in xs]
    var = sum(d * d for d in dev) / (n - 1) / n
    if clusters is not None:
        sums: dict[Any, float] = {}
        squares: dict[Any, float] = {}
        for c, d in zip(clusters, dev, strict=True):
            sums[c] = sums.get(c, 0.0) + d
            squares[c] = squares.get(c, 0.0) + d * d
        # sum over i != j within a cluster = (sum of deviations)^2 - sum of squared deviations
        var += sum(sums[c] ** 2 - squares[c] for c in sums) / (n * n)
    return math.sqrt(var) if var >= 0 else math.nan


def _t_interval(mean: float, se: float, df: int, confidence: float) -> tuple[float, float]:
    if df < 1 or math.isnan(se):
        return (math.nan, math.nan)
    from scipy import stats  # type: ignore[import-untyped]

    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
    return (mean - half, mean + half)


def model_means(
    runs: Any,
    metrics: Sequence[str] | None = None,
    *,
    cluster: str | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per model and metric: the mean of per-task means with its CLT (or clustered) SE and t interval.

    ``within_task_var`` is the mean over tasks of the repeats' sample variance (NaN with one repeat):
    Miller's sigma^2, the variance that more repeats per task would divide down. ``se`` is computed
    from the per-task means, so it already includes sigma^2 / repeats.
    """
    runs = _runs_of(runs, "model_means")
    names = _metrics_of(runs, metrics)
    _check_runs(runs, [*names, *([cluster] if cluster else [])])
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for metric in names:
        table = _task_table(runs, metric, cluster)
        for model, t in table.groupby("model", sort=False):
            known = t[t["k"] > 0]
            n = len(known)
            groups = known["cluster"].tolist() if cluster else None
            se = clustered_se(known["mean"].tolist(), groups)
            df = (len(set(groups)) if groups is not None else n) - 1
            mean = float(known["mean"].mean()) if n else math.nan
            lo, hi = _t_interval(mean, se, df, confidence)
            rows.append({
                "model": model, "metric": metric, "n_tasks": n, "n_unknown": len(t) - n,
                "n_repeats": int(known["k"].min()) if n else 0, "mean": mean, "se": se,
                "ci_low": lo, "ci_high": hi, "ci_method": _ci_method(cluster, confidence),
                "within_task_var": float(known["var"].mean()) if known["var"].notna().any() else math.nan,
                "note": "" if n >= 2 else f"no CI on {n} task(s)",
            })  # fmt: skip
    return pd.DataFrame(rows)


def _ci_method(cluster: str | None, confidence: float) -> str:
    where = f"clustered by {cluster!r}, df = clusters - 1" if cluster else "df = tasks - 1"
    return f"t {confidence:.0%} on per-task means ({where})"


# ---------------------------------------------------------------- paired tests


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order; NaN stays NaN and is not counted.

    Sorted ascending, the i-th smallest of m p-values is multiplied by (m - i + 1), then a running
    maximum keeps the adjusted values monotone, capped at 1 (Holm 1979).
    """
    known = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(known)
    out = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def mcnemar_exact(solved_a: Sequence[bool], solved_b: Sequence[bool]) -> tuple[int, int, float]:
    """``(a_only, b_only, p)``: McNemar's exact test, a two-sided binomial test on the discordant tasks.

    With no discordant task the p-value is 1: the only possible outcome under the null was observed.
    """
    a_only = sum(1 for a, b in zip(solved_a, solved_b, strict=True) if a and not b)
    b_only = sum(1 for a, b in zip(solved_a, solved_b, strict=True) if b and not a)
    if a_only + b_only == 0:
        return (0, 0, 1.0)
    from scipy import stats

    return (a_only, b_only, float(stats.binomtest(b_only, a_only + b_only, p=0.5).pvalue))


def paired_bootstrap_ci(
    diffs: npt.ArrayLike,
    clusters: Sequence[Any] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean paired difference, resampling tasks (or whole clusters).

    Clusters are resampled as units: the statistic is sum(differences) / sum(tasks) over the drawn
    clusters, so a cluster's tasks stay together as they were drawn from the task universe.
    """
    import numpy as np
    from scipy import stats

    d = np.asarray(diffs, dtype=float)
    if clusters is None:
        sums, counts = d, np.ones_like(d)
    else:
        labels = list(dict.fromkeys(clusters))
        idx = np.array([labels.index(c) for c in clusters])
        sums = np.bincount(idx, weights=d, minlength=len(labels))
        counts = np.bincount(idx, minlength=len(labels)).astype(float)
    if len(sums) < 2:
        return (math.nan, math.nan)
    if np.all(d == d[0]):
        return (float(d[0]), float(d[0]))  # every resample gives the same mean

    def ratio(s: np.ndarray[Any, Any], c: np.ndarray[Any, Any], axis: int = -1) -> Any:
        return s.sum(axis=axis) / c.sum(axis=axis)

    res = stats.bootstrap(
        (sums, counts), ratio, paired=True, vectorized=True, confidence_level=confidence,
        n_resamples=n_resamples, method="percentile", rng=np.random.default_rng(seed),
    )  # fmt: skip
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


def _wilcoxon(d: np.ndarray[Any, Any]) -> tuple[float, str]:
    import numpy as np
    from scipy import stats

    if len(d) < 2:
        return (math.nan, "no test on fewer than 2 tasks")
    if np.all(d == 0):
        return (1.0, "every paired difference is 0")
    return (float(stats.wilcoxon(d).pvalue), "")


def _pair_row(
    a: pd.DataFrame, b: pd.DataFrame, binary: bool, cluster: str | None, opts: dict[str, Any]
) -> dict[str, Any]:
    """One model pair on one metric: a and b are the two models' task tables, aligned by task."""
    # outer: a task only one model ran counts in n_unknown, as does one with an unknown value
    both = a.merge(b, on="task_id", how="outer", suffixes=("_a", "_b"))
    known = both[(both["k_a"] > 0) & (both["k_b"] > 0)]
    n = len(known)
    d = (known["mean_b"] - known["mean_a"]).to_numpy(dtype=float)
    groups = known["cluster_a"].tolist() if cluster else None
    se = clustered_se(d.tolist(), groups)
    df = (len(set(groups)) if groups is not None else n) - 1
    diff = float(d.mean()) if n else math.nan
    lo, hi = _t_interval(diff, se, df, opts["confidence"])
    sd = float(d.std(ddof=1)) if n >= 2 else math.nan
    row: dict[str, Any] = {
        "mean_a": float(known["mean_a"].mean()) if n else math.nan,
        "mean_b": float(known["mean_b"].mean()) if n else math.nan,
        "diff": diff, "se": se, "ci_low": lo, "ci_high": hi,
        "ci_method": _ci_method(cluster, opts["confidence"]),
        "n_tasks": n, "n_unknown": len(both) - n,
        "n_repeats": int(min(known["k_a"].min(), known["k_b"].min())) if n else 0,
        "effect_size": diff / sd if sd > 0 else math.nan,
        "boot_ci_low": math.nan, "boot_ci_high": math.nan, "a_only": _pd_na(), "b_only": _pd_na(),
    }  # fmt: skip
    if binary:
        a_only, b_only, p = mcnemar_exact(list(known["mean_a"] > 0.5), list(known["mean_b"] > 0.5))
        note = "" if n else "no task with both models known"
        row.update(p_value=p if n else math.nan, test="McNemar exact", a_only=a_only, b_only=b_only)
    else:
        p, note = _wilcoxon(d)
        blo, bhi = paired_bootstrap_ci(d, groups, confidence=opts["confidence"], seed=opts["seed"],
                                       n_resamples=opts["n_resamples"])  # fmt: skip
        row.update(p_value=p, test="Wilcoxon signed-rank", boot_ci_low=blo, boot_ci_high=bhi)
    if n < 2:
        note = f"no CI on {n} task(s)" + (f"; {note}" if note and n else "")
    row["note"] = note
    return row


def _pd_na() -> Any:
    import pandas as pd

    return pd.NA


def paired_tests(
    runs: Any,
    metrics: Sequence[str] | None = None,
    *,
    models: Sequence[str] | None = None,
    cluster: str | None = None,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per model pair x metric: B minus A on the same tasks, with CI, test, Holm p, effect size.

    ``models`` fixes the order (pairs are (A, B) with A earlier; default: order of first appearance).
    ``diff`` is mean_b - mean_a over tasks both models have a known value for; ``ci_low`` /
    ``ci_high`` are the t interval stated in ``ci_method``; ``p_value`` comes from ``test``
    (McNemar exact for binary scores, Wilcoxon signed-rank otherwise) and ``p_holm`` is Holm-adjusted
    across the pairs of that metric. ``effect_size`` is Cohen's d_z (mean / sd of the paired
    differences). The frame's ``attrs["method"]`` says the same in one paragraph.
    """
    runs = _runs_of(runs, "paired_tests")
    names = _metrics_of(runs, metrics)
    _check_runs(runs, [*names, *([cluster] if cluster else [])])
    import pandas as pd

    order = list(models) if models is not None else list(dict.fromkeys(runs["model"].tolist()))
    unknown = sorted(set(order) - set(runs["model"].tolist()))
    if unknown or len(order) < 2:
        raise ConfigError(
            f"paired_tests needs two or more models of the frame, got {order} (unknown: {unknown})"
        )
    opts = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    rows: list[dict[str, Any]] = []
    for metric in names:
        table = _task_table(runs, metric, cluster)
        binary = is_binary(runs[metric])
        per = {m: t.drop(columns="model") for m, t in table.groupby("model", sort=False)}
        block = [
            {"model_a": a, "model_b": b, "metric": metric, **_pair_row(per[a], per[b], binary, cluster, opts)}
            for a, b in combinations(order, 2)
        ]
        for r, p in zip(block, holm_adjust([r["p_value"] for r in block]), strict=True):
            r["p_holm"] = p
        rows.extend(block)
    out = pd.DataFrame(rows)
    out["a_only"] = out["a_only"].astype("Int64")
    out["b_only"] = out["b_only"].astype("Int64")
    out.attrs["method"] = METHOD
    return out


METHOD = (
    "Paired over tasks (Miller 2024, arXiv:2411.00640): repeats are averaged per task; diff = mean over "
    "tasks of (B - A); SE from the paired differences (clustered when a cluster column is given); CI: "
    "Student t on tasks - 1 (or clusters - 1) df. Binary scores: McNemar exact (binomial test on "
    "discordant tasks, a task solved when its repeats' mean > 0.5). Other metrics: Wilcoxon signed-rank "
    "and a percentile paired bootstrap CI (boot_ci_*). p_holm: Holm across the pairs of each metric. "
    "effect_size: Cohen's d_z. Unknown values leave the task out (n_unknown), never 0."
)


# ---------------------------------------------------------------- power


def tasks_needed(
    delta: float,
    *,
    omega2: float,
    sigma2_a: float = 0.0,
    sigma2_b: float = 0.0,
    repeats_a: int = 1,
    repeats_b: int = 1,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int:
    """Tasks needed to detect a true difference ``delta`` (two-sided ``alpha``, given ``power``).

    Miller's sample-size formula for paired differences:
    n = (z_{1-alpha/2} + z_{power})^2 * (omega2 + sigma2_a / K_a + sigma2_b / K_b) / delta^2, where
    ``omega2`` is the variance across tasks of the difference in the models' expected per-task scores
    and ``sigma2_*`` the within-task variances of single runs (for a 0/1 score, mean of p(1 - p)).
    """
    if delta == 0 or not 0 < alpha < 1 or not 0 < power < 1 or min(repeats_a, repeats_b) < 1:
        raise ConfigError(f"tasks_needed: delta must be non-zero, alpha and power in (0, 1), repeats >= 1 "
                          f"(got delta={delta}, alpha={alpha}, power={power})")  # fmt: skip
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    var = omega2 + sigma2_a / repeats_a + sigma2_b / repeats_b
    return max(2, math.ceil(z * z * var / (delta * delta)))


def tasks_needed_observed(
    runs: Any,
    model_a: str,
    model_b: str,
    metric: str,
    delta: float,
    *,
    repeats: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int:
    """:func:`tasks_needed` with the variances estimated from a pilot frame of runs.

    The observed variance of the per-task differences is omega2 + sigma2_a/K + sigma2_b/K at the
    pilot's K repeats; sigma2 is estimated from the repeats, so omega2 is what remains (not below 0),
    and ``repeats`` (default: the pilot's) sets K for the planned study. Needs 2+ tasks.
    """
    runs = _runs_of(runs, "tasks_needed_observed")
    _check_runs(runs, [metric])
    table = _task_table(runs, metric, None)
    a, b = (table[table["model"] == m].drop(columns="model") for m in (model_a, model_b))
    both = a.merge(b, on="task_id", suffixes=("_a", "_b"))
    both = both[(both["k_a"] > 0) & (both["k_b"] > 0)]
    if len(both) < 2:
        raise ConfigError(f"tasks_needed_observed: {model_a!r} and {model_b!r} share {len(both)} task(s) "
                          f"with a known {metric}; 2 or more are needed")  # fmt: skip
    k_a, k_b = float(both["k_a"].mean()), float(both["k_b"].mean())
    s2a = float(both["var_a"].mean()) if both["var_a"].notna().any() else 0.0
    s2b = float(both["var_b"].mean()) if both["var_b"].notna().any() else 0.0
    observed = float((both["mean_b"] - both["mean_a"]).var(ddof=1))
    omega2 = max(0.0, observed - s2a / k_a - s2b / k_b)
    k = repeats if repeats is not None else max(1, round(min(k_a, k_b)))
    return tasks_needed(delta, omega2=omega2, sigma2_a=s2a, sigma2_b=s2b, repeats_a=k, repeats_b=k,
                        alpha=alpha, power=power)  # fmt: skip


# ---------------------------------------------------------------- the sentence


def _fmt_p(p: float) -> str:
    if math.isnan(p):
        return "p not computed"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _fmt_num(x: float, percent: bool) -> str:
    return f"{abs(x) * 100:.0f}" if percent else f"{abs(x):.3g}"


def state_finding(
    table: pd.DataFrame, model_a: str, model_b: str, metric: str, *, cost: str = "total_cost_usd"
) -> str:
    """The sentence a researcher can paste, from a :func:`paired_tests` frame.

    E.g. "B solves 12 percentage points more tasks than A (95% CI 4 to 20 points, McNemar exact p = 0.003,
    Holm p = 0.009, n = 60 tasks x 3 repeats), at 1.8x the cost." A binary score is said in
    percentage points (not "12% more", which reads as relative); the cost ratio is mean_b / mean_a of
    ``cost`` when that row exists and both means are known, else "cost unknown".
    """
    row = _row(table, model_a, model_b, metric)
    binary = row["test"] == "McNemar exact"
    diff = float(row["diff"])
    if binary:
        more = "more" if diff >= 0 else "fewer"
        head = f"{model_b} solves {_fmt_num(diff, True)} percentage points {more} tasks than {model_a}"
    else:
        more = "higher" if diff >= 0 else "lower"
        head = f"{model_b}'s mean {metric} is {_fmt_num(diff, False)} {more} than {model_a}'s"
    if math.isnan(row["ci_low"]):
        ci = f"CI not reported: {row['note']}"
    else:
        level = row["ci_method"].split()[1]
        lo, hi = (f"{row[c] * 100:.0f}" if binary else f"{row[c]:.3g}" for c in ("ci_low", "ci_high"))
        ci = f"{level} CI {lo} to {hi}" + (" points" if binary else "")
    tests = f"{row['test']} {_fmt_p(float(row['p_value']))}"
    if not math.isnan(row["p_holm"]) and (table["metric"] == metric).sum() > 1:
        tests += f", Holm {_fmt_p(float(row['p_holm']))}"
    n = f"n = {_plural(int(row['n_tasks']), 'task')} x {_plural(int(row['n_repeats']), 'repeat')}"
    return f"{head} ({ci}, {tests}, {n}), {_cost_clause(table, model_a, model_b, cost)}."


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _row(table: pd.DataFrame, model_a: str, model_b: str, metric: str) -> Any:
    hit = table[(table["model_a"] == model_a) & (table["model_b"] == model_b) & (table["metric"] == metric)]
    if len(hit) != 1:
        raise ConfigError(f"no paired_tests row for A={model_a!r}, B={model_b!r}, metric={metric!r} "
                          "(pairs are ordered as the models were given)")  # fmt: skip
    return hit.iloc[0]


def _cost_clause(table: pd.DataFrame, model_a: str, model_b: str, cost: str) -> str:
    hit = table[(table["model_a"] == model_a) & (table["model_b"] == model_b) & (table["metric"] == cost)]
    if len(hit) != 1:
        return "cost unknown"
    a, b = float(hit.iloc[0]["mean_a"]), float(hit.iloc[0]["mean_b"])
    if math.isnan(a) or math.isnan(b) or a <= 0:
        return "cost unknown" if math.isnan(a) or math.isnan(b) else f"at ${b:.4g} per task against ${a:.4g}"
    return f"at {b / a:.1f}x the cost"
