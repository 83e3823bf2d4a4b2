"""Each Anthropic strictness rule fires with the real status and error shape (texts as in the fixtures)."""

from __future__ import annotations

import copy
import re
from typing import Any

import anthropic
import pytest
from anthropic.types import ThinkingConfigEnabledParam

from agentlab import sim
from agentlab.sim.reasoner import MAGIC_REDACTED
from tests.sim.helpers import ANTHROPIC_WEATHER, TEMPS, load_error_fixture, raw_post

THINK: ThinkingConfigEnabledParam = {"type": "enabled", "budget_tokens": 2048}


def _request(messages: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return {
        "model": "sim-thinker",
        "max_tokens": 4000,
        "thinking": THINK,
        "tools": [ANTHROPIC_WEATHER],
        "messages": messages,
        **kw,
    }


def _first_turn(
    transport: sim.SimTransport,
    task: str = "Is it warmer in Paris or Rome?",
    headers: dict[str, str] | None = None,
    **kw: Any,
) -> list[dict[str, Any]]:
    """[user, assistant(thinking..., tool_use...), user(tool_results)] as a correct client sends it."""
    user = {"role": "user", "content": task}
    r = raw_post(transport, "/v1/messages", _request([user], **kw), headers)
    assert r.status_code == 200, r.text
    content = r.json()["content"]
    results = [
        {"type": "tool_result", "tool_use_id": b["id"], "content": TEMPS[b["input"]["city"]]}
        for b in content
        if b["type"] == "tool_use"
    ]
    return [user, {"role": "assistant", "content": content}, {"role": "user", "content": results}]


def _error(r: Any) -> tuple[int, str, str]:
    body = r.json()
    assert set(body) == {"type", "error", "request_id"} and body["type"] == "error"
    assert r.headers["request-id"] == body["request_id"] and body["request_id"].startswith("req_011C")
    return r.status_code, body["error"]["type"], body["error"]["message"]


def _fixture_message(name: str, msg_index: int, block_index: int | None = None) -> str:
    """The quoted real message with its message/block indexes replaced by ours."""
    text: str = load_error_fixture(name)["error"]["message"]
    text = re.sub(r"^messages\.\d+", f"messages.{msg_index}", text)
    if block_index is not None:
        text = re.sub(r"content\.\d+", f"content.{block_index}", text, count=1)
    return text


def test_correct_replay_is_accepted() -> None:
    t = sim.SimTransport()
    msgs = _first_turn(t)
    r = raw_post(t, "/v1/messages", _request(msgs))
    assert r.status_code == 200 and r.json()["content"][-1]["text"] == "Rome is warmer (24 vs Paris 18)."


def test_missing_thinking_block_is_rejected() -> None:
    t = sim.SimTransport()
    msgs = _first_turn(t)
    msgs[1]["content"] = [b for b in msgs[1]["content"] if b["type"] != "thinking"]
    status, kind, message = _error(raw_post(t, "/v1/messages", _request(msgs)))
    assert (status, kind) == (400, "invalid_request_error")
    assert message == _fixture_message("issue__anthropic_400_expected_thinking_found_tool_use.json", 1)


def test_modified_thinking_text_is_rejected() -> None:
    t = sim.SimTransport()
    msgs = _first_turn(t)
    msgs[1]["content"][0]["thinking"] += " (edited)"
    status, kind, message = _error(raw_post(t, "/v1/messages", _request(msgs)))
    assert (status, kind) == (400, "invalid_request_error")
    assert message == _fixture_message("issue__anthropic_400_thinking_blocks_cannot_be_modified.json", 1, 0)


def test_invalid_signature_is_rejected() -> None:
    t = sim.SimTransport()
    msgs = _first_turn(t)
    sig = msgs[1]["content"][0]["signature"]
    msgs[1]["content"][0]["signature"] = sig[:-6] + ("AAAAAA" if not sig.endswith("AAAAAA") else "BBBBBB")
    status, _, message = _error(raw_post(t, "/v1/messages", _request(msgs)))
    assert status == 400
    assert message == _fixture_message("issue__anthropic_400_invalid_thinking_signature.json", 1, 0)


def test_signature_from_another_simulator_is_invalid() -> None:
    ours, theirs = sim.SimTransport(), sim.SimTransport(secret=b"another deployment")
    msgs = _first_turn(theirs)
    status, _, message = _error(raw_post(ours, "/v1/messages", _request(msgs)))
    assert status == 400 and message == "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_redacted_turn_round_trips_and_dropping_a_block_is_a_modification() -> None:
    t = sim.SimTransport()
    omitted = {"type": "enabled", "budget_tokens": 3000, "display": "omitted"}
    msgs = _first_turn(t, f"Is it warmer in Paris or Rome? {MAGIC_REDACTED}", thinking=omitted)
    kinds = [b["type"] for b in msgs[1]["content"]]
    assert kinds == ["thinking", "redacted_thinking", "thinking", "tool_use", "tool_use"]
    assert msgs[1]["content"][0]["thinking"] == "" and msgs[1]["content"][0]["signature"]
    ok = raw_post(t, "/v1/messages", _request(copy.deepcopy(msgs), thinking=omitted))
    assert ok.status_code == 200, ok.text
    dropped = copy.deepcopy(msgs)
    del dropped[1]["content"][1]  # the redacted block: the next thinking block moves to position 1
    status, _, message = _error(raw_post(t, "/v1/messages", _request(dropped, thinking=omitted)))
    assert status == 400 and "content.1: `thinking` or `redacted_thinking` blocks in the latest" in message
    tampered = copy.deepcopy(msgs)
    data = tampered[1]["content"][1]["data"]
    tampered[1]["content"][1]["data"] = data[:10] + ("A" if data[10] != "A" else "B") + data[11:]
    status, _, message = _error(raw_post(t, "/v1/messages", _request(tampered, thinking=omitted)))
    assert status == 400 and message.startswith("messages.1.content.1: `thinking` or `redacted_thinking`")


def test_final_block_cannot_be_thinking() -> None:
    t = sim.SimTransport()
    msgs = _first_turn(t)
    msgs[1]["content"] = [msgs[1]["content"][0]]
    msgs[2] = {"role": "user", "content": "go on"}
    status, _, message = _error(raw_post(t, "/v1/messages", _request(msgs)))
    assert status == 400
    assert message == _fixture_message("issue__anthropic_400_final_block_cannot_be_thinking.json", 1)


@pytest.mark.parametrize(
    ("thinking", "max_tokens", "expected"),
    [
        (
            {"type": "enabled", "budget_tokens": 1000},
            4000,
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        ),
        (
            {"type": "enabled", "budget_tokens": 4000},
            4000,
            "`max_tokens` must be greater than `thinking.budget_tokens`",
        ),
    ],
)
def test_budget_rules(thinking: dict[str, Any], max_tokens: int, expected: str) -> None:
    r = raw_post(
        sim.SimTransport(),
        "/v1/messages",
        _request([{"role": "user", "content": "hi"}], thinking=thinking, max_tokens=max_tokens),
    )
    status, kind, message = _error(r)
    assert (status, kind) == (400, "invalid_request_error") and message.startswith(expected)


def test_more_than_four_cache_breakpoints() -> None:
    cc = {"type": "ephemeral"}
    system = [{"type": "text", "text": f"rule {i}", "cache_control": cc} for i in range(3)]
    msgs = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "a", "cache_control": cc},
                {"type": "text", "text": "b", "cache_control": cc},
            ],
        }
    ]
    status, _, message = _error(raw_post(sim.SimTransport(), "/v1/messages", _request(msgs, system=system)))
    assert status == 400 and message == "A maximum of 4 blocks with cache_control may be provided. Found 5."
    ok = raw_post(sim.SimTransport(), "/v1/messages", _request(msgs, system=system[:2]))
    assert ok.status_code == 200


