"""Paired statistics: scipy's own results on fixed data, Holm's textbook example, clustered SEs by hand."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats  # type: ignore[import-untyped]

from agentlab.errors import ConfigError
from agentlab.evals.stats import (
    clustered_se,
    holm_adjust,
    mcnemar_exact,
    model_means,
    paired_bootstrap_ci,
    paired_tests,
    state_finding,
    tasks_needed,
    tasks_needed_observed,
)


def runs_frame(values: dict[str, list[list[Any]]], **extra: list[Any]) -> pd.DataFrame:
    """``values[model][task] = [repeat values]`` of one metric ``m`` as a tidy runs frame.

    ``extra`` adds per-task columns (one value per task), e.g. a cluster.
    """
    rows = []
    for model, tasks in values.items():
        for t, reps in enumerate(tasks):
            for r, v in enumerate(reps):
                row = {"task_id": f"t{t}", "model": model, "repeat": r, "m": v}
                row.update({k: col[t] for k, col in extra.items()})
                rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ McNemar


def test_mcnemar_is_scipys_binomial_test_on_the_discordant_tasks() -> None:
    a = [1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0]
    b = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1]  # B only: 6, A only: 1
    table = paired_tests(runs_frame({"A": [[v] for v in a], "B": [[v] for v in b]}), ["m"])
    row = table.iloc[0]
    assert row["test"] == "McNemar exact"
    assert (row["a_only"], row["b_only"]) == (1, 6)
    assert row["p_value"] == stats.binomtest(6, 7, p=0.5).pvalue
    assert row["p_value"] == pytest.approx(16 / 128)  # 2 * P(X >= 6 | n = 7, p = 1/2), by hand


def test_mcnemar_per_task_outcome_is_a_strict_majority_of_repeats() -> None:
    # 2 of 3 solved -> solved; 1 of 2 (a tie) -> not solved
    assert mcnemar_exact([True, False], [True, True])[:2] == (0, 1)
    frame = runs_frame({"A": [[0, 0, 1], [1, 0]], "B": [[1, 1, 0], [1, 0]]})
    row = paired_tests(frame, ["m"]).iloc[0]
    assert (row["a_only"], row["b_only"]) == (0, 1)
    assert row["p_value"] == 1.0  # one discordant task: binomtest(1, 1) = 1


def test_no_discordant_task_gives_p_one() -> None:
    assert mcnemar_exact([True, False], [True, False]) == (0, 0, 1.0)


# ------------------------------------------------------------------ continuous: Wilcoxon, bootstrap

A_LAT = [3.1, 2.4, 5.0, 4.2, 1.9, 6.3, 2.2, 3.8]
B_LAT = [2.0, 2.9, 3.1, 3.0, 1.1, 4.0, 2.5, 2.6]


def test_wilcoxon_and_bootstrap_are_scipys_on_the_same_data_and_seed() -> None:
    frame = runs_frame({"A": [[v] for v in A_LAT], "B": [[v] for v in B_LAT]})
    row = paired_tests(frame, ["m"], seed=7).iloc[0]
    d = np.array(B_LAT) - np.array(A_LAT)
    assert row["test"] == "Wilcoxon signed-rank"
    assert row["p_value"] == stats.wilcoxon(d).pvalue
    ref = stats.bootstrap((d,), np.mean, method="percentile", n_resamples=9999,
                          rng=np.random.default_rng(7)).confidence_interval  # fmt: skip
    assert (row["boot_ci_low"], row["boot_ci_high"]) == pytest.approx((ref.low, ref.high), rel=1e-12)
    assert row["diff"] == pytest.approx(d.mean())
    assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1))
    se = d.std(ddof=1) / math.sqrt(len(d))
    t = stats.t.ppf(0.975, len(d) - 1)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((d.mean() - t * se, d.mean() + t * se))
    assert stats.ttest_rel(B_LAT, A_LAT).confidence_interval().low == pytest.approx(row["ci_low"])


def test_the_paired_se_is_the_se_of_the_differences_not_of_the_two_means() -> None:
    # strongly correlated models: the unpaired SE (from the two SEs) would be far wider
    frame = runs_frame({"A": [[v] for v in A_LAT], "B": [[v + 0.5] for v in A_LAT]})
    row = paired_tests(frame, ["m"]).iloc[0]
    assert row["se"] == pytest.approx(0.0, abs=1e-12)
    assert (row["boot_ci_low"], row["boot_ci_high"]) == pytest.approx((0.5, 0.5))


def test_cluster_bootstrap_resamples_whole_clusters() -> None:
    d = [1.0, 1.0, 5.0, 5.0]
    lo, hi = paired_bootstrap_ci(d, ["x", "x", "y", "y"], n_resamples=999)
    # two clusters of 2: the resampled means can only be 1, 3 or 5
    assert (lo, hi) == (1.0, 5.0)


# ------------------------------------------------------------------ Holm


def test_holm_on_the_textbook_example() -> None:
    # Holm-Bonferroni's textbook example (Wikipedia; R: p.adjust(c(.01, .04, .03, .005), "holm"))
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_keeps_nan_out_of_the_family_and_caps_at_one() -> None:
    out = holm_adjust([0.5, math.nan, 0.2])
    assert out[0] == pytest.approx(0.5) and math.isnan(out[1]) and out[2] == pytest.approx(0.4)
    assert holm_adjust([0.6, 0.7]) == [1.0, 1.0]


def test_holm_is_applied_across_the_pairs_of_a_metric() -> None:
    lat = {"A": [[v] for v in A_LAT], "B": [[v] for v in B_LAT], "C": [[v * 2] for v in A_LAT]}
    table = paired_tests(runs_frame(lat), ["m"])
    assert list(zip(table["model_a"], table["model_b"], strict=True)) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert table["p_holm"].tolist() == pytest.approx(holm_adjust(table["p_value"].tolist()))


# ------------------------------------------------------------------ clustered SE, repeats


def test_clustered_se_on_a_constructed_example() -> None:
    # s = 1, 1, 0, 0, mean 1/2: SE_CLT^2 = (4 * 1/4 / 3) / 4 = 1/12; the two clusters add
    # 1/n^2 * (2 * 1/4 + 2 * 1/4) = 1/16 (Miller's clustered formula): SE^2 = 7/48
    assert clustered_se([1, 1, 0, 0], ["a", "a", "b", "b"]) == pytest.approx(math.sqrt(7 / 48))
    assert clustered_se([1, 1, 0, 0], None) == pytest.approx(math.sqrt(1 / 12))
    assert clustered_se([1, 1, 0, 0], ["a", "b", "c", "d"]) == pytest.approx(math.sqrt(1 / 12))
    assert math.isnan(clustered_se([1.0]))


def test_model_means_with_a_cluster_column() -> None:
    frame = runs_frame({"A": [[1], [1], [0], [0]]}, passage=["a", "a", "b", "b"])
    row = model_means(frame, ["m"], cluster="passage").iloc[0]
    assert row["se"] == pytest.approx(math.sqrt(7 / 48))
    t = stats.t.ppf(0.975, 1)  # two clusters: one degree of freedom
    assert row["ci_high"] == pytest.approx(0.5 + t * math.sqrt(7 / 48))
    assert "clustered" in row["ci_method"]


def test_paired_differences_with_clusters() -> None:
    a = [[1.0], [2.0], [3.0], [5.0], [8.0], [13.0]]
    b = [[1.5], [2.0], [4.0], [5.5], [9.5], [13.0]]
    frame = runs_frame({"A": a, "B": b}, passage=["p", "p", "q", "q", "r", "r"])
    row = paired_tests(frame, ["m"], cluster="passage").iloc[0]
    d = [0.5, 0.0, 1.0, 0.5, 1.5, 0.0]
    se = clustered_se(d, ["p", "p", "q", "q", "r", "r"])
    assert row["se"] == pytest.approx(se) and se != pytest.approx(clustered_se(d))
    t = stats.t.ppf(0.975, 2)  # three clusters: two degrees of freedom
    assert row["ci_high"] == pytest.approx(np.mean(d) + t * se)
    assert "clustered by 'passage'" in row["ci_method"]


def test_millers_table_1_setup_gives_the_bernoulli_clt_se() -> None:
    # Miller's fictional evals (Table 1): MATH 65.5% of 5,000 questions, HumanEval 83.6% of 164.
    # For a 0/1 score the CLT SE is sqrt(p (1 - p) / n), up to the n / (n - 1) of the sample variance.
    for p, n in ((0.655, 5000), (0.836, 164), (0.753, 2500)):
        k = round(p * n)
        frame = runs_frame({"G": [[1]] * k + [[0]] * (n - k)})
        row = model_means(frame, ["m"]).iloc[0]
        p_hat = k / n
        assert row["se"] == pytest.approx(math.sqrt(p_hat * (1 - p_hat) / n) * math.sqrt(n / (n - 1)))
    assert row["se"] == pytest.approx(0.0086, abs=5e-5)  # MGSM: +/- 1.7 points at 95%


def test_repeats_are_averaged_per_task_and_their_variance_is_reported() -> None:
    frame = runs_frame({"A": [[1, 0, 1], [0, 0, 0], [1, 1, 1], [1, 0, 0]]})
    row = model_means(frame, ["m"]).iloc[0]
    per_task = np.array([2 / 3, 0, 1, 1 / 3])
    assert row["mean"] == pytest.approx(per_task.mean())
    assert row["se"] == pytest.approx(per_task.std(ddof=1) / 2)  # 4 tasks, not 12 runs
    assert (row["n_tasks"], row["n_repeats"]) == (4, 3)
    assert row["within_task_var"] == pytest.approx(np.mean([1 / 3, 0, 0, 1 / 3]))


# ------------------------------------------------------------------ unknowns, small n, bad input


def test_unknown_costs_stay_unknown() -> None:
    frame = runs_frame({"A": [[0.01], [0.02], [0.03]], "B": [[None], [None], [None]]})
    row = paired_tests(frame, ["m"]).iloc[0]
    assert math.isnan(row["mean_b"]) and math.isnan(row["diff"]) and math.isnan(row["ci_low"])
    assert (row["n_tasks"], row["n_unknown"]) == (0, 3)
    means = model_means(frame, ["m"]).set_index("model")
    assert math.isnan(means.loc["B", "mean"]) and means.loc["A", "mean"] == pytest.approx(0.02)


def test_a_task_only_one_model_ran_is_left_out_and_counted() -> None:
    frame = runs_frame({"A": [[1.0], [2.0], [4.0]], "B": [[2.0], [2.5]]})
    row = paired_tests(frame, ["m"]).iloc[0]
    assert (row["n_tasks"], row["n_unknown"]) == (2, 1)
    assert row["diff"] == pytest.approx(0.75)


def test_no_ci_on_one_task() -> None:
    row = paired_tests(runs_frame({"A": [[1.0, 2.0]], "B": [[3.0, 4.0]]}), ["m"]).iloc[0]
    assert row["diff"] == 2.0
    assert all(math.isnan(row[c]) for c in ("ci_low", "ci_high", "boot_ci_low", "p_value", "se"))
    assert row["note"].startswith("no CI on 1 task")


def test_bad_input_is_one_typed_line() -> None:
    with pytest.raises(ConfigError, match=r"lacks column\(s\) \['repeat'\]"):
        paired_tests(pd.DataFrame({"task_id": [], "model": [], "m": []}), ["m"])
    with pytest.raises(ConfigError, match="DataFrame"):
        paired_tests([1, 2], ["m"])
    with pytest.raises(ConfigError, match="metric column 'm' holds a non-numeric value: 'fast'"):
        paired_tests(runs_frame({"A": [["fast"]], "B": [[1.0]]}), ["m"])
    with pytest.raises(ConfigError, match="two or more models"):
        paired_tests(runs_frame({"A": [[1]]}), ["m"])


# ------------------------------------------------------------------ power


def test_tasks_needed_is_millers_formula_by_hand() -> None:
    # (1.959964 + 0.841621)^2 * 0.1 / 0.05^2 = 313.96 -> 314 tasks
    assert tasks_needed(0.05, omega2=0.1) == 314
    # a within-task variance of 0.2 per side, halved by 2 repeats, adds 0.2: (0.3 / 0.1) x 313.96
    assert tasks_needed(0.05, omega2=0.1, sigma2_a=0.2, sigma2_b=0.2, repeats_a=2, repeats_b=2) == 942
    with pytest.raises(ConfigError, match="delta must be non-zero"):
        tasks_needed(0.0, omega2=0.1)


def test_tasks_needed_from_observed_variance() -> None:
    frame = runs_frame({"A": [[1, 0], [0, 0], [1, 1], [1, 0]], "B": [[1, 1], [0, 1], [1, 1], [0, 0]]})
    d = np.array([1, 0.5, 1, 0]) - np.array([0.5, 0, 1, 0.5])
    s2a, s2b = (
        float(np.mean([0.5, 0, 0, 0.5])),
        float(np.mean([0, 0.5, 0, 0])),
    )  # mean repeat variance (ddof=1)
    omega2 = d.var(ddof=1) - s2a / 2 - s2b / 2
    assert omega2 > 0
    expected = tasks_needed(0.1, omega2=omega2, sigma2_a=s2a, sigma2_b=s2b, repeats_a=2, repeats_b=2)
    assert tasks_needed_observed(frame, "A", "B", "m", 0.1) == expected
    assert tasks_needed_observed(frame, "A", "B", "m", 0.1, repeats=10) < expected


# ------------------------------------------------------------------ the sentence


def _study() -> pd.DataFrame:
    solved_a = [1, 0, 1, 0, 0, 1, 0, 1, 0, 0]
    solved_b = [1, 1, 1, 1, 0, 1, 1, 1, 1, 0]
    rows = []
    for t in range(10):
        for model, solved, cost in (("A", solved_a, 0.010), ("B", solved_b, 0.018)):
            rows.append({"task_id": f"t{t}", "model": model, "repeat": 0, "score": bool(solved[t]),
                         "total_cost_usd": cost})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_sentence_a_researcher_can_paste() -> None:
    table = paired_tests(_study(), ["score", "total_cost_usd"])
    assert state_finding(table, "A", "B", "score") == (
        "B solves 40 percentage points more tasks than A (95% CI 3 to 77 points, McNemar exact p = 0.125, "
        "n = 10 tasks x 1 repeat), at 1.8x the cost."
    )


def test_the_sentence_says_unknown_cost_and_missing_ci() -> None:
    frame = _study()
    frame.loc[frame["model"] == "B", "total_cost_usd"] = math.nan
    table = paired_tests(frame, ["score", "total_cost_usd"])
    assert state_finding(table, "A", "B", "score").endswith("), cost unknown.")
    small = paired_tests(frame[frame["task_id"] == "t1"], ["score"])
    assert "CI not reported: no CI on 1 task(s)" in state_finding(small, "A", "B", "score")
    with pytest.raises(ConfigError, match="no paired_tests row"):
        state_finding(table, "B", "A", "score")
