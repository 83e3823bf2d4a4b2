"""The simulated Gemini API on the wire: auth, field names, faults, stream grammar, recorded requests."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import errors, types

from agentlab import sim
from agentlab.sim.gemini import errors as GE
from agentlab.sim.gemini import generate as gemini
from agentlab.sim.gemini.request import read_request
from tests.support.cassettes import fixture_files, load_cassette, parse_sse
from tests.support.loopback import serving

GEN = "/v1beta/models/sim-gemini:generateContent"
STREAM = "/v1beta/models/sim-gemini:streamGenerateContent?alt=sse"
HELLO = {"contents": [{"role": "user", "parts": [{"text": "What is 2 + 3?"}]}]}


def gclient(**kw: Any) -> Any:
    """The simulator's google-genai client, typed loosely (its response fields are all optional)."""
    return sim.gemini_client(**kw)


def post(
    path: str, body: dict[str, Any], headers: dict[str, str] | None = None, **kw: Any
) -> httpx2.Response:
    with httpx2.Client(transport=sim.SimTransport(**kw), base_url=sim.GEMINI_BASE_URL) as c:
        return c.post(path, json=body, headers=headers if headers is not None else {"x-goog-api-key": "k"})


def test_key_in_header_or_query_else_the_real_refusals() -> None:
    assert post(GEN, HELLO).status_code == 200
    assert post(GEN + "?key=abc", HELLO, headers={}).status_code == 200
    r = post(GEN, HELLO, headers={})
    assert r.status_code == 403
    assert r.json() == {"error": {"code": 403, "message": GE.NO_KEY, "status": "PERMISSION_DENIED"}}
    r = post(GEN, HELLO, headers={"x-goog-api-key": ""})
    err = r.json()["error"]
    assert r.status_code == 400 and err["message"] == "API key not valid. Please pass a valid API key."
    assert err["status"] == "INVALID_ARGUMENT" and err["details"][0]["reason"] == "API_KEY_INVALID"
    r = post(GEN, HELLO, headers={"authorization": "Bearer"})
    assert r.status_code == 401 and r.json()["error"]["status"] == "UNAUTHENTICATED"


def test_missing_key_through_the_sdk_is_a_client_error() -> None:
    client = gclient(api_key=" ")
    with pytest.raises(errors.ClientError) as info:
        client.models.generate_content(model="sim-gemini", contents="hi")
    assert info.value.code == 400 and "API key not valid" in str(info.value.message)


def test_unknown_fields_are_refused_with_the_parser_text() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi", "foo": 1}]}], "bar": True}
    r = post(GEN, body)
    err = r.json()["error"]
    assert r.status_code == 400 and err["status"] == "INVALID_ARGUMENT"
    assert err["message"] == (
        "Invalid JSON payload received. Unknown name \"foo\" at 'contents[0].parts[0]': Cannot find field.\n"
        'Invalid JSON payload received. Unknown name "bar": Cannot find field.'
    )
    violations = err["details"][0]["fieldViolations"]
    assert err["details"][0]["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    assert violations[0]["field"] == "contents[0].parts[0]" and "field" not in violations[1]
    schema_body = {
        **HELLO,
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "f",
                        "parameters": {
                            "type": "OBJECT",
                            "properties": {"a": {"type": "STRING", "additionalProperties": False}},
                        },
                    }
                ]
            }
        ],
    }
    msg = post(GEN, schema_body).json()["error"]["message"]
    assert msg == (
        'Invalid JSON payload received. Unknown name "additionalProperties" at '
        "'tools[0].function_declarations[0].parameters.properties[0].value': Cannot find field."
    )


def test_snake_case_and_camel_case_are_both_read() -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "What is 2 + 3?"}]}],
        "generation_config": {"thinking_config": {"include_thoughts": True, "thinking_level": "LOW"}},
        "system_instruction": {"parts": [{"text": "be brief"}]},
    }
    r = post(GEN, body)
    assert r.status_code == 200, r.text
    parts = r.json()["candidates"][0]["content"]["parts"]
    assert parts[0]["thought"] is True


