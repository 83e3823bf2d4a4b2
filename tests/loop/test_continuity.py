"""Continuity: the continuation carries exactly this loop's opaque items.

It is released on every exit, never crosses providers, and never enters a serialized checkpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import pickle
import threading

import pytest

import agentlab as al
from agentlab.errors import ContinuityError, PrivacyError
from agentlab.loop.checkpoint import Checkpoint
from agentlab.loop.continuation import (
    Continuation,
    generation,
    live_continuations,
    release_all,
    release_since,
)
from agentlab.neutral.events import DiagnosticEvent
from agentlab.neutral.items import ProviderReasoningItem, ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest
from agentlab.testing import ScriptedAdapter, Step

OA = "openai:sim-reasoner"
AN = "anthropic:sim-thinker"


@al.tool
def ping(n: int) -> str:
    """Ping."""
    return f"pong {n}"


def oa(steps: list[Step]) -> ScriptedAdapter:
    return ScriptedAdapter(steps, provider="openai", model="sim-reasoner")


def an(steps: list[Step]) -> ScriptedAdapter:
    return ScriptedAdapter(steps, provider="anthropic", model="sim-thinker")


def loop_steps(tag: str, first_index: int = 0) -> list[Step]:
    """A two-call tool loop producing opaque items, whose 2nd call checks its continuation."""
    return [
        Step(opaque=[f"{tag}-a", f"{tag}-b"], tool_calls=[("ping", {"n": 1})]),
        Step(opaque=[f"{tag}-c"], tool_calls=[("ping", {"n": 2})], expect_continuation_from=[first_index]),
        Step(text=f"{tag} done", expect_continuation_from=[first_index, first_index + 1]),
    ]


async def test_continuation_holds_exactly_this_loops_items_in_order() -> None:
    ad = oa(loop_steps("x"))
    r = await al.arun(OA, "go", tools=[ping], adapter=ad)
    ad.assert_done()
    assert r.status == "completed"
    assert [len(q.continuation) for q in ad.requests] == [0, 2, 3]


async def test_first_request_has_empty_continuation_and_release_at_end() -> None:
    ad = oa(loop_steps("x"))
    run = al.Run(OA, "go", tools=[ping], adapter=ad)
    conts, sizes = [], []
    async for ev in run.events():
        if ev.kind == "tool_result":
            c = run.checkpoint.provider_continuation
            assert c is not None
            conts.append(c)
            sizes.append(len(c))
    assert sizes == [2, 3]
    assert run.checkpoint.provider_continuation is None
    assert conts[0] is conts[1] and conts[0].released and len(conts[0]) == 0
    assert all(c.run_id != run.run_id for c in live_continuations())


async def test_policy_drop_sends_nothing_and_counts() -> None:
    steps = [
        Step(opaque=["a", "b"], tool_calls=[("ping", {"n": 1})]),
        Step(
            text="ok",
            expect=lambda req: (_ for _ in ()).throw(AssertionError()) if req.continuation else None,
        ),
    ]
    r = await al.arun(OA, "go", tools=[ping], adapter=oa(steps), continuation_policy="drop")
    assert r.usage.reasoning_items_dropped == 2
    assert r.calls[0].reasoning_items_dropped == 2
    assert any(isinstance(e, DiagnosticEvent) and e.code == "reasoning_item_dropped" for e in r.events)
    assert r.usage_frame()["reasoning_items_dropped"].tolist() == [2, 0]


async def test_foreign_opaque_item_from_adapter_is_dropped_visibly() -> None:
    foreign = ProviderReasoningItem(
        b"sig",
        provider="anthropic",
        api="messages",
        model="sim-thinker",
        block_type="thinking",
        turn_id="t",
        index=0,
    )
    steps = [
        Step(opaque=["own", foreign], tool_calls=[("ping", {"n": 1})]),
        Step(
            text="ok",
            expect_continuation_from=None,
            expect=lambda req: None if [i.provider for i in req.continuation] == ["openai"] else 1 / 0,
        ),
    ]
    r = await al.arun(OA, "go", tools=[ping], adapter=oa(steps))
    assert r.status == "completed" and r.calls[0].reasoning_items_dropped == 1


async def test_session_switching_provider_strips_opaque_items() -> None:
    s = al.Session(system="be brief")
    r1 = await s.arun(OA, "first", tools=[ping], adapter=oa(loop_steps("oa")))
    assert r1.status == "completed"

    def no_openai_items(req: al.ModelRequest) -> None:
        assert all(i.provider == "anthropic" for i in req.continuation)
        assert not any(b"oa-" in i.unseal(provider=i.provider, api=i.api) for i in req.continuation)
        # portable history from the first run crossed over
        texts = [getattr(i, "text", None) for i in req.items]
        assert "first" in texts and "oa done" in texts and "second" in texts
        assert any(isinstance(i, ToolResultItem) for i in req.items)

    steps = loop_steps("an")
    for st in steps:
        st.expect = no_openai_items
    ad = an(steps)
    r2 = await s.arun(AN, "second", tools=[ping], adapter=ad)
    ad.assert_done()
    assert r2.status == "completed"
    assert len(ad.requests[0].continuation) == 0
    drops = [e for e in r2.events if isinstance(e, DiagnosticEvent) and e.code == "reasoning_item_dropped"]
    assert drops and drops[0].data == {"count": 3, "reason": "provider_switch", "provider": "anthropic"}
    assert r2.calls[0].reasoning_items_dropped == 3
    assert r2.usage_frame()["reasoning_items_dropped"].iloc[0] == 3
    assert [i.kind for i in s.history].count("system") == 1


async def test_session_same_provider_new_loop_starts_without_old_continuation() -> None:
    s = al.Session()
    ad1 = oa(loop_steps("one"))
    await s.arun(OA, "first", tools=[ping], adapter=ad1)
    ad2 = oa(loop_steps("two"))
    r2 = await s.arun(OA, "second", tools=[ping], adapter=ad2)
    ad2.assert_done()
    first_fps = {i.fingerprint for q in ad1.requests for i in q.continuation}
    for q in ad2.requests:
        assert not ({i.fingerprint for i in q.continuation} & first_fps)
    assert len(ad2.requests[0].continuation) == 0
    codes = [e.code for e in r2.events if isinstance(e, DiagnosticEvent)]
    assert "continuation_not_carried" in codes
    assert r2.usage.reasoning_items_dropped == 0


async def test_session_refuses_concurrent_runs() -> None:
    s = al.Session()
    gate = threading.Event()  # async tools run on the tool loop, another thread

    @al.tool
    async def wait() -> str:
        """Wait for the gate."""
        while not gate.is_set():
            await asyncio.sleep(0.005)
        return "ok"

    r1 = s.start(OA, "a", tools=[wait], adapter=oa([Step(tool_calls=[("wait", {})]), Step(text="a")]))
    t = asyncio.create_task(r1.arun())
    await asyncio.sleep(0.01)
    with pytest.raises(al.UserError, match="active run"):
        await s.arun(OA, "b", adapter=oa([]))
    gate.set()
    await t


def test_checkpoint_serialization_excludes_continuation() -> None:
    cp = Checkpoint(run_id="r", provider="openai", api="responses", model="m", history=(UserItem(text="hi"),))
    c = Continuation(provider="openai", api="responses", model="m", run_id="r")
    canary = b"CANARY-checkpoint-7f3a"
    c.add(
        [
            ProviderReasoningItem(
                canary,
                provider="openai",
                api="responses",
                model="m",
                block_type="reasoning",
                turn_id="t",
                index=0,
            )
        ]
    )
    cp.attach(c)
    assert cp.provider_continuation is c and len(c) == 1
    js = cp.to_json()
    assert b"CANARY" not in js.encode() and "continuation" not in js
    assert "provider_continuation" not in Checkpoint.model_json_schema()["properties"]
    back = Checkpoint.from_json(js)
    assert back.history == cp.history and back.provider_continuation is None
    blob = pickle.dumps(cp)
    assert canary not in blob
    assert pickle.loads(blob).provider_continuation is None
    assert copy.deepcopy(cp).provider_continuation is None
    assert canary not in repr(cp).encode()
    assert cp.provider_continuation is c  # the original keeps its live state
    with pytest.raises(PrivacyError):
        pickle.dumps(c)
    assert cp.release_continuation() == 1 and cp.provider_continuation is None
    with pytest.raises(ContinuityError):
        c.items  # noqa: B018


def test_registry_generation_and_release_since() -> None:
    release_all()
    a = Continuation(provider="openai", api="responses", model="m")
    g = generation()
    b = Continuation(provider="openai", api="responses", model="m")
    c = Continuation(provider="openai", api="responses", model="m")
    assert live_continuations()[-3:] == [a, b, c]
    assert release_since(g) == 2
    assert b.released and c.released and not a.released
    assert live_continuations() == [a]
    assert release_all() == 1 and a.released


def test_registry_is_weak() -> None:
    release_all()
    Continuation(provider="openai", api="responses", model="m")
    import gc

    gc.collect()
    assert live_continuations() == []


async def test_released_mid_loop_continues_from_portable_items_only() -> None:
    @al.tool
    def cell_ends() -> str:
        """Simulates the notebook extension releasing everything at cell end."""
        release_all()
        return "released"

    def nothing_opaque(req: ModelRequest) -> None:
        assert req.continuation == (), "a released continuation must never be sent"
        assert any(isinstance(i, ToolResultItem) for i in req.items)  # portable history kept

    ad = oa(
        [
            Step(opaque=["a"], tool_calls=[("cell_ends", {})]),
            Step(opaque=["b"], text="done", expect=nothing_opaque),
        ]
    )
    run = al.Run(OA, "x", tools=[cell_ends], adapter=ad)
    r = await run.arun()
    assert ad.consumed == 2 and r.status == "completed" and r.output == "done"
    notices = [e for e in r.events if isinstance(e, DiagnosticEvent) and e.code == "continuation_released"]
    assert len(notices) == 1 and notices[0].step == 2
    assert live_continuations() == []  # the renewed continuation was released at loop end too


async def test_cancellation_releases_and_keeps_checkpoint_consistent() -> None:
    @al.tool
    async def hang() -> str:
        """Never returns."""
        await asyncio.Event().wait()
        return ""

    run = al.Run(OA, "x", tools=[hang], adapter=oa([Step(opaque=["a"], tool_calls=[("hang", {})])]))
    task = asyncio.create_task(run.arun())
    await asyncio.sleep(0.02)
    cont = run.checkpoint.provider_continuation
    assert cont is not None and len(cont) == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cont.released and run.checkpoint.provider_continuation is None
    assert run.result is not None and run.result.status == "cancelled"
    # the call whose tools never finished is not in history (no dangling tool call)
    assert [i.kind for i in run.checkpoint.history] == ["user"]
    assert run.result.steps == 1  # but the paid call is accounted for


async def test_leaving_event_stream_early_releases() -> None:
    run = al.Run(OA, "x", tools=[ping], adapter=oa(loop_steps("e")))
    async with contextlib.aclosing(run.events()) as gen:
        async for ev in gen:
            if ev.kind == "tool_result":
                break
    assert run.checkpoint.provider_continuation is None
    assert run.result is not None and run.result.status == "cancelled"


async def test_keyboard_interrupt_in_tool_releases() -> None:
    @al.tool
    async def ctrl_c() -> str:
        """Simulates Ctrl-C arriving inside the loop."""
        raise KeyboardInterrupt

    run = al.Run(OA, "x", tools=[ctrl_c], adapter=oa([Step(opaque=["a"], tool_calls=[("ctrl_c", {})])]))
    with pytest.raises(KeyboardInterrupt):
        await run.arun()
    assert run.result is not None and run.result.status == "cancelled"
    assert run.checkpoint.provider_continuation is None


def test_drop_policy_is_refused_on_anthropic_with_thinking_on() -> None:
    """Anthropic would reject the request (or the loop would be faked as text): refuse up front."""
    import agentlab as al
    from agentlab.errors import InvalidSettingsError

    with pytest.raises(InvalidSettingsError, match="thinking off"):
        al.Run("anthropic:sim-thinker", "Is it warmer in Paris or Rome?", continuation_policy="drop")
    # The honest Anthropic ablation (thinking off) and OpenAI's drop are accepted.
    al.Run(
        "anthropic:sim-thinker",
        "Is it warmer in Paris or Rome?",
        continuation_policy="drop",
        reasoning={"enabled": False},
    )
    al.Run("openai:sim-reasoner", "Is it warmer in Paris or Rome?", continuation_policy="drop")
