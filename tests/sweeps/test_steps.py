"""Unit tests for the pure steps a sweep is composed of: the plan, resume, the budget guard, records.

Why: the end-to-end sweep tests prove the behaviour through real runs; these pin each rule on its own
(no event loop, no simulator), so a change to one step fails next to the rule it broke.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from agentlab.adapters.base import parse_model
from agentlab.errors import ConfigError, StorageError
from agentlab.sweeps import Setting, Task, continuity_settings
from agentlab.sweeps.plan import Finished, build_plan, pending, read_finished
from agentlab.sweeps.rows import RunConfig
from agentlab.sweeps.schedule import Budget, Scheduler

OPENAI, ANTHROPIC = parse_model("openai:sim-reasoner"), parse_model("anthropic:sim-thinker")


def _tasks(n: int) -> list[Task]:
    return [Task(f"prompt {i}", id=f"t{i}") for i in range(n)]


# ---------------------------------------------------------------------- the plan


def test_plan_is_every_applicable_combination_in_a_fixed_order() -> None:
    plan = build_plan(_tasks(2), [OPENAI, ANTHROPIC], continuity_settings(), repeats=2)
    keys = [p.key for p in plan]
    # verbatim runs on both; drop only on OpenAI; thinking_off only on Anthropic: 2 arms per model
    assert len(keys) == 2 * 2 * 2 * 2
    assert len(set(keys)) == len(keys)
    assert keys[:4] == [
        ("t0", "openai:sim-reasoner", "verbatim", 0),
        ("t0", "openai:sim-reasoner", "verbatim", 1),
        ("t0", "openai:sim-reasoner", "drop", 0),
        ("t0", "openai:sim-reasoner", "drop", 1),
    ]
    assert keys[4] == ("t0", "anthropic:sim-thinker", "verbatim", 0)
    assert ("t0", "anthropic:sim-thinker", "drop", 0) not in keys
    assert ("t1", "openai:sim-reasoner", "thinking_off", 0) not in keys
    assert all(p.key == (p.task.id, str(p.ref), p.setting.name, p.key[3]) for p in plan)
    # pure: the same inputs give the same keys (resume depends on it)
    assert [p.key for p in build_plan(_tasks(2), [OPENAI, ANTHROPIC], continuity_settings(), 2)] == keys


def test_plan_is_empty_when_no_setting_applies() -> None:
    only_anthropic = [Setting("a", providers=("anthropic",))]
    assert build_plan(_tasks(3), [OPENAI], only_anthropic, repeats=3) == []


# ---------------------------------------------------------------------- resume


def test_pending_skips_finished_keys_and_redoes_failures_only_when_asked() -> None:
    plan = build_plan(_tasks(3), [OPENAI], [Setting("s")], repeats=1)
    last = {plan[0].key: "completed", plan[1].key: "failed"}
    assert [p.key for p in pending(plan, last, retry_failed=False)] == [plan[2].key]
    assert [p.key for p in pending(plan, last, retry_failed=True)] == [plan[1].key, plan[2].key]
    # a key whose last row is step_limit or error is finished: it is never redone
    assert pending(plan, dict.fromkeys((p.key for p in plan), "step_limit"), retry_failed=True) == []


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _file_row(
    task: str, status: str, cost: float, fp: str | None, tokens: tuple[int, int] = (10, 5)
) -> dict[str, Any]:
    return {
        "task_id": task,
        "model": "openai:sim-reasoner",
        "setting": "s",
        "repeat": 0,
        "status": status,
        "total_cost_usd": cost,
        "input_tokens": tokens[0],
        "output_tokens": tokens[1],
        "settings_fingerprint": fp,
    }


def test_read_finished_keeps_the_last_status_and_counts_every_rows_spend(tmp_path: Path) -> None:
    fp = Setting("s").fingerprint()
    out = tmp_path / "r.jsonl"
    _write(
        out,
        [
            _file_row("a", "failed", 0.01, fp),
            _file_row("a", "completed", 0.02, fp),
            _file_row("b", "completed", 0.03, None),
        ],
    )
    got = read_finished(out, {"s": fp})
    assert got.last_status == {
        ("a", "openai:sim-reasoner", "s", 0): "completed",
        ("b", "openai:sim-reasoner", "s", 0): "completed",
    }
    assert got.usd == pytest.approx(0.06)  # the superseded failure's money was spent too
    assert got.tokens == 45


def test_read_finished_refuses_a_changed_setting_definition(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    _write(out, [_file_row("a", "completed", 0.01, Setting("s", max_steps=3).fingerprint())])
    with pytest.raises(ConfigError, match="different definition"):
        read_finished(out, {"s": Setting("s").fingerprint()})
    # a setting that is not in this call is not checked
    assert read_finished(out, {"other": Setting("other").fingerprint()}).usd == pytest.approx(0.01)


# ---------------------------------------------------------------------- the budget guard


def test_budget_reached_is_at_or_past_either_limit() -> None:
    assert Budget(None, None).reached(1e9, 10**9) is None
    assert Budget(1.0, None).reached(0.99, 10**9) is None
    assert "budget_usd=1.0" in (Budget(1.0, None).reached(1.0, 0) or "")
    assert Budget(None, 100).reached(5.0, 99) is None
    assert "100 tokens used of budget_tokens=100" in (Budget(None, 100).reached(0.0, 100) or "")


def _overshoot(b: Budget, **kw: Any) -> bool:
    args: dict[str, Any] = {
        "running": 1,
        "done": 1,
        "usd": 0.0,
        "tokens": 0,
        "base_usd": 0.0,
        "base_tokens": 0,
    }
    return b.would_overshoot(**(args | kw))


def test_budget_projection_uses_this_calls_average_run() -> None:
    b = Budget(1.1, None)
    # 2 runs done now, $0.20 each, 2 in flight: 0.40 + 3 x 0.20 = 1.00, not past 1.1 -> may start
    assert not _overshoot(b, running=2, done=2, usd=0.40)
    # 3 in flight: 0.40 + 4 x 0.20 = 1.20 > 1.1 -> hold back
    assert _overshoot(b, running=3, done=2, usd=0.40)
    # the file's earlier spend is in the total but not in the average
    assert not _overshoot(b, running=1, done=2, usd=0.60, base_usd=0.40)  # avg 0.10: 0.6 + 2 x 0.1 = 0.8
    assert _overshoot(b, running=1, done=2, usd=0.90, base_usd=0.40)  # avg 0.25: 0.9 + 2 x 0.25 = 1.4
    tb = Budget(None, 1000)
    assert not _overshoot(tb, running=1, done=1, tokens=300)  # 300 + 2 x 300 = 900
    assert _overshoot(tb, running=2, done=1, tokens=300)  # 300 + 3 x 300 = 1200 > 1000


def test_budget_projection_never_holds_back_with_nothing_to_learn_from() -> None:
    b = Budget(0.01, 1)
    assert not _overshoot(b, running=0, done=5, usd=0.009)  # nothing in flight: the sweep never stalls
    assert not _overshoot(b, running=4, done=0, usd=0.0)  # no average yet
    assert not _overshoot(Budget(None, None), running=100, done=1, usd=1e9, tokens=10**9)


# ---------------------------------------------------------------------- recording results


class _Writer:
    def __init__(self, fail: bool = False) -> None:
        self.rows: list[dict[str, Any]] = []
        self.fail = fail

    def append(self, row: dict[str, Any]) -> None:
        if self.fail:
            raise StorageError("disk full", path="/x", errno=28)
        self.rows.append(row)

    def close(self) -> None:
        pass


def _scheduler(writer: _Writer, *, max_failures: int | None = 2, budget: Budget | None = None) -> Scheduler:
    plan = build_plan(_tasks(4), [OPENAI, ANTHROPIC], [Setting("s")], repeats=1)
    cfg = RunConfig(
        tools=[],
        retries=0,
        retry_delay=0.0,
        tool_timeout=None,
        fingerprints={"s": "fp"},
        adapter_factory=None,
        max_consecutive_failures=max_failures,
    )
    return Scheduler(
        plan_size=len(plan),
        from_file=0,
        todo=plan,
        concurrency={"openai": 2, "anthropic": 2},
        finished=Finished(),
        budget=budget or Budget(None, None),
        writer=cast(Any, writer),
        config=cfg,
        t_start=0.0,
    )


def _result_row(status: str, cost: float = 0.0, success: bool | None = None) -> dict[str, Any]:
    return {
        "status": status,
        "total_cost_usd": cost,
        "input_tokens": 1,
        "output_tokens": 1,
        "success": success,
        "error_type": "APIError",
        "error": "boom",
    }


def test_consecutive_failures_stop_only_that_provider_and_a_success_resets_the_count() -> None:
    s = _scheduler(_Writer())
    p_openai = s.queues["openai"][0]
    p_anthropic = s.queues["anthropic"][0]
    s.record(p_openai, _result_row("failed"))
    s.record(p_openai, _result_row("completed", success=True))
    s.record(p_openai, _result_row("failed"))
    assert not s.st.stops("openai")
    s.record(p_openai, _result_row("failed"))
    assert s.st.stops("openai") and not s.st.stops("anthropic")
    assert "openai: 2 runs in a row failed (last: APIError: boom)" in s.st.down["openai"]
    assert not s.st.stops("anthropic")
    s.record(p_anthropic, _result_row("failed"))
    assert s.st.consecutive == {"openai": 2, "anthropic": 1}
    assert (s.st.done, s.st.failed, s.st.solved) == (5, 4, 1)
    # not-started runs count only once the sweep stopped something
    assert s.snapshot().not_started == 8


def test_no_failure_limit_never_marks_a_provider_down() -> None:
    s = _scheduler(_Writer(), max_failures=None)
    for _ in range(50):
        s.record(s.queues["openai"][0], _result_row("failed"))
    assert s.st.down == {}


def test_a_row_the_file_cannot_take_stops_the_sweep_and_is_not_counted() -> None:
    s = _scheduler(_Writer(fail=True))
    p = s.queues["openai"][0]
    s.record(p, _result_row("completed", cost=1.0))
    s.record(p, _result_row("completed", cost=1.0))
    assert isinstance(s.st.storage, StorageError) and s.st.unwritten == 2
    assert (s.st.done, s.st.usd) == (0, 0.0)
    assert s.st.stops("openai") and s.st.stops("anthropic")


def test_the_budget_is_checked_after_each_recorded_row_and_at_start() -> None:
    s = _scheduler(_Writer(), budget=Budget(0.5, None))
    assert s.st.budget is None
    s.record(s.queues["openai"][0], _result_row("completed", cost=0.3))
    assert s.st.budget is None
    s.record(s.queues["openai"][0], _result_row("completed", cost=0.3))
    assert s.st.budget is not None and "budget_usd=0.5" in s.st.budget
    assert s.st.stops("anthropic")
    spent = Finished(usd=0.5)
    cfg_started = Scheduler(
        plan_size=0,
        from_file=0,
        todo=[],
        concurrency={"openai": 1},
        finished=spent,
        budget=Budget(0.5, None),
        writer=cast(Any, _Writer()),
        config=s.config,
        t_start=0.0,
    )
    assert cfg_started.st.budget is not None  # a file already at the limit starts nothing
