"""Documented behaviour: determinism, continuity effect, effort/budget, output limits, caching, triggers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentlab import sim
from tests.sim.helpers import ANTHROPIC_WEATHER, OPENAI_WEATHER, POPULATION, TEMPS, raw_post

TASK = "Is it warmer in Paris or Rome?"
OAI = {
    "model": "sim-reasoner",
    "tools": [OPENAI_WEATHER],
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "reasoning": {"effort": "medium", "summary": "auto"},
}
ANT = {
    "model": "sim-thinker",
    "max_tokens": 6000,
    "tools": [ANTHROPIC_WEATHER],
    "thinking": {"type": "enabled", "budget_tokens": 2048},
}


# -- determinism -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/responses", {**OAI, "input": TASK, "stream": True}),
        ("/v1/messages", {**ANT, "messages": [{"role": "user", "content": TASK}], "stream": True}),
        ("/v1/messages", {**ANT, "messages": [{"role": "user", "content": TASK}]}),
    ],
)
def test_same_request_same_seed_identical_bytes(path: str, body: dict[str, Any]) -> None:
    a = raw_post(sim.SimTransport(seed=7), path, body)
    b = raw_post(sim.SimTransport(seed=7), path, body)
    c = raw_post(sim.SimTransport(seed=8), path, body)
    assert a.status_code == 200 and a.content == b.content and dict(a.headers) == dict(b.headers)
    assert a.content != c.content  # the seed changes ids, not behaviour
    assert len(a.content) == len(c.content) or path.endswith("responses")


# -- continuity effect (OpenAI) --------------------------------------------------------------------


def _openai_loop(keep_reasoning: bool) -> tuple[list[list[str]], int, str]:
    """Drive the loop; return tool calls per turn, total reasoning tokens, final answer."""
    t = sim.SimTransport()
    items: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    turns: list[list[str]] = []
    reasoning = 0
    for _ in range(6):
        r = raw_post(t, "/v1/responses", {**OAI, "input": items}).json()
        reasoning += r["usage"]["output_tokens_details"]["reasoning_tokens"]
        calls = [o for o in r["output"] if o["type"] == "function_call"]
        turns.append([json.loads(c["arguments"])["city"] for c in calls])
        if not calls:
            return turns, reasoning, r["output"][-1]["content"][0]["text"]
        items += [o for o in r["output"] if keep_reasoning or o["type"] != "reasoning"]
        items += [
            {
                "type": "function_call_output",
                "call_id": c["call_id"],
                "output": TEMPS[json.loads(c["arguments"])["city"]],
            }
            for c in calls
        ]
    raise AssertionError("loop did not finish")


def test_dropping_reasoning_items_loses_the_plan() -> None:
    kept_turns, kept_tokens, kept_answer = _openai_loop(keep_reasoning=True)
    lost_turns, lost_tokens, lost_answer = _openai_loop(keep_reasoning=False)
    assert kept_turns == [["Paris", "Rome"], []]
    assert lost_turns == [["Paris", "Rome"], ["Paris", "Rome"], []]  # the batch is repeated once
    assert lost_tokens > kept_tokens
    assert kept_answer == lost_answer == "Rome is warmer (24 vs Paris 18)."


# -- effort, budget, limits ------------------------------------------------------------------------


def test_openai_effort_changes_reasoning_tokens() -> None:
    t = sim.SimTransport()
    tokens = {}
    for effort in ("minimal", "low", "medium", "high"):
        r = raw_post(t, "/v1/responses", {**OAI, "input": TASK, "reasoning": {"effort": effort}}).json()
        tokens[effort] = r["usage"]["output_tokens_details"]["reasoning_tokens"]
        assert r["usage"]["output_tokens"] > tokens[effort]
    assert tokens["minimal"] < tokens["low"] < tokens["medium"] < tokens["high"]


def test_anthropic_budget_changes_thinking_tokens() -> None:
    t = sim.SimTransport()
    got = []
    for budget in (1024, 2048, 4096):
        r = raw_post(
            t,
            "/v1/messages",
            {
                **ANT,
                "thinking": {"type": "enabled", "budget_tokens": budget},
                "messages": [{"role": "user", "content": TASK}],
            },
        ).json()
        details = r["usage"]["output_tokens_details"]["thinking_tokens"]
        assert 0 < details < r["usage"]["output_tokens"]
        got.append(details)
    assert got[0] < got[1] < got[2]


def test_openai_max_output_tokens_gives_incomplete() -> None:
    t = sim.SimTransport()
    r = raw_post(t, "/v1/responses", {**OAI, "input": TASK, "max_output_tokens": 16}).json()
    assert r["status"] == "incomplete" and r["incomplete_details"] == {"reason": "max_output_tokens"}
    assert r["usage"]["output_tokens"] == 16
    assert [o["type"] for o in r["output"]] == ["reasoning"]
    stream = raw_post(t, "/v1/responses", {**OAI, "input": TASK, "max_output_tokens": 16, "stream": True})
    assert stream.text.rstrip().split("\n\n")[-1].startswith("event: response.incomplete")


def test_anthropic_max_tokens_stop_reason() -> None:
    r = raw_post(
        sim.SimTransport(),
        "/v1/messages",
        {
            "model": "sim-thinker",
            "max_tokens": 3,
            "messages": [{"role": "user", "content": "What is 1234 + 5678?"}],
        },
    )
    body = r.json()
    assert body["stop_reason"] == "max_tokens" and body["usage"]["output_tokens"] == 3
    assert body["content"][0]["text"] == "1234 + 5678"


def test_legacy_model_omits_thinking_tokens() -> None:
    body = {**ANT, "model": "sim-thinker-legacy", "messages": [{"role": "user", "content": TASK}]}
    usage = raw_post(sim.SimTransport(), "/v1/messages", body).json()["usage"]
    assert "output_tokens_details" not in usage and usage["output_tokens"] > 0


# -- triggers and tool behaviour --------------------------------------------------------------------


def test_interleaved_thinking_with_beta_header() -> None:
    body = {**ANT, "messages": [{"role": "user", "content": TASK}]}
    plain = raw_post(sim.SimTransport(), "/v1/messages", body).json()["content"]
    inter = raw_post(
        sim.SimTransport(), "/v1/messages", body, {"anthropic-beta": "interleaved-thinking-2025-05-14"}
    ).json()["content"]
    assert [b["type"] for b in plain] == ["thinking", "tool_use", "tool_use"]
    assert [b["type"] for b in inter] == ["thinking", "tool_use", "thinking", "tool_use"]


def test_parallel_disabled_calls_one_at_a_time() -> None:
    t = sim.SimTransport()
    tools = [{**OPENAI_WEATHER, "name": "get_population", "description": "Population of a city."}]
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "What is the total population of Paris, Rome and Berlin?"}
    ]
    per_turn = []
    for _ in range(5):
        r = raw_post(
            t, "/v1/responses", {**OAI, "tools": tools, "input": items, "parallel_tool_calls": False}
        ).json()
        calls = [o for o in r["output"] if o["type"] == "function_call"]
        per_turn.append(len(calls))
        if not calls:
            break
        items += r["output"] + [
            {
                "type": "function_call_output",
                "call_id": c["call_id"],
                "output": POPULATION[json.loads(c["arguments"])["city"]],
            }
            for c in calls
        ]
    assert per_turn == [1, 1, 1, 0]
    assert r["output"][-1]["content"][0]["text"] == "The total is 8447758 (2102650 + 2748109 + 3596999)."


# -- prompt caching -----------------------------------------------------------------------------------

LONG = "You are a careful assistant. " + " ".join(f"Rule {i}: be precise about item {i}." for i in range(200))


def test_openai_automatic_caching_keyed_by_prompt_cache_key() -> None:
    t = sim.SimTransport()

    def cached(key: str | None, text: str = TASK) -> tuple[int, int]:
        body = {**OAI, "instructions": LONG, "input": text}
        if key:
            body["prompt_cache_key"] = key
        u = raw_post(t, "/v1/responses", body).json()["usage"]
        return u["input_tokens_details"]["cached_tokens"], u["input_tokens"]

    first, total = cached("a")
    assert first == 0 and total > 1024
    again, _ = cached("a", "Is it colder in Oslo or Rome?")
    assert again >= 1024 and again % 128 == 0 and again < total
    assert cached("b")[0] == 0  # another key, another cache
    short = raw_post(t, "/v1/responses", {**OAI, "input": TASK}).json()["usage"]
    short2 = raw_post(t, "/v1/responses", {**OAI, "input": TASK}).json()["usage"]
    assert (
        short["input_tokens_details"]["cached_tokens"] == short2["input_tokens_details"]["cached_tokens"] == 0
    )


def test_anthropic_caching_only_at_breakpoints() -> None:
    t = sim.SimTransport()

    def usage(cc: bool, question: str) -> dict[str, Any]:
        system: list[dict[str, Any]] = [{"type": "text", "text": LONG}]
        if cc:
            system[0]["cache_control"] = {"type": "ephemeral"}
        body = {**ANT, "system": system, "messages": [{"role": "user", "content": question}]}
        return dict(raw_post(t, "/v1/messages", body).json()["usage"])

    no_hint = [usage(False, TASK), usage(False, TASK)]
    assert all(u["cache_read_input_tokens"] == u["cache_creation_input_tokens"] == 0 for u in no_hint)
    write = usage(True, TASK)
    read = usage(True, "Is it colder in Oslo or Rome?")
    assert write["cache_creation_input_tokens"] > 1024 and write["cache_read_input_tokens"] == 0
    assert read["cache_read_input_tokens"] == write["cache_creation_input_tokens"]
    assert read["cache_creation"]["ephemeral_5m_input_tokens"] == read["cache_creation_input_tokens"] == 0
    assert read["input_tokens"] < write["input_tokens"] + write["cache_creation_input_tokens"]


def test_anthropic_adaptive_effort_changes_thinking_tokens() -> None:
    t = sim.SimTransport()
    got = []
    for effort in ("low", "medium", "high", "max"):
        body = {
            **ANT,
            "thinking": {"type": "adaptive"},
            "output_config": {"effort": effort},
            "messages": [{"role": "user", "content": TASK}],
        }
        got.append(
            raw_post(t, "/v1/messages", body).json()["usage"]["output_tokens_details"]["thinking_tokens"]
        )
    assert got == sorted(got) and len(set(got)) == 4
