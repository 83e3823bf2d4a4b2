"""Tokens per second only where the timing is real: a real provider, or a simulator paced with ``+tps=``.

An unpaced simulator frames a reply as fast as the machine can ("2,225,651 tok/s"): the frame has
NaN (unknown) there, and the views say why (``n/a (unpaced simulator)``).
"""

from __future__ import annotations

import math

import pytest

import agentlab as al
from agentlab.adapters._simulated import UNPACED, untimed_reason
from agentlab.costs.throughput import call_throughput, run_throughput
from agentlab.testing import ScriptedAdapter, Step


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        ("sim-reasoner", UNPACED),
        ("sim-reasoner+fault=429x1", UNPACED),
        ("sim-reasoner+ttft=200", UNPACED),  # the first token paced, the rate still not
        ("sim-reasoner+tps=40", None),
        ("sim-thinker+ttft=800+tps=60", None),
        ("gpt-5", None),
        ("claude+tps=3", None),  # a real name may contain "+": real timing
    ],
)
def test_which_timings_are_real(model: str, reason: str | None) -> None:
    assert untimed_reason(model) == reason


def _run(model: str) -> al.RunResult:
    steps = [Step(reasoning=["thinking ", "hard"], text=["4", "2"])]
    return al.run(f"openai:{model}", "q", adapter=ScriptedAdapter(steps, model=model))


def test_unpaced_simulator_has_no_rate_in_the_frame_or_the_figures() -> None:
    r = al.run("openai:sim-reasoner", "What is 12 * (3 + 4)?")
    df = al.usage_frame(r)
    assert df["reasoning_tokens_per_s"].isna().all() and df["answer_tokens_per_s"].isna().all()
    by = al.usage_by(df, "run_id").iloc[0]
    assert math.isnan(by["reasoning_tokens_per_s"]) and math.isnan(by["answer_tokens_per_s"])
    assert not math.isnan(df["first_reasoning_s"].iloc[0])  # first-token times are measured: kept
    t = call_throughput(r.calls[0])
    assert t.reasoning_tokens_per_s is None and t.answer_tokens_per_s is None
    assert t.untimed == UNPACED and "tok/s n/a (unpaced simulator)" in t.parts()
    assert run_throughput(r.calls).untimed == UNPACED


@pytest.mark.parametrize("model", ["gpt-5", "sim-reasoner+tps=500"])
def test_real_or_paced_timing_has_rates(model: str) -> None:
    r = _run(model)
    df = al.usage_frame(r)
    assert df["reasoning_tokens_per_s"].iloc[0] > 0 and df["answer_tokens_per_s"].iloc[0] > 0
    t = call_throughput(r.calls[0])
    assert t.untimed is None
    assert t.reasoning_tokens_per_s == pytest.approx(df["reasoning_tokens_per_s"].iloc[0])
    assert not any("n/a" in p for p in t.parts())
