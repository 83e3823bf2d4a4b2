"""``+skill=P``: simulated models that differ in quality, deterministically, on every protocol.

The option exists so an evaluation on simulated models has differences to find; these tests hold it
to what docs/concepts/simulator.md says: a share ``P`` of tasks right, the same tasks missed in every
run, wrong answers that a scorer fails, nothing but the answer changed, and the judge untouched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import agentlab as al
from agentlab.evals import includes, judge
from agentlab.sim.pacing import PaceError, model_skill, parse_options
from agentlab.sweeps import sim_tools

MODELS = (
    "openai:sim-reasoner",
    "anthropic:sim-thinker",
    "google:sim-gemini",
    "deepseek:sim-deepseek",
    "openrouter:sim-router-claude",
    "bedrock:sim-bedrock-claude",
)


def _tasks(n: int) -> list[dict[str, str]]:
    return [{"id": f"t{i}", "input": f"What is {i} + {i + 7}?", "target": str(2 * i + 7)} for i in range(n)]


def test_the_option_is_checked_and_read() -> None:
    assert model_skill("sim-reasoner+skill=0.25+tps=40") == 0.25
    assert model_skill("sim-reasoner+tps=40") is None
    assert parse_options("sim-reasoner+skill=0.25")[0] == "sim-reasoner"
    for bad in ("sim-x+skill=1.5", "sim-x+skill=-0.1", "sim-x+skill=high"):
        with pytest.raises(PaceError, match="skill="):
            model_skill(bad)


def test_a_bad_skill_is_one_typed_line_before_anything_is_sent() -> None:
    with pytest.raises(al.errors.InvalidSettingsError, match="skill='2'"):
        al.run("openai:sim-reasoner+skill=2", "What is 3 + 10?")


@pytest.mark.parametrize("model", MODELS)
def test_skill_zero_answers_wrong_and_one_answers_as_planned(model: str) -> None:
    plain = al.run(model, "What is 12 * (3 + 4)?").output
    assert "84" in str(plain)
    assert al.run(f"{model}+skill=1", "What is 12 * (3 + 4)?").output == plain
    wrong = al.run(f"{model}+skill=0", "What is 12 * (3 + 4)?")
    assert wrong.status == "completed" and "84" not in str(wrong.output) and "85" in str(wrong.output)


def test_a_wrong_comparison_names_the_other_entity() -> None:
    q = "Is it warmer in Paris or Rome?"
    right = str(al.run("openai:sim-reasoner", q, tools=sim_tools()).output)
    wrong = str(al.run("openai:sim-reasoner+skill=0", q, tools=sim_tools()).output)
    assert right.startswith("Rome") and wrong == "Paris is warmer."


def test_the_share_is_near_p_and_the_same_tasks_are_missed_every_time(tmp_path: Path) -> None:
    tasks = _tasks(200)
    m = "anthropic:sim-thinker+skill=0.7"
    r = al.evaluate(tasks, [m], scorers=[includes()], results=tmp_path / "a.jsonl", repeats=2, progress=None)
    runs = r.runs()
    share = float(runs["score_includes"].astype(float).mean())
    assert 0.6 <= share <= 0.8, share
    per_task = runs.groupby("task_id")["score_includes"].nunique()
    assert (per_task == 1).all(), "repeats of a task disagree"
    again = al.evaluate(tasks, [m], scorers=[includes()], results=tmp_path / "b.jsonl", progress=None).runs()
    missed = set(runs.loc[~runs["score_includes"].astype(bool), "task_id"])
    assert missed == set(again.loc[~again["score_includes"].astype(bool), "task_id"])
    # another model with the same P misses other tasks
    other = al.evaluate(tasks, ["openai:sim-reasoner+skill=0.7"], scorers=[includes()],
                        results=tmp_path / "c.jsonl", progress=None).runs()  # fmt: skip
    assert missed != set(other.loc[~other["score_includes"].astype(bool), "task_id"])


def test_only_the_answer_changes_and_the_judge_is_untouched(tmp_path: Path) -> None:
    plain = al.run("openai:sim-reasoner", "What is 12 * (3 + 4)?")
    wrong = al.run("openai:sim-reasoner+skill=0", "What is 12 * (3 + 4)?")
    assert [c.usage.reasoning_tokens for c in plain.calls] == [c.usage.reasoning_tokens for c in wrong.calls]
    assert [c.stop_reason for c in plain.calls] == [c.stop_reason for c in wrong.calls]
    assert str(wrong.output) == "12 * (3 + 4) = 85"
    # the judge model has skill=0 too: grading is the simulator's rule, not an answer it could miss
    grader = judge("anthropic:sim-thinker+skill=0", rubric="The answer names the right value.")
    r = al.evaluate(
        _tasks(4), ["openai:sim-reasoner"], scorers=[grader], results=tmp_path / "j.jsonl", progress=None
    )
    assert r.runs()["score_judge"].astype(bool).all()
