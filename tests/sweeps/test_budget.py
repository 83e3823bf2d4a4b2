"""The budget guard stops *starting* runs past a cost or token limit, says so, and holds on resume."""

from __future__ import annotations

import json
from itertools import accumulate
from pathlib import Path

import pytest

from agentlab.errors import BudgetExceededError, ConfigError
from agentlab.sweeps import load_results, read_rows, sim_tasks, sim_tools, sweep


def test_cost_budget_stops_new_runs(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    tasks = sim_tasks()[:10]
    rep = sweep(
        tasks,
        ["openai:sim-reasoner"],
        results=out,
        tools=sim_tools(),
        concurrency=1,
        budget_usd=0.015,
        progress=None,
    )
    assert rep.status == "budget_exceeded"
    assert "budget reached" in (rep.message or "") and "not started" in (rep.message or "")
    costs = [r["total_cost_usd"] for r in read_rows(out)]
    cum = list(accumulate(costs))
    # With one run at a time the guard overshoots by at most the run that crossed the line.
    assert cum[-1] >= 0.015 and (len(cum) == 1 or cum[-2] < 0.015)
    assert rep.ran == len(costs) < 10 and rep.not_started == 10 - len(costs)
    assert rep.cost_usd == pytest.approx(cum[-1])
    with pytest.raises(BudgetExceededError, match="budget reached"):
        rep.raise_for_status()

    # Resuming with the same budget starts nothing: the file's spend already reached it.
    again = sweep(
        tasks, ["openai:sim-reasoner"], results=out, tools=sim_tools(), budget_usd=0.015, progress=None
    )
    assert again.status == "budget_exceeded" and again.ran == 0 and len(list(read_rows(out))) == len(costs)
    # A higher budget finishes the sweep without redoing anything.
    done = sweep(
        tasks, ["openai:sim-reasoner"], results=out, tools=sim_tools(), budget_usd=10.0, progress=None
    )
    assert done.status == "completed" and done.ran == 10 - len(costs)
    assert len(load_results(out)) == 10


def test_token_budget_and_in_flight_overshoot(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    rep = sweep(
        sim_tasks()[:12],
        ["openai:sim-reasoner", "anthropic:sim-thinker"],
        results=out,
        tools=sim_tools(),
        concurrency=2,
        budget_tokens=5000,
        progress=None,
    )
    assert rep.status == "budget_exceeded" and "tokens used of budget_tokens=5,000" in (rep.message or "")
    rows = list(read_rows(out))
    tokens = [r["input_tokens"] + r["output_tokens"] for r in rows]
    assert sum(tokens) >= 5000 and rep.tokens == sum(tokens)
    # Runs in flight when the limit was crossed finish and are recorded (at most 2 x 2 - 1 of them);
    # nothing starts after the crossing.
    crossing = next(i for i, c in enumerate(accumulate(tokens), 1) if c >= 5000)
    assert len(rows) <= crossing + 3
    assert rep.not_started == 24 - len(rows) > 0


def test_usd_budget_needs_prices(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="budget_usd needs a price"):
        sweep(
            sim_tasks()[:1],
            ["openai:gpt-unpriced-test-model"],
            results=tmp_path / "r.jsonl",
            tools=sim_tools(),
            budget_usd=1.0,
            progress=None,
        )


def test_usd_budget_overshoot_stays_near_one_run(tmp_path: Path) -> None:
    """With 4 runs in flight, the guard holds back runs whose projected cost would cross the limit."""
    budget = 0.02
    report = sweep(
        sim_tasks()[:12],
        ["openai:sim-reasoner"],
        results=tmp_path / "r.jsonl",
        tools=sim_tools(),
        budget_usd=budget,
        concurrency=4,
        progress=None,
    )
    assert report.status == "budget_exceeded"
    rows = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    costs = [r["total_cost_usd"] for r in rows]
    assert len(rows) < 12  # the guard stopped the sweep
    assert sum(costs) <= budget + 2 * max(costs), (sum(costs), costs)
