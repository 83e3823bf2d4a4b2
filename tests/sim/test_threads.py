"""Anthropic message threads in the simulator (beta ``message-threads-2026-08-12``, request ``thread``).

What the docs and the SDK (``anthropic/lib/threads``) say, and what is checked here: ``{"type":
"create"}`` holds the conversation (system, tools, messages and the reply) under the response id;
``{"type": "continue", "previous_message_id": ...}`` sends only the new turn, leaves ``system`` and
``tools`` out, and the server rebuilds the whole history (thinking blocks with their signatures
included) before the model answers; an unknown or expired id is a 404 whose ``error.details.error_code``
is ``thread_not_found`` (the SDK's thread helper replays the full history on it); the beta header is
required. The SDK's ``tool_runner`` threads by default, so it is the client that proves it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentlab import sim
from tests.sim.helpers import ANTHROPIC_WEATHER, raw_post, weather

THREADS_BETA = "message-threads-2026-08-12"
THINKING = {"type": "enabled", "budget_tokens": 2048}
BETA = {"anthropic-version": "2023-06-01", "anthropic-beta": THREADS_BETA, "x-api-key": "sim-key"}
TASK = "Is it warmer in Paris or Rome?"


def _first_turn(transport: Any, **extra: Any) -> dict[str, Any]:
    body = {
        "model": "sim-thinker",
        "max_tokens": 4000,
        "thinking": THINKING,
        "system": "Answer briefly.",
        "tools": [ANTHROPIC_WEATHER],
        "messages": [{"role": "user", "content": TASK}],
        "thread": {"type": "create"},
        **extra,
    }
    r = raw_post(transport, "/v1/messages", body, BETA)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def _results(reply: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": b["id"], "content": weather(**b["input"])}
            for b in reply["content"]
            if b["type"] == "tool_use"
        ],
    }


def _continue(prev: str, messages: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "model": "sim-thinker",
        "max_tokens": 4000,
        "thinking": THINKING,
        "messages": messages,
        "thread": {"type": "continue", "previous_message_id": prev},
        **extra,
    }


def test_sdk_tool_runner_with_beta_tool_and_thinking_runs_on_a_thread() -> None:
    """The SDK's tool_runner (threads on by default) finishes its loop against the simulator."""
    from anthropic import beta_tool

    @beta_tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return weather(city)

    client = sim.anthropic_sync_client()
    runner = client.beta.messages.tool_runner(
        model="sim-thinker",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2048},
        tools=[get_weather],
        messages=[{"role": "user", "content": TASK}],
    )
    stops = [m.stop_reason for m in runner]
    assert stops == ["tool_use", "end_turn"]
    final = runner.until_done()
    assert [b.text for b in final.content if b.type == "text"] == ["Rome is warmer (24 vs Paris 18)."]


async def test_sdk_async_tool_runner_streams_on_a_thread() -> None:
    from anthropic import beta_async_tool

    @beta_async_tool
    async def get_weather(city: str) -> str:
        """Current weather for a city."""
        return weather(city)

    client = sim.anthropic_client()
    runner = client.beta.messages.tool_runner(
        model="sim-thinker",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2048},
        tools=[get_weather],
        messages=[{"role": "user", "content": TASK}],
        stream=True,
    )
    texts = []
    async for stream in runner:
        message = await stream.get_final_message()
        texts += [b.text for b in message.content if b.type == "text"]
    assert texts == ["Rome is warmer (24 vs Paris 18)."]


def test_continue_rebuilds_history_with_signed_thinking() -> None:
    """Only the tool results are sent; the held turn (thinking + signatures) passes the strict checks."""
    t = sim.SimTransport()
    first = _first_turn(t)
    assert first["stop_reason"] == "tool_use" and first["content"][0]["type"] == "thinking"
    r = raw_post(t, "/v1/messages", _continue(first["id"], [_results(first)]), BETA)
    assert r.status_code == 200, r.text
    second = r.json()
    assert [b["text"] for b in second["content"] if b["type"] == "text"] == [
        "Rome is warmer (24 vs Paris 18)."
    ]
    # The same turn without the thread is the pairing error a stateless server gives.
    plain = _continue(first["id"], [_results(first)])
    del plain["thread"]
    r = raw_post(t, "/v1/messages", plain, BETA)
    assert r.status_code == 400 and "unexpected `tool_use_id`" in r.json()["error"]["message"]


