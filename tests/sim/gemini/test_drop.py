"""The simulated Gemini API when a tool loop's thought signatures are dropped on purpose.

Google documents a recovery for function calls whose signatures are not available (history from
another model, injected calls): a dummy value in ``thoughtSignature``. The real API then accepts the
request, but the model has not got its reasoning from the earlier steps back. The simulator accepts
exactly the two documented dummies on ``sim-gemini`` (any other value stays "Thought signature is
not valid"), accepts missing signatures on ``sim-gemini-legacy`` as Gemini 2.5 does, and in both
cases applies the continuity effect the OpenAI simulator applies: the model re-plans (more thought
tokens) and repeats its most recent batch of calls once before answering; ``x-sim-plan`` says
``known`` or ``lost``.
"""

from __future__ import annotations

import copy
from typing import Any

import httpx2
import pytest

from agentlab import sim
from agentlab.sim.gemini import generate as gemini
from tests.sim.helpers import TEMPS, WEATHER_SCHEMA

TASK = "Is it warmer in Paris or Rome?"
DUMMIES = ("context_engineering_is_the_way_to_go", "skip_thought_signature_validator")
TOOLS = [
    {
        "functionDeclarations": [
            {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "parametersJsonSchema": WEATHER_SCHEMA,
            }
        ]
    }
]


def post(transport: sim.SimTransport, model: str, contents: list[dict[str, Any]], **config: Any) -> Any:
    body: dict[str, Any] = {"contents": contents, "tools": TOOLS}
    if config:
        body["generationConfig"] = {"thinkingConfig": config}
    with httpx2.Client(transport=transport, base_url=sim.GEMINI_BASE_URL) as c:
        return c.post(f"/v1beta/models/{model}:generateContent", json=body, headers={"x-goog-api-key": "k"})


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def answers(content: dict[str, Any]) -> dict[str, Any]:
    """The function responses for every call of a model content, in order."""
    parts = []
    for p in content["parts"]:
        if "functionCall" in p:
            fc = p["functionCall"]
            fr = {"name": fc["name"], "response": {"result": TEMPS[fc["args"]["city"]]}}
            if "id" in fc:
                fr["id"] = fc["id"]
            parts.append({"functionResponse": fr})
    return {"role": "user", "parts": parts}


def first_step(transport: sim.SimTransport, model: str, **config: Any) -> list[dict[str, Any]]:
    """The task, the model's first step (parallel calls), and their responses."""
    r = post(transport, model, [user(TASK)], **config)
    assert r.status_code == 200, r.text
    content = r.json()["candidates"][0]["content"]
    return [user(TASK), content, answers(content)]


def calls(r: Any) -> list[tuple[str, dict[str, Any]]]:
    return [
        (p["functionCall"]["name"], p["functionCall"]["args"])
        for p in r.json()["candidates"][0]["content"]["parts"]
        if "functionCall" in p
    ]


def thoughts(r: Any) -> int:
    return int(r.json()["usageMetadata"].get("thoughtsTokenCount", 0))


def with_signature(contents: list[dict[str, Any]], value: str | None) -> list[dict[str, Any]]:
    """A copy with the first step's functionCall signatures replaced by ``value`` (``None``: removed)."""
    out = copy.deepcopy(contents)
    first = True
    for p in out[1]["parts"]:
        if "functionCall" not in p:
            continue
        p.pop("thoughtSignature", None)
        if value is not None and first:
            p["thoughtSignature"] = value
        first = False
    return out


@pytest.mark.parametrize("dummy", DUMMIES)
def test_a_documented_dummy_is_accepted_and_the_model_loses_its_plan(dummy: str) -> None:
    t = sim.SimTransport()
    contents = first_step(t, "sim-gemini")
    kept = post(t, "sim-gemini", contents)
    assert kept.status_code == 200 and kept.headers["x-sim-plan"] == "known"
    assert calls(kept) == [] and "Rome" in kept.json()["candidates"][0]["content"]["parts"][0]["text"]

    lost = post(t, "sim-gemini", with_signature(contents, dummy))
    assert lost.status_code == 200, lost.text
    assert lost.headers["x-sim-plan"] == "lost"
    # It repeats its most recent batch of calls (same arguments) and reasons more to re-plan.
    assert calls(lost) == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    assert thoughts(lost) > thoughts(kept)


