"""The simulator's HTTP surface fails where the real hosts fail: credentials, version header, routes.

Written from the providers' documented behaviour (texts as the real APIs send them, see
``../shared/fixtures/errors`` for the recorded shapes): OpenAI wants ``Authorization: Bearer <key>``
(401 "You didn't provide an API key. ..."), Anthropic ``x-api-key`` (401 "x-api-key header is
required") and ``anthropic-version`` (400 "anthropic-version: header is required"). Only the
documented paths are served; a doubled or missing ``/v1`` is the 404 a misconfigured ``base_url``
gets in production. Any non-empty key is accepted (the simulator checks presence, not validity).
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import openai
import pytest

from agentlab import sim

BASE = "http://sim.agentlab.local"
OPENAI_BODY: dict[str, Any] = {"model": "sim-reasoner", "input": "What is 6 * 7?"}
ANTHROPIC_BODY: dict[str, Any] = {
    "model": "sim-thinker",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "What is 6 * 7?"}],
}
OAI_KEY = {"authorization": "Bearer sk-anything"}
ANT_KEY = {"x-api-key": "sk-ant-anything", "anthropic-version": "2023-06-01"}
NO_KEY_TEXT = (
    "You didn't provide an API key. You need to provide your API key in an Authorization header using "
    "Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if "
    "you're accessing the API from your browser and are prompted for a username and password. You can "
    "obtain an API key from https://platform.openai.com/account/api-keys."
)


def _call(method: str, path: str, headers: dict[str, str], body: dict[str, Any] | None = None) -> Any:
    with httpx2.Client(transport=sim.SimTransport(), base_url=BASE) as c:
        return c.request(method, path, json=body, headers=headers)


# --- credentials -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers", [{}, {"authorization": ""}, {"authorization": "Bearer "}, {"authorization": "Bearer"}]
)
def test_openai_without_a_key_is_401_in_the_real_shape(headers: dict[str, str]) -> None:
    r = _call("POST", "/v1/responses", headers, OPENAI_BODY)
    assert r.status_code == 401
    assert r.json() == {
        "error": {"message": NO_KEY_TEXT, "type": "invalid_request_error", "param": None, "code": None}
    }
    assert r.headers["x-request-id"].startswith("req_")


@pytest.mark.parametrize("key", [None, "", "   "])
def test_anthropic_without_a_key_is_401_in_the_real_shape(key: str | None) -> None:
    headers = {"anthropic-version": "2023-06-01"}
    if key is not None:
        headers["x-api-key"] = key
    r = _call("POST", "/v1/messages", headers, ANTHROPIC_BODY)
    assert r.status_code == 401
    body = r.json()
    assert body["type"] == "error"
    assert body["error"] == {"type": "authentication_error", "message": "x-api-key header is required"}
    assert body["request_id"] == r.headers["request-id"]
    assert r.headers["x-should-retry"] == "false"


def test_anthropic_without_version_header_is_400() -> None:
    r = _call("POST", "/v1/messages", {"x-api-key": "sk-ant-anything"}, ANTHROPIC_BODY)
    assert r.status_code == 400
    assert r.json()["error"] == {
        "type": "invalid_request_error",
        "message": "anthropic-version: header is required",
    }


def test_any_non_empty_key_is_accepted_and_anthropic_bearer_tokens_too() -> None:
    assert _call("POST", "/v1/responses", OAI_KEY, OPENAI_BODY).status_code == 200
    assert _call("POST", "/v1/messages", ANT_KEY, ANTHROPIC_BODY).status_code == 200
    bearer = {"authorization": "Bearer an-oauth-token", "anthropic-version": "2023-06-01"}
    assert _call("POST", "/v1/messages", bearer, ANTHROPIC_BODY).status_code == 200


def test_sdk_clients_without_a_key_get_authentication_errors() -> None:
    # Both SDKs refuse to build a client without a key; a client whose headers lose it (a proxy,
    # a hand-written default_headers) reaches the server without one.
    oai = openai.OpenAI(
        api_key="placeholder",
        base_url=f"{BASE}/v1",
        http_client=httpx2.Client(transport=sim.SimTransport()),
        default_headers={"Authorization": ""},
    )
    with pytest.raises(openai.AuthenticationError) as oe:
        oai.responses.create(model="sim-reasoner", input="hi")
    assert oe.value.status_code == 401 and "didn't provide an API key" in str(oe.value)
    ant = anthropic.Anthropic(
        base_url=BASE, http_client=httpx2.Client(transport=sim.SimTransport()), api_key="placeholder"
    )
    with pytest.raises(anthropic.AuthenticationError) as ae:
        ant.messages.create(
            **ANTHROPIC_BODY, extra_headers={"x-api-key": "", "authorization": anthropic.Omit()}
        )
    assert ae.value.status_code == 401 and "x-api-key header is required" in str(ae.value)


def test_agentlab_sim_clients_send_a_placeholder_key_never_shown() -> None:
    for client in (sim.openai_sync_client(), sim.anthropic_sync_client()):
        assert client.api_key and client.api_key not in repr(client)
    r = sim.openai_sync_client().responses.create(model="sim-reasoner", input="What is 6 * 7?")
    assert r.output_text == "6 * 7 = 42"
    m = sim.anthropic_sync_client().messages.create(**ANTHROPIC_BODY)
    assert m.content[-1].type == "text"


# --- exact routes --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/v1/responses", "/responses", "/api/v1/responses", "/v1/responses/x/y"])
def test_openai_paths_off_the_documented_ones_are_404(path: str) -> None:
    r = _call("POST", path, OAI_KEY, OPENAI_BODY)
    assert r.status_code == 404
    assert r.json() == {
        "error": {
            "message": f"Invalid URL (POST {path})",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }


@pytest.mark.parametrize("path", ["/v1/v1/messages", "/messages", "/anthropic/v1/messages"])
def test_anthropic_paths_off_the_documented_ones_are_404(path: str) -> None:
    r = _call("POST", path, ANT_KEY, ANTHROPIC_BODY)
    assert r.status_code == 404
    body = r.json()
    assert body["error"] == {"type": "not_found_error", "message": "Not Found"}
    assert body["request_id"] == r.headers["request-id"]


def test_wrong_method_on_a_served_path_is_refused() -> None:
    r = _call("GET", "/v1/responses", OAI_KEY)
    assert (r.status_code, r.json()["error"]["message"]) == (404, "Invalid URL (GET /v1/responses)")
    r = _call("GET", "/v1/messages", ANT_KEY)
    assert (r.status_code, r.json()["error"]["type"]) == (404, "not_found_error")
    r = _call("PUT", "/v1/responses/resp_1", OAI_KEY, {})
    assert r.status_code == 404


def test_trailing_slash_and_query_are_the_same_route() -> None:
    assert _call("POST", "/v1/responses/", OAI_KEY, OPENAI_BODY).status_code == 200
    assert _call("POST", "/v1/messages?beta=true", ANT_KEY, ANTHROPIC_BODY).status_code == 200


def test_sdk_with_a_misconfigured_base_url_fails_with_404() -> None:
    oai = openai.OpenAI(
        api_key="k", base_url=f"{BASE}/v1/v1", http_client=httpx2.Client(transport=sim.SimTransport())
    )
    with pytest.raises(openai.NotFoundError):
        oai.responses.create(model="sim-reasoner", input="hi")
    oai = openai.OpenAI(api_key="k", base_url=BASE, http_client=httpx2.Client(transport=sim.SimTransport()))
    with pytest.raises(openai.NotFoundError):
        oai.responses.create(model="sim-reasoner", input="hi")
    ant = anthropic.Anthropic(
        api_key="k", base_url=f"{BASE}/v1", http_client=httpx2.Client(transport=sim.SimTransport())
    )
    with pytest.raises(anthropic.NotFoundError):
        ant.messages.create(**ANTHROPIC_BODY)


def test_sim_base_urls_are_the_documented_ones() -> None:
    assert f"{BASE}/v1" == sim.OPENAI_BASE_URL
    assert sim.ANTHROPIC_BASE_URL == BASE


def test_a_key_never_comes_back_in_any_reply() -> None:
    secret = "sk-proj-SECRET-never-echoed-123"
    cases = [
        ("POST", "/v1/responses", {"authorization": f"Bearer {secret}"}, OPENAI_BODY),
        ("POST", "/v1/responses", {"authorization": f"Bearer {secret}"}, {"model": "nope"}),
        ("POST", "/v1/v1/responses", {"authorization": f"Bearer {secret}"}, OPENAI_BODY),
        ("POST", "/v1/messages", {"x-api-key": secret}, ANTHROPIC_BODY),
        ("POST", "/v1/messages", {**ANT_KEY, "x-api-key": secret}, ANTHROPIC_BODY),
        ("GET", "/v1/models/x", {"authorization": f"Bearer {secret}"}, None),
    ]
    for method, path, headers, body in cases:
        r = _call(method, path, headers, body)
        assert secret not in r.text and secret not in str(dict(r.headers)), (method, path)
