"""Summary statistics, charts and the progress displays: checked against known values."""

from __future__ import annotations

import io
import math
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from agentlab.notebook.progress import WidgetProgress
from agentlab.sweeps import (
    SweepProgress,
    TextProgress,
    load_results,
    plot_cost_per_solved,
    plot_reasoning_share,
    plot_success_rate,
    summarize,
    wilson_interval,
)
from agentlab.sweeps.store import ROW_FIELDS, ResultsFile


def test_wilson_interval_known_values() -> None:
    # Reference values (z = 1.96): Wilson (1927); also statsmodels proportion_confint(method="wilson").
    lo, hi = wilson_interval(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and round(hi, 4) == 0.2775
    lo, hi = wilson_interval(10, 10)
    assert round(lo, 4) == 0.7225 and hi == 1.0
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def _row(**kw: object) -> dict[str, object]:
    base: dict[str, object] = {k: None for k in ROW_FIELDS if k != "v"}
    base.update(
        task_id="t",
        model="openai:m",
        setting="s",
        repeat=0,
        provider="openai",
        status="completed",
        steps=2,
        tool_calls=1,
        input_tokens=100,
        cache_read_tokens=0,
        cache_write_tokens=0,
        output_tokens=50,
        reasoning_tokens=40,
        total_cost_usd=0.01,
        latency_s=0.1,
    )
    base.update(kw)
    return base


def test_summary_conventions(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    with ResultsFile(out, fsync=False) as f:
        f.append(_row(task_id="a", success=True))
        f.append(_row(task_id="b", success=False))
        f.append(
            _row(
                task_id="c",
                success=None,
                status="failed",
                steps=0,
                tool_calls=0,
                output_tokens=0,
                reasoning_tokens=0,
                input_tokens=0,
                total_cost_usd=0.0,
                error_type="ProviderServerError",
            )
        )
        f.append(
            _row(
                task_id="d",
                success=True,
                model="anthropic:legacy",
                provider="anthropic",
                reasoning_tokens=None,
            )
        )  # unknown reasoning figure
        f.append(_row(task_id="a", success=True, total_cost_usd=0.02))  # a retry of key a: last row wins
    df = load_results(out)
    assert len(df) == 4 and len(load_results(out, superseded=True)) == 5
    assert df["reasoning_tokens"].dtype == "Int64" and df["success"].dtype == "boolean"
    s = summarize(df)
    m = s.loc[("openai:m", "s")]
    assert (m["runs"], m["errors"], m["scored"], m["solved"]) == (3, 1, 2, 1)
    assert m["success_rate"] == 0.5
    assert m["total_cost_usd"] == pytest.approx(0.03)  # 0.01 (b) + 0 (c) + 0.02 (a, last row)
    assert m["cost_per_solved_usd"] == pytest.approx(0.03)
    assert m["reasoning_share"] == pytest.approx(80 / 100)
    legacy = s.loc[("anthropic:legacy", "s")]
    assert pd.isna(legacy["reasoning_tokens"]) and pd.isna(legacy["reasoning_share"])  # <NA>, never 0
    by_model = summarize(df, by=["model"])
    assert list(by_model.index) == ["openai:m", "anthropic:legacy"]
    with pytest.raises(KeyError, match="cannot group"):
        summarize(df, by=["nope"])


def test_charts_return_labelled_axes(tmp_path: Path) -> None:
    idx = pd.MultiIndex.from_tuples(
        [("openai:a", "verbatim"), ("openai:a", "drop"), ("anthropic:b", "verbatim")],
        names=["model", "setting"],
    )
    s = pd.DataFrame(
        {
            "success_rate": [1.0, 0.5, math.nan],
            "success_ci_low": [0.7, 0.2, math.nan],
            "success_ci_high": [1.0, 0.8, math.nan],
            "cost_per_solved_usd": [0.01, math.nan, 0.02],
            "reasoning_share": [0.8, 0.9, 0.7],
        },
        index=idx,
    )
    ax = plot_success_rate(s)
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["100%", "n/a", "50%"] and ax.get_ylabel().startswith("success rate")
    legend = ax.get_legend()
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["verbatim", "drop"]
    _fig, axes = plt.subplots(1, 2)
    assert plot_cost_per_solved(s, ax=axes[0]) is axes[0]
    assert "n/a" in [t.get_text() for t in axes[0].texts]
    assert plot_reasoning_share(s, ax=axes[1]).get_title()
    plt.close("all")


def test_text_and_widget_progress() -> None:
    p = SweepProgress(total=10, from_file=2, done=4, running=2, failed=1, cost_usd=0.5, elapsed_s=8.0)
    assert p.remaining == 4 and p.eta_s == pytest.approx(8.0)
    line = p.line()
    assert (
        "sweep 6/10 done (2 from file)" in line
        and "1 failed" in line
        and "$0.5000" in line
        and "ETA 0:08" in line
    )
    # Money in the one format of the tables and charts (fmt_usd), whatever the magnitude.
    for usd, shown in ((0.005556, "$0.005556"), (12.3456, "$12.35"), (1234.5, "$1,234.50"), (0.0, "$0")):
        assert f"· {shown} ·" in SweepProgress(total=1, cost_usd=usd).line()
    buf = io.StringIO()
    tp = TextProgress(buf, interval_s=10)
    tp.update(p)
    tp.update(p)  # throttled
    tp.update(p, final=True)  # always drawn
    assert buf.getvalue().count("\r") == 2 and buf.getvalue().endswith("\n")
    w = WidgetProgress(interval_s=0)
    w.update(p, final=True)
    assert (w.bar.max, w.bar.value) == (10, 6) and "6/10" in w.label.value and w.bar.bar_style == "warning"


def test_sweeps_import_stays_light() -> None:
    code = (
        "import sys\nfrom agentlab.sweeps import sweep, Task, Setting, load_tasks\n"
        "heavy = ('pandas', 'openai', 'anthropic', 'ipywidgets', 'matplotlib')\n"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_sweeps_namespace_is_complete_and_sorted() -> None:
    import agentlab
    import agentlab.sweeps as sw

    assert sw.__all__ == sorted(sw.__all__)
    for name in sw.__all__:
        assert getattr(sw, name) is not None, name
    assert agentlab.sweep is sw.sweep and agentlab.summarize_sweep is sw.summarize
