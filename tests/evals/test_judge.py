"""The judge: graded by the simulated models, isolated from the candidate's reasoning, billed apart."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab import tool
from agentlab.adapters.base import ModelRef, create_adapter
from agentlab.errors import ConfigError
from agentlab.evals import Attempt, EvalTask, includes, judge
from agentlab.evals.judge import judge_prompt, parse_grade
from agentlab.neutral.events import AdapterEvent
from agentlab.neutral.request import ModelRequest
from agentlab.sim.grading import grade, grading_request
from agentlab.testing import ScriptedAdapter, Step

TASK = EvalTask(id="w", input="Is it warmer in Paris or Rome?", target="Rome")


class Recorder:
    """The judge's real (simulated) adapter, keeping every request it was sent."""

    def __init__(self, ref: ModelRef, seen: list[str]) -> None:
        self.inner = create_adapter(ref)
        self.seen = seen
        self.provider, self.api, self.model = self.inner.provider, self.inner.api, self.inner.model
        self.base_url, self.max_retries = self.inner.base_url, 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        self.seen.append(request.model_dump_json() + repr(request))
        async for ev in self.inner.stream(request):
            yield ev

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_parse_grade() -> None:
    assert parse_grade("fine\nGRADE: PASS", None) is True
    assert parse_grade("GRADE: PASS ... on reflection GRADE: fail", None) is False
    assert parse_grade("no verdict", None) is None
    assert parse_grade("GRADE: 7", 10) == 0.7
    assert parse_grade("GRADE: 11", 10) is None and parse_grade("GRADE: PASS", 10) is None


def test_the_simulator_grades_a_judge_prompt_by_its_labelled_rule() -> None:
    req = grading_request(judge_prompt(TASK, "Rome is warmer (24 vs 18).", "Correct city?", None))
    assert req is not None and req.reference == "Rome" and req.scale is None
    assert grade(req)[1].endswith("GRADE: PASS") and "Simulated judge" in grade(req)[1]
    miss = grading_request(judge_prompt(TASK, "Paris is warmer.", "Correct city?", 10))
    assert miss is not None and grade(miss)[1].endswith("GRADE: 0")
    assert grading_request("Is it warmer in Paris or Rome?") is None


