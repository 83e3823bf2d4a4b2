"""The canary: no reasoning text, opaque payload or API key in any span, content off or on.

That is in no span name, attribute, span event or status. Positive controls show each canary did
flow through the run.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import agentlab as al
from agentlab import sim
from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.testing import ScriptedAdapter, Step
from tests.support.opaque import sim_opaque_tokens
from tests.telemetry.support import SIM_MODELS, TASK, Traced, get_weather, traced

ANSWER = "Rome is warmer today."


@pytest.fixture(params=[False, True], ids=["content-off", "content-on"])
def any_spans(request: pytest.FixtureRequest) -> Iterator[Traced]:
    with traced(include_content=request.param) as t:
        yield t


def test_reasoning_and_opaque_canaries_never_reach_a_span(any_spans: Traced) -> None:
    canary = f"CANARY{uuid.uuid4().hex}"
    steps = [
        Step(
            reasoning=[f"thinking about {canary}", f" and more {canary}"],
            opaque=[json.dumps({"type": "reasoning", "encrypted_content": canary}), f"sig:{canary}"],
            tool_calls=[("get_weather", {"city": "Paris"})],
        ),
        Step(reasoning=[f"still {canary}"], opaque=[f"x{canary}"], text=ANSWER, expect_continuation_from=[0]),
    ]
    adapter = ScriptedAdapter(steps)
    shown: list[str] = []

    def display(ev: object) -> None:
        if isinstance(ev, al.ReasoningDeltaEvent):
            shown.append(ev.text)

    result = al.run("openai:sim-reasoner", TASK, tools=[get_weather], adapter=adapter, on_event=display)
    adapter.assert_done()
    # controls: the reasoning reached the live hook, the opaque items went back within the loop
    assert any(canary in t for t in shown)
    sent = [i.unseal(provider="openai", api="responses") for i in adapter.requests[1].continuation]
    assert any(canary.encode() in p for p in sent)
    assert result.output == ANSWER

    dump = any_spans.dump()
    assert len(any_spans.finished()) == 4  # run, two calls, one tool
    assert canary not in dump
    content_on = any_spans is not None and '"gen_ai.output.messages"' in dump
    # control: with content on, the answer, the task and the tool's arguments and result are there
    assert (ANSWER in dump) is content_on
    assert (TASK in dump) is content_on
    assert ("Paris: 20 C" in dump) is content_on


@pytest.mark.parametrize("model", SIM_MODELS)
def test_no_simulated_reasoning_or_opaque_item_in_spans(content_spans: Traced, model: str) -> None:
    """The real adapters on the simulator, content on: its reasoning and opaque items are in no span.

    Reasoning is found by the simulator's own phrases, opaque items by the simulator's key.
    """
    deltas: list[str] = []

    def display(ev: object) -> None:
        if isinstance(ev, al.ReasoningDeltaEvent):
            deltas.append(ev.text)

    result = al.run(model, TASK, tools=[get_weather], on_event=display)
    assert result.status == "completed"
    reasoning = "".join(deltas)
    phrases = ["double-check the plan", "The user asks:", "Checking again that nothing"]
    assert all(p in reasoning for p in phrases), "control: the simulator reasoned, in its own words"
    dump = content_spans.dump()
    assert result.output and json.dumps(result.output)[1:-1] in dump  # control: content on
    assert [p for p in phrases if p in dump] == []
    assert sim_opaque_tokens(dump) == []


@pytest.mark.parametrize("family", ["openai", "anthropic"])
def test_the_api_key_is_in_no_span(content_spans: Traced, family: str) -> None:
    key = f"sk-canary-{uuid.uuid4().hex}"
    client: Any
    adapter: al.Adapter
    if family == "openai":
        client = sim.openai_client(api_key=key)
        adapter, model = OpenAIResponsesAdapter("sim-reasoner", client=client), "openai:sim-reasoner"
    else:
        client = sim.anthropic_client(api_key=key)
        adapter, model = AnthropicMessagesAdapter("sim-thinker", client=client), "anthropic:sim-thinker"
    result = al.run(model, TASK, tools=[get_weather], adapter=adapter)
    assert result.status == "completed"
    assert client.api_key == key  # control: the run's requests were signed with it
    dump = content_spans.dump()
    assert key not in dump and key.rsplit("-", 1)[-1] not in dump
