"""Each dialect's continuity rule through the real ``openai`` SDK: the real refusal, a pass when obeyed."""

from __future__ import annotations

import copy
import json
from typing import Any

import openai
import pytest

from agentlab import sim
from tests.sim.chat.helpers import REASONING_FIELDS, TASK, client, drop, run_loop, tool_results
from tests.sim.helpers import load_error_fixture

ANSWER = "Rome is warmer (24 vs Paris 18)."


def _body(exc: openai.APIStatusError) -> Any:
    return exc.response.json()


# -- DeepSeek ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_deepseek_loop_answers_when_reasoning_content_is_sent_back(stream: bool) -> None:
    answer, msgs, _ = await run_loop(client("deepseek"), "sim-deepseek", stream=stream)
    assert answer == ANSWER
    assert all(isinstance(m.get("reasoning_content"), str) for m in msgs if m.get("tool_calls"))


@pytest.mark.fixtures
@pytest.mark.parametrize("stream", [False, True])
async def test_deepseek_refuses_tool_call_message_without_reasoning_content(stream: bool) -> None:
    with pytest.raises(openai.BadRequestError) as ei:
        await run_loop(client("deepseek"), "sim-deepseek", stream=stream, edit=drop("reasoning_content"))
    assert ei.value.status_code == 400
    assert _body(ei.value) == load_error_fixture(
        "issue__deepseek_400_reasoning_content_must_be_passed_back.json"
    )


async def test_deepseek_requires_it_in_later_turns_too_but_not_with_thinking_disabled() -> None:
    """The docs: reasoning of a tool-call turn must be passed back "in all subsequent" turns."""
    c = client("deepseek")
    _, msgs, _ = await run_loop(c, "sim-deepseek")
    later = [*msgs, {"role": "user", "content": "Is it warmer in Oslo or Berlin?"}]
    await run_loop(c, "sim-deepseek", messages=later)
    stripped = [drop(*REASONING_FIELDS)(m) for m in later]
    with pytest.raises(openai.BadRequestError):
        await run_loop(c, "sim-deepseek", messages=stripped)
    answer, _, _ = await run_loop(
        c, "sim-deepseek", messages=stripped, extra_body={"thinking": {"type": "disabled"}}
    )
    assert answer == "Berlin is warmer (11 vs Oslo -3)."


async def test_deepseek_does_not_verify_the_reasoning_text() -> None:
    """DeepSeek's reasoning_content is plain text without a signature: an edited one is accepted."""

    def alter(m: dict[str, Any]) -> dict[str, Any]:
        return {**m, "reasoning_content": "edited"} if m.get("tool_calls") else m

    answer, _, _ = await run_loop(client("deepseek"), "sim-deepseek", edit=alter)
    assert answer == ANSWER


async def test_deepseek_thinking_disabled_returns_no_reasoning() -> None:
    r = await client("deepseek").chat.completions.create(
        model="sim-deepseek",
        messages=[{"role": "user", "content": TASK}],
        extra_body={"thinking": {"type": "disabled"}},
    )
    assert "reasoning_content" not in (r.choices[0].message.model_extra or {})
    assert r.usage is not None and r.usage.completion_tokens_details is not None
    assert r.usage.completion_tokens_details.reasoning_tokens == 0


# -- OpenRouter, Gemini-backed ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_router_gemini_loop_answers_with_reasoning_details_kept(stream: bool) -> None:
    answer, msgs, _ = await run_loop(client("openrouter"), "sim-router-gemini", stream=stream)
    assert answer == ANSWER
    first = next(m for m in msgs if m.get("tool_calls"))
    (item,) = first["reasoning_details"]
    assert item["type"] == "reasoning.encrypted" and item["format"] == "google-gemini-v1"
    assert item["id"] == first["tool_calls"][0]["id"]


