"""A batch sweep on the simulator (``backend="batch"``): rounds, wall time, driver memory, file sizes.

The simulator runs as its own process on loopback (as a provider does: its memory is not the
driver's), with its batch clock compressed (``AGENTLAB_SIM_BATCH_SECONDS``, default here 2 s per
batch). The driver holds every run in flight (``--runs-in-flight``, the batch backend's ``runs``
option) with its continuation in memory; the figures say what that costs. ``--asyncio N`` also
runs the first N runs of the same plan on the live (asyncio) backend against the same server, side by
side, so the two can be compared on this machine in one run.

    python bench/sweep_batch.py --runs 10000
    python bench/sweep_batch.py --runs 2000 --asyncio 2000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._util import rss_mb  # noqa: E402  (after the path insert: run as a script)

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker"]


def _serve(batch_seconds: float) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AGENTLAB_SIM_BATCH_SECONDS": str(batch_seconds)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentlab.sim", "serve", "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )
    assert proc.stdout is not None
    m = re.search(r"http://127\.0\.0\.1:(\d+)", proc.stdout.readline())
    if not m:
        proc.kill()
        raise SystemExit("the loopback simulator did not start")
    return proc, m.group(0)


def _factory(url: str) -> Any:
    import anthropic
    import openai

    from agentlab.adapters.base import create_adapter

    def make(ref: Any) -> Any:
        c: Any
        if ref.provider == "openai":
            c = openai.AsyncOpenAI(base_url=url + "/v1", api_key="sim-key", timeout=600)
        else:
            c = anthropic.AsyncAnthropic(base_url=url, api_key="sim-key", timeout=600)
        a: Any = create_adapter(ref, client=c)
        a._owns_client = True  # closed by the sweep with its adapter
        return a

    return make


def _plan(runs: int) -> tuple[list[Any], int]:
    from agentlab.sweeps import sim_tasks

    tasks = sim_tasks()
    repeats = math.ceil(runs / (len(tasks) * len(MODELS)))
    return tasks, repeats


def _run(backend: str, out: Path, url: str, runs: int, in_flight: int) -> dict[str, Any]:
    from agentlab.sweeps import load_results, sim_tools, sweep
    from agentlab.sweeps.batch.manifest import journal_path, manifest_path

    tasks, repeats = _plan(runs)
    for p in (out, manifest_path(out), journal_path(out)):
        p.unlink(missing_ok=True)
    peak = [rss_mb()]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.25):
            peak[0] = max(peak[0], rss_mb())

    th = threading.Thread(target=sample, daemon=True)
    rss0 = rss_mb()
    th.start()
    t0 = time.monotonic()
    kw: dict[str, Any] = {"backend": "batch", "batch": {"runs": in_flight, "poll_s": 0.25, "poll_max_s": 2.0}}
    if backend == "asyncio":
        kw = {"concurrency": 16}
    rep = sweep(tasks, MODELS, results=out, tools=sim_tools(), repeats=repeats, progress=None,
                adapter_factory=_factory(url), fsync=False, **kw)
    wall = time.monotonic() - t0
    stop.set()
    th.join()
    df = load_results(out)
    fig: dict[str, Any] = {
        "backend": backend,
        "runs": len(df),
        "status": rep.status,
        "failed": int((df["status"] == "failed").sum()),
        "solved": int(df["success"].fillna(False).sum()),
        "wall_s": round(wall, 2),
        "runs_per_s": round(len(df) / wall, 1),
        "rss_start_mb": round(rss0, 1),
        "rss_peak_mb": round(peak[0], 1),
        "results_bytes": out.stat().st_size,
        "cost_usd": round(float(df["total_cost_usd"].sum()), 4),
    }
    if backend == "batch":
        recs = [json.loads(x) for x in manifest_path(out).read_text().splitlines()]
        sub = [r for r in recs if r["event"] == "submitted"]
        fig.update(
            rounds=max(r["round"] for r in sub),
            batches=len(sub),
            largest_batch=max(r["requests"] for r in sub),
            manifest_bytes=manifest_path(out).stat().st_size,
            journal_bytes=journal_path(out).stat().st_size,
        )
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--runs-in-flight", type=int, default=10_000, help="per provider (batch runs=)")
    ap.add_argument("--batch-seconds", type=float, default=2.0, help="simulated time each batch takes")
    ap.add_argument("--asyncio", type=int, default=0, help="also run N runs on the asyncio backend")
    ap.add_argument("--out", type=Path, default=Path("/tmp/agentlab_sweep_batch.jsonl"))
    args = ap.parse_args(argv)
    proc, url = _serve(args.batch_seconds)
    try:
        figs = [_run("batch", args.out, url, args.runs, args.runs_in_flight)]
        if args.asyncio:
            figs.append(_run("asyncio", args.out.with_name("asyncio_" + args.out.name), url, args.asyncio, 0))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    keys = list(dict.fromkeys(k for f in figs for k in f))
    print("| " + " | ".join(["figure", *[f["backend"] for f in figs]]) + " |")
    print("|" + "---|" * (len(figs) + 1))
    for k in keys:
        if k != "backend":
            print(f"| {k} | " + " | ".join(str(f.get(k, "")) for f in figs) + " |")
    print(json.dumps(figs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
