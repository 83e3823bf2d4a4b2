"""``continuation_policy="drop"`` on Gemini: the documented stand-in signature, and what dropping costs.

Gemini 3 answers a current-turn ``functionCall`` part without its thought signature with 400; Google
documents a recovery for calls whose signatures are not available: a dummy ``thoughtSignature``.
Under ``drop`` (signatures withheld on purpose) the adapter sends that dummy on the first
functionCall part of each step of the current turn, on Gemini 3 models only (2.5 accepts missing
signatures). A verbatim run never sends it: a signature missing there is a bug the API must see.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.adapters.google_gemini import GoogleGeminiAdapter
from agentlab.adapters.google_gemini._request import build_request
from agentlab.errors import ProviderAPIError
from agentlab.neutral.events import DiagnosticEvent
from agentlab.neutral.items import AssistantTextItem, ToolCallItem, ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest
from agentlab.sim import gemini_client
from agentlab.sweeps import continuity_settings, load_results, sim_tasks, sim_tools, sweep
from tests.adapters.contract import WEATHER_OPEN as WEATHER
from tests.adapters.contract import RecordingTransport
from tests.adapters.google_gemini.gemini_support import signed_parts

TASK = "Is it warmer in Paris or Rome?"
TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny", "Oslo": "-3 C, snow"}
DUMMIES = {"context_engineering_is_the_way_to_go", "skip_thought_signature_validator"}


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return TEMPS[city]


def sim_adapter(model: str) -> tuple[GoogleGeminiAdapter, RecordingTransport]:
    transport = RecordingTransport()
    return GoogleGeminiAdapter(model, client=gemini_client(transport=transport), max_retries=0), transport


async def run(model: str, policy: str) -> tuple[al.RunResult, RecordingTransport]:
    adapter, transport = sim_adapter(model)
    result = await al.arun(
        f"google:{model}", TASK, tools=[get_weather], adapter=adapter, continuation_policy=policy
    )
    return result, transport


def sent_signatures(transport: RecordingTransport) -> list[list[tuple[int, int, str, str]]]:
    return [signed_parts(json.loads(b)) for b in transport.bodies]


@pytest.mark.parametrize("model", ["sim-gemini", "sim-gemini-legacy"])
async def test_drop_runs_with_thinking_on_and_pays_for_the_lost_plan(model: str) -> None:
    kept, t_kept = await run(model, "verbatim")
    dropped, t_drop = await run(model, "drop")
    kept.raise_for_status()
    dropped.raise_for_status()
    assert dropped.output == kept.output and "Rome" in (dropped.output or "")
    assert [h["x-sim-plan"] for h in t_kept.headers] == ["known", "known"]
    assert [h["x-sim-plan"] for h in t_drop.headers] == ["known", "lost", "lost"]
    # One more step: the most recent batch of calls again (same arguments), then the same answer.
    assert (kept.steps, dropped.steps) == (2, 3)
    assert [c.stop_reason for c in dropped.calls] == ["tool_use", "tool_use", "end_turn"]
    assert (dropped.usage.tokens.reasoning_tokens or 0) > (kept.usage.tokens.reasoning_tokens or 0)
    assert dropped.usage.cost.total > kept.usage.cost.total
    # Every signature the model gave is counted as dropped, with the policy named.
    assert kept.usage.reasoning_items_dropped == 0
    # sim-gemini signs each step's first call and the answer's last part; 2.5 only the calls.
    assert dropped.usage.reasoning_items_dropped == (3 if model == "sim-gemini" else 2)
    reasons = {
        e.data["reason"]
        for e in dropped.events
        if isinstance(e, DiagnosticEvent) and e.code == "reasoning_item_dropped"
    }
    assert reasons == {"policy_drop"}


async def test_drop_on_gemini_3_sends_the_documented_dummy_on_each_steps_first_call() -> None:
    dropped, transport = await run("sim-gemini", "drop")
    sent = sent_signatures(transport)
    assert sent[0] == []
    # Step 2: the first step's first call (content 1, part 0) carries the dummy; the parallel second
    # call carries nothing, as the API gives it nothing.
    assert [(ci, pi, kind) for ci, pi, kind, _ in sent[1]] == [(1, 0, "functionCall:get_weather")]
    assert [(ci, pi) for ci, pi, _, _ in sent[2]] == [(1, 0), (3, 0)]
    assert {s for body in sent for *_, s in body} <= DUMMIES
    notes = [e for e in dropped.events if isinstance(e, DiagnosticEvent) and e.code == "signature_stand_in"]
    assert [n.data["count"] for n in notes] == [1, 2]
    assert all("continuation_policy='drop'" in n.message for n in notes)


async def test_drop_on_gemini_2_5_sends_no_signature_at_all() -> None:
    _, transport = await run("sim-gemini-legacy", "drop")
    assert sent_signatures(transport) == [[], [], []]


@pytest.mark.parametrize("model", ["sim-gemini", "sim-gemini-legacy"])
async def test_a_verbatim_run_never_sends_a_dummy(model: str) -> None:
    _, transport = await run(model, "verbatim")
    sent = sent_signatures(transport)
    assert sent[1] and not {s for body in sent for *_, s in body} & DUMMIES


def _history() -> tuple[Any, ...]:
    """An earlier turn (call + answer), then the current turn's first step and its results."""
    return (
        UserItem(text="Is it warmer in Oslo or Rome?"),
        ToolCallItem(call_id="a1", name="get_weather", arguments='{"city":"Oslo"}', turn_id="t1", index=0),
        ToolResultItem(call_id="a1", name="get_weather", output="-3 C"),
        AssistantTextItem(text="Rome.", turn_id="t2", index=0),
        UserItem(text=TASK),
        ToolCallItem(call_id="b1", name="get_weather", arguments='{"city":"Paris"}', turn_id="t3", index=0),
        ToolCallItem(call_id="b2", name="get_weather", arguments='{"city":"Rome"}', turn_id="t3", index=1),
        ToolResultItem(call_id="b1", name="get_weather", output="18 C"),
        ToolResultItem(call_id="b2", name="get_weather", output="24 C"),
    )