def test_cache_control_on_thinking_block() -> None:
    t = sim.SimTransport()
    msgs = _first_turn(t)
    msgs[1]["content"][0]["cache_control"] = {"type": "ephemeral"}
    status, _, message = _error(raw_post(t, "/v1/messages", _request(msgs)))
    assert (
        status == 400
        and message == "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted"
    )


def test_openai_items_are_rejected() -> None:
    t = sim.SimTransport()
    oai = raw_post(
        t,
        "/v1/responses",
        {
            "model": "sim-reasoner",
            "input": "Is it warmer in Paris or Rome?",
            "store": False,
            "include": ["reasoning.encrypted_content"],
            "tools": [
                {"type": "function", "name": "get_weather", "parameters": ANTHROPIC_WEATHER["input_schema"]}
            ],
        },
    ).json()
    reasoning = oai["output"][0]
    msgs = _first_turn(t)
    as_block = copy.deepcopy(msgs)
    as_block[1]["content"][0] = reasoning
    status, _, message = _error(raw_post(t, "/v1/messages", _request(as_block)))
    assert status == 400 and message.startswith(
        "messages.1.content.0: Input tag 'reasoning' found using 'type'"
    )
    as_signature = copy.deepcopy(msgs)
    as_signature[1]["content"][0]["signature"] = reasoning["encrypted_content"]
    status, _, message = _error(raw_post(t, "/v1/messages", _request(as_signature)))
    assert status == 400 and message == "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_unknown_model_is_404_like_the_recording() -> None:
    r = raw_post(
        sim.SimTransport(),
        "/v1/messages",
        _request([{"role": "user", "content": "hi"}], model="claude-sonnet-4-5"),
    )
    status, kind, message = _error(r)
    assert (status, kind, message) == (404, "not_found_error", "model: claude-sonnet-4-5")
    assert r.headers["x-should-retry"] == "false"