def test_a_thread_goes_on_from_each_new_reply_and_keeps_system_and_tools() -> None:
    t = sim.SimTransport()
    first = _first_turn(t)
    second = raw_post(t, "/v1/messages", _continue(first["id"], [_results(first)]), BETA).json()
    assert second["stop_reason"] == "end_turn"
    # A follow-up question continues from the second reply: the tools are still there.
    r = raw_post(
        t,
        "/v1/messages",
        _continue(second["id"], [{"role": "user", "content": "Is it warmer in Oslo or Berlin?"}]),
        BETA,
    )
    assert r.status_code == 200, r.text
    assert r.json()["stop_reason"] == "tool_use"


def test_unknown_previous_message_id_is_404_thread_not_found() -> None:
    t = sim.SimTransport()
    r = raw_post(t, "/v1/messages", _continue("msg_01UnknownUnknownUnknown", [_user("hi")]), BETA)
    assert r.status_code == 404
    err = r.json()["error"]
    assert err["type"] == "not_found_error"
    assert err["details"]["error_code"] == "thread_not_found"


def test_expired_thread_is_404_and_the_ttl_is_configurable() -> None:
    clock = [1000.0]
    simulator = sim.Simulator()
    simulator.threads.ttl_s = 60.0
    simulator.threads.clock = lambda: clock[0]
    t = sim.SimTransport(simulator=simulator)
    first = _first_turn(t)
    clock[0] += 61.0
    r = raw_post(t, "/v1/messages", _continue(first["id"], [_results(first)]), BETA)
    assert r.status_code == 404 and r.json()["error"]["details"]["error_code"] == "thread_not_found"


def test_each_stored_turn_restarts_the_expiry() -> None:
    clock = [0.0]
    simulator = sim.Simulator()
    simulator.threads.ttl_s = 60.0
    simulator.threads.clock = lambda: clock[0]
    t = sim.SimTransport(simulator=simulator)
    first = _first_turn(t)
    clock[0] += 50.0
    second = raw_post(t, "/v1/messages", _continue(first["id"], [_results(first)]), BETA).json()
    clock[0] += 50.0  # 100 s after the create, 50 s after the last stored turn
    r = raw_post(t, "/v1/messages", _continue(second["id"], [_user("And Oslo?")]), BETA)
    assert r.status_code == 200, r.text


def test_the_store_is_bounded_per_simulator() -> None:
    simulator = sim.Simulator()
    simulator.threads.max_held = 2
    t = sim.SimTransport(simulator=simulator)
    ids = [_first_turn(t, messages=[_user(f"What is {n} + 1?")])["id"] for n in range(3)]
    assert len(simulator.threads) == 2
    r = raw_post(t, "/v1/messages", _continue(ids[0], [_user("Thanks.")]), BETA)
    assert r.status_code == 404  # the oldest went first
    other = sim.SimTransport()  # another simulator holds nothing of this one's
    r = raw_post(other, "/v1/messages", _continue(ids[2], [_user("Thanks.")]), BETA)
    assert r.status_code == 404


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def test_thread_without_the_beta_header_is_refused() -> None:
    t = sim.SimTransport()
    headers = {k: v for k, v in BETA.items() if k != "anthropic-beta"}
    body = {"model": "sim-thinker", "max_tokens": 100, "messages": [_user("hi")]}
    body["thread"] = {"type": "create"}
    r = raw_post(t, "/v1/messages", body, headers)
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "thread: Extra inputs are not permitted"


@pytest.mark.parametrize("field", ["system", "tools"])
def test_continue_that_repeats_a_create_only_field_is_refused(field: str) -> None:
    t = sim.SimTransport()
    first = _first_turn(t)
    value: Any = "Answer briefly." if field == "system" else [ANTHROPIC_WEATHER]
    r = raw_post(t, "/v1/messages", _continue(first["id"], [_results(first)], **{field: value}), BETA)
    assert r.status_code == 400
    message = r.json()["error"]["message"]
    assert message.startswith(f"thread: `{field}` cannot be sent with `thread.type: continue`")


@pytest.mark.parametrize(
    ("field", "value"),
    [("model", "sim-thinker-legacy"), ("thinking", {"type": "enabled", "budget_tokens": 3072})],
)
def test_continue_that_changes_a_pinned_field_is_refused(field: str, value: Any) -> None:
    t = sim.SimTransport()
    first = _first_turn(t)
    r = raw_post(t, "/v1/messages", _continue(first["id"], [_results(first)], **{field: value}), BETA)
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["details"]["error_code"] == "thread_fingerprint_mismatch"
    assert field in err["message"]


