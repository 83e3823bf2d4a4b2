"""``sweep(..., executor="ray")`` on a local 2-CPU Ray cluster, against the asyncio executor.

One cluster for the module (started once, shut down at the end), with its temp dir in the test's
tmp tree so the canary scan can read every log file Ray wrote. Locally the module skips, saying
why, without ``ray``; under ``CI=true`` it fails instead (the ``dev`` extra installs it).
"""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import threading
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from agentlab import tool
from agentlab.adapters.base import ModelRef, parse_model
from agentlab.errors import ConfigError, MissingExtraError, StorageError
from agentlab.sweeps import SweepProgress, Task, load_results, read_rows, sim_tasks, sim_tools, sweep
from agentlab.sweeps.store import ROW_FIELDS
from agentlab.testing import ScriptedAdapter, Step
from tests.support.opaque import sim_opaque_tokens
from tests.support.ray_cluster import start_local_ray, unavailable

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]
KEY = ["task_id", "model", "setting", "repeat"]
SAME = [
    "status",
    "success",
    "steps",
    "tool_calls",
    "input_tokens",
    "cache_read_tokens",
    "output_tokens",
    "reasoning_tokens",
    "total_cost_usd",
    "output",
]


@pytest.fixture(scope="module")
def ray_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A local Ray with 2 CPUs for the whole module; yields its temp dir (Ray's logs are under it)."""
    tmp = tmp_path_factory.mktemp("ray")
    start_local_ray(tmp)  # skips (fails under CI) without ray
    import ray

    try:
        yield tmp
    finally:
        ray.shutdown()


# ---------------------------------------------------------------------- checked before anything runs


def test_an_unknown_executor_is_a_config_error_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    with pytest.raises(ConfigError, match="executor must be one of 'asyncio', 'ray', got 'dask'"):
        sweep(["2+2?"], ["openai:sim-reasoner"], results=out, progress=None, executor="dask")
    with pytest.raises(ConfigError, match="ray_options applies to executor='ray' only"):
        sweep(["2+2?"], ["openai:sim-reasoner"], results=out, progress=None, ray_options={"num_cpus": 1})
    with pytest.raises(ConfigError, match="backend='batch'"):
        sweep(["2+2?"], ["openai:sim-reasoner"], results=out, progress=None, executor="ray", backend="batch")
    assert not out.exists()


def test_the_asyncio_executor_never_imports_the_ray_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "agentlab.sweeps.ray_executor", None)  # importing it now fails
    monkeypatch.setitem(sys.modules, "ray", None)
    rep = sweep(["2+2?"], ["openai:sim-reasoner"], results=tmp_path / "r.jsonl", progress=None)
    assert rep.status == "completed" and rep.ran == 1


def test_without_ray_the_error_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def no_ray(name: str, *a: Any, **kw: Any) -> Any:
        return None if name == "ray" else real(name, *a, **kw)

    monkeypatch.setattr(importlib.util, "find_spec", no_ray)
    out = tmp_path / "r.jsonl"
    with pytest.raises(MissingExtraError) as info:
        sweep(["2+2?"], ["openai:sim-reasoner"], results=out, progress=None, executor="ray")
    assert info.value.extra == "ray" and "agentlab[ray]" in str(info.value)
    assert not out.exists()


