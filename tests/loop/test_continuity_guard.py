"""The continuity guard in a live loop: the run refuses to send a request that lost what it received.

Two depths (``agentlab.neutral.continuity``): the neutral request's continuation (any adapter, even
one that declares no wire layout) and the wire body of an adapter that declares one. A violation
fails the run with a typed ``ContinuityViolation`` before the request is sent; known gaps (the
``drop`` policy) are not violations.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import agentlab as al
from agentlab.adapters.base import create_adapter
from agentlab.errors import ContinuityError, ContinuityViolation
from agentlab.loop.continuation import Continuation
from agentlab.neutral.continuity import OpaqueRef, check_request, opaque_slots
from agentlab.neutral.items import ProviderReasoningItem
from agentlab.neutral.request import ModelRequest
from agentlab.testing import ScriptedAdapter, Step


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "18 C", "Rome": "24 C"}.get(city, "20 C")


def _item(payload: bytes, index: int, turn: str = "resp_1") -> ProviderReasoningItem:
    return ProviderReasoningItem(
        payload,
        provider="openai",
        api="responses",
        model="m",
        block_type="reasoning",
        turn_id=turn,
        index=index,
    )


def test_the_digest_ignores_json_form_but_not_values() -> None:
    a = _item(b'{"type":"reasoning","encrypted_content":"abc","id":"rs_1"}', 0)
    same = _item(b'{ "id": "rs_1", "type": "reasoning", "encrypted_content": "abc" }', 0)
    other = _item(b'{"type":"reasoning","encrypted_content":"abd","id":"rs_1"}', 0)
    assert a.digest == same.digest != other.digest


def test_the_neutral_check_names_missing_changed_and_reordered_items() -> None:
    a, b = _item(b'{"n":1}', 0), _item(b'{"n":2}', 1)
    expected = (OpaqueRef.of(a), OpaqueRef.of(b))
    check_request(expected, (a, b))
    check_request(expected, (_item(b'{"n":0}', 0, "resp_0"), a, b))  # earlier turns' items may precede
    with pytest.raises(
        ContinuityViolation, match=r"reasoning item \(index 1 of response resp_1\) is missing"
    ):
        check_request(expected, (a,))
    with pytest.raises(ContinuityViolation, match=r"index 1 .* is modified") as info:
        check_request(expected, (a, _item(b'{"n":3}', 1)))
    assert info.value.problem == "modified" and isinstance(info.value, ContinuityError)
    with pytest.raises(ContinuityViolation, match=r"index 1 .* is out of order"):
        check_request(expected, (b, a))


def test_a_violation_pickles_with_its_fields() -> None:
    import pickle

    err = ContinuityViolation(
        "x", provider="openai", kind="reasoning", index=2, turn_id="r", problem="missing"
    )
    back = pickle.loads(pickle.dumps(err))
    assert (back.provider, back.kind, back.index, back.turn_id, back.problem) == (
        "openai",
        "reasoning",
        2,
        "r",
        "missing",
    )


async def test_a_run_refuses_to_send_a_body_that_lost_a_reasoning_item() -> None:
    """OpenAI would answer this request 200 (tests/adapters/test_continuity_guard.py); the run refuses it."""
    adapter: Any = create_adapter("openai:sim-reasoner")
    build = adapter.build
    bodies: list[bytes] = []

    def losing(request: ModelRequest) -> Any:
        built = build(request)
        body = json.loads(built.body)
        for container, key in reversed(opaque_slots(body, adapter.continuity_layout)):
            del container[key]
        built.body = json.dumps(body).encode()
        bodies.append(built.body)
        return built

    adapter.build = losing
    run = al.Run(
        "openai:sim-reasoner", "Is it warmer in Paris or Rome?", tools=[get_weather], adapter=adapter
    )
    with pytest.raises(ContinuityViolation, match=r"openai reasoning item .* is missing in the request body"):
        await run.arun()
    assert run.result is not None and run.result.status == "failed"
    assert len(bodies) == 2  # the first request went out; the second was built, then refused
    await adapter.aclose()


async def test_a_run_refuses_a_continuation_that_lost_an_item(monkeypatch: pytest.MonkeyPatch) -> None:
    """The neutral depth: an adapter that declares no layout is still guarded."""
    real = Continuation.__dict__["items"].fget
    monkeypatch.setattr(Continuation, "items", property(lambda self: real(self)[1:]))
    ad = ScriptedAdapter(
        [Step(opaque=["a", "b"], tool_calls=[("get_weather", {"city": "Rome"})]), Step(text="done")],
        provider="openai",
        model="sim-reasoner",
    )
    with pytest.raises(ContinuityViolation, match=r"index 0 .* is missing in the request's continuation"):
        await al.arun("openai:sim-reasoner", "go", tools=[get_weather], adapter=ad)


async def test_the_drop_policy_is_not_a_violation() -> None:
    r = await al.arun(
        "openai:sim-reasoner",
        "Is it warmer in Paris or Rome?",
        tools=[get_weather],
        continuation_policy="drop",
    )
    assert r.status == "completed"


async def test_a_verbatim_loop_passes_on_every_provider_simulator() -> None:
    for model in (
        "openai:sim-reasoner",
        "anthropic:sim-thinker",
        "google:sim-gemini",
        "deepseek:sim-deepseek",
    ):
        r = await al.arun(model, "Is it warmer in Paris or Rome?", tools=[get_weather])
        assert r.status == "completed", (model, r.error)


def _oa(index: int) -> ProviderReasoningItem:
    body = {"type": "reasoning", "id": f"rs_{index}", "summary": [], "encrypted_content": f"enc-{index}"}
    return ProviderReasoningItem(
        json.dumps(body).encode(),
        provider="openai",
        api="responses",
        model="gpt-5.5",
        block_type="reasoning",
        turn_id="resp_1",
        index=index,
    )


def test_an_item_its_response_cannot_carry_back_is_not_expected() -> None:
    """A reasoning item before a hosted-tool call (not kept) is dropped by the API's rule: no violation.

    resp_1 was [reasoning, web_search_call, reasoning, function_call]: the first reasoning item's
    follower is a hosted-tool item agentlab does not keep, so it can never go back (the request drops
    it, with a diagnostic); the guard expects only the second.
    """
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
    from agentlab.adapters.openai_responses._request import build_request
    from agentlab.neutral.continuity import check_body, expected_refs
    from agentlab.neutral.items import ToolCallItem, ToolResultItem, UserItem

    layout = OpenAIResponsesAdapter.continuity_layout
    assert layout is not None
    items = (_oa(0), _oa(2))
    expected = expected_refs(items, layout, kept=[3])
    assert [r.index for r in expected] == [2]
    request = ModelRequest(
        model="gpt-5.5",
        items=(
            UserItem(text="q"),
            ToolCallItem(call_id="call_3", name="f", turn_id="resp_1", index=3, provider_item_id="fc_3"),
            ToolResultItem(call_id="call_3", output="ok"),
        ),
        continuation=items,
        continuity_expected=expected,
    )
    built = build_request(request, model="gpt-5.5", base_url=None)
    assert built.reasoning_dropped == 1 and built.reasoning_sent == 1
    check_body(expected, items, built.body, layout)  # no violation
    with pytest.raises(ContinuityViolation, match="index 0"):  # the neutral expectation would have failed
        check_body(expected_refs(items), items, built.body, layout)
