"""Confidence intervals: Wilson's for a success rate, Student t and bootstrap ones for a mean.

Pure arithmetic (numpy and scipy only inside the bootstrap), in the lowest layer because the charts
draw these intervals as error bars and the sweep analysis puts them in its tables: both read them
from here, so neither reaches up to the other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["bootstrap_mean_interval", "mean_interval", "wilson_interval"]


def wilson_interval(successes: int, n: int, *, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; ``(nan, nan)`` when ``n == 0``."""
    if n <= 0:
        return (math.nan, math.nan)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within 0..n, got {successes} of {n}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # Clamp float noise at the ends (k = 0 gives exactly 0, k = n exactly 1).
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return (lo, hi)


# Two-sided 95% Student t quantiles for 1..30 degrees of freedom; beyond 30 the normal 1.96 is
# within 2% of them. A mean over 3-10 repeats with the normal quantile would be far too narrow.
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042)  # fmt: skip


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean and its 95% Student t interval; unknowns (None/NaN) left out.

    One value gives ``(v, nan, nan)`` (no spread can be estimated from one run); none gives NaNs.
    Why t, not the normal 1.96: repeats are few (3-10), and with n = 3 the t quantile is 4.3.
    """
    xs = [float(v) for v in values if v is not None and not _isnan(v)]
    n = len(xs)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = sum(xs) / n
    if n == 1:
        return (mean, math.nan, math.nan)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    t = _T95[n - 2] if n - 1 <= len(_T95) else 1.959964
    half = t * sd / math.sqrt(n)
    return (mean, mean - half, mean + half)


def bootstrap_mean_interval(
    values: Sequence[float], *, confidence: float = 0.95, n_resamples: int = 9999, seed: int = 0
) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean and its percentile bootstrap interval; unknowns left out.

    For values that cannot be negative (cost, tokens, latency): a percentile interval always lies
    within the observed range, so it never reaches below 0, where a t interval on 3 skewed repeats
    does (-6 s of latency). With 3-5 runs it is narrower than the t interval and covers less than
    its nominal 95%: it says where the mean moved between resamples, not a guarantee. One value
    gives ``(v, nan, nan)``; identical values give a zero-width interval. Fixed ``seed``: the same
    runs give the same interval.
    """
    xs = [float(v) for v in values if v is not None and not _isnan(v)]
    if not xs:
        return (math.nan, math.nan, math.nan)
    mean = sum(xs) / len(xs)
    if len(xs) == 1:
        return (mean, math.nan, math.nan)
    if min(xs) == max(xs):
        return (mean, xs[0], xs[0])
    import numpy as np
    from scipy import stats  # type: ignore[import-untyped]

    ci = stats.bootstrap(
        (np.array(xs),), np.mean, method="percentile", confidence_level=confidence,
        n_resamples=n_resamples, rng=np.random.default_rng(seed),
    ).confidence_interval  # fmt: skip
    return (mean, float(ci.low), float(ci.high))


def _isnan(v: Any) -> bool:
    try:
        return bool(v != v)  # NaN and pd.NA (whose comparison is NA, truthy-error) both count
    except TypeError:
        return True