def test_after_the_repeat_it_answers_what_the_verbatim_loop_answered() -> None:
    t = sim.SimTransport()
    contents = first_step(t, "sim-gemini")
    kept = post(t, "sim-gemini", contents).json()["candidates"][0]["content"]["parts"][0]["text"]
    lost = with_signature(contents, DUMMIES[1])
    second = post(t, "sim-gemini", lost).json()["candidates"][0]["content"]
    # The repeated batch carries a real signature of its own; the first step's stays a dummy.
    assert second["parts"][0]["thoughtSignature"] not in DUMMIES
    third = post(t, "sim-gemini", [*lost, second, answers(second)])
    # The first step's plan stays lost, but the batch was repeated once already: it answers.
    assert third.status_code == 200 and third.headers["x-sim-plan"] == "lost"
    assert calls(third) == [] and third.json()["candidates"][0]["content"]["parts"][0]["text"] == kept


@pytest.mark.parametrize(
    "value",
    [
        "skip_thought_signature_validator ",  # near misses are not the dummy
        "Skip_Thought_Signature_Validator",
        "context_engineering",
        "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I=",  # the dummy, base64-encoded
    ],
)
def test_any_other_value_is_still_not_valid(value: str) -> None:
    t = sim.SimTransport()
    r = post(t, "sim-gemini", with_signature(first_step(t, "sim-gemini"), value))
    assert r.status_code == 400 and r.json()["error"]["message"] == gemini.INVALID_SIGNATURE


def test_a_signature_from_another_simulator_is_still_not_valid() -> None:
    other = first_step(sim.SimTransport(secret=b"another key"), "sim-gemini")
    t = sim.SimTransport()
    r = post(t, "sim-gemini", other)
    assert r.status_code == 400 and r.json()["error"]["message"] == gemini.INVALID_SIGNATURE


def test_a_missing_signature_on_gemini_3_is_still_the_real_400() -> None:
    t = sim.SimTransport()
    r = post(t, "sim-gemini", with_signature(first_step(t, "sim-gemini"), None))
    assert r.status_code == 400 and r.json()["error"]["message"].startswith(
        "Function call is missing a thought_signature"
    )


def test_a_dummy_on_an_earlier_turn_is_harmless() -> None:
    t = sim.SimTransport()
    contents = with_signature(first_step(t, "sim-gemini"), DUMMIES[0])
    answer = post(t, "sim-gemini", contents).json()["candidates"][0]["content"]
    history = [*contents, answer, user("Is it warmer in Paris or Oslo?")]
    r = post(t, "sim-gemini", history)
    assert r.status_code == 200 and r.headers["x-sim-plan"] == "known"
    step = r.json()["candidates"][0]["content"]
    second = post(t, "sim-gemini", [*history, step, answers(step)])
    assert second.headers["x-sim-plan"] == "known" and calls(second) == []


def test_legacy_accepts_missing_signatures_and_loses_its_plan() -> None:
    t = sim.SimTransport()
    contents = first_step(t, "sim-gemini-legacy")
    kept = post(t, "sim-gemini-legacy", contents)
    assert kept.headers["x-sim-plan"] == "known" and calls(kept) == []
    for value in (None, DUMMIES[0]):
        lost = post(t, "sim-gemini-legacy", with_signature(contents, value))
        assert lost.status_code == 200 and lost.headers["x-sim-plan"] == "lost"
        assert [a["city"] for _, a in calls(lost)] == ["Paris", "Rome"]
        assert thoughts(lost) > thoughts(kept)


def test_legacy_with_thinking_off_has_no_plan_to_lose() -> None:
    t = sim.SimTransport()
    contents = first_step(t, "sim-gemini-legacy", thinkingBudget=0)
    assert all("thoughtSignature" not in p for p in contents[1]["parts"])
    r = post(t, "sim-gemini-legacy", contents, thinkingBudget=0)
    assert r.headers["x-sim-plan"] == "known" and calls(r) == [] and thoughts(r) == 0


def test_the_lost_plan_is_deterministic() -> None:
    contents = with_signature(first_step(sim.SimTransport(), "sim-gemini"), DUMMIES[0])
    a, b = (post(sim.SimTransport(), "sim-gemini", contents) for _ in range(2))
    assert a.content == b.content and a.headers["x-sim-plan"] == b.headers["x-sim-plan"] == "lost"


def test_the_stream_says_the_plan_too() -> None:
    t = sim.SimTransport()
    contents = with_signature(first_step(t, "sim-gemini"), DUMMIES[1])
    body = {"contents": contents, "tools": TOOLS}
    with httpx2.Client(transport=t, base_url=sim.GEMINI_BASE_URL) as c:
        r = c.post(
            "/v1beta/models/sim-gemini:streamGenerateContent?alt=sse",
            json=body,
            headers={"x-goog-api-key": "k"},
        )
    assert r.status_code == 200 and r.headers["x-sim-plan"] == "lost"
    assert r.text.count('"functionCall"') == 2
