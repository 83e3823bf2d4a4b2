"""compare(): runs concurrently (wall ~ slowest, not the sum), collects answers, usage and failures."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

import agentlab
from agentlab.errors import ProviderServerError, UserError
from agentlab.sweeps.compare import Comparison, acompare, compare
from agentlab.testing import ScriptedAdapter, Step

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker", "openai:sim-reasoner-mini"]
SIM_PROVIDERS = ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]


@agentlab.tool
async def lookup(city: str) -> str:
    """Look a city up (slow on purpose: 0.3 s, like a real service)."""
    await asyncio.sleep(0.3)
    return f"{city}: 21 C"


def _adapter(model: str, answer: str, *, fail: bool = False) -> ScriptedAdapter:
    provider, _, name = model.partition(":")
    steps = [
        Step(reasoning=["check"], opaque=[b"x"], tool_calls=[("lookup", {"city": "Paris"})]),
        Step(reasoning=["done"], text=answer),
    ]
    if fail:
        steps = [Step(error=ProviderServerError("down", provider=provider, status=500))]
    return ScriptedAdapter(steps, provider=provider, model=name)


def test_three_models_run_concurrently() -> None:
    answers = ["Paris", "Paris.", "Rome"]
    t0 = time.perf_counter()
    cmp = compare(
        "Warmest city?",
        MODELS,
        tools=[lookup],
        adapters=[_adapter(m, a) for m, a in zip(MODELS, answers, strict=True)],
        check=lambda out: out is not None and "Paris" in out,
        live=False,
    )
    outer = time.perf_counter() - t0
    assert isinstance(cmp, Comparison)
    assert cmp.answers == dict(zip(MODELS, answers, strict=True))
    assert cmp.steps == dict.fromkeys(MODELS, 2)
    assert [e.solved for e in cmp.entries] == [True, True, False]
    out = Path(__file__).resolve().parents[2] / "out" / "measurements"
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare_scripted_3_models.json").write_text(
        json.dumps({"wall_s": cmp.wall_s, "sum_s": cmp.sum_s, "runs_s": [e.duration_s for e in cmp.entries]})
    )
    print(f"3-model compare: wall {cmp.wall_s:.3f} s, sum of runs {cmp.sum_s:.3f} s")
    assert cmp.sum_s >= 0.9  # each run waited 0.3 s in its tool
    assert cmp.wall_s < 0.8 * cmp.sum_s
    assert outer < cmp.sum_s


def test_usage_frame_and_summary() -> None:
    cmp = compare(
        "q", MODELS[:2], tools=[lookup], adapters=[_adapter(m, "ok") for m in MODELS[:2]], live=False
    )
    df = cmp.usage
    assert list(df["label"].unique()) == MODELS[:2]
    assert len(df) == 4 and df["step"].tolist() == [1, 2, 1, 2]
    s = cmp.summary()
    assert s["steps"].tolist() == [2, 2] and s["solved"].isna().all()
    assert (s["cost_usd"] > 0).all()
    html = cmp._repr_html_()
    assert "openai:sim-reasoner" in html and "<table" in html and "sum of runs" in html
    assert "anthropic:sim-thinker" in str(cmp)


def test_one_failing_model_does_not_stop_the_others() -> None:
    cmp = compare(
        "q",
        MODELS[:2],
        tools=[lookup],
        adapters=[_adapter(MODELS[0], "ok"), _adapter(MODELS[1], "", fail=True)],
        retries=0,
        live=False,
    )
    assert [e.status for e in cmp.entries] == ["completed", "failed"]
    assert cmp.entries[1].error is not None and "down" in cmp.entries[1].error
    assert "failed" in cmp._repr_html_()


async def test_async_form_and_duplicate_labels() -> None:
    m = MODELS[0]
    cmp = await acompare(
        "q", [m, m], tools=[lookup], adapters=[_adapter(m, "a"), _adapter(m, "b")], live=False
    )
    assert cmp.labels == [m, f"{m}#2"] and list(cmp.answers.values()) == ["a", "b"]


def test_live_view_columns_receive_events() -> None:
    import agentlab.notebook.run_view as views
    from agentlab.notebook._coalesce import flush_now

    cmp_view: list[object] = []
    real = views.CompareView

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, *a: object, **kw: object) -> None:
            super().__init__(*a, **kw)
            cmp_view.append(self)

    views.CompareView = Spy  # type: ignore[misc]
    try:
        compare(
            "q", MODELS[:2], tools=[lookup], adapters=[_adapter(m, f"ans-{m}") for m in MODELS[:2]], live=True
        )
    finally:
        views.CompareView = real  # type: ignore[misc]
    view = cmp_view[0]
    for column, col, m in zip(view.model_columns, view.columns, MODELS[:2], strict=True):  # type: ignore[attr-defined]
        flush_now(column)
        assert col.status == "completed" and f"ans-{m}" in column.html


def test_bad_arguments_say_the_fix() -> None:
    with pytest.raises(UserError, match="at least one model"):
        compare("q", [])
    with pytest.raises(UserError, match="on_event"):
        compare("q", MODELS[:1], on_event=print)
    with pytest.raises(UserError, match="one per model"):
        compare("q", MODELS[:2], adapters=[None])


def test_three_simulated_providers_wall_time_is_about_the_slowest() -> None:
    """Real adapters and SDKs against the simulator, streaming with latency (``slow:10`` per delta)."""
    from agentlab.adapters.base import create_adapter

    @agentlab.tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return {"Paris": "24 C", "Rome": "21 C", "Oslo": "9 C"}.get(city, "15 C")

    task = "What is the total of the temperatures in Paris, Rome and Oslo?"
    compare(task, SIM_PROVIDERS, tools=[get_weather], live=False)  # warm up: SDK imports are not the point
    cmp = compare(
        task,
        SIM_PROVIDERS,
        tools=[get_weather],
        live=False,
        adapters=[create_adapter(m, extra_headers={"x-sim-fault": "slow:10"}) for m in SIM_PROVIDERS],
    )
    assert [e.status for e in cmp.entries] == ["completed"] * 3, [e.error for e in cmp.entries]
    runs = [e.duration_s for e in cmp.entries]
    out = Path(__file__).resolve().parents[2] / "out" / "measurements"
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare_sim_3_models.json").write_text(
        json.dumps(
            {"models": SIM_PROVIDERS, "wall_s": cmp.wall_s, "sum_s": cmp.sum_s, "runs_s": runs}, indent=2
        )
    )
    print(f"3 simulated providers: wall {cmp.wall_s:.2f} s, sum of runs {cmp.sum_s:.2f} s, runs {runs}")
    assert cmp.wall_s < 0.8 * cmp.sum_s
    assert cmp.wall_s < 1.25 * max(runs)
