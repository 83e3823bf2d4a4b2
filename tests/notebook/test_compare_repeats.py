"""compare(..., repeats=N): N runs per model, bounded concurrency, the sweeps' spread per model."""

from __future__ import annotations

import asyncio
import math

import pytest

import agentlab
from agentlab.errors import UserError
from agentlab.sweeps.analysis import bootstrap_mean_interval, mean_interval, spread, wilson_interval
from agentlab.sweeps.compare import compare
from agentlab.testing import ScriptedAdapter, Step

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker"]


def _adapter(model: str, answer: str, words: int = 1) -> ScriptedAdapter:
    provider, _, name = model.partition(":")
    return ScriptedAdapter([Step(reasoning=["x"] * words, text=answer)], provider=provider, model=name)


def _per_run() -> list[ScriptedAdapter]:
    # openai: 2 of 3 right; anthropic: 3 of 3; reasoning lengths differ between repeats
    return [
        _adapter(MODELS[0], "Paris", 5),
        _adapter(MODELS[0], "Rome", 50),
        _adapter(MODELS[0], "Paris", 20),
        _adapter(MODELS[1], "Paris", 10),
        _adapter(MODELS[1], "Paris", 10),
        _adapter(MODELS[1], "Paris", 10),
    ]


def _check(out: str | None) -> bool:
    return out is not None and "Paris" in out


def test_repeats_give_n_runs_per_model_and_the_sweeps_spread() -> None:
    cmp = compare("Capital?", MODELS, adapters=_per_run(), check=_check, repeats=3, live=False)
    assert cmp.repeats == 3 and cmp.labels == MODELS and len(cmp.entries) == 6
    assert cmp.keys[:3] == [f"{MODELS[0]} r1", f"{MODELS[0]} r2", f"{MODELS[0]} r3"]
    assert cmp.answers[f"{MODELS[0]} r2"] == "Rome"
    s = cmp.summary()
    assert s["repeat"].tolist() == [0, 1, 2, 0, 1, 2]
    assert set(cmp.usage["repeat"].tolist()) == {0, 1, 2}
    sp = cmp.spread()
    assert list(sp.index) == MODELS
    assert sp.loc[MODELS[0], "solved"] == 2 and sp.loc[MODELS[0], "scored"] == 3
    lo, hi = wilson_interval(2, 3)
    assert sp.loc[MODELS[0], "success_ci_low"] == pytest.approx(lo)
    assert sp.loc[MODELS[0], "success_ci_high"] == pytest.approx(hi)
    # the same numbers as the sweeps' own summary over the same frame (one function, not two)
    assert spread(cmp.runs_frame()).loc[MODELS[0], "success_rate"] == sp.loc[MODELS[0], "success_rate"]
    costs = [e.cost_usd for e in cmp.entries[:3]]
    m, clo, chi = bootstrap_mean_interval(costs)
    assert sp.loc[MODELS[0], "total_cost_usd_mean"] == pytest.approx(m)
    assert sp.loc[MODELS[0], "total_cost_usd_ci_low"] == pytest.approx(clo)
    assert clo < m < chi  # the repeats differ, so the interval has width
    assert sp.loc[MODELS[1], "reasoning_tokens_ci_low"] == pytest.approx(
        sp.loc[MODELS[1], "reasoning_tokens_mean"]
    )
    html = cmp._repr_html_()
    assert "2 models × 3 repeats" in html and "67% [" in html and "bootstrap interval" in html
    assert " ± " in html  # the identical runs of MODELS[1]: no spread
    assert "success (95% CI)" in str(cmp) and "x3" in repr(cmp)


def test_one_adapter_per_model_is_shared_by_its_repeats_and_no_interval_from_one_run() -> None:
    cmp = compare("q", MODELS, adapters=[_adapter(m, "ok") for m in MODELS], live=False)
    assert cmp.repeats == 1 and "repeat" in cmp.summary().columns
    sp = cmp.spread()
    assert math.isnan(sp.loc[MODELS[0], "total_cost_usd_ci_low"])
    assert "x1" not in repr(cmp) and "sum of runs" in cmp._repr_html_()


def test_concurrency_bounds_runs_in_flight() -> None:
    in_flight = peak = 0

    @agentlab.tool
    async def wait() -> str:
        """Wait a little."""
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.05)
        in_flight -= 1
        return "done"

    def steps(model: str) -> ScriptedAdapter:
        provider, _, name = model.partition(":")
        return ScriptedAdapter(
            [Step(tool_calls=[("wait", {})]), Step(text="ok")], provider=provider, model=name
        )

    adapters = [steps(m) for m in MODELS for _ in range(4)]
    cmp = compare("q", MODELS, tools=[wait], adapters=adapters, repeats=4, concurrency=2, live=False)
    assert len(cmp.entries) == 8 and all(e.status == "completed" for e in cmp.entries)
    assert peak == 2
    peak = 0
    compare(
        "q",
        MODELS,
        tools=[wait],
        adapters=[steps(m) for m in MODELS for _ in range(4)],
        repeats=4,
        live=False,
    )
    assert peak == 8  # default: all at once


def test_bad_repeats_and_concurrency_say_the_fix() -> None:
    with pytest.raises(UserError, match="repeats must be an int >= 1"):
        compare("q", MODELS, repeats=0, live=False)
    with pytest.raises(UserError, match="concurrency must be an int >= 1"):
        compare("q", MODELS, concurrency=0, live=False)
    with pytest.raises(UserError, match="one per run: 6"):
        compare("q", MODELS, adapters=[_adapter(MODELS[0], "a")] * 5, repeats=3, live=False)


def test_mean_interval_is_student_t() -> None:
    m, _lo, hi = mean_interval([1.0, 2.0, 3.0])
    assert m == 2.0 and hi - m == pytest.approx(4.303 * 1.0 / math.sqrt(3), rel=1e-4)
    one = mean_interval([float("nan"), 4.0])
    assert one[0] == 4.0 and math.isnan(one[1]) and math.isnan(one[2])
    assert all(math.isnan(v) for v in mean_interval([]))