def test_bad_ray_options_and_unpicklable_tools_fail_before_anything_runs(
    ray_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    with pytest.raises(ConfigError, match="ray_options"):
        sweep(
            ["2+2?"],
            ["openai:sim-reasoner"],
            results=out,
            progress=None,
            executor="ray",
            ray_options={"num_cpu": 1},
        )
    lock = threading.Lock()

    @tool
    def locked(key: str) -> str:
        """Look a key up under a lock (a lock cannot be pickled to a worker)."""
        with lock:
            return key

    with pytest.raises(ConfigError, match=r"tool 'locked'.*cannot be pickled"):
        sweep(["2+2?"], ["openai:sim-reasoner"], results=out, progress=None, executor="ray", tools=[locked])
    assert not out.exists()


@pytest.mark.parametrize("where", ["closure", "environment"])
def test_an_api_key_in_what_workers_are_sent_is_refused_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A key pickled into a task's factory would sit in Ray's object store and its spill files."""
    if importlib.util.find_spec("ray") is None:
        unavailable("ray is not installed (pip install 'agentlab[ray]')")
    key = f"sk-proj-{uuid.uuid4().hex}" if where == "closure" else f"plainkey{uuid.uuid4().hex}"
    if where == "environment":  # not key-shaped: found because it is the value of OPENAI_API_KEY
        monkeypatch.setenv("OPENAI_API_KEY", key)

    def factory(ref: ModelRef) -> Any:
        return ScriptedAdapter([Step(text=key)], provider=ref.provider, model=ref.model)

    out = tmp_path / "r.jsonl"
    with pytest.raises(ConfigError, match=r"adapter_factory holds one") as e:
        sweep(
            ["2+2?"],
            ["openai:sim-reasoner"],
            results=out,
            progress=None,
            executor="ray",
            adapter_factory=factory,
        )
    assert key not in str(e.value) and not out.exists()


# ---------------------------------------------------------------------- same results as asyncio


def test_ray_rows_equal_the_asyncio_rows_for_the_same_plan(ray_dir: Path, tmp_path: Path) -> None:
    # One repeat: two runs of one prompt could share the simulator's prompt cache on the asyncio
    # executor's shared adapter (a cache read, timing-dependent), never across Ray's per-run adapters.
    tasks = sim_tasks(["continuity"])[:1] + sim_tasks(["compare"])[:2]
    reports, frames = {}, {}
    for executor in ("asyncio", "ray"):
        out = tmp_path / f"{executor}.jsonl"
        reports[executor] = sweep(
            tasks,
            MODELS,
            results=out,
            tools=sim_tools(),
            concurrency=2,
            progress=None,
            executor=executor,
        )
        assert reports[executor].status == "completed" and reports[executor].ran == 9
        frames[executor] = load_results(out).sort_values(KEY).reset_index(drop=True)
    a, r = frames["asyncio"], frames["ray"]
    assert (a["status"] == "completed").all() and a["success"].all() and (a["tool_calls"] > 0).all()
    assert a[KEY + SAME].equals(r[KEY + SAME])
    assert set(a["run_id"]).isdisjoint(r["run_id"])  # two sets of runs, not one copied
    assert reports["ray"].cost_usd == pytest.approx(reports["asyncio"].cost_usd)
    # The shared actor's figures reach the report: it saw every provider's runs, within the limit.
    stats = reports["ray"].limiters
    assert set(stats) == {parse_model(m).provider for m in MODELS}
    assert all(1 <= s.max_in_flight <= 2 and s.in_flight == 0 for s in stats.values())
    assert sim_opaque_tokens((tmp_path / "ray.jsonl").read_text()) == []


# ---------------------------------------------------------------------- the shared limiter


def _intervals(rows: list[dict[str, Any]]) -> list[tuple[float, float]]:
    out = []
    for row in rows:
        start = datetime.fromisoformat(row["started_at"]).timestamp()
        out.append((start, start + row["latency_s"]))
    return out


def _max_overlap(intervals: list[tuple[float, float]]) -> int:
    """Most intervals open at one instant (an end and a start at the same ms do not overlap)."""
    edges = sorted(
        [(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda x: (x[0], x[1])
    )
    n = peak = 0
    for _, d in edges:
        n += d
        peak = max(peak, n)
    return peak


def _submit_direct(limit: int, n: int) -> list[dict[str, Any]]:
    """``n`` runs of one provider submitted at once, past the driver, against a limiter of ``limit``."""
    import ray

    from agentlab.sweeps import ray_executor as rx
    from agentlab.sweeps.plan import Plan
    from agentlab.sweeps.rows import RunConfig
    from agentlab.sweeps.settings import Setting

    s = Setting("default")
    ref = parse_model("openai:sim-reasoner+fault=slow:5")
    config = RunConfig(
        tools=list(sim_tools()),
        retries=0,
        retry_delay=0.0,
        tool_timeout=None,
        fingerprints={"default": s.fingerprint()},
        adapter_factory=None,
        max_consecutive_failures=None,
    )
    task = sim_tasks(["compare"])[0]
    execu = rx.prepare(config, [ref], [task], None)
    actor: Any = rx._LimiterActor.remote({"openai": limit})
    shared = ray.put(execu.shared)
    try:
        refs = [
            execu.remote.remote(Plan((task.id, str(ref), "default", i), task, ref, s), shared, actor, i)
            for i in range(n)
        ]
        rows: list[dict[str, Any]] = ray.get(refs)
        stats = ray.get(actor.stats.remote())["openai"]
    finally:
        ray.kill(actor)
    assert stats.max_in_flight <= limit and stats.in_flight == 0
    assert all(r["status"] == "completed" for r in rows)
    # What came back over the process boundary is the portable row: results fields, scalars only.
    for r in rows:
        assert set(r) <= set(ROW_FIELDS), set(r) - set(ROW_FIELDS)
        assert all(v is None or isinstance(v, str | int | float | bool) for v in r.values())
    return rows


def test_the_limiter_actor_bounds_runs_in_flight_across_tasks(ray_dir: Path) -> None:
    # Four tasks at once on two worker processes: only the actor stands between them and two at a time.
    bounded = _max_overlap(_intervals(_submit_direct(limit=1, n=4)))
    free = _max_overlap(_intervals(_submit_direct(limit=3, n=6)))
    assert bounded == 1
    assert free == 2  # positive control: without the bound the two workers do overlap


# ---------------------------------------------------------------------- resume


def test_an_interrupted_ray_sweep_resumes_without_redoing_finished_runs(
    ray_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    tasks = sim_tasks(["compare"])[:4]
    models = MODELS[:2]

    def stop_after_three(p: SweepProgress) -> None:
        if p.done >= 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep(
            tasks,
            models,
            results=out,
            tools=sim_tools(),
            concurrency=2,
            progress=None,
            executor="ray",
            on_progress=stop_after_three,
        )
    first = list(read_rows(out))
    assert 3 <= len(first) < 8
    before = {(r["task_id"], r["model"], r["setting"], r["repeat"]): r["run_id"] for r in first}
    rep = sweep(tasks, models, results=out, tools=sim_tools(), concurrency=2, progress=None, executor="ray")
    assert rep.status == "completed" and rep.from_file == len(first) and rep.ran == 8 - len(first)
    rows = list(read_rows(out))
    assert len(rows) == 8  # the cancelled tasks wrote nothing; nothing finished was redone
    df = load_results(out)
    assert not df.duplicated(KEY).any() and (df["status"] == "completed").all()
    after = dict(zip(map(tuple, df[KEY].astype(object).to_numpy().tolist()), df["run_id"], strict=True))
    assert all(after[k] == rid for k, rid in before.items())
    assert rep.cost_usd == pytest.approx(float(df["total_cost_usd"].sum()))


def test_the_budget_guard_and_a_storage_stop_hold_on_ray(
    ray_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from itertools import accumulate

    from tests.support.faulty_files import Faults

    tasks, models = sim_tasks()[:8], MODELS[:2]
    out = tmp_path / "budget.jsonl"
    rep = sweep(
        tasks,
        models,
        results=out,
        tools=sim_tools(),
        concurrency=2,
        budget_tokens=5000,
        progress=None,
        executor="ray",
    )
    assert rep.status == "budget_exceeded" and "budget_tokens=5,000" in (rep.message or "")
    tokens = [r["input_tokens"] + r["output_tokens"] for r in read_rows(out)]
    crossing = next(i for i, c in enumerate(accumulate(tokens), 1) if c >= 5000)
    assert len(tokens) <= crossing + 3 and rep.not_started == 16 - len(tokens) > 0  # in flight only

    # The driver writes the file, so a file that stops taking rows stops the Ray sweep the same way.
    faults = Faults(monkeypatch)
    out = tmp_path / "storage.jsonl"

    def fail_after_two(prog: SweepProgress) -> None:
        if prog.done >= 2 and faults.armed is None:
            faults.fail(after=40, chunk=16, err=errno.EDQUOT)

    tasks = tasks[:4]
    with pytest.raises(StorageError) as ei:
        sweep(
            tasks,
            models,
            results=out,
            tools=sim_tools(),
            concurrency=2,
            progress=None,
            executor="ray",
            on_progress=fail_after_two,
            fsync=False,
        )
    assert ei.value.errno == errno.EDQUOT and "resume" in str(ei.value)
    kept = len(list(read_rows(out)))
    assert 2 <= kept < 8
    faults.heal()
    again = sweep(tasks, models, results=out, tools=sim_tools(), concurrency=2, progress=None, executor="ray")
    assert again.status == "completed" and again.from_file == kept and again.ran == 8 - kept


# ---------------------------------------------------------------------- privacy


def test_no_canary_in_the_results_file_or_in_anything_ray_wrote(ray_dir: Path, tmp_path: Path) -> None:
    canary = f"CANARY-{uuid.uuid4().hex}"

    @tool
    def lookup(key: str) -> str:  # nested: pickled by value, so workers need not import this module
        """Look a key up."""
        return f"value-of-{key}"

    def scripted(ref: ModelRef) -> Any:  # built in the worker: a fresh two-step script per run
        return ScriptedAdapter(
            [
                Step(
                    reasoning=[f"thinking {canary}"],
                    opaque=[json.dumps({"type": "reasoning", "encrypted_content": canary}), f"sig:{canary}"],
                    tool_calls=[("lookup", {"key": "a"}, "call_1")],
                ),
                Step(
                    reasoning=[f"done {canary}"],
                    opaque=[f"x{canary}"],
                    text="The answer is 42.",
                    expect_continuation_from=[0],
                ),
            ],
            provider=ref.provider,
            model=ref.model,
        )

    out = tmp_path / "r.jsonl"
    rep = sweep(
        [Task("What is the answer?", id="q", expected=42)],
        ["openai:sim-reasoner"],
        results=out,
        tools=[lookup],
        repeats=3,
        progress=None,
        adapter_factory=scripted,
        executor="ray",
    )
    # Positive control: every run went through both steps, so the opaque items went back verbatim
    # within the loop in its worker (the script refuses any other continuation) and were scored.
    assert rep.status == "completed" and rep.failed == 0
    df = load_results(out)
    assert df["success"].all() and (df["steps"] == 2).all() and (df["reasoning_tokens"] > 0).all()
    raw = out.read_bytes()
    assert canary.encode() not in raw and b"encrypted_content" not in raw and b"sig:" not in raw
    scanned = 0
    for path in [*ray_dir.rglob("*"), *tmp_path.rglob("*")]:
        if path.is_file() and not path.is_symlink() and "sockets" not in path.parts:
            assert canary.encode() not in path.read_bytes(), path
            scanned += 1
    assert scanned > 5  # Ray's logs were there to scan


def test_429s_in_the_workers_reach_the_shared_limiter(ray_dir: Path, tmp_path: Path) -> None:
    # Every call's first attempt is rate limited (the simulator counts attempts per request body).
    rep = sweep(
        sim_tasks(["compare"])[:3],
        ["openai:sim-reasoner+fault=429x1"],
        results=tmp_path / "r.jsonl",
        tools=sim_tools(),
        concurrency=2,
        retry_delay=0.01,
        progress=None,
        executor="ray",
    )
    assert rep.status == "completed" and rep.failed == 0
    df = load_results(rep.path)
    assert (df["rate_limited"] == df["steps"]).all() and (df["steps"] >= 2).all()
    # Every worker's 429 was counted by the one actor, which halved the limit (1 of 2; each success
    # adds a slot back only after `limit` of them, so it may have recovered by the end).
    stats = rep.limiters["openai"]
    assert stats.rate_limited == int(df["rate_limited"].sum()) and stats.max_concurrency == 2


def test_a_worker_that_dies_is_a_failed_row_naming_rays_error(ray_dir: Path, tmp_path: Path) -> None:
    # Last in the module: it kills a worker process (Ray starts another for later tasks).
    @tool
    def get_weather(city: str) -> str:  # the simulated model calls it first; this one kills the worker
        """Current weather for a city."""
        os._exit(3)

    rep = sweep(
        sim_tasks(["compare"])[:1],
        ["openai:sim-reasoner"],
        results=tmp_path / "r.jsonl",
        tools=[get_weather],
        progress=None,
        executor="ray",
    )
    assert rep.status == "completed" and rep.ran == 1 and rep.failed == 1
    (row,) = read_rows(rep.path)
    assert row["status"] == "failed" and row["error_type"] == "WorkerCrashedError"
    assert "retry_failed=True" in row["error"]
