"""Each OpenAI Responses strictness rule fires with the real status and error shape."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import openai
import pytest

from agentlab import sim
from tests.sim.helpers import OPENAI_WEATHER, TEMPS, load_error_fixture, raw_post

TASK = "Is it warmer in Paris or Rome?"


def _request(items: list[dict[str, Any]] | str, **kw: Any) -> dict[str, Any]:
    base = {
        "model": "sim-reasoner",
        "input": items,
        "tools": [OPENAI_WEATHER],
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "reasoning": {"effort": "low", "summary": "auto"},
    }
    return {**base, **kw}


def _first_turn(t: sim.SimTransport, **kw: Any) -> list[dict[str, Any]]:
    """[user, reasoning, function_call x2, function_call_output x2] as a correct stateless client sends it."""
    user = {"role": "user", "content": TASK}
    r = raw_post(t, "/v1/responses", _request([user], **kw))
    assert r.status_code == 200, r.text
    out = r.json()["output"]
    results = [
        {
            "type": "function_call_output",
            "call_id": o["call_id"],
            "output": TEMPS[json.loads(o["arguments"])["city"]],
        }
        for o in out
        if o["type"] == "function_call"
    ]
    return [user, *out, *results]


def _error(r: Any) -> tuple[int, dict[str, Any]]:
    body = r.json()
    assert set(body) == {"error"}
    assert re.fullmatch(r"req_[0-9a-f]{32}", r.headers["x-request-id"])
    return r.status_code, body["error"]


def test_correct_replay_is_accepted() -> None:
    t = sim.SimTransport()
    r = raw_post(t, "/v1/responses", _request(_first_turn(t)))
    assert r.status_code == 200 and r.headers["x-sim-plan"] == "known"
    assert r.json()["output"][-1]["content"][0]["text"] == "Rome is warmer (24 vs Paris 18)."


def test_tampered_encrypted_content() -> None:
    t = sim.SimTransport()
    items = _first_turn(t)
    token = items[1]["encrypted_content"]
    items[1]["encrypted_content"] = token[:40] + ("A" if token[40] != "A" else "B") + token[41:]
    status, err = _error(raw_post(t, "/v1/responses", _request(items)))
    shape = load_error_fixture("issue__openai_invalid_encrypted_content.json")["error"]
    assert status == 400 and set(err) == set(shape)
    assert (err["type"], err["param"], err["code"]) == (shape["type"], shape["param"], shape["code"])
    assert err["message"] == f"The encrypted content {token[:4]}...{token[-4:]} could not be verified."


def test_foreign_encrypted_content_and_partial_copy() -> None:
    ours, theirs = sim.SimTransport(), sim.SimTransport(secret=b"some other org")
    status, err = _error(raw_post(ours, "/v1/responses", _request(_first_turn(theirs))))
    assert (status, err["code"]) == (400, "invalid_encrypted_content")
    # The output_item.added copy of encrypted_content is partial, like the real stream's: never valid.
    stream = raw_post(ours, "/v1/responses", _request(TASK, stream=True))
    added = next(line for line in stream.text.split("\n") if '"response.output_item.added"' in line)
    partial = re.search(r'"encrypted_content":"([^"]+)"', added)
    assert partial is not None
    items = _first_turn(ours)
    assert partial.group(1) != items[1]["encrypted_content"]
    items[1]["encrypted_content"] = partial.group(1)
    assert _error(raw_post(ours, "/v1/responses", _request(items)))[1]["code"] == "invalid_encrypted_content"


def test_id_only_reasoning_with_store_false_is_404() -> None:
    t = sim.SimTransport()
    items = _first_turn(t)
    del items[1]["encrypted_content"]
    status, err = _error(raw_post(t, "/v1/responses", _request(items)))
    quoted = load_error_fixture("issue__openai_reasoning_item_not_found_store_false.error_object.json")
    assert status == 404
    assert err["message"] == re.sub(r"'rs_[0-9a-f]+'", f"'{items[1]['id']}'", quoted["message"])
    assert (err["type"], err["param"]) == (quoted["type"], quoted["param"])


def test_stored_mode_replays_by_id() -> None:
    t = sim.SimTransport()
    items = _first_turn(t, store=True, include=[])
    assert "encrypted_content" not in items[1]
    r = raw_post(t, "/v1/responses", _request(items, store=True, include=[]))
    assert r.status_code == 200 and r.headers["x-sim-plan"] == "known"


def test_reasoning_without_following_item() -> None:
    t = sim.SimTransport()
    items = _first_turn(t)
    del items[2]  # the function_call that followed the reasoning item
    status, err = _error(raw_post(t, "/v1/responses", _request(items)))
    recorded = load_error_fixture_yaml_400()
    assert status == 400
    assert err == {
        **recorded,
        "message": re.sub(r"'rs_[0-9a-f]+'", f"'{items[1]['id']}'", recorded["message"]),
    }
    # The recorded case: the answer's message edited into a plain assistant message (no id).
    answer = raw_post(t, "/v1/responses", _request("What is 2 + 3?")).json()["output"]
    assert [o["type"] for o in answer] == ["reasoning", "message"]
    edited = [
        {"role": "user", "content": "What is 2 + 3?"},
        answer[0],
        {"role": "assistant", "content": "2 + 3 = 5 (edited)"},
        {"role": "user", "content": "Thanks"},
    ]
    status, err = _error(raw_post(t, "/v1/responses", _request(edited)))
    assert status == 400
    assert err == {
        **recorded,
        "message": re.sub(r"'rs_[0-9a-f]+'", f"'{answer[0]['id']}'", recorded["message"]),
    }


def load_error_fixture_yaml_400() -> dict[str, Any]:
    from tests.support.cassettes import fixtures_dir, load_cassette

    path = fixtures_dir() / "errors" / "pydantic-ai__openai_400_reasoning_without_following_item.yaml"
    (bad,) = [e for e in load_cassette(path) if e.status == 400]
    return dict(bad.response_payload["error"])


def test_previous_response_id_with_store_false() -> None:
    t = sim.SimTransport()
    first = raw_post(t, "/v1/responses", _request(TASK)).json()
    status, err = _error(raw_post(t, "/v1/responses", _request("go on", previous_response_id=first["id"])))
    assert status == 400 and err["param"] == "previous_response_id"
    assert err["message"] == f"Previous response with id '{first['id']}' not found."


def test_temperature_is_refused_like_the_recording() -> None:
    status, err = _error(raw_post(sim.SimTransport(), "/v1/responses", _request(TASK, temperature=0.2)))
    expected = load_error_fixture("vercel-ai__openai_400_temperature_unsupported_reasoning_model.json")[
        "error"
    ]
    assert status == 400 and err == expected


def test_unknown_model_like_the_recording() -> None:
    status, err = _error(raw_post(sim.SimTransport(), "/v1/responses", _request(TASK, model="gpt-5")))
    assert status == 400 and err == {
        "message": "The requested model 'gpt-5' does not exist.",
        "type": "invalid_request_error",
        "param": "model",
        "code": "model_not_found",
    }


def test_anthropic_items_are_rejected() -> None:
    t = sim.SimTransport()
    ant = raw_post(
        t,
        "/v1/messages",
        {
            "model": "sim-thinker",
            "max_tokens": 3000,
            "messages": [{"role": "user", "content": TASK}],
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "tools": [{"name": "get_weather", "input_schema": OPENAI_WEATHER["parameters"]}],
        },
    ).json()
    thinking = ant["content"][0]
    items = _first_turn(t)
    as_item = copy.deepcopy(items)
    as_item[1] = thinking
    status, err = _error(raw_post(t, "/v1/responses", _request(as_item)))
    # The real API names the item, not its `type`, when no item type matches (param "input[1]").
    assert (status, err["code"], err["param"]) == (400, "invalid_value", "input[1]")
    as_token = copy.deepcopy(items)
    as_token[1]["encrypted_content"] = thinking["signature"]
    assert _error(raw_post(t, "/v1/responses", _request(as_token)))[1]["code"] == "invalid_encrypted_content"


async def test_sdk_raises_typed_errors() -> None:
    client = sim.openai_client(max_retries=0)
    with pytest.raises(openai.BadRequestError) as info:
        await client.responses.create(model="sim-reasoner", input="hi", temperature=0.5)
    assert info.value.status_code == 400 and info.value.param == "temperature"
    with pytest.raises(openai.NotFoundError):
        await client.responses.create(
            model="sim-reasoner",
            input=[
                {"role": "user", "content": "hi"},
                {"type": "reasoning", "id": "rs_123", "summary": []},
            ],
            store=False,
        )


def test_function_calls_and_outputs_must_pair() -> None:
    t = sim.SimTransport()
    items = _first_turn(t)
    no_output = items[:-1]
    cid = items[-1]["call_id"]
    status, err = _error(raw_post(t, "/v1/responses", _request(no_output)))
    assert status == 400 and err == {
        "message": f"No tool output found for function call {cid}.",
        "type": "invalid_request_error",
        "param": "input",
        "code": None,
    }
    stray = [*items, {"type": "function_call_output", "call_id": "call_nothere", "output": "1"}]
    status, err = _error(raw_post(t, "/v1/responses", _request(stray)))
    assert status == 400
    assert err["message"] == "No tool call found for function call output with call_id call_nothere."


def test_previous_response_id_works_only_when_stored() -> None:
    t = sim.SimTransport()
    first = raw_post(t, "/v1/responses", _request(TASK, store=True, include=[])).json()
    outputs = [
        {
            "type": "function_call_output",
            "call_id": o["call_id"],
            "output": TEMPS[json.loads(o["arguments"])["city"]],
        }
        for o in first["output"]
        if o["type"] == "function_call"
    ]
    r = raw_post(
        t, "/v1/responses", _request(outputs, store=True, include=[], previous_response_id=first["id"])
    )
    assert (
        r.status_code == 200
        and r.json()["output"][-1]["content"][0]["text"] == "Rome is warmer (24 vs Paris 18)."
    )