def test_the_dummy_goes_on_the_current_turn_only_and_only_under_drop() -> None:
    req = ModelRequest(model="sim-gemini", items=_history(), tools=(WEATHER,), continuation_policy="drop")

    def body(**update: Any) -> Any:
        return json.loads(build_request(req.model_copy(update=update), base_url=None).body)

    # Contents: 0 user, 1 model (earlier turn's call), 2 responses, 3 answer, 4 user, 5 model, 6 responses.
    assert [(ci, pi, s) for ci, pi, _, s in signed_parts(body())] == [
        (5, 0, "skip_thought_signature_validator")
    ]
    assert signed_parts(body(continuation_policy="verbatim")) == []
    assert signed_parts(body(model="sim-gemini-legacy")) == []


async def test_a_verbatim_request_missing_its_signature_still_fails_loudly() -> None:
    adapter, transport = sim_adapter("sim-gemini")
    req = ModelRequest(model="sim-gemini", items=_history(), tools=(WEATHER,))  # no continuation: a bug
    with pytest.raises(ProviderAPIError) as info:
        async for _ in adapter.stream(req):
            pass
    await adapter.aclose()
    assert info.value.status == 400 and "missing a thought_signature" in str(info.value)
    assert not signed_parts(json.loads(transport.bodies[0]))


def test_the_spec_lets_gemini_drop_with_thinking_on() -> None:
    spec = al.get_provider("google")
    assert spec.drop_with_reasoning
    for model in ("gemini-3-pro-preview", "gemini-2.5-pro", "sim-gemini", "sim-gemini-legacy"):
        assert spec.drop_refusal_for(model) is None
    al.Run("google:sim-gemini", TASK, continuation_policy="drop")  # constructs: not refused


def test_a_continuity_sweep_over_gemini_runs_verbatim_and_drop(tmp_path: Path) -> None:
    tasks = sim_tasks(["continuity"])[:2] + sim_tasks(["compare"])[:1]
    models = ["google:sim-gemini", "google:sim-gemini-legacy"]
    out = tmp_path / "r.jsonl"
    rep = sweep(tasks, models, results=out, tools=sim_tools(), settings=continuity_settings(), progress=None)
    assert rep.status == "completed" and rep.ran == 12 and rep.failed == 0
    df = load_results(out)
    assert set(df["setting"]) == {"verbatim", "drop"}
    assert df["success"].all()
    g = df.set_index(["model", "task_id", "setting"])
    for model, task_id in {(m, t) for m, t, _ in g.index}:
        v, d = g.loc[(model, task_id, "verbatim")], g.loc[(model, task_id, "drop")]
        assert d["steps"] == v["steps"] + 1 and d["tool_calls"] == 2 * v["tool_calls"]
        assert d["reasoning_tokens"] > v["reasoning_tokens"] and d["total_cost_usd"] > v["total_cost_usd"]
        assert d["reasoning_items_dropped"] > 0 and v["reasoning_items_dropped"] == 0
