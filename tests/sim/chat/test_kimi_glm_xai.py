"""The simulated Kimi, GLM and xAI Chat hosts: Kimi strict on reasoning_content, GLM and xAI lenient.

Each rule is shown failing for its real reason (Kimi's 400, in its words and shape, as quoted in
sipeed/picoclaw#588) and passing when obeyed; the lenient hosts answer a loop without its reasoning
with 200 and a lost plan (``x-sim-plan: lost``), as the real ones answer (no error for it is on
record). Usage is checked against the shapes of the recordings in
``fixtures/chat_completions/fantasy__{xai,zai}_*`` (xAI: ``completion_tokens`` without reasoning).
"""

from __future__ import annotations

from typing import Any

import openai
import pytest

from agentlab import sim
from tests.sim.chat.helpers import TASK, client, drop, run_loop
from tests.sim.chat.test_wire import KEY, post

KIMI_MISSING = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}"
)


def _body(err: openai.APIStatusError) -> Any:
    return err.response.json()


@pytest.mark.parametrize("stream", [False, True])
async def test_kimi_refuses_a_tool_call_message_without_its_reasoning_content(stream: bool) -> None:
    c = client("moonshot")
    answer, loop, _ = await run_loop(c, "sim-kimi", stream=stream)
    assert answer and any(m.get("reasoning_content") for m in loop if m.get("tool_calls"))
    calls = next(i for i, m in enumerate(loop) if m.get("tool_calls"))
    with pytest.raises(openai.BadRequestError) as info:
        await run_loop(c, "sim-kimi", stream=stream, edit=drop("reasoning_content"))
    assert _body(info.value) == {
        "error": {"message": KIMI_MISSING.format(i=calls), "type": "invalid_request_error"}
    }


async def test_kimi_counts_an_empty_reasoning_content_as_missing_and_checks_every_message() -> None:
    c = client("moonshot")
    _, loop, _ = await run_loop(c, "sim-kimi", max_steps=1)
    first = next(i for i, m in enumerate(loop) if m.get("tool_calls"))
    emptied = [
        {**m, "reasoning_content": ""} if i == first else m for i, m in enumerate(loop)
    ]  # an earlier loop's turn too: Kimi checks every assistant tool-call message
    later = [*emptied, {"role": "assistant", "content": "done"}, {"role": "user", "content": TASK}]
    with pytest.raises(openai.BadRequestError) as info:
        await c.chat.completions.create(model="sim-kimi", messages=later)
    assert _body(info.value)["error"]["message"] == KIMI_MISSING.format(i=first)


async def test_kimi_with_thinking_off_requires_nothing() -> None:
    c = client("moonshot")
    off: Any = {"thinking": {"type": "disabled"}}
    answer, loop, _ = await run_loop(c, "sim-kimi", edit=drop("reasoning_content"), extra_body=off)
    assert answer and not any(m.get("reasoning_content") for m in loop)


@pytest.mark.parametrize(("dialect", "model"), [("zai", "sim-glm"), ("xai_chat", "sim-xai-chat")])
async def test_glm_and_xai_accept_a_loop_without_reasoning_but_the_model_loses_its_plan(
    dialect: str, model: str
) -> None:
    c = client(dialect)
    _, loop, _ = await run_loop(c, model, max_steps=1)
    (turn,) = [m for m in loop if m["role"] == "assistant"]
    assert turn["reasoning_content"] and turn["tool_calls"]
    kept = await c.chat.completions.with_raw_response.create(model=model, messages=loop)
    assert kept.headers["x-sim-plan"] == "known"
    dropped = [{k: v for k, v in m.items() if k != "reasoning_content"} for m in loop]
    lost = await c.chat.completions.with_raw_response.create(model=model, messages=dropped)
    assert lost.http_response.status_code == 200 and lost.headers["x-sim-plan"] == "lost"