def test_malformed_thread_fields_are_refused() -> None:
    t = sim.SimTransport()
    base = {"model": "sim-thinker", "max_tokens": 100, "messages": [_user("hi")]}
    r = raw_post(t, "/v1/messages", {**base, "thread": {"type": "continue"}}, BETA)
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "thread.continue.previous_message_id: Field required"
    r = raw_post(t, "/v1/messages", {**base, "thread": {"type": "fork"}}, BETA)
    assert r.status_code == 400
    assert "does not match any of the expected tags: 'create', 'continue'" in r.json()["error"]["message"]


def test_a_turn_without_thread_holds_nothing() -> None:
    simulator = sim.Simulator()
    t = sim.SimTransport(simulator=simulator)
    body = {"model": "sim-thinker", "max_tokens": 100, "messages": [_user("What is 2 + 2?")]}
    r = raw_post(t, "/v1/messages", body, BETA)
    assert r.status_code == 200
    assert len(simulator.threads) == 0


def test_a_continue_is_answered_and_billed_as_the_full_request() -> None:
    """A thread saves the upload, not tokens: usage counts the whole rebuilt conversation."""
    t = sim.SimTransport()
    first = _first_turn(t)
    threaded = raw_post(t, "/v1/messages", _continue(first["id"], [_results(first)]), BETA).json()
    full = {
        "model": "sim-thinker",
        "max_tokens": 4000,
        "thinking": THINKING,
        "system": "Answer briefly.",
        "tools": [ANTHROPIC_WEATHER],
        "messages": [
            {"role": "user", "content": TASK},
            {"role": "assistant", "content": first["content"]},
            _results(first),
        ],
    }
    stateless = raw_post(sim.SimTransport(), "/v1/messages", full, BETA).json()
    assert threaded["content"] == stateless["content"]
    assert threaded["usage"] == stateless["usage"]


async def test_sdk_replays_the_full_history_when_the_thread_expired() -> None:
    """The 404's ``error_code`` is the one the SDK reads: its runner re-creates the thread and goes on."""
    from anthropic import beta_async_tool

    from tests.adapters.contract import RecordingTransport

    @beta_async_tool
    async def get_weather(city: str) -> str:
        """Current weather for a city."""
        return weather(city)

    clock = [0.0]
    simulator = sim.Simulator()
    simulator.threads.clock = lambda: clock[0]
    transport = RecordingTransport(simulator=simulator)
    runner = sim.anthropic_client(transport=transport).beta.messages.tool_runner(
        model="sim-thinker",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2048},
        tools=[get_weather],
        messages=[{"role": "user", "content": TASK}],
    )
    texts = []
    async for message in runner:
        clock[0] += simulator.threads.ttl_s + 1  # every thread expires before its next turn
        texts += [b.text for b in message.content if b.type == "text"]
    assert texts == ["Rome is warmer (24 vs Paris 18)."]
    kinds = [json.loads(b).get("thread", {}).get("type") for b in transport.bodies]
    assert kinds == ["create", "continue", "create"]  # the continue found nothing; the SDK replayed
    replay = json.loads(transport.bodies[-1])
    assert len(replay["messages"]) == 3 and "tools" in replay  # the full history and tools again


def test_sdk_thread_helper_sends_only_the_new_turn() -> None:
    """The docs' two-turn example with ``client.beta.messages.thread``: create, then continue."""
    transport = sim.SimTransport()
    client = sim.anthropic_sync_client(transport=transport)
    thread = client.beta.messages.thread(
        model="sim-thinker", max_tokens=1024, system="You are a support agent. Keep replies short."
    )
    first = thread.send({"role": "user", "content": "What is 2 + 2 * 10?"})
    second = thread.send({"role": "user", "content": "What is 12 * (3 + 4)?"})
    assert [b.text for b in first.content if b.type == "text"] == ["2 + 2 * 10 = 22"]
    assert [b.text for b in second.content if b.type == "text"] == ["12 * (3 + 4) = 84"]
    assert len(thread.messages) == 4
    # The continue sent one message; the server answered (and billed) the whole rebuilt conversation.
    assert second.usage.input_tokens > first.usage.input_tokens
