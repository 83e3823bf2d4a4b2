"""Section 6: the analysis side at scale: ``usage_frame()`` and the cost charts over 100,000 calls.

Records are real ``CallRecord``s (2,000 runs x 50 steps over four priced models, reasoning tokens
unknown on a few calls), built before timing. Time: median wall time over repetitions. Peak memory:
``tracemalloc`` peak during one separate call (Python allocations; the frame's numpy buffers
included), so timing runs are not slowed by tracing.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from ._util import Section, Target, median

MODELS = [
    ("openai", "responses", "gpt-5.1"),
    ("anthropic", "messages", "claude-sonnet-4-5"),
    ("openai", "responses", "gpt-5-mini"),
    ("anthropic", "messages", "claude-haiku-4-5"),
]


def records(n: int) -> list[Any]:
    import warnings

    from agentlab.costs.pricing import UnpricedModelWarning, price_call
    from agentlab.loop.result import CallRecord
    from agentlab.neutral.usage import CallUsage

    warnings.simplefilter("ignore", UnpricedModelWarning)
    steps = 50
    out = []
    usages: dict[tuple[int, int], tuple[Any, Any]] = {}
    for i in range(n):
        run, step = divmod(i, steps)
        mi = run % len(MODELS)
        provider, api, model = MODELS[mi]
        key = (mi, i % 97)
        if key not in usages:
            k = i % 97
            u = CallUsage(
                input_tokens=1000 + 37 * k,
                cache_read_tokens=500 + 11 * k,
                cache_write_tokens=0 if provider == "openai" else 13 * k,
                output_tokens=400 + 29 * k,
                reasoning_tokens=None if (provider == "anthropic" and k % 31 == 0) else 300 + 17 * k,
            )
            usages[key] = (u, price_call(u, provider, model))
        u, cost = usages[key]
        out.append(
            CallRecord(
                run_id=f"run_{run:06d}",
                step=step + 1,
                provider=provider,
                api=api,
                model=model,
                response_id=f"resp_{i}",
                stop_reason="tool_use" if step < steps - 1 else "end_turn",
                usage=u,
                cost=cost,
                latency_s=1.0 + (i % 13) / 10,
                first_reasoning_s=0.3,
                first_text_s=0.9,
                reasoning_items_dropped=0,
            )
        )
    return out


def _time(fn: Callable[[], Any], reps: int) -> tuple[float, Any]:
    samples = []
    out = None
    for _ in range(reps):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - t0)
    return median(samples), out


def _peak(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def run(quick: bool) -> Section:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from agentlab.costs.frames import usage_frame
    from agentlab.notebook.charts import plot_cost_breakdown, plot_reasoning_per_step

    sec = Section("analysis", "6. usage_frame() and cost charts at scale")
    n = 5_000 if quick else 100_000
    reps = 1 if quick else 5
    t0 = time.perf_counter()
    recs = records(n)
    build_s = time.perf_counter() - t0
    usage_frame(recs[:100])  # warm-up: pandas import
    frame_s, df = _time(lambda: usage_frame(recs), reps)
    frame_mb = _peak(lambda: usage_frame(recs))

    def cost_chart() -> None:
        ax = plot_cost_breakdown(df)
        ax.figure.canvas.draw()
        plt.close("all")

    def per_run_chart() -> None:
        ax = plot_cost_breakdown(df, per_run=True)
        ax.figure.canvas.draw()
        plt.close("all")

    def step_chart() -> None:
        ax = plot_reasoning_per_step(df.head(n // 10))
        ax.figure.canvas.draw()
        plt.close("all")

    cost_chart()  # warm-up: matplotlib fonts
    chart_s, _ = _time(cost_chart, reps)
    chart_mb = _peak(cost_chart)
    per_run_s, _ = _time(per_run_chart, reps)
    step_s, _ = _time(step_chart, 1)
    sec.figures = {
        "records": n,
        "build_records_s": build_s,
        "usage_frame_s": frame_s,
        "usage_frame_peak_mib": frame_mb,
        "cost_chart_s": chart_s,
        "cost_chart_peak_mib": chart_mb,
        "cost_chart_per_run_s": per_run_s,
        "reasoning_per_step_chart_s": step_s,
        "reasoning_per_step_rows": n // 10,
        "repetitions": reps,
    }
    sec.row(
        f"usage_frame() over {n:,} records", f"{frame_s * 1000:.0f} ms, peak {frame_mb:.0f} MiB (tracemalloc)"
    )
    sec.row(
        f"plot_cost_breakdown() over {n:,} rows (drawn)",
        f"{chart_s * 1000:.0f} ms, peak {chart_mb:.0f} MiB; per_run=True {per_run_s * 1000:.0f} ms",
    )
    sec.row(f"plot_reasoning_per_step() over {n // 10:,} rows ({n // 500:,} runs)", f"{step_s * 1000:.0f} ms")
    sec.targets.append(Target(f"usage_frame() over {n:,} records", frame_s, 1.0, "s"))
    return sec