def test_stream_grammar_matches_the_recordings() -> None:
    r = post(STREAM, HELLO)
    assert r.headers["content-type"] == "text/event-stream"
    raw = r.text
    assert raw.endswith("\r\n\r\n") and "[DONE]" not in raw and "event:" not in raw
    events = parse_sse(raw)
    assert all(set(e) == {"candidates", "usageMetadata", "modelVersion", "responseId"} for e in events)
    assert len({e["responseId"] for e in events}) == 1
    assert [e["candidates"][0].get("finishReason") for e in events][-1] == "STOP"
    assert all("finishReason" not in e["candidates"][0] for e in events[:-1])
    last = events[-1]["candidates"][0]["content"]["parts"]
    assert last[0]["text"] == "" and "thoughtSignature" in last[0]  # the signature on a final empty part
    counts = [e["usageMetadata"].get("candidatesTokenCount", 0) for e in events]
    assert counts == sorted(counts)  # cumulative
    # without alt=sse: one JSON array of the same chunks
    arr = post(STREAM.split("?")[0], HELLO).json()
    assert isinstance(arr, list) and arr[-1]["candidates"][0]["finishReason"] == "STOP"


def test_faults_answer_in_gemini_shape() -> None:
    r = post(GEN, HELLO, headers={"x-goog-api-key": "k", "x-sim-fault": "429"})
    err = r.json()["error"]
    assert r.status_code == 429 and err["status"] == "RESOURCE_EXHAUSTED"
    assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"} in err["details"]
    assert "(simulated)" in err["message"]  # the API puts the wait in RetryInfo, not in a header
    assert (
        post(GEN, HELLO, headers={"x-goog-api-key": "k", "x-sim-fault": "500"}).json()["error"]["status"]
        == "INTERNAL"
    )
    r = post(GEN, HELLO, headers={"x-goog-api-key": "k", "x-sim-fault": "529"})
    assert r.status_code == 503 and r.json()["error"]["status"] == "UNAVAILABLE"
    cut = post(STREAM, HELLO, headers={"x-goog-api-key": "k", "x-sim-fault": "cut"})
    assert not cut.text.endswith("\r\n\r\n")
    bad = post(STREAM, HELLO, headers={"x-goog-api-key": "k", "x-sim-fault": "malformed"})
    with pytest.raises(ValueError):
        parse_sse(bad.text)
    slow = post(STREAM, HELLO, headers={"x-goog-api-key": "k", "x-sim-fault": "slow:1"})
    assert slow.headers["x-agentlab-simulated"] == "sim-gemini" and parse_sse(slow.text)


def test_sdk_retries_a_429_then_succeeds() -> None:
    client = gclient(
        http_options={"retry_options": {"attempts": 3, "initial_delay": 0.01, "max_delay": 0.02}},
        default_fault="429x2",
    )
    assert client.models.generate_content(model="sim-gemini", contents="What is 2 + 3?").text


def test_unknown_path_is_the_gemini_404() -> None:
    r = post("/v1beta/models/sim-gemini:generateStuff", HELLO)
    assert r.status_code == 404 and r.json()["error"]["status"] == "NOT_FOUND"


def _recorded() -> list[Any]:
    out = []
    for path in fixture_files("gemini"):
        for i, ex in enumerate(load_cassette(path)):
            if ex.status == 200 and ex.request_json is not None:
                out.append((path, i, ex.request_json, ex.url))
    return out


def _served(url: str) -> str:
    return "sim-gemini-legacy" if "gemini-2.5" in url else "sim-gemini"


@pytest.mark.parametrize(
    "case", _recorded() or [None], ids=lambda c: f"{c[0].stem}#{c[1]}" if c else "absent"
)
def test_recorded_accepted_requests_pass_request_validation(case: Any) -> None:
    if case is None:
        pytest.skip("../shared/fixtures/gemini is absent")
    _, _, body, url = case
    req = read_request(dict(body))
    gemini.check_pairs(req["contents"])
    gemini.thinking(_served(url), req.get("generationConfig") or {})
    gemini.situation(req, req["contents"], 2)


