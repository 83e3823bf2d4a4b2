"""An unchanged outside client, pointed at ``python -m agentlab.sim serve``, with real names.

This is the documented way to test one's own client code offline: the official SDK helpers
(``responses.create``/``stream``, ``messages.create``/``stream``, ``count_tokens``,
``input_tokens.count``, ``models.retrieve``) work against the loopback server with real model
names (answered by default on the loopback server; ``--sim-names-only`` turns that off); a
misconfigured ``base_url`` is the 404 and a missing key the 401 that production answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from tests.sim.helpers import ANTHROPIC_WEATHER, OPENAI_WEATHER, TEMPS
from tests.support.loopback import serving

TASK = "Is it warmer in Paris or Rome?"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serving() as url:  # real names are the server's default: nothing to switch on
        yield url


def test_openai_sdk_helpers_with_a_real_model_name(server: str) -> None:
    client = openai.OpenAI(base_url=f"{server}/v1", api_key="sk-my-own-client", max_retries=0)
    items: list[Any] = [{"role": "user", "content": TASK}]
    kw: dict[str, Any] = {"model": "gpt-5.5", "tools": [OPENAI_WEATHER], "store": False}
    kw["include"] = ["reasoning.encrypted_content"]
    counted = client.responses.input_tokens.count(model="gpt-5.5", input=items, tools=[OPENAI_WEATHER])  # type: ignore[list-item]
    with client.responses.stream(input=items, **kw) as st:
        first = st.get_final_response()
    assert first.usage is not None and first.usage.input_tokens == counted.input_tokens
    calls = [o for o in first.output if o.type == "function_call"]
    assert calls
    items += [o.model_dump(exclude_none=True) for o in first.output]
    for c in calls:
        out = TEMPS[json.loads(c.arguments)["city"]]
        items.append({"type": "function_call_output", "call_id": c.call_id, "output": out})
    raw = client.responses.with_raw_response.create(input=items, **kw)
    final = raw.parse()
    assert final.output_text == "Rome is warmer (24 vs Paris 18)."
    assert raw.headers["x-agentlab-simulated"] == "sim-reasoner"
    assert final.model == "gpt-5.5 (simulated by agentlab: sim-reasoner)"
    assert client.models.retrieve("gpt-5.5").id == "gpt-5.5"
    stored = client.responses.create(model="o3", input="What is 6 * 7?")
    assert client.responses.retrieve(stored.id).output_text == "6 * 7 = 42"
    client.responses.delete(stored.id)


def test_anthropic_sdk_helpers_with_a_real_model_name(server: str) -> None:
    client = anthropic.Anthropic(base_url=server, api_key="sk-ant-my-own-client", max_retries=0)
    msgs: list[Any] = [{"role": "user", "content": TASK}]
    kw: dict[str, Any] = {"model": "claude-opus-4-6", "tools": [ANTHROPIC_WEATHER]}
    counted = client.messages.count_tokens(messages=msgs, **kw)
    kw |= {"max_tokens": 8000, "thinking": {"type": "adaptive"}}
    with client.messages.stream(messages=msgs, **kw) as st:
        first = st.get_final_message()
    assert first.usage.input_tokens == counted.input_tokens
    assert first.model == "claude-opus-4-6 (simulated by agentlab: sim-thinker)"
    msgs.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]})
    results = [
        {"type": "tool_result", "tool_use_id": b.id, "content": TEMPS[b.input["city"]]}  # type: ignore[index]
        for b in first.content
        if b.type == "tool_use"
    ]
    assert results
    msgs.append({"role": "user", "content": results})
    final = client.messages.create(messages=msgs, **kw)
    assert final.content[-1].type == "text" and "Rome" in final.content[-1].text
    assert client.models.retrieve("claude-sonnet-4-5").id == "claude-sonnet-4-5"


def test_misconfigured_base_url_is_404_over_the_socket(server: str) -> None:
    for base in (f"{server}/v1/v1", server):
        client = openai.OpenAI(base_url=base, api_key="k", max_retries=0)
        with pytest.raises(openai.NotFoundError):
            client.responses.create(model="gpt-5.5", input="hi")
    ant = anthropic.Anthropic(base_url=f"{server}/v1", api_key="k", max_retries=0)
    with pytest.raises(anthropic.NotFoundError) as e:
        ant.messages.create(
            model="claude-opus-4-6", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    assert isinstance(e.value.body, dict) and e.value.body["error"]["message"] == "Not Found"


def test_missing_key_is_401_over_the_socket(server: str) -> None:
    with httpx2.Client(base_url=server) as c:
        r = c.post("/v1/responses", json={"model": "gpt-5.5", "input": "hi"})
        assert (r.status_code, r.json()["error"]["type"]) == (401, "invalid_request_error")
        r = c.post(
            "/v1/messages",
            json={"model": "claude-opus-4-6", "max_tokens": 10, "messages": []},
            headers={"anthropic-version": "2023-06-01"},
        )
        assert (r.status_code, r.json()["error"]["type"]) == (401, "authentication_error")
        r = c.post("/v1/messages", json={}, headers={"x-api-key": "k"})
        assert (r.status_code, r.json()["error"]["message"]) == (400, "anthropic-version: header is required")


def test_sim_names_only_refuses_real_names_over_the_socket() -> None:
    """``--sim-names-only``: a real name is the provider's "model not found"; only simulated names listed."""
    with serving("--sim-names-only") as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0)
        with pytest.raises(openai.BadRequestError) as e:
            client.responses.create(model="gpt-5.5", input="hi")
        assert isinstance(e.value.body, dict) and e.value.body["code"] == "model_not_found"
        dialects = ["sim-grok", "sim-deepseek-responses", "sim-azure", "sim-azure-null", "sim-mantle"]
        listed = ["sim-reasoner", "sim-reasoner-mini", *dialects, "sim-local-responses"]
        assert [m.id for m in client.models.list()] == listed
        ant = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        with pytest.raises(anthropic.NotFoundError):
            ant.messages.create(
                model="claude-opus-4-6", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )
        ok = client.responses.create(model="sim-reasoner", input="What is 6 * 7?")
        assert ok.output_text == "6 * 7 = 42"


def test_the_old_real_models_flag_is_still_accepted() -> None:
    """Scripts written for the opt-in switch keep working: ``--real-models`` is now the default."""
    with serving("--real-models") as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0)
        assert client.responses.create(model="gpt-5.5", input="What is 6 * 7?").output_text == "6 * 7 = 42"
