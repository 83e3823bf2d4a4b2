"""The continuity guard on every registered adapter's request path (``agentlab.neutral.continuity``).

A loop's request n+1 must carry the opaque items of response n present, in order and unmodified.
Each case gets a real response from the simulator, then a request path that loses, rewrites or
reorders an item in the wire body it built: the guard refuses to send (nothing reaches the far
side) with a ``ContinuityViolation`` naming the item, never its payload. The OpenAI case also shows
why the guard is needed: the API (and its simulator) answers the damaged request 200.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from agentlab.errors import ContinuityViolation
from agentlab.neutral.continuity import ContinuityLayout, OpaqueRef, expected_refs, opaque_slots
from agentlab.neutral.events import ModelResponse
from agentlab.neutral.request import ModelRequest
from tests.adapters.contract import CASES, WEATHER, AdapterCase, collect, completed
from tests.adapters.test_contract import ask, next_step

Tamper = Callable[[Any, ContinuityLayout], None]


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> AdapterCase:
    return CASES[request.param]


def _drop(body: Any, layout: ContinuityLayout) -> None:
    container, key = opaque_slots(body, layout)[0]
    del container[key]


def _changed(value: Any) -> Any:
    if isinstance(value, str):
        return value[:-1] + ("A" if value[-1:] != "A" else "B")
    for k, v in value.items():  # the first string field that is not the type
        if k != "type" and isinstance(v, str) and v:
            return {**value, k: _changed(v)}
    return {**value, "extra": 1}


def _modify(body: Any, layout: ContinuityLayout) -> None:
    container, key = opaque_slots(body, layout)[0]
    container[key] = _changed(container[key])


def _reorder(body: Any, layout: ContinuityLayout) -> None:
    (c1, k1), (c2, k2), *_ = opaque_slots(body, layout)
    c1[k1], c2[k2] = c2[k2], c1[k1]


def _tampering(adapter: Any, tamper: Tamper) -> None:
    """The adapter's request path, with ``tamper`` applied to every body it builds."""
    build = adapter.build
    layout = adapter.continuity_layout

    def damaged(request: ModelRequest) -> Any:
        built = build(request)
        raw = isinstance(built.body, bytes)
        body = json.loads(built.body) if raw else built.body
        tamper(body, layout)
        built.body = json.dumps(body).encode() if raw else body
        return built

    adapter.build = damaged


async def _loop_step(case: AdapterCase) -> tuple[Any, Any, ModelRequest, ModelResponse]:
    built, far_side = case.adapter()
    adapter: Any = built  # an SDK adapter: its continuity_layout is the data under test
    first = ask(case, "Is it warmer in Paris or Rome?", tools=(WEATHER,))
    r1 = completed(await collect(adapter, first))
    assert r1.reasoning and r1.tool_calls
    expected = expected_refs(r1.reasoning, adapter.continuity_layout, [i.index for i in r1.items])
    assert len(expected) == len(r1.reasoning)
    return adapter, far_side, next_step(first, r1, continuity_expected=expected), r1


def test_every_builtin_adapter_declares_where_its_opaque_items_go(case: AdapterCase) -> None:
    adapter, _ = case.adapter()
    assert isinstance(adapter.continuity_layout, ContinuityLayout)  # type: ignore[attr-defined]


async def test_an_intact_request_passes_the_guard(case: AdapterCase) -> None:
    adapter, far_side, second, r1 = await _loop_step(case)
    r2 = completed(await collect(adapter, second))
    assert r2.stop_reason == "end_turn"
    body = json.loads(far_side.bodies[-1])
    assert len(opaque_slots(body, adapter.continuity_layout)) >= len(r1.reasoning)


async def _refused(case: AdapterCase, tamper: Tamper, problem: str, culprit: int) -> None:
    adapter, far_side, second, r1 = await _loop_step(case)
    _tampering(adapter, tamper)
    sent = len(far_side.bodies)
    with pytest.raises(ContinuityViolation) as info:
        await collect(adapter, second)
    assert len(far_side.bodies) == sent, "nothing may reach the provider"
    err = info.value
    named = OpaqueRef.of(r1.reasoning[culprit])
    assert (err.provider, err.kind, err.index, err.turn_id) == (
        named.provider,
        named.kind,
        named.index,
        named.turn_id,
    )
    assert err.problem == problem and problem in str(err) and "\n" not in str(err)
    item = r1.reasoning[culprit]
    payload = item.unseal(provider=item.provider, api=item.api).decode()
    assert payload[:40] not in str(err) and named.digest not in str(err)


@pytest.mark.parametrize(("tamper", "problem"), [(_drop, "missing"), (_modify, "modified")])
async def test_a_lost_or_changed_item_is_refused_before_sending(
    case: AdapterCase, tamper: Tamper, problem: str
) -> None:
    await _refused(case, tamper, problem, culprit=0)


async def test_reordered_items_are_refused_before_sending() -> None:
    """The simulator case whose responses carry two opaque items (OpenRouter's OpenAI-backed details)."""
    await _refused(CASES["openrouter-openai"], _reorder, "out of order", culprit=1)


async def test_openai_would_silently_accept_the_lost_item() -> None:
    """Without the guard the damaged request is answered 200: the model just lost its plan."""
    adapter, far_side, second, _ = await _loop_step(CASES["openai"])
    _tampering(adapter, _drop)
    unguarded = second.model_copy(update={"continuity_expected": ()})
    r2 = completed(await collect(adapter, unguarded))
    assert r2.stop_reason in ("end_turn", "tool_use")
    assert b'"type":"reasoning"' not in far_side.bodies[-1]
    assert far_side.headers[-1]["x-sim-plan"] == "lost"  # accepted, and the plan is gone
    with pytest.raises(ContinuityViolation, match="missing"):
        await collect(adapter, second)
