"""``spread()``'s intervals for cost, tokens and latency stay where those values can be: at or above 0."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats  # type: ignore[import-untyped]

from agentlab.sweeps.analysis import load_results, spread
from agentlab.sweeps.store import ROW_FIELDS, ResultsFile

# three repeats of one model, one slow outlier: a Student t interval on them reaches -10.9 s
LATENCIES = (0.61, 0.72, 11.2)


def _row(repeat: int, latency: float) -> dict[str, object]:
    row: dict[str, object] = {k: None for k in ROW_FIELDS if k != "v"}
    row.update(task_id="t", model="openai:m", setting="s", repeat=repeat, provider="openai",
               status="completed", steps=1, tool_calls=0, input_tokens=100, cache_read_tokens=0,
               cache_write_tokens=0, output_tokens=50 + 400 * (latency > 5),
               reasoning_tokens=40 + 400 * (latency > 5), total_cost_usd=0.001 + 0.01 * (latency > 5),
               latency_s=latency, success=True)  # fmt: skip
    return row


def test_the_interval_of_skewed_non_negative_repeats_is_not_below_zero(tmp_path: Path) -> None:
    with ResultsFile(tmp_path / "r.jsonl", fsync=False) as f:
        for i, v in enumerate(LATENCIES):
            f.append(_row(i, v))
    sp = spread(load_results(tmp_path / "r.jsonl"), by=("model",)).loc["openai:m"]
    for metric in ("latency_s", "total_cost_usd", "output_tokens", "reasoning_tokens"):
        assert sp[f"{metric}_ci_low"] >= 0, metric  # on main (a t interval): latency -10.9 s
        assert sp[f"{metric}_ci_low"] <= sp[f"{metric}_mean"] <= sp[f"{metric}_ci_high"]
    assert sp["latency_s_mean"] == pytest.approx(np.mean(LATENCIES))
    # the method: scipy's percentile bootstrap of the mean, fixed seed, within the observed range
    ref = stats.bootstrap((np.array(LATENCIES),), np.mean, method="percentile", n_resamples=9999,
                          rng=np.random.default_rng(0)).confidence_interval  # fmt: skip
    assert (sp["latency_s_ci_low"], sp["latency_s_ci_high"]) == pytest.approx((ref.low, ref.high))
    assert min(LATENCIES) <= sp["latency_s_ci_low"] and sp["latency_s_ci_high"] <= max(LATENCIES)
