"""The Responses dialect profiles (sim/openai/dialects.py): strict where the host is, lenient where it is.

Each rule is checked on the wire (no SDK, no adapter): the recorded error bodies give the shape of a
refusal where one was recorded (OpenAI's, which Azure and Mantle share), and the recordings in
``../shared/fixtures/responses_dialects`` the shape of a success (reasoning_text content, ``rsn_``
tokens, reused ``call_0`` ids, ``content_filters``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentlab import sim
from agentlab.sim.openai.dialects import VLLM_ENCRYPTED
from tests.sim.helpers import OPENAI_WEATHER, TEMPS, load_error_fixture, raw_post
from tests.sim.openai.test_strict import load_error_fixture_yaml_400

TASK = "Is it warmer in Paris or Rome?"


def _request(model: str, items: list[dict[str, Any]] | str, **kw: Any) -> dict[str, Any]:
    base = {
        "model": model,
        "input": items,
        "tools": [OPENAI_WEATHER],
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    return {k: v for k, v in {**base, **kw}.items() if v is not None}


def _first_turn(t: sim.SimTransport, model: str, **kw: Any) -> list[dict[str, Any]]:
    """[user, reasoning, function_call x2, function_call_output x2] as a correct stateless client sends it."""
    user = {"role": "user", "content": TASK}
    r = raw_post(t, "/v1/responses", _request(model, [user], **kw))
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
    assert set(body) == {"error"}, body
    return r.status_code, body["error"]


RIGHT = "Rome is warmer (24 vs Paris 18)."


def _answer(r: Any) -> str:
    text: str = r.json()["output"][-1]["content"][0]["text"]
    return text


# ------------------------------------------------------------------ xAI: lenient on loss, strict on tampering


def _without_first_call(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The loop with the call that followed the reasoning item (and its output) taken out."""
    first = items[2]
    assert first["type"] == "function_call"
    return [i for i in items if i is not first and i.get("call_id") != first["call_id"]]


def test_xai_answers_200_without_the_reasoning_but_loses_the_plan() -> None:
    t = sim.SimTransport()
    items = _first_turn(t, "sim-grok")
    kept = raw_post(t, "/v1/responses", _request("sim-grok", items))
    assert kept.status_code == 200 and kept.headers["x-sim-plan"] == "known" and _answer(kept) == RIGHT
    # The reasoning item dropped: 200, and the lost-plan effect (the model re-plans and calls the
    # tools again instead of answering: more steps, more tokens), not an error.
    lost = raw_post(
        t, "/v1/responses", _request("sim-grok", [i for i in items if i.get("type") != "reasoning"])
    )
    assert lost.status_code == 200 and lost.headers["x-sim-plan"] == "lost"
    assert [o["type"] for o in lost.json()["output"]][-1] == "function_call"
    assert lost.json()["usage"]["output_tokens"] > kept.json()["usage"]["output_tokens"]
    # Kept without the call that followed it (OpenAI's 400, below): 200, the model fetches it again.
    again = raw_post(t, "/v1/responses", _request("sim-grok", _without_first_call(items)))
    assert again.status_code == 200, again.text
    assert [o["name"] for o in again.json()["output"] if o["type"] == "function_call"] == ["get_weather"]


def test_openai_refuses_what_xai_takes() -> None:
    """The same loop (reasoning without its following call) on OpenAI's profile: the recorded 400."""
    t = sim.SimTransport()
    items = _without_first_call(_first_turn(t, "sim-reasoner"))
    status, err = _error(raw_post(t, "/v1/responses", _request("sim-reasoner", items)))
    recorded = load_error_fixture_yaml_400()
    assert status == 400
    assert err == {
        **recorded,
        "message": re.sub(r"'rs_[0-9a-f]+'", f"'{items[1]['id']}'", recorded["message"]),
    }


