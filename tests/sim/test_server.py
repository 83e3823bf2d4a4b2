"""The loopback server, driven over a real socket by the official SDKs like any outside client would."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from tests.sim.helpers import ANTHROPIC_WEATHER, OPENAI_WEATHER, TEMPS, assert_dropped_body
from tests.support.loopback import serving, start

TASK = "Is it warmer in Paris or Rome?"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serving() as url:
        yield url


async def test_openai_sdk_full_tool_loop_over_socket(server: str) -> None:
    client = openai.AsyncOpenAI(base_url=f"{server}/v1", api_key="anything")
    items: list[Any] = [{"role": "user", "content": TASK}]
    for turn in range(4):
        kw: dict[str, Any] = {
            "model": "sim-reasoner",
            "input": items,
            "tools": [OPENAI_WEATHER],
            "store": False,
            "include": ["reasoning.encrypted_content"],
            "reasoning": {"summary": "auto"},
        }
        if turn == 0:
            async with client.responses.stream(**kw) as st:
                async for _ in st:
                    pass
                r = await st.get_final_response()
        else:
            stream = await client.responses.create(**kw, stream=True)
            async for ev in stream:
                if ev.type == "response.completed":
                    r = ev.response
        calls = [o for o in r.output if o.type == "function_call"]
        items += [o.model_dump(exclude_none=True) for o in r.output]
        items += [
            {
                "type": "function_call_output",
                "call_id": c.call_id,
                "output": TEMPS[json.loads(c.arguments)["city"]],
            }
            for c in calls
        ]
        if not calls:
            break
    assert r.output_text == "Rome is warmer (24 vs Paris 18)."
    plain = await client.responses.create(model="sim-reasoner", input="What is 6 * 7?")
    assert plain.output_text == "6 * 7 = 42"
    models = [m.id async for m in client.models.list()]
    # The server answers real names by default: the simulated ones first, then the real ones.
    assert models[:2] == ["sim-reasoner", "sim-reasoner-mini"] and "gpt-5.5" in models
    await client.close()


def test_anthropic_sdk_full_tool_loop_over_socket(server: str) -> None:
    client = anthropic.Anthropic(base_url=server, api_key="anything")
    msgs: list[Any] = [{"role": "user", "content": TASK}]
    kw: dict[str, Any] = {
        "model": "sim-thinker",
        "max_tokens": 4000,
        "tools": [ANTHROPIC_WEATHER],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    }
    with client.messages.stream(messages=msgs, **kw) as st:
        for _ in st:
            pass
        first = st.get_final_message()
    msgs.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]})
    msgs.append(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": b.id, "content": TEMPS[str(b.input["city"])]}
                for b in first.content
                if b.type == "tool_use"
            ],
        }
    )
    final = client.messages.create(messages=msgs, **kw)
    assert final.content[-1].type == "text" and final.content[-1].text == "Rome is warmer (24 vs Paris 18)."
    raw = client.messages.create(messages=msgs, stream=True, **kw)
    assert [ev.type for ev in raw][-1] == "message_stop"
    models = [m.id for m in client.models.list()]
    assert models[:2] == ["sim-thinker", "sim-thinker-legacy"] and "claude-opus-4-6" in models
    with pytest.raises(anthropic.BadRequestError, match="Invalid `signature`"):
        bad = json.loads(json.dumps(msgs))
        bad[1]["content"][0]["signature"] = "Zm9yZ2Vk"
        client.messages.create(messages=bad, **kw)


def test_server_streams_incrementally_and_retries_work(server: str) -> None:
    body = {
        "model": "sim-thinker",
        "max_tokens": 2000,
        "stream": True,
        "messages": [{"role": "user", "content": TASK}],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    with (
        httpx2.Client() as c,
        c.stream(
            "POST",
            f"{server}/v1/messages",
            json=body,
            headers={"x-sim-fault": "slow:15", "anthropic-version": "2023-06-01", "x-api-key": "k"},
        ) as r,
    ):
        start = time.perf_counter()
        arrivals = [time.perf_counter() - start for _ in r.iter_bytes()]
    assert len(arrivals) > 5 and arrivals[0] < arrivals[-1] - 0.1  # first bytes long before the last
    client = openai.OpenAI(base_url=f"{server}/v1", api_key="x", max_retries=2)
    ok = client.responses.create(
        model="sim-reasoner", input="What is 1 + 1?", extra_headers={"x-sim-fault": "429x2"}
    )
    assert ok.output_text == "1 + 1 = 2"


def test_sigint_stops_cleanly() -> None:
    proc, url = start("--seed", "3")
    with httpx2.Client() as c:
        assert c.get(f"{url}/v1/models", headers={"authorization": "Bearer k"}).status_code == 200
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0 and "stopped" in out and "Traceback" not in err


def test_reset_over_the_socket_is_a_connection_reset(server: str) -> None:
    client = anthropic.Anthropic(base_url=server, api_key="anything", max_retries=0)
    stream = client.messages.create(
        model="sim-thinker",
        max_tokens=100,
        stream=True,
        messages=[{"role": "user", "content": "What is 2 + 3?"}],
        extra_headers={"x-sim-fault": "reset"},
    )
    with pytest.raises((httpx2.ReadError, anthropic.APIConnectionError)) as info:
        for _ in stream:
            pass
    assert_dropped_body(info.value)
