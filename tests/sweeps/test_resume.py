"""Interrupted sweeps resume without redoing finished runs or double counting.

Cases: Ctrl-C from a progress callback, a SIGKILLed process, and a torn last line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from agentlab.records.eventlog import TornLineWarning
from agentlab.sweeps import SweepProgress, load_results, read_rows, sim_tasks, sim_tools, sweep

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker"]
KEY = ["task_id", "model", "setting", "repeat"]


def test_keyboard_interrupt_then_resume(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    tasks = sim_tasks()[:6]

    def stop_after_five(p: SweepProgress) -> None:
        if p.done >= 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep(
            tasks,
            MODELS,
            results=out,
            tools=sim_tools(),
            concurrency=2,
            progress=None,
            on_progress=stop_after_five,
        )
    first = list(read_rows(out))
    assert 5 <= len(first) < 12  # finished runs are on disk; the ones in flight were cancelled, unrecorded
    before = {(r["task_id"], r["model"], r["setting"], r["repeat"]): r["run_id"] for r in first}

    rep = sweep(tasks, MODELS, results=out, tools=sim_tools(), concurrency=2, progress=None)
    assert rep.from_file == len(first) and rep.ran == 12 - len(first) and rep.status == "completed"
    rows = list(read_rows(out))
    assert len(rows) == 12  # nothing redone, nothing appended twice
    df = load_results(out)
    assert len(df) == 12 and not df.duplicated(KEY).any()
    after = dict(zip(map(tuple, df[KEY].astype(object).to_numpy().tolist()), df["run_id"], strict=True))
    assert all(after[k] == rid for k, rid in before.items())  # finished rows kept, not rerun
    # The file's spend is counted once per row: the report's total equals the sum of the rows.
    assert rep.cost_usd == pytest.approx(float(df["total_cost_usd"].sum()))


SCRIPT = textwrap.dedent(
    """
    import sys
    from agentlab import sim
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
    from agentlab.sweeps import sim_tasks, sim_tools, sweep

    def slow(ref):
        return OpenAIResponsesAdapter(ref.model, client=sim.openai_client(latency_ms=40), max_retries=0)

    sweep(sim_tasks(), ["openai:sim-reasoner"], results=sys.argv[1], tools=sim_tools(), repeats=2,
          concurrency=2, progress=None, adapter_factory=slow)
    print("finished")
    """
)


def test_sigkill_mid_sweep_then_resume_with_a_torn_line(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    script = tmp_path / "sweep_script.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, str(script), str(out)], env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if out.exists() and len(out.read_bytes().splitlines()) >= 4:
                break
            time.sleep(0.02)
        else:
            pytest.fail("the sweep subprocess wrote no rows in 60 s")
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    planned = len(sim_tasks()) * 2
    kept = list(read_rows(out))
    assert 4 <= len(kept) < planned
    # Simulate the worst crash: a write torn in the middle of a row.
    with out.open("ab") as f:
        f.write(b'{"task_id":"cmp-warm-paris-rome","model":"openai:sim-re')
    with pytest.warns(TornLineWarning):
        assert len(list(read_rows(out))) == len(kept)  # readers skip the torn line

    with pytest.warns(TornLineWarning, match="removed a torn final line"):
        rep = sweep(
            sim_tasks(),
            ["openai:sim-reasoner"],
            results=out,
            tools=sim_tools(),
            repeats=2,
            concurrency=2,
            progress=None,
        )
    assert rep.from_file == len(kept) and rep.ran == planned - len(kept)
    assert out.read_bytes().endswith(b"\n")
    df = load_results(out)  # no warning: the torn line was cut before appending
    assert len(df) == planned and not df.duplicated(KEY).any()
    assert set(df["run_id"]) >= {r["run_id"] for r in kept}
    assert len(out.read_bytes().splitlines()) == planned


def test_corruption_in_the_middle_is_an_error_not_skipped(tmp_path: Path) -> None:
    from agentlab.errors import ConfigError

    out = tmp_path / "r.jsonl"
    sweep(sim_tasks()[:2], ["openai:sim-reasoner"], results=out, tools=sim_tools(), progress=None)
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(lines[0] + b"garbage\n" + lines[1])
    with pytest.raises(ConfigError, match=r"r\.jsonl:2: not a sweep results row"):
        load_results(out)


def test_a_resumed_sweep_refuses_another_output_type(tmp_path: Path) -> None:
    """Rows answered in one schema must not be mixed with rows of another in one results file."""
    from pydantic import BaseModel

    from agentlab.errors import ConfigError

    class Weather(BaseModel):
        city: str

    class Population(BaseModel):
        city: str
        people: int

    out = tmp_path / "r.jsonl"
    tasks = [t for t in sim_tasks() if t.id == "cmp-paris-rome"] or sim_tasks()[:1]
    kw: dict[str, Any] = {"results": out, "tools": sim_tools(), "progress": None}
    first = sweep(tasks, ["openai:sim-reasoner"], output_type=Weather, **kw)
    assert first.ran == 1
    with pytest.raises(ConfigError, match="different definition"):
        sweep(tasks, ["openai:sim-reasoner"], output_type=Population, **kw)
    with pytest.raises(ConfigError, match="different definition"):
        sweep(tasks, ["openai:sim-reasoner"], **kw)  # free text after structured rows
    again = sweep(tasks, ["openai:sim-reasoner"], output_type=Weather, **kw)  # the same schema resumes
    assert again.ran == 0


def test_fingerprints_without_output_type_are_the_ones_files_already_hold() -> None:
    """Results files written before ``output_type`` existed still resume (fingerprints pinned)."""
    from agentlab.sweeps import Setting

    assert Setting("default").fingerprint() == "9f239bd742823eb8"
    assert Setting("s", max_steps=3).fingerprint() == "b6fd7e7816d76338"
    assert Setting("t", tool_choice="none").fingerprint() == "755ab1b4dfc19539"
