"""Section 11: ``evaluate`` at scale, and beside Inspect AI's ``eval()`` on the same 1,000 samples.

Why: an evaluation is a sweep with scorers, so it must run 1,000 tasks x 3 models x 3 repeats on the
simulated providers with memory that does not grow with the runs it finished (rows stream to the
results file), and a researcher choosing a tool wants its cost per sample beside the tool they know.
Every side runs in a fresh child interpreter of its own (``python -m bench.eval_scale --child ...``),
so its peak memory is its own:

* ``agentlab``: ``al.evaluate`` on 1,000 arithmetic tasks x ``openai:sim-reasoner`` x 1 repeat,
  ``includes()`` scorer, the default concurrency (4 runs in flight per provider), fsync per row.
* ``inspect``: Inspect AI's ``eval()`` on the same 1,000 samples (a ``Task`` with a
  ``MemoryDataset``, ``generate()``, ``includes()``), ``mockllm/model`` answering with the sum,
  ``display="none"``, its default log (``.eval``) in a temporary directory, default concurrency.
* ``scale``: ``al.evaluate`` on 1,000 tasks x 3 simulated models (OpenAI Responses, Anthropic
  Messages, Gemini) x 3 repeats = 9,000 runs: wall, CPU per run, peak RSS, RSS after 1k / 3k / 9k runs.
* ``resume``: the same 9,000 runs stopped with ``KeyboardInterrupt`` after 3,000, then the same
  call again (requests counted at the simulators' transport: one per run it ran, none for a
  finished run) and a third time (nothing left: no request).
* ``memory``: the same 9,000 runs with ``tracemalloc`` started after the first 100 (so imports and
  warm-up are not counted): Python memory still held after 1k / 3k / 9k runs (after ``gc.collect()``),
  and the growth per 1,000 finished runs. Slower (tracing), so its time is not reported.

What one sample costs on each side differs, and the table says so: Inspect's ``mockllm`` returns a
``ModelOutput`` from a Python function (no HTTP request, no SDK, no serialisation); an agentlab run
builds a real request with the provider's official SDK (``openai``), sends it over the SDK's
``httpx`` transport to the in-process simulator (which parses, validates and answers it in the
provider's wire format: JSON or SSE), parses the reply back through the SDK, runs the tool loop,
prices the tokens, scores, and appends + fsyncs one row. Both sides warm up on 10 samples first
(imports, lazy set-up), so the timed call is the evaluation, not start-up.

    python -m bench --only eval_scale --merge   # this section, merged into bench/results.json
    python bench/eval_scale.py --n 1000         # the figures, printed (any size)
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._util import Section, Target, rss_mb

ROOT = Path(__file__).resolve().parents[1]
SIDE_MODEL = "openai:sim-reasoner"
SCALE_MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]
WARMUP = 10
NUMBERS = re.compile(r"(\d+) \+ (\d+)")
PER_SAMPLE = {
    "agentlab": (
        "one tool loop per sample through the official openai SDK over its httpx transport to the "
        "in-process simulator (request built, parsed and answered in the Responses wire format), "
        "priced, scored, one row appended and fsynced"
    ),
    "inspect": (
        "mockllm/model: a Python function returns the ModelOutput (no HTTP request, no SDK); "
        "solver generate(), scorer includes(), the .eval log written"
    ),
}


def samples(n: int, offset: int = 0) -> list[dict[str, Any]]:
    """``n`` arithmetic tasks (``What is i + (i+7)?``, target the sum), the same for both tools."""
    return [
        {"id": f"t{i}", "input": f"What is {i} + {i + 7}?", "target": str(2 * i + 7)}
        for i in range(offset, offset + n)
    ]


class _Peak:
    """This process's RSS sampled every 50 ms while the timed call runs (the peak of the call)."""

    def __init__(self) -> None:
        self.peak = rss_mb()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, rss_mb())

    def __enter__(self) -> _Peak:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, rss_mb())


@contextmanager
def _timed(out: dict[str, Any], n: int) -> Iterator[None]:
    """Wall, process CPU and memory of the block, per sample too."""
    gc.collect()
    out["rss_before_mb"] = rss_mb()
    t, c = time.perf_counter(), time.process_time()
    with _Peak() as peak:
        yield
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    out.update(
        samples=n,
        wall_s=wall,
        cpu_s=cpu,
        wall_ms_per_sample=wall / n * 1e3,
        cpu_ms_per_sample=cpu / n * 1e3,
        peak_rss_mb=peak.peak,
        peak_growth_mb=peak.peak - out["rss_before_mb"],
        maxrss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )


# ---------------------------------------------------------------------- the children


def child_agentlab(n: int, tmp: Path) -> dict[str, Any]:
    import agentlab as al
    from agentlab.evals import includes

    def call(data: list[dict[str, Any]], path: Path) -> Any:
        return al.evaluate(data, [SIDE_MODEL], scorers=[includes()], results=path, progress=None)

    call(samples(WARMUP, offset=10**6), tmp / "warmup.jsonl")
    out: dict[str, Any] = {}
    with _timed(out, n):
        res = call(samples(n), tmp / "eval.jsonl")
    runs = res.runs()
    out["completed"] = int((runs["status"] == "completed").sum())
    out["score"] = float(runs["score_includes"].mean())
    return out


def _inspect_output(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
    """The reply of Inspect's mockllm: the sum asked for (so both sides score every sample right), usage set.

    Usage is given so that mockllm does not count tokens with tiktoken (which downloads its
    encoding: this bench runs offline).
    """
    model = _inspect("inspect_ai.model")
    m = NUMBERS.search(str(input[-1].text))
    answer = str(int(m.group(1)) + int(m.group(2))) if m else "unknown"
    out = model.ModelOutput.from_content(model="mockllm/model", content=f"The answer is {answer}.")
    out.usage = model.ModelUsage(input_tokens=12, output_tokens=6, total_tokens=18)
    return out


def _inspect(module: str) -> Any:
    """An Inspect AI module (only the bench extra installs it; imported by name, untyped here)."""
    return importlib.import_module(module)


def child_inspect(n: int, tmp: Path) -> dict[str, Any]:
    ia, dataset = _inspect("inspect_ai"), _inspect("inspect_ai.dataset")
    scorer, solver = _inspect("inspect_ai.scorer"), _inspect("inspect_ai.solver")
    model = _inspect("inspect_ai.model").get_model("mockllm/model", custom_outputs=_inspect_output)

    def call(data: list[dict[str, Any]], log_dir: Path) -> Any:
        rows = [dataset.Sample(id=s["id"], input=s["input"], target=s["target"]) for s in data]
        ds = dataset.MemoryDataset(rows)
        task = ia.Task(dataset=ds, solver=[solver.generate()], scorer=scorer.includes())
        return ia.eval(task, model=model, display="none", log_dir=str(log_dir))

    call(samples(WARMUP, offset=10**6), tmp / "warmup")
    out: dict[str, Any] = {}
    with _timed(out, n):
        logs = call(samples(n), tmp / "logs")
    log = logs[0]
    scores = log.results.scores[0].metrics if log.results else {}
    out.update(
        status=log.status,
        completed=log.results.completed_samples if log.results else 0,
        score=scores["accuracy"].value if "accuracy" in scores else None,
    )
    return out


def _marks(total: int) -> tuple[int, ...]:
    return tuple(sorted({total // 9, total // 3, total}))


def child_scale(n: int, tmp: Path, *, traced: bool) -> dict[str, Any]:
    """``n`` tasks x 3 models x 3 repeats; memory after each mark (RSS, or traced Python memory)."""
    import tracemalloc

    import agentlab as al
    from agentlab.evals import includes

    al.evaluate(samples(WARMUP, offset=10**6), SCALE_MODELS, scorers=[includes()],
                results=tmp / "warmup.jsonl", progress=None)  # fmt: skip
    total = n * len(SCALE_MODELS) * 3
    start_at = min(100, total // 10) if traced else 0
    marks = _marks(total)
    at: dict[str, dict[str, float]] = {}

    def on_progress(p: Any) -> None:
        if traced and p.done == start_at:
            gc.collect()
            tracemalloc.start()
        if p.done in marks:
            gc.collect()
            mark: dict[str, float] = {"rss_mb": rss_mb()}
            if traced:
                mark["traced_mb"] = tracemalloc.get_traced_memory()[0] / 1e6
            at[str(p.done)] = mark

    out: dict[str, Any] = {}
    with _timed(out, total):
        res = al.evaluate(samples(n), SCALE_MODELS, scorers=[includes()], repeats=3,
                          results=tmp / "scale.jsonl", progress=None, on_progress=on_progress)  # fmt: skip
    out.update(runs=total, ran=res.report.ran if res.report else None, at=at, traced_from_run=start_at)
    out["file_mb"] = (tmp / "scale.jsonl").stat().st_size / 1e6
    if traced and len(marks) > 1:
        first, last = at[str(marks[0])], at[str(marks[-1])]
        out["traced_growth_kb_per_1k_runs"] = (
            (last["traced_mb"] - first["traced_mb"]) * 1e3 / (marks[-1] - marks[0]) * 1000
        )
    return out


def child_resume(n: int, tmp: Path) -> dict[str, Any]:
    """``n`` x 3 models x 3 repeats stopped (``KeyboardInterrupt``) after a third, then the same call twice.

    Every request the simulators answer is counted at their transport; a run of these tasks is one
    model call, so the resumed call must send exactly one request per run it ran, and the third
    call (everything in the file) none.
    """
    import agentlab as al
    from agentlab.evals import includes
    from agentlab.sim.transport import SimTransport

    sent = [0]
    real = SimTransport._respond

    def counting(self: SimTransport, request: Any, body: bytes) -> Any:
        sent[0] += 1
        return real(self, request, body)

    SimTransport._respond = counting  # type: ignore[method-assign]
    kw: dict[str, Any] = {"scorers": [includes()], "repeats": 3, "progress": None}
    al.evaluate(samples(WARMUP, offset=10**6), SCALE_MODELS, results=tmp / "warmup.jsonl", **kw)
    total = n * len(SCALE_MODELS) * 3
    stop_at = total // 3

    def stop(p: Any) -> None:
        if p.done == stop_at:
            raise KeyboardInterrupt

    path = tmp / "resume.jsonl"
    with suppress(KeyboardInterrupt):
        al.evaluate(samples(n), SCALE_MODELS, results=path, on_progress=stop, **kw)
    kept = len(al.load_eval(path).runs())
    before, t = sent[0], time.perf_counter()
    rep = al.evaluate(samples(n), SCALE_MODELS, results=path, **kw).report
    resume_s, resume_requests = time.perf_counter() - t, sent[0] - before
    before, t = sent[0], time.perf_counter()
    again = al.evaluate(samples(n), SCALE_MODELS, results=path, **kw).report
    assert rep is not None and again is not None
    return {
        "runs": total,
        "stopped_at": stop_at,
        "kept": kept,
        "resume_from_file": rep.from_file,
        "resume_ran": rep.ran,
        "resume_requests": resume_requests,
        "resume_s": resume_s,
        "third_ran": again.ran,
        "third_requests": sent[0] - before,
        "third_s": time.perf_counter() - t,
    }


CHILDREN: dict[str, Callable[[int, Path], dict[str, Any]]] = {
    "agentlab": child_agentlab,
    "inspect": child_inspect,
    "scale": lambda n, tmp: child_scale(n, tmp, traced=False),
    "memory": lambda n, tmp: child_scale(n, tmp, traced=True),
    "resume": child_resume,
}


def spawn(name: str, n: int) -> dict[str, Any]:
    """One side in a fresh interpreter; its figures, or ``{"error": ...}`` with the tail of stderr."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out.json"
        cmd = [sys.executable, "-m", "bench.eval_scale", "--child", name, "--n", str(n), "--out", str(path)]
        env = {**os.environ, "AGENTLAB_NO_WIDGETS": "1"}
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
        if proc.returncode != 0 or not path.exists():
            return {"error": f"exited {proc.returncode}: {proc.stderr[-2000:]}"}
        data: dict[str, Any] = json.loads(path.read_text())
        return data


# ---------------------------------------------------------------------- the section


def measure(n: int, scale_n: int, say: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    figs: dict[str, Any] = {"samples": n, "scale_tasks": scale_n, "per_sample": PER_SAMPLE}
    have_inspect = importlib.util.find_spec("inspect_ai") is not None
    sides = (("agentlab", n), ("inspect", n), ("scale", scale_n), ("memory", scale_n), ("resume", scale_n))
    for name, size in sides:
        if name == "inspect" and not have_inspect:
            figs[name] = {"skipped": "inspect_ai is not installed (the bench extra has it)"}
            continue
        say(f"[eval_scale] {name} ({size} tasks) ...")
        figs[name] = spawn(name, size)
    if have_inspect:
        from importlib.metadata import version

        figs["inspect_ai_version"] = version("inspect_ai")
    a, i = figs["agentlab"], figs["inspect"]
    if "cpu_s" in a and "cpu_s" in i:
        figs["ratio"] = {
            "wall": a["wall_s"] / i["wall_s"],
            "cpu": a["cpu_s"] / i["cpu_s"],
            "peak_rss": a["peak_rss_mb"] / i["peak_rss_mb"],
        }
    return figs


def _side(f: dict[str, Any]) -> str:
    if "error" in f or "skipped" in f:
        return f.get("skipped") or f"error: {f['error'][-300:]}"
    return (
        f"{f['wall_ms_per_sample']:.2f} ms wall / {f['cpu_ms_per_sample']:.2f} ms CPU per sample "
        f"({f['samples']:,} in {f['wall_s']:.1f} s); peak RSS {f['peak_rss_mb']:.0f} MB "
        f"(+{f['peak_growth_mb']:.0f} MB during the call); score {f['score']:.2f}"
    )


def _memory_row(m: dict[str, Any]) -> str:
    at = m.get("at") or {}
    parts = [
        f"{int(k):,}: {v['traced_mb']:.2f} MB traced / {v['rss_mb']:.0f} MB RSS"
        for k, v in sorted(at.items(), key=lambda kv: int(kv[0]))
    ]
    return "; ".join(parts) + f" (growth {m['traced_growth_kb_per_1k_runs']:.1f} KB per 1,000 runs)"


def run(quick: bool) -> Section:
    n = 30 if quick else 1000
    figs = measure(n, 10 if quick else 1000)
    title = "11. evaluate at scale; agentlab evaluate vs Inspect AI eval() (1,000 samples)"
    sec = Section("eval_scale", title)
    sec.figures = figs
    a, i, s, m = figs["agentlab"], figs["inspect"], figs["scale"], figs["memory"]
    sec.row(f"agentlab evaluate, {n:,} tasks x 1 model x 1 repeat", _side(a))
    version = figs.get("inspect_ai_version", "(not installed)")
    sec.row(f"Inspect AI {version} eval(), mockllm, same {n:,} samples", _side(i))
    if "ratio" in figs:
        r = figs["ratio"]
        sec.row(
            "agentlab / Inspect",
            f"wall {r['wall']:.2f}x, CPU per sample {r['cpu']:.2f}x, peak RSS {r['peak_rss']:.2f}x",
        )
    if "error" not in s:
        sec.row(
            f"agentlab evaluate, {figs['scale_tasks']:,} tasks x 3 models x 3 repeats",
            f"{s['runs']:,} runs in {s['wall_s']:.1f} s ({s['wall_ms_per_sample']:.2f} ms wall / "
            f"{s['cpu_ms_per_sample']:.2f} ms CPU per run); peak RSS {s['peak_rss_mb']:.0f} MB; "
            f"results file {s['file_mb']:.1f} MB",
        )
    if "error" not in m:
        sec.row("Python memory held after N finished runs (tracemalloc)", _memory_row(m))
        growth = m["traced_growth_kb_per_1k_runs"]
        sec.targets.append(Target("evaluate: memory growth per 1,000 finished runs", growth, 100.0, "KB"))
    r = figs["resume"]
    if "error" not in r:
        sec.row(
            f"interrupted after {r['stopped_at']:,} of {r['runs']:,} runs, then the same call twice",
            f"{r['kept']:,} finished runs kept; the resumed call ran {r['resume_ran']:,} "
            f"({r['resume_from_file']:,} from the file) with {r['resume_requests']:,} requests in "
            f"{r['resume_s']:.1f} s; the third call ran {r['third_ran']} with {r['third_requests']} "
            f"requests in {r['third_s']:.2f} s",
        )
        extra = r["resume_requests"] - r["resume_ran"] + r["third_requests"]
        sec.targets.append(Target("evaluate resume: requests for runs already in the file", extra, 0))
    for name, f in (("agentlab", a), ("inspect", i), ("scale", s), ("memory", m), ("resume", r)):
        if "error" in f:
            raise RuntimeError(f"{name}: {f['error']}")
    sec.notes.append(f"per sample, agentlab: {PER_SAMPLE['agentlab']}; Inspect: {PER_SAMPLE['inspect']}")
    return sec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="tasks (samples) per side")
    ap.add_argument("--scale-n", type=int, default=1000, help="tasks of the 3 models x 3 repeats plan")
    ap.add_argument("--child", choices=tuple(CHILDREN), help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        import warnings

        warnings.simplefilter("ignore", DeprecationWarning)
        with tempfile.TemporaryDirectory() as tmp:
            figs = CHILDREN[args.child](args.n, Path(tmp))
        args.out.write_text(json.dumps(figs, indent=1))
        return 0
    figs = measure(args.n, args.scale_n, say=lambda msg: print(msg, file=sys.stderr, flush=True))
    print(json.dumps(figs, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
