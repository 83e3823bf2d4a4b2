"""A 10,000-run sweep on the simulated providers: wall time, memory over time, results load time.

Why: a sweep must keep results on disk, not in memory, so its memory stays flat however many runs
it does, and the results file must load in seconds. This script runs the shipped task set x four
simulated models x the continuity arms (``continuity_settings()``) x enough repeats for ``--runs``,
samples the process's resident memory every half second, and prints the figures. ``--time-limit``
stops it cleanly (like Ctrl-C; finished rows stay) and the output then says how far it got and
extrapolates, labelled as such; ``--resume`` continues an earlier file.

    python bench/sweep_scale.py --runs 10000 --time-limit 300 --out /tmp/sweep10k.jsonl
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._util import rss_mb

MODELS = [
    "openai:sim-reasoner",
    "openai:sim-reasoner-mini",
    "anthropic:sim-thinker",
    "anthropic:sim-thinker-legacy",
]


class TimeUp(Exception):
    """Raised from the progress callback to stop the sweep at the time limit."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds; 0 = none")
    ap.add_argument("--out", type=Path, default=Path("/tmp/agentlab_sweep_scale.jsonl"))
    ap.add_argument("--concurrency", type=int, default=8, help="runs in flight per provider")
    ap.add_argument("--no-fsync", action="store_true", help="flush without fsync per row")
    ap.add_argument("--resume", action="store_true", help="keep an existing results file")
    args = ap.parse_args(argv)

    from agentlab.sweeps import continuity_settings, load_results, sim_tasks, sim_tools, summarize, sweep

    tasks = sim_tasks()
    settings = continuity_settings()
    arms = sum(1 for m in MODELS for s in settings if s.applies_to(m.split(":")[0]))
    repeats = math.ceil(args.runs / (len(tasks) * arms))
    planned = len(tasks) * arms * repeats
    if args.out.exists() and not args.resume:
        args.out.unlink()
    print(
        f"plan: {len(tasks)} tasks x {arms} model/setting arms x {repeats} repeats = {planned:,} runs; "
        f"concurrency {args.concurrency}/provider; fsync per row: {not args.no_fsync}; file {args.out}"
    )

    samples: list[tuple[float, float, int]] = []  # (seconds, RSS MB, rows done)
    done = [0]
    stop = threading.Event()
    t0 = time.monotonic()

    def sampler() -> None:
        while not stop.wait(0.5):
            samples.append((time.monotonic() - t0, rss_mb(), done[0]))

    th = threading.Thread(target=sampler, daemon=True)
    rss_start = rss_mb()
    th.start()

    def on_progress(p: object) -> None:
        done[0] = p.done  # type: ignore[attr-defined]
        if args.time_limit and time.monotonic() - t0 > args.time_limit:
            raise TimeUp

    finished = True
    try:
        sweep(
            tasks,
            MODELS,
            results=args.out,
            tools=sim_tools(),
            settings=settings,
            repeats=repeats,
            concurrency=args.concurrency,
            progress=None,
            on_progress=on_progress,
            fsync=not args.no_fsync,
        )
    except TimeUp:
        finished = False
    wall = time.monotonic() - t0
    stop.set()
    th.join()
    samples.append((wall, rss_mb(), done[0]))

    import pandas  # noqa: F401 - imported before timing, so the load time is the file's, not pandas'

    t = time.perf_counter()
    df = load_results(args.out)
    load_s = time.perf_counter() - t
    rss_after_load = rss_mb()
    t = time.perf_counter()
    summary = summarize(df)
    summary_s = time.perf_counter() - t
    rows = len(df)
    size_mb = args.out.stat().st_size / 1e6

    how = "finished" if finished else "stopped at the time limit"
    print(f"\n{how}: {done[0]:,} runs this call, {rows:,} in the file")
    print(f"wall time: {wall:.1f} s ({done[0] / wall:.1f} runs/s)")
    print(f"RSS: {rss_start:.0f} MB before the sweep; over the sweep (time s, RSS MB, runs done):")
    step = max(1, len(samples) // 10)
    for s_t, s_rss, s_done in samples[::step] + ([samples[-1]] if (len(samples) - 1) % step else []):
        print(f"  {s_t:7.1f} s  {s_rss:7.1f} MB  {s_done:7,d}")
    later = [r for _, r, d in samples if d >= max(1, done[0] // 10)]
    if later:
        print(
            f"RSS after the first 10% of runs: min {min(later):.1f} MB, max {max(later):.1f} MB "
            f"(growth {max(later) - min(later):.1f} MB over the remaining 90%)"
        )
    print(
        f"peak RSS (ru_maxrss, whole process incl. loading the file into pandas): "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MB; "
        f"RSS after loading: {rss_after_load:.1f} MB"
    )
    print(f"results file: {size_mb:.1f} MB; load_results: {load_s:.2f} s; summarize: {summary_s:.2f} s")
    if not finished and done[0]:
        rate = done[0] / wall
        print(
            f"EXTRAPOLATED (not measured): {planned:,} runs at this rate would take "
            f"{planned / rate / 60:.1f} min; the file would be about {size_mb / rows * planned:.1f} MB"
        )
    cols = ["runs", "success_rate", "mean_steps", "mean_tool_calls", "cost_per_solved_usd"]
    print(summary[cols].to_string())
    print(f"cpu count: {os.cpu_count()}, load average: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
