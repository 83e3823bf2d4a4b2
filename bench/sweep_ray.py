"""Section 10: the same simulated sweep on the asyncio executor and on the Ray executor, side by side.

Why: ``executor="ray"`` moves each run into a Ray task (a worker process builds the adapter, runs the
loop, returns the row). On the simulator a run is pure CPU in one process, so this measures what
the move costs: runs/s of each executor on the same plan, the driver's resident memory (it keeps
only the plan, the results file and the rows in flight under both), the Ray worker processes'
memory, the local cluster's start time, and whether both files agree run by run (status, steps,
tool calls). The plan is ``bench/sweep_scale.py``'s: the shipped task set x four simulated models x
the continuity arms x enough repeats for ``runs``; fsync per row in both.

    python -m bench --only sweep_ray          # section 10 (~400 runs per executor; --quick: 8)
    python bench/sweep_ray.py --runs 10000    # the same, any size, figures printed

The Ray side starts a local cluster with ``num_cpus`` = the machine's cores and gives each task
``--num-cpus`` (default 1: as many runs at once as cores, one per worker process); the asyncio side
runs ``--concurrency`` runs per provider on one event loop. Worker memory is read from ``/proc``
(processes titled ``ray::``), so it is Linux-only (``None`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._util import Section, Target, proc_mb
from bench.sweep_scale import MODELS

COMPARED = ("status", "steps", "tool_calls")


def _ray_workers_mb() -> list[float]:
    """Resident MB of every Ray process titled ``ray::...`` (task workers, idle ones too, the actor)."""
    out: list[float] = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()) if os.path.isdir("/proc") else ():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read(5) != b"ray::":
                    continue
        except OSError:
            continue
        mb = proc_mb(pid)
        if mb is not None:
            out.append(mb)
    return out


class _Sampler:
    """Samples the driver's RSS (and optionally the Ray workers') every 0.2 s while a sweep runs."""

    def __init__(self, workers: bool) -> None:
        self.workers = workers
        self.driver_peak = 0.0
        self.workers_peak_total = 0.0
        self.worker_peak = 0.0
        self.worker_count = 0
        self.driver: list[float] = []
        self._stop = threading.Event()
        self._th = threading.Thread(target=self._loop, daemon=True)

    def _sample(self) -> None:
        rss = proc_mb() or 0.0
        self.driver.append(rss)
        self.driver_peak = max(self.driver_peak, rss)
        if self.workers:
            ws = _ray_workers_mb()
            self.workers_peak_total = max(self.workers_peak_total, sum(ws))
            self.worker_peak = max([self.worker_peak, *ws])
            self.worker_count = max(self.worker_count, len(ws))

    def _loop(self) -> None:
        while not self._stop.wait(0.2):
            self._sample()

    def growth_after_first_tenth(self) -> float:
        """Driver RSS growth over the last 90% of the samples (flat memory: about 0)."""
        later = self.driver[len(self.driver) // 10 :]
        return max(later) - min(later) if later else 0.0

    def __enter__(self) -> _Sampler:
        self._sample()
        self._th.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._th.join()
        self._sample()


def _plan(runs: int) -> dict[str, Any]:
    from agentlab.sweeps import continuity_settings, sim_tasks, sim_tools

    tasks, settings = sim_tasks(), continuity_settings()
    arms = sum(1 for m in MODELS for s in settings if s.applies_to(m.split(":")[0]))
    tasks = tasks[: max(1, math.ceil(runs / arms))]  # fewer runs than one pass: the first tasks only
    repeats = max(1, math.ceil(runs / (len(tasks) * arms)))
    return {"tasks": tasks, "settings": settings, "repeats": repeats, "tools": sim_tools()}


def _one(executor: str, out: Path, plan: dict[str, Any], concurrency: int, num_cpus: float) -> dict[str, Any]:
    from agentlab.sweeps import sweep

    extra: dict[str, Any] = {"ray_options": {"num_cpus": num_cpus}} if executor == "ray" else {}
    with _Sampler(workers=executor == "ray") as s:
        t0 = time.perf_counter()
        rep = sweep(
            plan["tasks"],
            MODELS,
            results=out,
            tools=plan["tools"],
            settings=plan["settings"],
            repeats=plan["repeats"],
            concurrency=concurrency,
            progress=None,
            executor=executor,
            **extra,
        )
        wall = time.perf_counter() - t0
    fig: dict[str, Any] = {
        "runs": rep.ran,
        "failed": rep.failed,
        "wall_s": wall,
        "runs_per_s": rep.ran / wall,
        "driver_peak_rss_mb": s.driver_peak,
        "driver_rss_growth_last_90pct_mb": s.growth_after_first_tenth(),
        "results_mb": out.stat().st_size / 1e6,
    }
    if executor == "ray":
        fig |= {
            "workers": s.worker_count,
            "workers_peak_rss_total_mb": s.workers_peak_total if s.worker_count else None,
            "worker_peak_rss_mb": s.worker_peak if s.worker_count else None,
        }
    return fig


def _disagreements(a: Path, b: Path) -> int:
    """Runs whose status, steps or tool calls differ between the two files (0: same outcomes)."""

    def rows(p: Path) -> dict[tuple[Any, ...], tuple[Any, ...]]:
        out = {}
        for line in p.read_text().splitlines():
            r = json.loads(line)
            out[(r["task_id"], r["model"], r["setting"], r["repeat"])] = tuple(r[c] for c in COMPARED)
        return out

    ra, rb = rows(a), rows(b)
    return sum(1 for k in ra.keys() | rb.keys() if ra.get(k) != rb.get(k))


def measure(
    runs: int,
    *,
    concurrency: int = 8,
    num_cpus: float = 1.0,
    executors: tuple[str, ...] = ("asyncio", "ray"),
    say: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """The executors over one plan of about ``runs`` runs, in this process; the figures."""
    import ray

    from agentlab.costs.pricing import UnpricedModelWarning

    warnings.simplefilter("ignore", UnpricedModelWarning)
    plan = _plan(runs)
    figs: dict[str, Any] = {"concurrency_per_provider": concurrency, "num_cpus": num_cpus}
    with tempfile.TemporaryDirectory() as tmp:
        files = {e: Path(tmp) / f"{e}.jsonl" for e in ("asyncio", "ray")}
        if "asyncio" in executors:
            say("asyncio executor ...")
            figs["asyncio"] = _one("asyncio", files["asyncio"], plan, concurrency, num_cpus)
        if "ray" not in executors:
            return figs
        say("starting a local Ray cluster ...")
        t0 = time.perf_counter()
        ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)
        figs["ray_init_s"] = time.perf_counter() - t0
        try:
            say("ray executor ...")
            figs["ray"] = _one("ray", files["ray"], plan, concurrency, num_cpus)
        finally:
            ray.shutdown()
        if "asyncio" in executors:
            figs["disagreeing_runs"] = _disagreements(files["asyncio"], files["ray"])
    return figs


def _row(fig: dict[str, Any]) -> str:
    text = (
        f"{fig['runs']:,} runs in {fig['wall_s']:.1f} s ({fig['runs_per_s']:.1f} runs/s); "
        f"driver peak RSS {fig['driver_peak_rss_mb']:.0f} MB "
        f"(+{fig['driver_rss_growth_last_90pct_mb']:.1f} MB over the last 90% of the sweep)"
    )
    if fig.get("workers"):
        text += (
            f"; {fig['workers']} Ray processes (workers, limiter actor), "
            f"peak {fig['worker_peak_rss_mb']:.0f} MB each, "
            f"{fig['workers_peak_rss_total_mb']:.0f} MB together"
        )
    return text


def run(quick: bool) -> Section:
    import importlib.util

    sec = Section("sweep_ray", "10. sweep: asyncio vs Ray executor (simulator, local cluster)")
    if importlib.util.find_spec("ray") is None:
        sec.skipped = "ray is not installed (pip install 'agentlab[ray]'; the dev extra has it)"
        return sec
    figs = measure(8 if quick else 400)  # --quick: each model x setting arm once (8 runs)
    sec.figures = figs
    sec.row("asyncio executor", _row(figs["asyncio"]))
    sec.row(f"ray executor ({figs['num_cpus']} CPU per task)", _row(figs["ray"]))
    sec.row("local Ray cluster start", f"{figs['ray_init_s']:.1f} s (not in the Ray wall time)")
    sec.row("runs whose status/steps/tool calls differ", str(figs["disagreeing_runs"]))
    sec.targets.append(Target("Ray vs asyncio: runs with a different outcome", figs["disagreeing_runs"], 0))
    sec.notes.append(
        "On the simulator a run is CPU in one process, so Ray's figure is its overhead (a task, a "
        "worker process per CPU, the limiter actor's round trips), not a speed-up: Ray pays off when "
        "tools need compute or machines beyond this one."
    )
    return sec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=8, help="runs in flight per provider (both executors)")
    ap.add_argument("--num-cpus", type=float, default=1.0, help="Ray: CPUs per task")
    ap.add_argument("--only", choices=("asyncio", "ray"), help="one executor only (no comparison)")
    args = ap.parse_args(argv)
    figs = measure(
        args.runs,
        concurrency=args.concurrency,
        num_cpus=args.num_cpus,
        executors=(args.only,) if args.only else ("asyncio", "ray"),
        say=lambda m: print(m, flush=True),
    )
    print(f"concurrency {args.concurrency}/provider")
    if "asyncio" in figs:
        print(f"asyncio: {_row(figs['asyncio'])}")
    if "ray" in figs:
        print(f"ray:     {_row(figs['ray'])}  (cluster start {figs['ray_init_s']:.1f} s)")
    if "disagreeing_runs" in figs:
        print(f"runs whose status/steps/tool calls differ: {figs['disagreeing_runs']}")
    print(f"cpu count: {os.cpu_count()}, load average: {os.getloadavg()}")
    print(json.dumps(figs, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