@pytest.mark.parametrize("model", ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"])
def test_simulated_models_act_as_a_deterministic_judge(model: str) -> None:
    j = judge(model, "The answer names the warmer city.", repeats=3)
    ok = j.score(Attempt(answer="Rome is warmer (24 vs Paris 18)."), TASK)
    bad = j.score(Attempt(answer="Paris is warmer."), TASK)
    assert ok.value is True and bad.value is False
    assert ok.judge is not None and ok.judge.repeats == 3 and ok.judge.agreement == 1.0
    assert ok.judge.model == model and (ok.judge.output_tokens or 0) > 0 and (ok.judge.cost_usd or 0) > 0
    scaled = judge(model, "How right?", scale=10, name="scaled").score(Attempt(answer="Rome."), TASK)
    assert scaled.value == 1.0 and scaled.name == "scaled"


def test_judge_arguments_are_checked() -> None:
    with pytest.raises(ConfigError, match="rubric"):
        judge("openai:sim-reasoner", "  ")
    with pytest.raises(ConfigError, match="repeats"):
        judge(repeats=0)
    with pytest.raises(ConfigError, match="scale"):
        judge(scale=True)
    with pytest.raises(ConfigError):
        judge("openai:sim-reasonr")  # a simulated-model typo fails at construction


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value-of-{key}"


def _scripted(canary: str, repeats: int) -> Any:
    def make(ref: ModelRef) -> ScriptedAdapter:
        steps: list[Step] = []
        for _ in range(repeats):
            steps += [
                Step(reasoning=[f"thinking {canary}"], opaque=[f"sig:{canary}"],
                     tool_calls=[("lookup", {"key": "a"})]),
                Step(reasoning=[f"done {canary}"], opaque=[f"x{canary}"], text="Rome is warmer."),
            ]  # fmt: skip
        return ScriptedAdapter(steps, provider=ref.provider, model=ref.model)

    return make


def test_the_judge_never_sees_reasoning_opaque_state_or_tool_calls(tmp_path: Path) -> None:
    canary = f"CANARY-{uuid.uuid4().hex}"
    seen: list[str] = []
    j = judge("anthropic:sim-thinker", "Right city?", adapter_factory=lambda ref: Recorder(ref, seen))
    res = al.evaluate(
        [{"id": "w", "input": "Is it warmer in Paris or Rome?", "target": "Rome"}],
        ["openai:sim-reasoner"],
        scorers=[j],
        tools=[lookup],
        repeats=2,
        results=tmp_path / "e.jsonl",
        progress=None,
        concurrency=1,
        adapter_factory=_scripted(canary, 2),
    )
    runs = res.runs()
    assert runs["score_judge"].tolist() == [True, True]
    assert (runs["reasoning_tokens"] > 0).all()  # positive control: the candidate did reason
    assert len(seen) == 2  # one judging call per run
    for body in seen:
        assert "Rome is warmer." in body and "<reference>" in body  # it saw the answer and the target
        assert canary not in body and "lookup" not in body and "value-of-a" not in body
    assert canary.encode() not in (tmp_path / "e.jsonl").read_bytes()


def test_judge_spend_is_kept_apart_from_the_candidates(tmp_path: Path) -> None:
    data = [{"id": "w", "input": "Is it warmer in Paris or Rome?", "target": "Rome"}]
    kw: dict[str, Any] = {"repeats": 2, "progress": None, "tools": al.sweeps.sim_tools()}
    plain = al.evaluate(
        data, ["openai:sim-reasoner"], scorers=[includes()], results=tmp_path / "a.jsonl", **kw
    )
    judged = al.evaluate(
        data, ["openai:sim-reasoner"], scorers=[includes(), judge("google:sim-gemini", "Right?", repeats=2)],
        results=tmp_path / "b.jsonl", **kw,
    )  # fmt: skip
    a, b = plain.runs(), judged.runs()
    for col in ("input_tokens", "output_tokens", "reasoning_tokens", "total_cost_usd", "output_cost_usd"):
        assert a[col].tolist() == b[col].tolist(), col  # the candidate's figures do not move
    assert a["judge_cost_usd"].isna().all()
    assert (b["judge_cost_usd"] > 0).all() and (b["judge_output_tokens"] > 0).all()
    stored = [
        json.loads(line)["scores"]["judge"]["judge"]
        for line in (tmp_path / "b.jsonl").read_text().splitlines()
    ]
    assert all(
        s["model"] == "google:sim-gemini" and s["repeats"] == 2 and s["agreement"] == 1.0 for s in stored
    )
    assert b["judge_cost_usd"].tolist() == pytest.approx([s["cost_usd"] for s in stored])
    assert judged.summary()["judge_cost_usd"].iloc[0] == pytest.approx(sum(s["cost_usd"] for s in stored))
    # The judge's spend is money spent: the sweep's report (and its budget guard) count it.
    assert plain.report is not None and judged.report is not None
    assert plain.report.cost_usd == pytest.approx(float(a["total_cost_usd"].sum()))
    spent = float(b["total_cost_usd"].sum() + b["judge_cost_usd"].sum())
    assert judged.report.cost_usd == pytest.approx(spent)
    judge_tokens = int((b["judge_input_tokens"] + b["judge_output_tokens"]).sum())
    assert judged.report.tokens == int((b["input_tokens"] + b["output_tokens"]).sum()) + judge_tokens


def test_the_budget_guard_counts_the_judges_spend(tmp_path: Path) -> None:
    data = [{"id": f"t{i}", "input": "Is it warmer in Paris or Rome?", "target": "Rome"} for i in range(4)]
    kw: dict[str, Any] = {"progress": None, "tools": al.sweeps.sim_tools(), "concurrency": 1}
    one = al.evaluate(data[:1], ["openai:sim-reasoner"], scorers=[includes()], results=tmp_path / "a.jsonl",
                      **kw)  # fmt: skip
    assert one.report is not None
    run_tokens = one.report.tokens  # one candidate run's tokens (the simulator is deterministic)
    res = al.evaluate(
        data, ["openai:sim-reasoner"], scorers=[judge("openai:sim-reasoner", "Right?", repeats=3)],
        results=tmp_path / "b.jsonl", budget_tokens=2 * run_tokens + 1, **kw,
    )  # fmt: skip
    assert res.report is not None and res.report.status == "budget_exceeded"
    assert 1 <= len(res.runs()) < 3  # counting the candidates' tokens only, a third run would start
