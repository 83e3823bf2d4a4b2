"""Real model names, answered as the simulated model that behaves like each, always labelled simulated.

In process opt-in (``real_models=True``; the loopback ``serve`` default): off, a real name is the
provider's "model not found", as before. On, the reply's ``x-agentlab-simulated`` header names the
simulated model and its ``model`` field reads ``<real> (simulated by agentlab: <sim>)``; agentlab's
own routing (``openai:gpt-5.5`` goes to the real API) does not read the table.
"""

from __future__ import annotations

import warnings
from typing import Any

import anthropic
import openai
import pytest

from agentlab import sim
from agentlab.sim.real_models import ANTHROPIC_REAL_MODELS, HEADER, OPENAI_REAL_MODELS, label


def test_the_table_maps_only_to_models_the_simulator_serves() -> None:
    assert set(OPENAI_REAL_MODELS.values()) <= set(sim.OPENAI_MODELS)
    assert set(ANTHROPIC_REAL_MODELS.values()) <= set(sim.ANTHROPIC_MODELS)
    assert not any(n.startswith("sim-") for n in [*OPENAI_REAL_MODELS, *ANTHROPIC_REAL_MODELS])
    for name in ("gpt-5.5", "gpt-5.1", "o3", "gpt-5-mini"):
        assert name in OPENAI_REAL_MODELS
    for name in ("claude-opus-4-6", "claude-sonnet-4-5", "claude-haiku-4-5"):
        assert name in ANTHROPIC_REAL_MODELS
    assert OPENAI_REAL_MODELS["gpt-5-mini"] == "sim-reasoner-mini"
    assert label("sim-reasoner", "sim-reasoner") == "sim-reasoner"


def test_real_names_are_refused_unless_asked_for() -> None:
    with pytest.raises(openai.BadRequestError) as e:
        sim.openai_sync_client().responses.create(model="gpt-5.5", input="hi")
    assert isinstance(e.value.body, dict) and e.value.body["code"] == "model_not_found"
    with pytest.raises(anthropic.NotFoundError):
        sim.anthropic_sync_client().messages.create(
            model="claude-opus-4-6", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        )
    with pytest.raises(openai.NotFoundError):
        sim.openai_sync_client().models.retrieve("gpt-5.5")


def test_openai_real_name_behaves_as_its_sim_model_and_says_so() -> None:
    client = sim.openai_sync_client(real_models=True)
    raw = client.responses.with_raw_response.create(model="gpt-5.5", input="What is 6 * 7?")
    r = raw.parse()
    assert raw.headers[HEADER] == "sim-reasoner"
    assert r.model == "gpt-5.5 (simulated by agentlab: sim-reasoner)"
    assert r.output_text == "6 * 7 = 42"
    with client.responses.stream(model="o4-mini", input="What is 6 * 7?") as st:
        final = st.get_final_response()
    assert final.model == "o4-mini (simulated by agentlab: sim-reasoner-mini)"
    with pytest.raises(openai.BadRequestError, match="temperature"):  # a reasoning model's rule
        client.responses.create(model="gpt-5.5", input="hi", temperature=0.2)
    card = client.models.retrieve("gpt-5.5")
    assert card.id == "gpt-5.5" and "simulated" in card.owned_by
    listed = [m.id for m in client.models.list()]
    assert listed[:2] == ["sim-reasoner", "sim-reasoner-mini"] and "gpt-5.5" in listed


def test_anthropic_real_name_behaves_as_its_sim_model_and_says_so() -> None:
    client = sim.anthropic_sync_client(real_models=True)
    kw: dict[str, Any] = {"max_tokens": 4000, "messages": [{"role": "user", "content": "What is 6 * 7?"}]}
    raw = client.messages.with_raw_response.create(
        model="claude-opus-4-6", thinking={"type": "adaptive"}, **kw
    )
    m = raw.parse()
    assert raw.headers[HEADER] == "sim-thinker"
    assert m.model == "claude-opus-4-6 (simulated by agentlab: sim-thinker)"
    assert [b.type for b in m.content] == ["thinking", "text"]
    with client.messages.stream(
        model="claude-sonnet-4-5", thinking={"type": "enabled", "budget_tokens": 1024}, **kw
    ) as st:
        final = st.get_final_message()
    assert final.model == "claude-sonnet-4-5 (simulated by agentlab: sim-thinker)"
    counted = client.messages.count_tokens(model="claude-opus-4-6", messages=kw["messages"])
    assert counted.input_tokens == m.usage.input_tokens
    card = client.models.retrieve("claude-opus-4-6")
    assert card.id == "claude-opus-4-6" and "simulated by agentlab: sim-thinker" in card.display_name


