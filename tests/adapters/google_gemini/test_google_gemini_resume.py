"""A Gemini tool loop paused in one cell and resumed in a later one: the documented recovery, no 400.

The notebook extension releases every continuation a cell created when the cell ends, so a loop
paused at a tool call and resumed in a later cell has lost the signatures of its earlier steps
(``continuation_released``). Gemini 3 validates the current turn's ``functionCall`` parts and
would answer that loop 400; Google documents a dummy ``thoughtSignature`` for calls whose signatures
are not available, and the adapter sends it there (``signature_stand_in``), as it does under
``continuation_policy="drop"``. The run says so on the request (``ModelRequest.continuation_released``):
in a live loop that was never released a missing signature is a bug, which the continuity guard
refuses to send (``ContinuityViolation``); the adapter never papers over it with the dummy.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

import agentlab as al
from agentlab.adapters.google_gemini import GoogleGeminiAdapter
from agentlab.errors import ContinuityViolation
from agentlab.loop.checkpoint import Checkpoint
from agentlab.loop.continuation import generation, release_since
from agentlab.neutral.events import DiagnosticEvent, ToolCallEvent
from agentlab.neutral.request import ModelRequest
from agentlab.sim import gemini_client
from tests.adapters.contract import RecordingTransport
from tests.adapters.google_gemini.gemini_support import signed_parts

TASK = "Is it warmer in Paris or Rome?"
TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny"}
DUMMIES = {"context_engineering_is_the_way_to_go", "skip_thought_signature_validator"}


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return TEMPS[city]


def sim_adapter(model: str) -> tuple[GoogleGeminiAdapter, RecordingTransport]:
    transport = RecordingTransport()
    return GoogleGeminiAdapter(model, client=gemini_client(transport=transport), max_retries=0), transport


async def paused_released_resumed(run: al.Run) -> list[Any]:
    """Pause at the first tool call (cell 1 ends: the extension releases), then resume (cell 2)."""
    gen = generation()
    events = run.events()
    seen: list[Any] = []
    async for ev in events:
        seen.append(ev)
        if isinstance(ev, ToolCallEvent):
            break  # suspended, not closed: the loop is live, its continuation held
    assert run.checkpoint.provider_continuation is not None
    assert release_since(gen) == 1  # what the notebook extension does at cell end
    try:
        async for ev in events:
            seen.append(ev)
    finally:
        await events.aclose()
    return seen


def diags(seen: list[Any], code: str) -> list[DiagnosticEvent]:
    return [e for e in seen if isinstance(e, DiagnosticEvent) and e.code == code]


@pytest.mark.parametrize("model", ["sim-gemini", "sim-gemini-legacy"])
async def test_a_released_loop_resumes_without_a_400(model: str) -> None:
    adapter, transport = sim_adapter(model)
    run = al.Run(f"google:{model}", TASK, tools=[get_weather], adapter=adapter)
    seen = await paused_released_resumed(run)
    result = run.result
    assert result is not None and result.status == "completed", result
    assert "Rome" in (result.output or "")
    released = diags(seen, "continuation_released")
    assert [n.step for n in released] == [2]
    # The release dropped the one signature step 1 left (counted, as every drop is); the adapter
    # dropped nothing of its own (no reasoning_item_dropped diagnostic: nothing made elsewhere, no orphan).
    assert result.usage.reasoning_items_dropped == 1 and not diags(seen, "reasoning_item_dropped")
    # The model resumes without the reasoning of the step before the release (the lost plan).
    assert [h["x-sim-plan"] for h in transport.headers] == ["known", "lost", "lost"]
    assert result.steps == 3
    assert not [c for c in al.live_continuations() if c.run_id == run.run_id]  # renewed one released too


async def test_gemini_3_gets_the_documented_dummy_on_the_released_steps_only() -> None:
    adapter, transport = sim_adapter("sim-gemini")
    run = al.Run("google:sim-gemini", TASK, tools=[get_weather], adapter=adapter)
    seen = await paused_released_resumed(run)
    sent = [signed_parts(json.loads(b)) for b in transport.bodies]
    assert sent[0] == []
    # Step 2: step 1's first call (content 1, part 0) lost its signature with the release: the dummy.
    assert [(ci, pi, s) for ci, pi, _, s in sent[1]] == [(1, 0, "skip_thought_signature_validator")]
    # Step 3: step 1 still has the dummy; step 2 was made after the release, so its own signature
    # (held by the renewed continuation) goes back, never replaced by the dummy.
    assert [(ci, pi) for ci, pi, _, _ in sent[2]] == [(1, 0), (3, 0)]
    assert sent[2][0][3] in DUMMIES and sent[2][1][3] not in DUMMIES
    notes = diags(seen, "signature_stand_in")
    assert [(n.step, n.data["count"]) for n in notes] == [(2, 1), (3, 1)]
    assert all("released" in n.message for n in notes)


async def test_gemini_2_5_takes_the_released_loop_without_any_signature() -> None:
    adapter, transport = sim_adapter("sim-gemini-legacy")
    run = al.Run("google:sim-gemini-legacy", TASK, tools=[get_weather], adapter=adapter)
    seen = await paused_released_resumed(run)
    sent = [signed_parts(json.loads(b)) for b in transport.bodies]
    assert not {s for body in sent for *_, s in body} & DUMMIES
    assert not diags(seen, "signature_stand_in")


@pytest.mark.parametrize("model", ["sim-gemini", "sim-gemini-legacy"])
async def test_a_checkpoint_restored_mid_loop_finishes_without_a_400(model: str) -> None:
    """Stopped after step 1 (history ends in tool results), saved as JSON, resumed by a new Run."""
    first = al.Run(f"google:{model}", TASK, tools=[get_weather], max_steps=1)
    assert (await first.arun()).status == "step_limit"
    restored = Checkpoint.from_json(first.checkpoint.to_json())
    adapter, transport = sim_adapter(model)
    second = al.Run(
        f"google:{model}",
        None,
        tools=[get_weather],
        session=al.Session(history=restored.history),
        adapter=adapter,
    )
    seen = [ev async for ev in second.events()]
    assert second.result is not None and second.result.status == "completed", second.result
    sent = [signed_parts(json.loads(b)) for b in transport.bodies]
    dummies = [(ci, pi) for body in sent for ci, pi, _, s in body if s in DUMMIES]
    if model == "sim-gemini":  # the restored step's first call, on every request of the new loop
        assert dummies == [(1, 0)] * len(sent)
        assert [n.data["count"] for n in diags(seen, "signature_stand_in")] == [1] * len(sent)
    else:
        assert dummies == [] and not diags(seen, "signature_stand_in")


class LosesSignatures(GoogleGeminiAdapter):
    """A bug stand-in: a live loop's request reaches the adapter without its continuation."""

    seen: list[ModelRequest]

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        lost = request.model_copy(update={"continuation": ()})
        self.seen.append(lost)
        async for ev in super().stream(lost):
            yield ev


async def test_a_live_loop_missing_its_signatures_by_bug_is_refused_before_sending() -> None:
    """The continuity guard refuses the request (it used to reach the API as its 400)."""
    transport = RecordingTransport()
    adapter = LosesSignatures("sim-gemini", client=gemini_client(transport=transport), max_retries=0)
    adapter.seen = []
    run = al.Run("google:sim-gemini", TASK, tools=[get_weather], adapter=adapter, retries=0)
    with pytest.raises(ContinuityViolation, match="is missing in the request body"):
        await run.arun()
    assert len(transport.bodies) == 1  # the first request went out; the second never did
    unguarded = adapter.build(adapter.seen[-1].model_copy(update={"continuity_expected": ()}))
    assert not signed_parts(json.loads(unguarded.body))  # never papered over with the dummy


def test_the_released_flag_is_not_part_of_the_wire_request() -> None:
    req = ModelRequest(model="sim-gemini", items=(), continuation_released=True)
    assert "continuation_released" not in req.model_dump() and req.continuation_released