@pytest.mark.fixtures
async def test_router_gemini_refuses_dropped_reasoning_details_with_the_real_body() -> None:
    with pytest.raises(openai.BadRequestError) as ei:
        await run_loop(client("openrouter"), "sim-router-gemini", edit=drop("reasoning_details"))
    err = _body(ei.value)["error"]
    real = load_error_fixture("issue__openrouter_400_gemini_reasoning_details_required.error_object.json")
    assert (err["message"], err["code"]) == (real["message"], real["code"])
    assert set(err["metadata"]) == set(real["metadata"])
    prefix = real["metadata"]["raw"].split("Upstream error: ")[0]
    assert err["metadata"]["raw"].startswith(prefix + "Upstream error: ")
    assert "get_weather` in the 2. content block is missing a `thought_signature`" in err["metadata"]["raw"]
    assert (
        json.loads(err["metadata"]["raw"].split("Upstream error: ")[1])["error"]["status"]
        == "INVALID_ARGUMENT"
    )


@pytest.mark.fixtures
async def test_router_gemini_refuses_altered_reasoning_details_with_the_real_body() -> None:
    def alter(m: dict[str, Any]) -> dict[str, Any]:
        m = copy.deepcopy(m)
        for d in m.get("reasoning_details") or []:
            d["data"] = d["data"][:-6] + "AAAAAA"
        return m

    with pytest.raises(openai.BadRequestError) as ei:
        await run_loop(client("openrouter"), "sim-router-gemini", edit=alter)
    body = _body(ei.value)
    real = load_error_fixture("issue__openrouter_400_gemini_thought_signature_not_valid.json")
    assert set(body) == set(real) and set(body["error"]) == set(real["error"])
    assert body["error"]["metadata"]["raw"] == real["error"]["metadata"]["raw"]
    assert body["error"]["metadata"]["provider_name"] == real["error"]["metadata"]["provider_name"]


async def test_router_gemini_checks_only_the_current_turn() -> None:
    c = client("openrouter")
    _, msgs, _ = await run_loop(c, "sim-router-gemini")
    later = [drop(*REASONING_FIELDS)(m) for m in msgs] + [
        {"role": "user", "content": "Is it warmer in Oslo or Berlin?"}
    ]
    answer, _, _ = await run_loop(c, "sim-router-gemini", messages=later)
    assert answer is not None and "Berlin" in answer


# -- OpenRouter, Claude-backed -------------------------------------------------------------------------

EFFORT: dict[str, Any] = {"extra_body": {"reasoning": {"effort": "medium"}}}


@pytest.mark.parametrize("stream", [False, True])
async def test_router_claude_loop_answers_with_signed_reasoning_kept(stream: bool) -> None:
    answer, msgs, _ = await run_loop(client("openrouter"), "sim-router-claude", stream=stream, **EFFORT)
    assert answer == ANSWER
    first = next(m for m in msgs if m.get("tool_calls"))
    (item,) = first["reasoning_details"]
    assert item["type"] == "reasoning.text" and item["signature"] and item["text"] == first["reasoning"]


def _claude_edit(field: str) -> Any:
    def edit(m: dict[str, Any]) -> dict[str, Any]:
        m = copy.deepcopy(m)
        for d in m.get("reasoning_details") or []:
            d[field] = "X" + d[field][1:] if field == "signature" else d[field] + " (edited)"
        return m

    return edit


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (
            drop("reasoning_details", "reasoning"),
            "Expected `thinking` or `redacted_thinking`, but found `tool_use`",
        ),
        (_claude_edit("signature"), "Invalid `signature` in `thinking` block"),
        (_claude_edit("text"), "blocks in the latest assistant message cannot be modified"),
    ],
    ids=["dropped", "bad-signature", "edited-text"],
)
async def test_router_claude_applies_anthropics_rule(edit: Any, words: str) -> None:
    with pytest.raises(openai.BadRequestError) as ei:
        await run_loop(client("openrouter"), "sim-router-claude", edit=edit, **EFFORT)
    err = _body(ei.value)["error"]
    assert err["message"] == "Provider returned error" and err["metadata"]["provider_name"] == "Anthropic"
    inner = json.loads(err["metadata"]["raw"])
    assert inner["error"]["type"] == "invalid_request_error" and words in inner["error"]["message"]
    assert inner["error"]["message"].startswith("messages.1.content.0")


