"""The Chat Completions simulator's HTTP surface: auth, exact routes, usage, streams, faults, determinism."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest

from agentlab import sim
from tests.sim.chat.helpers import TASK, WEATHER_TOOL, client, merge_stream, run_loop
from tests.support.loopback import serving

BASE = "http://sim.agentlab.local"
BODY: dict[str, Any] = {"messages": [{"role": "user", "content": TASK}], "tools": [WEATHER_TOOL]}


def post(t: Any, path: str, model: str, headers: dict[str, str] | None = None, **extra: Any) -> Any:
    with httpx2.Client(transport=t, base_url=BASE) as c:
        return c.post(path, json={**BODY, "model": model, **extra}, headers=headers or {})


KEY = {"authorization": "Bearer sk-anything"}


# -- auth --------------------------------------------------------------------------------------------


def test_deepseek_and_openrouter_need_a_key_local_does_not() -> None:
    t = sim.SimTransport()
    r = post(t, "/chat/completions", "sim-deepseek")
    assert (r.status_code, r.json()) == (
        401,
        {
            "error": {
                "message": "Authentication Fails (auth header format should be Bearer sk-...)",
                "type": "authentication_error",
                "param": None,
                "code": "invalid_request_error",
            }
        },
    )
    assert post(t, "/v1/chat/completions", "sim-deepseek").status_code == 401
    r = post(t, "/api/v1/chat/completions", "sim-router-gemini")
    assert (r.status_code, r.json()) == (
        401,
        {"error": {"message": "No auth credentials found", "code": 401}},
    )
    assert post(t, "/v1/chat/completions", "sim-local").status_code == 200
    assert post(t, "/chat/completions", "sim-deepseek", KEY).status_code == 200


# -- routes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "model", "status"),
    [
        ("/v1/v1/chat/completions", "sim-deepseek", 404),
        ("/api/chat/completions", "sim-router-gemini", 404),
        ("/api/v1/chat/completions", "sim-deepseek", 400),  # OpenRouter does not route it
        ("/v1/chat/completions", "sim-router-gemini", 400),  # nor DeepSeek / a local server
        ("/api/v1/chat/completions", "sim-router-claude", 200),
    ],
)
def test_exact_routes(path: str, model: str, status: int) -> None:
    assert post(sim.SimTransport(), path, model, KEY).status_code == status


def test_unknown_model_errors_in_each_hosts_words() -> None:
    t = sim.SimTransport()
    assert post(t, "/chat/completions", "deepseek-nope", KEY).json()["error"]["message"] == "Model Not Exist"
    r = post(t, "/api/v1/chat/completions", "vendor/nope", KEY).json()
    assert r["error"] == {"message": "vendor/nope is not a valid model ID", "code": 400}


async def test_models_lists_per_host() -> None:
    router = await client("openrouter").models.list()
    assert [m.id for m in router.data] == list(sim.CHAT_MODELS["openrouter"])
    local = await client("local").models.list()
    served = ("deepseek", "local", "moonshot", "xai_chat")  # every model /v1/chat/completions serves
    assert [m.id for m in local.data] == [m for d in served for m in sim.CHAT_MODELS[d]]
    assert (await client("deepseek").models.retrieve("sim-deepseek")).id == "sim-deepseek"


# -- request fields ------------------------------------------------------------------------------------


def test_deepseek_refuses_unknown_variants_like_its_parser() -> None:
    t = sim.SimTransport()
    msgs = [{"role": "developer", "content": "x"}, {"role": "user", "content": TASK}]
    r = post(t, "/chat/completions", "sim-deepseek", KEY, messages=msgs)
    assert r.status_code == 400
    assert r.json()["error"]["message"].startswith(
        "Failed to deserialize the JSON body into the target type: messages[0]: unknown variant `developer`"
    )
    r = post(t, "/chat/completions", "sim-deepseek", KEY, thinking={"type": "on"})
    assert "thinking.type: unknown variant `on`" in r.json()["error"]["message"]
    # unknown fields are ignored (serde's default), as by OpenRouter and local servers
    assert post(t, "/chat/completions", "sim-deepseek", KEY, sim_extra_field=1).status_code == 200
    assert post(t, "/api/v1/chat/completions", "sim-router-openai", KEY, sim_extra_field=1).status_code == 200
    assert post(t, "/v1/chat/completions", "sim-local", sim_extra_field=1).status_code == 200


def test_local_errors_in_llamacpp_shape() -> None:
    r = post(sim.SimTransport(), "/v1/chat/completions", "sim-local", messages=[])
    assert r.status_code == 400 and set(r.json()["error"]) == {"code", "message", "type"}


async def test_max_tokens_cuts_with_finish_reason_length() -> None:
    r = await client("deepseek").chat.completions.create(
        model="sim-deepseek", messages=[{"role": "user", "content": TASK}], max_tokens=20
    )
    assert r.choices[0].finish_reason == "length" and r.usage is not None and r.usage.completion_tokens == 20


# -- usage in streams ----------------------------------------------------------------------------------


async def _chunks(dialect: str, model: str, **kw: Any) -> list[Any]:
    s = await client(dialect).chat.completions.create(
        model=model, messages=[{"role": "user", "content": TASK}], tools=[WEATHER_TOOL], stream=True, **kw
    )
    return [c async for c in s]


async def test_stream_usage_per_dialect() -> None:
    ds = await _chunks("deepseek", "sim-deepseek")
    assert all(c.usage is None for c in ds)
    ds = await _chunks("deepseek", "sim-deepseek", stream_options={"include_usage": True})
    assert ds[-1].choices and ds[-1].choices[0].finish_reason == "tool_calls" and ds[-1].usage is not None
    assert ds[-1].usage.model_extra is not None and "prompt_cache_hit_tokens" in ds[-1].usage.model_extra
    local = await _chunks("local", "sim-local", stream_options={"include_usage": True})
    assert local[-1].choices == [] and local[-1].usage is not None
    assert local[-1].usage.completion_tokens_details is None  # no reasoning_tokens: unknown, not 0
    router = await _chunks("openrouter", "sim-router-openai")
    assert router[-1].usage is not None and router[-1].usage.model_extra["cost"] > 0
    _, usage = merge_stream(router)
    assert usage.completion_tokens_details.reasoning_tokens > 0


async def test_stream_and_body_agree_on_reasoning_details() -> None:
    kw: dict[str, Any] = {"extra_body": {"reasoning": {"effort": "high"}}}
    for model in ("sim-router-claude", "sim-router-openai", "sim-router-gemini"):
        r = await client("openrouter").chat.completions.create(
            model=model, messages=[{"role": "user", "content": TASK}], tools=[WEATHER_TOOL], **kw
        )
        body = r.choices[0].message.model_dump(exclude_none=True)
        streamed, _ = merge_stream(await _chunks("openrouter", model, **kw))
        if model == "sim-router-openai":  # the encrypted item's id is per response
            for d in body["reasoning_details"] + streamed["reasoning_details"]:
                d.pop("id", None)
        if model == "sim-router-gemini":  # its item carries the first call's id, per response
            continue
        assert streamed["reasoning_details"] == body["reasoning_details"]
        assert streamed.get("reasoning") == body.get("reasoning")


# -- faults ---------------------------------------------------------------------------------------------


async def test_429_is_retried_by_the_sdk() -> None:
    c = client("deepseek", max_retries=2)
    r = await c.chat.completions.with_raw_response.create(
        model="sim-deepseek+fault=429x2", messages=[{"role": "user", "content": TASK}]
    )
    assert r.http_response.status_code == 200 and r.retries_taken == 2


async def test_error_chunk_fault_is_an_in_stream_error_the_sdk_raises() -> None:
    c = client("openrouter", default_headers={"x-sim-fault": "error_chunk"})
    s = await c.chat.completions.create(
        model="sim-router-gemini", messages=[{"role": "user", "content": TASK}], stream=True
    )
    got: list[Any] = []
    with pytest.raises(openai.APIError, match="Upstream stream interrupted"):
        async for ch in s:
            got.append(ch)
    assert got  # some chunks arrived before the error, on a 200 stream


def test_error_chunk_bytes_follow_openrouters_recording() -> None:
    t = sim.SimTransport(default_fault="error_chunk")
    r = post(t, "/api/v1/chat/completions", "sim-router-claude", KEY, stream=True)
    assert r.status_code == 200
    blocks = [b for b in r.text.split("\n\n") if b]
    assert blocks[:3] == [": OPENROUTER PROCESSING"] * 3 and blocks[-1] == "data: [DONE]"
    last = json.loads(blocks[-2].removeprefix("data: "))
    assert set(last["error"]) == {"code", "message"} and last["object"] == "chat.completion.chunk"


async def test_unknown_event_is_tolerated_by_the_sdk() -> None:
    c = client("local", default_headers={"x-sim-fault": "unknown_event"})
    s = await c.chat.completions.create(
        model="sim-local", messages=[{"role": "user", "content": TASK}], stream=True
    )
    msg, _ = merge_stream([ch async for ch in s])
    assert msg["content"]


# -- determinism, loopback -------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["sim-deepseek", "sim-router-gemini", "sim-local"])
def test_same_request_same_bytes(model: str) -> None:
    path = "/api/v1/chat/completions" if "router" in model else "/v1/chat/completions"
    for stream in (False, True):
        a = post(sim.SimTransport(), path, model, KEY, stream=stream).content
        b = post(sim.SimTransport(), path, model, KEY, stream=stream).content
        c = post(sim.SimTransport(seed=7), path, model, KEY, stream=stream).content
        assert a == b and a != c


async def test_loopback_server_serves_all_three_hosts() -> None:
    with serving() as url:
        for base, model in (
            (url, "sim-deepseek"),
            (f"{url}/api/v1", "sim-router-claude"),
            (f"{url}/v1", "sim-local"),
        ):
            c = openai.AsyncOpenAI(base_url=base, api_key="anything", max_retries=0)
            answer, _, _ = await run_loop(c, model, stream=True, extra_body={"reasoning": {"effort": "low"}})
            assert answer == "Rome is warmer (24 vs Paris 18)."


@pytest.mark.parametrize(
    ("dialect", "model"), [("deepseek", "sim-deepseek"), ("openrouter", "sim-router-openai")]
)
async def test_a_repeated_long_prefix_is_reported_cached(dialect: str, model: str) -> None:
    c = client(dialect)
    system = {"role": "system", "content": "Background. " + "The reference table lists many facts. " * 300}
    msgs = [system, {"role": "user", "content": TASK}]
    first = await c.chat.completions.create(model=model, messages=msgs)
    second = await c.chat.completions.create(model=model, messages=msgs)
    assert first.usage is not None and second.usage is not None
    assert first.usage.prompt_tokens_details is not None and second.usage.prompt_tokens_details is not None
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    cached = second.usage.prompt_tokens_details.cached_tokens
    assert cached is not None and 1024 <= cached <= second.usage.prompt_tokens
    if dialect == "deepseek":
        extra = second.usage.model_extra or {}
        assert extra["prompt_cache_hit_tokens"] == cached
        assert extra["prompt_cache_miss_tokens"] == second.usage.prompt_tokens - cached
    else:
        assert (second.usage.model_extra or {})["cost"] < (first.usage.model_extra or {})["cost"]


@pytest.mark.parametrize(
    ("path", "model"),
    [
        ("/chat/completions", "sim-deepseek"),
        ("/api/v1/chat/completions", "sim-router-gemini"),
        ("/v1/chat/completions", "sim-local"),
    ],
)
@pytest.mark.parametrize("calls", ["x", [1], [{"id": "a", "function": {"name": "w", "arguments": {"a": 1}}}]])
def test_malformed_tool_calls_are_a_400_naming_the_field(path: str, model: str, calls: Any) -> None:
    msgs = [{"role": "user", "content": TASK}, {"role": "assistant", "tool_calls": calls}]
    r = post(sim.SimTransport(), path, model, KEY, messages=msgs)
    assert r.status_code == 400 and "messages[1].tool_calls" in r.text


@pytest.mark.parametrize("value", [0, -5, "10", True])
def test_max_tokens_must_be_a_positive_integer(value: Any) -> None:
    r = post(sim.SimTransport(), "/chat/completions", "sim-deepseek", KEY, max_tokens=value)
    assert r.status_code == 400 and "max_tokens" in r.json()["error"]["message"]