async def test_sdk_raises_typed_errors() -> None:
    client = sim.anthropic_client(max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as info:
        await client.messages.create(
            model="sim-thinker",
            max_tokens=1000,
            thinking=THINK,
            messages=[{"role": "user", "content": "hi"}],
        )
    assert (
        info.value.status_code == 400
        and info.value.request_id
        and info.value.request_id.startswith("req_011C")
    )
    with pytest.raises(anthropic.NotFoundError):
        await client.messages.create(
            model="claude-opus-4-6", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )


def test_tool_use_and_tool_result_must_pair() -> None:
    t = sim.SimTransport()
    msgs = _first_turn(t)
    missing = copy.deepcopy(msgs)
    missing[2]["content"] = missing[2]["content"][:1]
    lost_id = msgs[1]["content"][-1]["id"]
    status, _, message = _error(raw_post(t, "/v1/messages", _request(missing)))
    assert status == 400 and message == (
        f"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: {lost_id}. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )
    stray = copy.deepcopy(msgs)
    stray[2]["content"].append({"type": "tool_result", "tool_use_id": "toolu_01nothere", "content": "1"})
    status, _, message = _error(raw_post(t, "/v1/messages", _request(stray)))
    assert status == 400 and message.startswith(
        "messages.2.content.2: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01nothere."
    )


def test_thinking_with_forced_tool_choice() -> None:
    body = _request([{"role": "user", "content": "hi"}], tool_choice={"type": "any"})
    status, _, message = _error(raw_post(sim.SimTransport(), "/v1/messages", body))
    assert status == 400 and message == "Thinking may not be enabled when tool_choice forces tool use."


def test_interleaved_turn_must_come_back_whole() -> None:
    """Every thinking block of the final tool-use turn, not just the first, must come back.

    A sibling left out, tool calls regrouped, or a block taken from another response is a modification.
    """
    t = sim.SimTransport()
    beta = {"anthropic-beta": "interleaved-thinking-2025-05-14"}
    msgs = _first_turn(t, headers=beta)
    kinds = [b["type"] for b in msgs[1]["content"]]
    assert kinds == ["thinking", "tool_use", "thinking", "tool_use"]
    ok = raw_post(t, "/v1/messages", _request(copy.deepcopy(msgs)), beta)
    assert ok.status_code == 200, ok.text

    missing = copy.deepcopy(msgs)
    del missing[1]["content"][2]  # the second thinking block: positions of the rest stay valid
    status, etype, message = _error(raw_post(t, "/v1/messages", _request(missing), beta))
    assert (status, etype) == (400, "invalid_request_error")
    assert "blocks in the latest assistant message cannot be modified" in message

    regrouped = copy.deepcopy(msgs)
    c = regrouped[1]["content"]
    regrouped[1]["content"] = [c[0], c[2], c[1], c[3]]  # thinking, thinking, tool_use, tool_use
    status, _, message = _error(raw_post(t, "/v1/messages", _request(regrouped), beta))
    assert status == 400 and "cannot be modified" in message

    other = _first_turn(t, "Is it warmer in Oslo or Berlin?", headers=beta)
    spliced = copy.deepcopy(msgs)
    spliced[1]["content"][2] = copy.deepcopy(other[1]["content"][2])  # same position, other response
    status, _, message = _error(raw_post(t, "/v1/messages", _request(spliced), beta))
    assert status == 400 and "cannot be modified" in message