def test_xai_refuses_a_tampered_token_and_reports_its_cost_in_ticks() -> None:
    t = sim.SimTransport()
    items = _first_turn(t, "sim-grok")
    token = items[1]["encrypted_content"]
    items[1]["encrypted_content"] = token[:40] + ("A" if token[40] != "A" else "B") + token[41:]
    status, err = _error(raw_post(t, "/v1/responses", _request("sim-grok", items)))
    shape = load_error_fixture("issue__openai_invalid_encrypted_content.json")["error"]
    assert status == 400 and (err["type"], err["code"]) == (shape["type"], shape["code"])
    usage = raw_post(t, "/v1/responses", _request("sim-grok", TASK)).json()["usage"]
    assert isinstance(usage["cost_in_usd_ticks"], int) and usage["cost_in_usd_ticks"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert {"num_sources_used", "num_server_side_tools_used"} <= set(usage)


# ------------------------------------------------------------------ DeepSeek: reasoning_text, a reference


def test_deepseek_reasoning_text_and_reference() -> None:
    t = sim.SimTransport()
    plain = raw_post(t, "/v1/responses", _request("sim-deepseek-responses", TASK, include=None)).json()
    reasoning = plain["output"][0]
    assert reasoning["type"] == "reasoning" and reasoning["summary"] == []
    assert reasoning["content"][0]["type"] == "reasoning_text" and "encrypted_content" not in reasoning
    asked = raw_post(t, "/v1/responses", _request("sim-deepseek-responses", TASK)).json()
    assert asked["output"][0]["encrypted_content"] == f"{asked['id']}-0"  # a reference, not ciphertext
    # The recorded accepted replay: the item with its text and encrypted_content null restores the plan.
    items = _first_turn(t, "sim-deepseek-responses", include=None)
    items[1] = {**items[1], "encrypted_content": None}
    r = raw_post(t, "/v1/responses", _request("sim-deepseek-responses", items, include=None))
    assert r.status_code == 200 and r.headers["x-sim-plan"] == "known" and _answer(r) == RIGHT
    assert r.json()["output"][-1]["phase"] == "final_answer"


def test_deepseek_stream_uses_reasoning_text_events() -> None:
    t = sim.SimTransport()
    r = raw_post(t, "/v1/responses", _request("sim-deepseek-responses", TASK, include=None, stream=True))
    types = [json.loads(line[6:])["type"] for line in r.text.splitlines() if line.startswith("data: ")]
    assert "response.reasoning_text.delta" in types and "response.reasoning_summary_text.delta" not in types


# ------------------------------------------------------------------ Azure: OpenAI's rules, filters, null


def test_azure_content_filters_and_openai_strictness() -> None:
    t = sim.SimTransport()
    body = raw_post(t, "/v1/responses", _request("sim-azure", TASK)).json()
    assert [f["source_type"] for f in body["content_filters"]] == ["prompt", "completion"]
    assert isinstance(body["output"][0]["encrypted_content"], str)
    items = _without_first_call(_first_turn(t, "sim-azure"))
    status, err = _error(raw_post(t, "/v1/responses", _request("sim-azure", items)))
    recorded = load_error_fixture_yaml_400()
    assert status == 400
    assert err == {
        **recorded,
        "message": re.sub(r"'rs_[0-9a-f]+'", f"'{items[1]['id']}'", recorded["message"]),
    }


def test_azure_null_payload_sent_back_is_the_recorded_404() -> None:
    t = sim.SimTransport()
    items = _first_turn(t, "sim-azure-null")
    assert items[1]["type"] == "reasoning" and items[1]["encrypted_content"] is None
    status, err = _error(raw_post(t, "/v1/responses", _request("sim-azure-null", items)))
    recorded = load_error_fixture("issue__openai_reasoning_item_not_found_store_false.error_object.json")
    assert status == 404
    assert err["message"] == re.sub(r"'rs_[0-9a-f]+'", f"'{items[1]['id']}'", recorded["message"])
    assert (err["type"], err["param"]) == (recorded["type"], recorded["param"])
    # Without the null item (what the adapter sends): 200, the plan lost.
    kept = [i for i in items if i.get("type") != "reasoning"]
    r = raw_post(t, "/v1/responses", _request("sim-azure-null", kept))
    assert r.status_code == 200 and r.headers["x-sim-plan"] == "lost"


# ------------------------------------------------------------------ Mantle: rsn_, call_0 reused


def test_mantle_tokens_and_reused_call_ids() -> None:
    t = sim.SimTransport()
    items = _first_turn(t, "sim-mantle")
    calls = [i for i in items if i.get("type") == "function_call"]
    assert [c["call_id"] for c in calls] == ["call_0", "call_1"]
    assert items[1]["encrypted_content"].startswith("rsn_")
    body = raw_post(t, "/v1/responses", _request("sim-mantle", TASK)).json()
    assert body["billing"] == {"payer": "developer"}
    assert body["usage"]["input_tokens_details"]["cache_write_tokens"] == 0
    # Scoped as a client must (the recorded "<response id>:call_0"), the pairing and the plan hold.
    r = raw_post(t, "/v1/responses", _request("sim-mantle", _scoped(items, body_id=_response_of(t, items))))
    assert r.status_code == 200 and r.headers["x-sim-plan"] == "known" and _answer(r) == RIGHT


def _response_of(t: sim.SimTransport, items: list[dict[str, Any]]) -> str:
    """The id of the response that made ``items`` (asked again: the simulator is deterministic)."""
    r = raw_post(t, "/v1/responses", _request("sim-mantle", [items[0]]))
    rid: str = r.json()["id"]
    return rid


def _scoped(items: list[dict[str, Any]], *, body_id: str) -> list[dict[str, Any]]:
    out = []
    for i in items:
        if i.get("type") in ("function_call", "function_call_output"):
            i = {**i, "call_id": f"{body_id}:{i['call_id']}"}
        out.append(i)
    return out


def test_mantle_refuses_a_token_without_its_prefix() -> None:
    t = sim.SimTransport()
    items = _first_turn(t, "sim-mantle")
    items[1]["encrypted_content"] = items[1]["encrypted_content"].removeprefix("rsn_")
    status, err = _error(raw_post(t, "/v1/responses", _request("sim-mantle", items)))
    assert (status, err["code"]) == (400, "invalid_encrypted_content")


# ------------------------------------------------------------------ local servers: no encrypted_content


def test_local_refuses_encrypted_content_and_takes_the_text() -> None:
    t = sim.SimTransport()
    items = _first_turn(t, "sim-local-responses", include=None)
    assert "encrypted_content" not in items[1] and items[1]["content"][0]["type"] == "reasoning_text"
    r = raw_post(t, "/v1/responses", _request("sim-local-responses", items, include=None))
    assert r.status_code == 200 and r.headers["x-sim-plan"] == "known"
    usage = r.json()["usage"]
    assert "output_tokens_details" not in usage and "input_tokens_details" not in usage
    bad = [*items[:1], {**items[1], "encrypted_content": "anything"}, *items[2:]]
    status, err = _error(raw_post(t, "/v1/responses", _request("sim-local-responses", bad, include=None)))
    assert (status, err["message"]) == (400, VLLM_ENCRYPTED)
