"""Faults on demand: error statuses, bounded retry then success, broken streams, slow streams."""

from __future__ import annotations

import time
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from agentlab import sim
from tests.sim.helpers import assert_dropped_body, raw_post

Q = "What is 2 + 3?"
ANT: dict[str, Any] = {
    "model": "sim-thinker",
    "max_tokens": 200,
    "messages": [{"role": "user", "content": Q}],
}


async def test_429x2_is_retried_then_succeeds() -> None:
    t = sim.SimTransport(retry_after_ms=5)
    client = sim.openai_client(transport=t, max_retries=2)
    r = await client.responses.create(model="sim-reasoner", input=Q, extra_headers={"x-sim-fault": "429x2"})
    assert r.output_text == "2 + 3 = 5" and t.requests == 3
    t2 = sim.SimTransport(retry_after_ms=5)
    a = sim.anthropic_client(transport=t2, max_retries=2)
    m = await a.messages.create(**ANT, extra_headers={"x-sim-fault": "429x2"})
    assert m.content[-1].type == "text" and m.content[-1].text == "2 + 3 = 5" and t2.requests == 3


async def test_429_beyond_the_retry_budget_raises_with_retry_after() -> None:
    t = sim.SimTransport(retry_after_ms=5)
    client = sim.openai_client(transport=t, max_retries=1)
    with pytest.raises(openai.RateLimitError) as info:
        await client.responses.create(model="sim-reasoner", input=Q, extra_headers={"x-sim-fault": "429"})
    assert t.requests == 2 and info.value.response.headers["retry-after-ms"] == "5"
    assert info.value.response.headers["retry-after"] == "1"


def test_model_name_option_selects_the_fault() -> None:
    t = sim.SimTransport()
    r = raw_post(t, "/v1/responses", {"model": "sim-reasoner+fault=429x1", "input": Q})
    assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limit_exceeded"
    ok = raw_post(t, "/v1/responses", {"model": "sim-reasoner+fault=429x1", "input": Q})
    assert ok.status_code == 200 and ok.json()["model"] == "sim-reasoner"


@pytest.mark.parametrize(
    ("fault", "status", "kind"), [("500", 500, "api_error"), ("529", 529, "overloaded_error")]
)
def test_anthropic_server_faults(fault: str, status: int, kind: str) -> None:
    r = raw_post(sim.SimTransport(), "/v1/messages", ANT, {"x-sim-fault": fault})
    assert r.status_code == status and r.json()["error"]["type"] == kind and r.headers["request-id"]


async def test_sdk_error_classes_for_server_faults() -> None:
    a = sim.anthropic_client(max_retries=0)
    with pytest.raises(anthropic.OverloadedError):
        await a.messages.create(**ANT, extra_headers={"x-sim-fault": "529"})
    o = sim.openai_client(max_retries=0)
    with pytest.raises(openai.InternalServerError):
        await o.responses.create(model="sim-reasoner", input=Q, extra_headers={"x-sim-fault": "500"})


def test_bad_fault_spec_is_a_400_not_ignored() -> None:
    r = raw_post(
        sim.SimTransport(), "/v1/responses", {"model": "sim-reasoner", "input": Q}, {"x-sim-fault": "42"}
    )
    assert r.status_code == 400 and "x-sim-fault" in r.json()["error"]["message"]


async def test_cut_stream_ends_without_terminal_event() -> None:
    client = sim.openai_client(max_retries=0)
    stream = await client.responses.create(
        model="sim-reasoner", input=Q, stream=True, extra_headers={"x-sim-fault": "cut"}
    )
    types = [ev.type async for ev in stream]
    assert types and "response.completed" not in types
    with pytest.raises(RuntimeError, match=r"response\.completed"):
        async with client.responses.stream(
            model="sim-reasoner", input=Q, extra_headers={"x-sim-fault": "cut"}
        ) as st:
            async for _ in st:
                pass
            await st.get_final_response()


async def test_malformed_event_raises_a_decode_error() -> None:
    client = sim.anthropic_client(max_retries=0)
    stream = await client.messages.create(**ANT, stream=True, extra_headers={"x-sim-fault": "malformed"})
    with pytest.raises(ValueError):
        async for _ in stream:
            pass


async def test_reset_raises_a_transport_error() -> None:
    client = sim.anthropic_client(max_retries=0)
    stream = await client.messages.create(**ANT, stream=True, extra_headers={"x-sim-fault": "reset"})
    with pytest.raises((httpx2.ReadError, anthropic.APIConnectionError)) as info:
        async for _ in stream:
            pass
    assert_dropped_body(info.value)


async def test_unknown_events_are_tolerated_by_both_sdks() -> None:
    o = sim.openai_client()
    async with o.responses.stream(
        model="sim-reasoner", input=Q, extra_headers={"x-sim-fault": "unknown_event"}
    ) as st:
        async for _ in st:
            pass
        assert (await st.get_final_response()).output_text == "2 + 3 = 5"
    raw = raw_post(
        sim.SimTransport(), "/v1/messages", {**ANT, "stream": True}, {"x-sim-fault": "unknown_event"}
    )
    assert "event: sim_unknown_event" in raw.text
    a = sim.anthropic_client()
    async with a.messages.stream(**ANT, extra_headers={"x-sim-fault": "unknown_event"}) as ast:
        async for _ in ast:
            pass
        final = await ast.get_final_message()
    assert final.content[-1].type == "text" and final.content[-1].text == "2 + 3 = 5"


def test_slow_stream_delays_each_delta() -> None:
    t = sim.SimTransport()
    body = {**ANT, "max_tokens": 2000, "thinking": {"type": "enabled", "budget_tokens": 1024}, "stream": True}
    fast = raw_post(t, "/v1/messages", body)
    deltas = fast.text.count("event: content_block_delta")
    start = time.perf_counter()
    slow = raw_post(t, "/v1/messages", body, {"x-sim-fault": "slow:20"})
    elapsed = time.perf_counter() - start
    assert slow.content == fast.content and deltas >= 10
    assert elapsed >= deltas * 0.02 * 0.9