def test_the_transport_option_reaches_the_simulator_and_its_repr() -> None:
    t = sim.SimTransport(real_models=True)
    assert t.simulator.real_models and "real_models=True" in repr(t)
    assert not sim.SimTransport().simulator.real_models


def test_agentlab_routing_of_real_names_is_unchanged() -> None:
    """``openai:gpt-5.5`` still needs a key and the real API; only ``sim-*`` names reach the simulator."""
    from agentlab.adapters._simulated import is_simulated
    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter

    assert not is_simulated("gpt-5.5") and not is_simulated("claude-opus-4-6")
    oai = OpenAIResponsesAdapter("gpt-5.5", api_key="sk-test-not-used")
    ant = AnthropicMessagesAdapter("claude-opus-4-6", api_key="sk-ant-test-not-used")
    assert "api.openai.com" in str(oai.base_url) and "api.anthropic.com" in str(ant.base_url)


@pytest.mark.parametrize(
    ("model", "thinking", "message"),
    [
        (
            "claude-opus-4-7",
            {"type": "enabled", "budget_tokens": 1024},
            '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
            '"output_config.effort" to control thinking behavior.',
        ),
        ("claude-sonnet-4-5", {"type": "adaptive"}, "adaptive thinking is not supported on this model"),
        ("claude-haiku-4-5", {"type": "adaptive"}, "adaptive thinking is not supported on this model"),
    ],
)
def test_a_real_claude_name_keeps_its_thinking_modes(model: str, thinking: Any, message: str) -> None:
    client = sim.anthropic_sync_client(real_models=True, max_retries=0)
    kw: dict[str, Any] = {"max_tokens": 4000, "messages": [{"role": "user", "content": "What is 6 * 7?"}]}
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(model=model, thinking=thinking, **kw)
    assert isinstance(e.value.body, dict) and e.value.body["error"]["message"] == message
    # The same request on the simulated name (both modes) and on a model taking both is accepted.
    assert client.messages.create(model="sim-thinker", thinking=thinking, **kw).content
    with warnings.catch_warnings():  # the SDK warns on budgeted thinking for claude-opus-4-6
        warnings.simplefilter("ignore", UserWarning)
        assert client.messages.create(model="claude-opus-4-6", thinking=thinking, **kw).content


@pytest.mark.parametrize(
    ("model", "labels"),
    [
        ("gpt-5.1", False),
        ("gpt-5.2", False),
        ("gpt-5.2-pro", False),
        ("gpt-5", False),
        ("o3", False),
        ("gpt-5.4", True),
        ("gpt-5.5", True),
        ("gpt-5.4-mini", True),  # later than gpt-5.3-codex, although served by sim-reasoner-mini
        ("gpt-6-sol", True),
        ("gpt-6-luna", True),
        ("sim-reasoner", True),
        ("sim-reasoner-mini", False),
    ],
)
def test_the_real_name_decides_whether_messages_carry_phase(model: str, labels: bool) -> None:
    """OpenAI asks for ``phase`` from gpt-5.3-codex on: a real name follows its name, not its sim model."""
    client = sim.openai_sync_client(real_models=True)
    history: list[Any] = [
        {"role": "user", "content": "What is 1 + 1?"},
        {"role": "assistant", "content": "1 + 1 = 2"},  # sent back without phase
        {"role": "user", "content": "What is 6 * 7?"},
    ]
    raw = client.responses.with_raw_response.create(model=model, input=history)
    message = next(it for it in raw.parse().output if it.type == "message")
    assert (message.phase == "final_answer") is labels
    assert message.phase in (None, "final_answer")
    assert (raw.headers.get("x-sim-phase-missing") == "1") is labels