async def test_router_claude_without_reasoning_needs_no_details() -> None:
    answer, _, _ = await run_loop(client("openrouter"), "sim-router-claude", edit=drop(*REASONING_FIELDS))
    assert answer == ANSWER


# -- lenient: OpenRouter OpenAI-backed and local servers -----------------------------------------------


def _calls(msgs: list[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or []) for m in msgs)


@pytest.mark.parametrize(
    ("dialect", "model", "fields"),
    [
        ("openrouter", "sim-router-openai", ("reasoning_details", "reasoning")),
        ("local", "sim-local", ("reasoning_content",)),
        ("local", "sim-local-reasoning", ("reasoning",)),
    ],
)
async def test_lenient_dialects_accept_dropped_reasoning_but_lose_the_plan(
    dialect: str, model: str, fields: tuple[str, ...]
) -> None:
    kept_answer, kept, _ = await run_loop(client(dialect), model)
    lost_answer, lost, _ = await run_loop(client(dialect), model, edit=drop(*fields))
    assert kept_answer == lost_answer == ANSWER
    assert _calls(kept) == 2 and _calls(lost) == 4  # the lost plan repeats its last batch once


async def test_plan_header_says_lost_when_reasoning_was_dropped() -> None:
    c = client("local")
    _, msgs, _ = await run_loop(c, "sim-local", max_steps=1)  # ends with the tool results
    for keep in (True, False):
        history = msgs if keep else [drop("reasoning_content")(m) for m in msgs]
        raw = await c.chat.completions.with_raw_response.create(model="sim-local", messages=history)
        assert raw.headers["x-sim-plan"] == ("known" if keep else "lost")


# -- tool pairing ----------------------------------------------------------------------------------------


async def test_deepseek_tool_pairing_texts() -> None:
    c = client("deepseek")
    _, loop, _ = await run_loop(c, "sim-deepseek", max_steps=1)
    msgs = [m for m in loop if m["role"] != "tool"]
    with pytest.raises(openai.BadRequestError) as ei:
        await c.chat.completions.create(model="sim-deepseek", messages=msgs)
    assert "(insufficient tool messages following tool_calls message)" in _body(ei.value)["error"]["message"]
    orphan = [msgs[0], {"role": "tool", "tool_call_id": "call_x", "content": "1"}]
    with pytest.raises(openai.BadRequestError) as ei:
        await c.chat.completions.create(model="sim-deepseek", messages=orphan)
    assert _body(ei.value)["error"]["message"] == (
        "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
    )


async def test_router_openai_missing_tool_result_is_relayed_in_openais_words() -> None:
    c = client("openrouter")
    _, loop, _ = await run_loop(c, "sim-router-openai", max_steps=1)
    msgs = [m for m in loop if m["role"] != "tool"]
    with pytest.raises(openai.BadRequestError) as ei:
        await c.chat.completions.create(model="sim-router-openai", messages=msgs + tool_results(msgs[-1])[:1])
    raw = json.loads(_body(ei.value)["error"]["metadata"]["raw"])
    assert "The following tool_call_ids did not have response messages" in raw["error"]["message"]


def test_chat_models_table_matches_the_interface() -> None:
    assert sim.CHAT_MODELS == {
        "deepseek": ("sim-deepseek",),
        "openrouter": ("sim-router-gemini", "sim-router-claude", "sim-router-openai"),
        "local": ("sim-local", "sim-local-reasoning"),
        "moonshot": ("sim-kimi",),
        "zai": ("sim-glm",),
        "xai_chat": ("sim-xai-chat",),
    }
    assert (sim.DEEPSEEK_BASE_URL, sim.OPENROUTER_BASE_URL, sim.LOCAL_BASE_URL) == (
        "http://sim.agentlab.local",
        "http://sim.agentlab.local/api/v1",
        "http://sim.agentlab.local/v1",
    )