def test_glm_is_served_on_the_general_and_the_coding_plan_paths_only() -> None:
    t = sim.SimTransport()
    for path in ("/api/paas/v4/chat/completions", "/api/coding/paas/v4/chat/completions"):
        r = post(t, path, "sim-glm", KEY)
        assert r.status_code == 200 and r.json()["request_id"] == r.json()["id"], path
    assert post(t, "/v1/chat/completions", "sim-glm", KEY).status_code == 400  # not a model there


@pytest.mark.parametrize(
    ("path", "model", "status", "body"),
    [
        ("/v1/chat/completions", "sim-kimi", 401,
         {"error": {"message": "Invalid Authentication", "type": "invalid_authentication_error"}}),
        ("/api/paas/v4/chat/completions", "sim-glm", 401,
         {"error": {"code": "1001", "message": "Authorization header is missing (simulated)"}}),
        ("/v1/chat/completions", "sim-xai-chat", 400,
         {"code": "Client specified an invalid argument",
          "error": "Incorrect API key provided: (none). You can obtain an API key from https://console.x.ai."}),
    ],
)  # fmt: skip
def test_each_host_refuses_a_request_without_a_key_in_its_own_shape(
    path: str, model: str, status: int, body: dict[str, Any]
) -> None:
    r = post(sim.SimTransport(), path, model)
    assert (r.status_code, r.json()) == (status, body)


def test_xai_usage_leaves_reasoning_out_of_completion_tokens_and_bills_ticks() -> None:
    r = post(sim.SimTransport(), "/v1/chat/completions", "sim-xai-chat", KEY)
    u = r.json()["usage"]
    reasoning = u["completion_tokens_details"]["reasoning_tokens"]
    assert reasoning > 0 and u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"] + reasoning
    cached = u["prompt_tokens_details"]["cached_tokens"]
    billed = (u["prompt_tokens"] - cached) * 3000 + cached * 750 + (u["completion_tokens"] + reasoning) * 5000
    assert u["cost_in_usd_ticks"] == billed
    msg = r.json()["choices"][0]["message"]
    assert msg["reasoning_content"] and msg["refusal"] is None


def test_kimi_and_glm_usage_shapes() -> None:
    t = sim.SimTransport()
    kimi = post(t, "/v1/chat/completions", "sim-kimi", KEY).json()["usage"]
    assert set(kimi) == {"prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens"}
    glm = post(t, "/api/paas/v4/chat/completions", "sim-glm", KEY).json()["usage"]
    assert glm["total_tokens"] == glm["prompt_tokens"] + glm["completion_tokens"]
    assert 0 < glm["completion_tokens_details"]["reasoning_tokens"] < glm["completion_tokens"]
    assert "cached_tokens" in glm["prompt_tokens_details"]


def _recorded_body(name: str) -> dict[str, Any]:
    from tests.support.cassettes import fixture_files, load_cassette

    found = [p for p in fixture_files("chat_completions") if name in p.name]
    if not found:
        pytest.skip("../shared/fixtures/chat_completions is absent (the recordings are read at test time)")
    first = load_cassette(found[0])[0]
    assert first.response_kind == "json"
    body: dict[str, Any] = first.response_payload
    return body


def _shape(body: dict[str, Any]) -> tuple[list[str], list[str], list[str], list[str]]:
    """Envelope keys in order, message and first tool call's key sets, usage keys (sorted)."""
    msg = body["choices"][0]["message"]
    call = sorted(msg["tool_calls"][0]) if msg.get("tool_calls") else []
    return list(body), sorted(msg), call, sorted(body["usage"])


@pytest.mark.parametrize(
    ("recording", "path", "model"),
    [("fantasy__xai_grok3mini", "/v1/chat/completions", "sim-xai-chat"),
     ("fantasy__zai_glm47flash", "/api/paas/v4/chat/completions", "sim-glm")],
)  # fmt: skip
def test_xai_and_glm_bodies_are_laid_out_as_recorded(recording: str, path: str, model: str) -> None:
    real = _recorded_body(recording)
    ours = post(sim.SimTransport(), path, model, KEY).json()
    assert ours["choices"][0]["message"].get("tool_calls"), "the task makes the model call a tool"
    assert _shape(ours) == _shape(real)