@pytest.mark.parametrize(
    "case", _recorded() or [None], ids=lambda c: f"{c[0].stem}#{c[1]}" if c else "absent"
)
def test_recorded_requests_are_served_when_their_signatures_are_skipped(case: Any) -> None:
    """The whole request path (headers, schema, pairing, signatures) accepts the recorded bodies.

    Their signatures are Google's, which no simulator can verify; the documented skip sentinel
    takes their place, so everything else about the recorded request is checked end to end.
    """
    if case is None:
        pytest.skip("../shared/fixtures/gemini is absent")
    _, _, body, url = case
    text = json.dumps(body)
    for c in body.get("contents", []):
        for p in c.get("parts", []):
            if "thoughtSignature" in p:
                text = text.replace(json.dumps(p["thoughtSignature"]), '"skip_thought_signature_validator"')
    path = f"/v1beta/models/{_served(url)}:streamGenerateContent?alt=sse" if "stream" in url else GEN
    r = post(path, json.loads(text))
    assert r.status_code == 200, r.text


def test_loopback_server_serves_the_sdk() -> None:
    with serving() as url:
        client = genai.Client(api_key="anything", http_options=types.HttpOptions(base_url=url))
        r = client.models.generate_content(model="sim-gemini", contents="What is 2 + 3?")
        assert "5" in (r.text or "")
        text = "".join(
            c.text or ""
            for c in client.models.generate_content_stream(model="sim-gemini", contents="What is 2 + 3?")
        )
        assert "5" in text
        assert [m.name for m in client.models.list()][:1] == ["models/sim-gemini"]


def test_real_names_are_served_labelled_simulated_when_asked() -> None:
    body = {**HELLO, "generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}}
    assert post("/v1beta/models/gemini-2.5-flash:generateContent", body).status_code == 404
    r = post("/v1beta/models/gemini-2.5-flash:generateContent", body, real_models=True)
    assert r.status_code == 200 and r.headers["x-agentlab-simulated"] == "sim-gemini-legacy"
    assert r.json()["modelVersion"] == "gemini-2.5-flash (simulated by agentlab: sim-gemini-legacy)"
    r = post("/v1beta/models/gemini-2.5-pro:generateContent", body, real_models=True)
    assert r.status_code == 400 and r.json()["error"]["message"] == gemini.ONLY_THINKING


def test_sdk_tolerates_the_unknown_event_fault() -> None:
    client = gclient(default_fault="unknown_event")
    text = "".join(
        c.text or ""
        for c in client.models.generate_content_stream(model="sim-gemini", contents="What is 2 + 3?")
    )
    assert "5" in text


def _recorded_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for path in fixture_files("gemini"):
        for ex in load_cassette(path):
            if ex.status == 200 and ex.response_text and "data:" in ex.response_text:
                events += parse_sse(ex.response_text)
    return events


def _shapes(events: list[dict[str, Any]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {
        "chunk": set(),
        "candidate": set(),
        "part": set(),
        "call": set(),
        "usage": set(),
    }
    for e in events:
        out["chunk"] |= set(e)
        out["usage"] |= set(e.get("usageMetadata") or {})
        for c in e.get("candidates") or []:
            out["candidate"] |= set(c)
            for p in (c.get("content") or {}).get("parts") or []:
                out["part"] |= set(p)
                out["call"] |= set(p.get("functionCall") or {})
    return out


def test_simulated_stream_fields_are_the_recorded_ones() -> None:
    """Every field the simulated streams use was seen in the recorded Gemini streams (cache fields aside)."""
    recorded = _recorded_events()
    if not recorded:
        pytest.skip("../shared/fixtures/gemini is absent")
    want = _shapes(recorded)
    weather = {
        "name": "get_weather",
        "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}},
    }
    ours: list[dict[str, Any]] = []
    for model in ("sim-gemini", "sim-gemini-legacy"):
        path = f"/v1beta/models/{model}:streamGenerateContent?alt=sse"
        for text in ("Is it warmer in Paris or Rome?", "What is 2 + 3?"):
            body = {
                "contents": [{"role": "user", "parts": [{"text": text}]}],
                "tools": [{"functionDeclarations": [weather]}],
                "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
            }
            ours += parse_sse(post(path, body).text)
    got = _shapes(ours)
    got["usage"] -= {"cachedContentTokenCount", "cacheTokensDetails"}
    for kind, fields in got.items():
        assert fields <= want[kind], (kind, fields - want[kind])
    assert want["part"] <= got["part"] and want["call"] == got["call"]


def test_replies_are_deterministic() -> None:
    a, b = post(STREAM, HELLO).content, post(STREAM, HELLO).content
    assert a == b
    assert post(STREAM, HELLO, seed=1).content != a  # the seed changes ids
