"""The endpoints SDKs and clients call besides generation, through the official SDK methods.

From the providers' API references: ``GET /v1/models`` and ``GET /v1/models/{id}`` (both; an
unknown id is the 404 each API sends), ``POST /v1/messages/count_tokens`` (``{"input_tokens": N}``),
``POST /v1/responses/input_tokens`` (``{"object": "response.input_tokens", "input_tokens": N}``),
``GET``/``DELETE /v1/responses/{id}`` (only what ``store: true`` kept; 404 otherwise). Token counts
come from the simulator's one tokenizer, so they equal what a generation call reports as input.
"""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from agentlab import sim
from tests.sim.helpers import ANTHROPIC_WEATHER, OPENAI_WEATHER

TASK = "Is it warmer in Paris or Rome?"


def _oai() -> openai.OpenAI:
    return sim.openai_sync_client(max_retries=0)


def _ant() -> anthropic.Anthropic:
    return sim.anthropic_sync_client(max_retries=0)


def test_models_retrieve_on_both_providers() -> None:
    m = _oai().models.retrieve("sim-reasoner")
    assert (m.id, m.object) == ("sim-reasoner", "model")
    a = _ant().models.retrieve("sim-thinker")
    assert (a.id, a.type) == ("sim-thinker", "model")
    assert [x.id for x in _ant().models.list()] == ["sim-thinker", "sim-thinker-legacy"]


def test_models_retrieve_unknown_id_is_the_real_404() -> None:
    with pytest.raises(openai.NotFoundError) as oe:
        _oai().models.retrieve("gpt-nope")
    assert oe.value.body == {
        "message": "The model 'gpt-nope' does not exist",
        "type": "invalid_request_error",
        "param": "model",
        "code": "model_not_found",
    }
    with pytest.raises(anthropic.NotFoundError) as ae:
        _ant().models.retrieve("claude-nope")
    assert isinstance(ae.value.body, dict)
    assert ae.value.body["error"] == {"type": "not_found_error", "message": "model: claude-nope"}


def test_anthropic_count_tokens_matches_what_a_messages_call_bills() -> None:
    client = _ant()
    kw: dict[str, Any] = {
        "model": "sim-thinker",
        "messages": [{"role": "user", "content": TASK}],
        "tools": [ANTHROPIC_WEATHER],
        "system": "Be brief.",
    }
    counted = client.messages.count_tokens(**kw)
    msg = client.messages.create(max_tokens=4000, **kw)
    billed = msg.usage.input_tokens + (msg.usage.cache_read_input_tokens or 0)
    billed += msg.usage.cache_creation_input_tokens or 0
    assert counted.input_tokens == billed > 0


def test_anthropic_count_tokens_refuses_unknown_models_and_bad_bodies() -> None:
    with pytest.raises(anthropic.NotFoundError):
        _ant().messages.count_tokens(model="claude-nope", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(anthropic.BadRequestError):
        _ant().messages.count_tokens(model="sim-thinker", messages="hi")  # type: ignore[arg-type]


def test_openai_input_tokens_matches_what_a_responses_call_bills() -> None:
    client = _oai()
    kw: dict[str, Any] = {
        "model": "sim-reasoner",
        "input": [{"role": "user", "content": TASK}],
        "tools": [OPENAI_WEATHER],
        "instructions": "Be brief.",
    }
    counted = client.responses.input_tokens.count(**kw)
    assert counted.object == "response.input_tokens"
    r = client.responses.create(store=False, **kw)
    assert r.usage is not None and counted.input_tokens == r.usage.input_tokens > 0


def test_openai_input_tokens_refuses_unknown_models() -> None:
    with pytest.raises(openai.BadRequestError) as e:
        _oai().responses.input_tokens.count(model="gpt-nope", input="hi")
    assert isinstance(e.value.body, dict) and e.value.body["code"] == "model_not_found"


def test_responses_retrieve_returns_what_store_kept_and_404_under_store_false() -> None:
    client = _oai()
    kept = client.responses.create(model="sim-reasoner", input="What is 6 * 7?")
    got = client.responses.retrieve(kept.id)
    assert got.model_dump() == kept.model_dump()
    gone = client.responses.create(model="sim-reasoner", input="What is 6 * 7?", store=False)
    with pytest.raises(openai.NotFoundError) as e:
        client.responses.retrieve(gone.id)
    assert e.value.body == {
        "message": f"Response with id '{gone.id}' not found.",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }


def test_streamed_responses_are_retrievable_too() -> None:
    client = _oai()
    with client.responses.stream(model="sim-reasoner", input="What is 6 * 7?") as st:
        final = st.get_final_response()
    assert client.responses.retrieve(final.id).output_text == "6 * 7 = 42"


def test_responses_delete_forgets_the_stored_response() -> None:
    client = _oai()
    kept = client.responses.create(model="sim-reasoner", input="What is 6 * 7?")
    client.responses.delete(kept.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(kept.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(kept.id)
    with pytest.raises(openai.BadRequestError):  # nor can a deleted response be continued
        client.responses.create(model="sim-reasoner", input="and?", previous_response_id=kept.id)


def test_new_endpoints_also_require_a_key() -> None:
    import httpx2

    with httpx2.Client(transport=sim.SimTransport(), base_url="http://sim.agentlab.local") as c:
        assert c.get("/v1/models").status_code == 401
        assert c.get("/v1/models/sim-reasoner").status_code == 401
        r = c.post(
            "/v1/messages/count_tokens",
            json={"model": "sim-thinker", "messages": []},
            headers={"anthropic-version": "2023-06-01"},
        )
        assert (r.status_code, r.json()["error"]["type"]) == (401, "authentication_error")
