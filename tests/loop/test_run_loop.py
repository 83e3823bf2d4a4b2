"""The tool loop against a strict ScriptedAdapter: tools, errors the model sees, limits, retries."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator

import pytest

import agentlab as al
from agentlab.errors import ConfigError, OverloadedError, ProviderAPIError, StepLimitError, UserError
from agentlab.neutral.events import (
    AdapterEvent,
    DiagnosticEvent,
    ErrorEvent,
    ModelCallCompletedEvent,
    ReasoningDeltaEvent,
    RunCompletedEvent,
    TextDeltaEvent,
    ToolResultEvent,
)
from agentlab.neutral.items import AssistantTextItem, PortableItem, ToolCallItem, ToolResultItem, UserItem
from agentlab.testing import ScriptedAdapter, ScriptError, Step

M = "openai:sim-reasoner"


@al.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@al.tool
async def slow_echo(text: str) -> str:
    """Echo after a short async sleep."""
    await asyncio.sleep(0.05)
    return text


@al.tool
def boom(x: int) -> str:
    """Always fails."""
    raise RuntimeError(f"kaput {x}")


def results(r: al.RunResult) -> list[ToolResultItem]:
    return [i for i in r.history if isinstance(i, ToolResultItem)]


async def test_final_answer_without_tools() -> None:
    ad = ScriptedAdapter([Step(reasoning=["hm"], text=["4", "2"])])
    r = await al.arun(M, "6*7?", adapter=ad)
    ad.assert_done()
    assert (r.status, r.output, r.steps, r.stop_reason) == ("completed", "42", 1, "end_turn")
    assert [type(i) for i in r.history] == [UserItem, AssistantTextItem]


async def test_tool_results_go_back_in_next_request() -> None:
    seen: list[tuple[PortableItem, ...]] = []

    def check(req: al.ModelRequest) -> None:
        seen.append(req.items)
        res = [i for i in req.items if isinstance(i, ToolResultItem)]
        assert [(x.call_id, x.output, x.is_error) for x in res] == [("c1", "5", False)]

    ad = ScriptedAdapter([Step(tool_calls=[("add", {"a": 2, "b": 3}, "c1")]), Step(text="5", expect=check)])
    r = await al.arun(M, "2+3", tools=[add], adapter=ad)
    ad.assert_done()
    assert r.output == "5" and r.steps == 2 and seen
    kinds = [i.kind for i in r.history]
    assert kinds == ["user", "tool_call", "tool_result", "assistant_text"]


async def test_parallel_async_tools_run_concurrently() -> None:
    calls = [("slow_echo", {"text": f"t{i}"}, f"c{i}") for i in range(4)]
    ad = ScriptedAdapter([Step(tool_calls=calls), Step(text="done")])
    t0 = time.perf_counter()
    r = await al.arun(M, "echo", tools=[slow_echo], adapter=ad)
    elapsed = time.perf_counter() - t0
    assert [x.output for x in results(r)] == ["t0", "t1", "t2", "t3"]  # call order kept
    assert elapsed < 0.15, f"4 x 50 ms tools took {elapsed:.3f}s: not concurrent"


async def test_sync_tools_run_in_worker_threads() -> None:
    barrier = threading.Barrier(2, timeout=2)

    @al.tool
    def meet(name: str) -> str:
        """Both calls must be inside at the same time, which only threads allow."""
        barrier.wait()
        return f"{name}@{threading.current_thread().name != 'MainThread'}"

    ad = ScriptedAdapter(
        [Step(tool_calls=[("meet", {"name": "a"}), ("meet", {"name": "b"})]), Step(text="ok")]
    )
    r = await al.arun(M, "x", tools=[meet], adapter=ad)
    assert [x.output for x in results(r)] == ["a@True", "b@True"]


async def test_raising_tool_becomes_error_result() -> None:
    ad = ScriptedAdapter([Step(tool_calls=[("boom", {"x": 1})]), Step(text="sorry")])
    r = await al.arun(M, "x", tools=[boom], adapter=ad)
    (res,) = results(r)
    assert res.is_error and "RuntimeError" in res.output and "kaput 1" in res.output
    assert r.status == "completed"


async def test_bad_arguments_become_error_result_without_calling() -> None:
    called = []

    @al.tool
    def count(n: int) -> int:
        """Count."""
        called.append(n)
        return n

    ad = ScriptedAdapter(
        [
            Step(
                tool_calls=[("count", {"n": "not a number"}), ("count", '{"n": 1', "c2"), ("count", {"m": 1})]
            ),
            Step(text="ok"),
        ]
    )
    r = await al.arun(M, "x", tools=[count], adapter=ad)
    res = results(r)
    assert called == []
    assert all(x.is_error for x in res) and len(res) == 3
    assert "invalid arguments" in res[0].output and "n" in res[0].output


async def test_unknown_tool_and_duplicate_ids() -> None:
    ad = ScriptedAdapter(
        [
            Step(
                tool_calls=[
                    ("nope", {}, "u1"),
                    ("add", {"a": 1, "b": 1}, "d"),
                    ("add", {"a": 2, "b": 2}, "d"),
                ]
            ),
            Step(tool_calls=[("add", {"a": 1, "b": 2}, "u1")]),  # reuses an earlier id
            Step(text="end"),
        ]
    )
    r = await al.arun(M, "x", tools=[add], adapter=ad)
    res = results(r)
    assert [(x.call_id, x.is_error) for x in res] == [("u1", True), ("d", True), ("u1", True)]
    assert "unknown tool 'nope'" in res[0].output and "add" in res[0].output
    assert "duplicate" in res[1].output and "already used" in res[2].output


async def test_step_limit_is_a_status_and_raise_for_status() -> None:
    ad = ScriptedAdapter([Step(tool_calls=[("add", {"a": 1, "b": 1})]) for _ in range(3)])
    r = await al.arun(M, "loop", tools=[add], adapter=ad, max_steps=3)
    ad.assert_done()
    assert r.status == "step_limit" and r.output is None and r.steps == 3
    assert isinstance(r.events[-1], RunCompletedEvent) and r.events[-1].status == "step_limit"
    with pytest.raises(StepLimitError):
        r.raise_for_status()
    # history stays consistent: every call has its result
    calls = [i.call_id for i in r.history if isinstance(i, ToolCallItem)]
    assert calls == [x.call_id for x in results(r)]


async def test_strict_script_fails_on_unexpected_call() -> None:
    ad = ScriptedAdapter([Step(tool_calls=[("add", {"a": 1, "b": 1})])])
    run = al.Run(M, "x", tools=[add], adapter=ad)
    with pytest.raises(ScriptError, match="unexpected model call"):
        await run.arun()
    assert run.result is not None and run.result.status == "failed"
    assert run.result.error_type == "ScriptError"


def test_strict_script_fails_on_unconsumed_steps() -> None:
    ad = ScriptedAdapter([Step(text="a"), Step(text="b")])
    al.run(M, "x", adapter=ad)
    with pytest.raises(ScriptError, match="not consumed"):
        ad.assert_done()


async def test_retryable_error_is_retried_on_same_adapter() -> None:
    err = OverloadedError("busy", provider="openai", status=529)
    ad = ScriptedAdapter([Step(text="partial", error=err, error_after=1), Step(text="fine")])
    r = await al.arun(M, "x", adapter=ad, retry_delay=0)
    assert r.output == "fine" and r.steps == 1
    retries = [e for e in r.events if isinstance(e, DiagnosticEvent) and e.code == "retry"]
    assert len(retries) == 1
    # The broken attempt added nothing: one user item, one answer.
    assert [i.kind for i in r.history] == ["user", "assistant_text"]
    # Same request object was sent again (same provider, reasoning settings unchanged).
    assert ad.requests[0] is ad.requests[1]


async def test_non_retryable_error_fails_with_typed_error() -> None:
    err = ProviderAPIError("bad request", provider="openai", status=400, error_type="invalid_request_error")
    ad = ScriptedAdapter([Step(error=err)])
    run = al.Run(M, "x", adapter=ad, retries=3, retry_delay=0)
    with pytest.raises(ProviderAPIError):
        await run.arun()
    assert ad.consumed == 1
    assert run.result is not None
    assert run.result.status == "failed" and run.checkpoint.history == (UserItem(text="x"),)
    errs = [e for e in run.result.events if isinstance(e, ErrorEvent)]
    assert errs and errs[0].status == 400


async def test_retries_are_bounded() -> None:
    err = OverloadedError("busy", provider="openai", status=529)
    ad = ScriptedAdapter([Step(error=err), Step(error=err), Step(error=err)])
    with pytest.raises(OverloadedError):
        await al.arun(M, "x", adapter=ad, retries=2, retry_delay=0)
    ad.assert_done()


async def test_event_stream_order_and_stamping() -> None:
    ad = ScriptedAdapter([Step(reasoning=["r"], tool_calls=[("add", {"a": 1, "b": 2})]), Step(text="3")])
    run = al.Run(M, "x", tools=[add], adapter=ad, run_id="run_fixed")
    kinds = []
    async for ev in run.events():
        assert ev.run_id == "run_fixed"
        kinds.append(ev.kind)
        if isinstance(ev, ReasoningDeltaEvent | TextDeltaEvent):
            assert ev.step in (1, 2)
    assert kinds[0] == "run_started" and kinds[-1] == "run_completed"
    assert (
        kinds.index("reasoning_delta")
        < kinds.index("response_completed")
        < kinds.index("model_call_completed")
    )
    assert kinds.index("tool_call") < kinds.index("tool_result")
    # durable events in the result are durable only
    assert run.result is not None
    assert all(type(e).durable for e in run.result.events)
    mc = [e for e in run.result.events if isinstance(e, ModelCallCompletedEvent)]
    assert [e.step for e in mc] == [1, 2]
    assert any(isinstance(e, ToolResultEvent) for e in run.result.events)


async def test_run_is_single_use_and_validates_inputs() -> None:
    ad = ScriptedAdapter([Step(text="a")])
    run = al.Run(M, "x", adapter=ad)
    await run.arun()
    with pytest.raises(UserError):
        await run.arun()
    with pytest.raises(ConfigError):
        al.Run(M, "x", max_steps=0)
    with pytest.raises(ConfigError):
        al.Run("anthropic:sim-thinker", "x", adapter=ScriptedAdapter([]))
    with pytest.raises(UserError):
        al.Run(M)
    with pytest.raises(al.UnknownModelError):
        al.Run("gpt-5", "x")


async def test_pause_turn_continues_the_loop() -> None:
    ad = ScriptedAdapter([Step(text="part one ", stop_reason="pause_turn"), Step(text="part two")])
    r = await al.arun(M, "x", adapter=ad)
    ad.assert_done()
    assert r.output == "part two" and r.steps == 2


async def test_on_event_sees_everything_in_order() -> None:
    got = []
    ad = ScriptedAdapter([Step(reasoning=["a", "b"], text="c")])
    await al.arun(M, "x", adapter=ad, on_event=lambda e: got.append(e.kind))
    assert got == [
        "run_started",
        "model_call_started",
        "reasoning_delta",
        "reasoning_delta",
        "text_delta",
        "response_completed",
        "model_call_completed",
        "run_completed",
    ]


async def test_tool_call_arguments_are_json() -> None:
    ad = ScriptedAdapter([Step(tool_calls=[("add", {"a": 1, "b": 2})]), Step(text="3")])
    r = await al.arun(M, "x", tools=[add], adapter=ad)
    (call,) = [i for i in r.history if isinstance(i, ToolCallItem)]
    assert json.loads(call.arguments) == {"a": 1, "b": 2}


class _NoCompletion:
    provider, api, model = "openai", "responses", "sim-reasoner"
    base_url: str | None = None
    max_retries = 0

    async def stream(self, request: al.ModelRequest) -> AsyncIterator[AdapterEvent]:
        yield TextDeltaEvent(text="half")

    async def aclose(self) -> None:
        pass


async def test_stream_without_completion_is_model_behavior_error() -> None:
    run = al.Run(M, "x", adapter=_NoCompletion())
    with pytest.raises(al.ModelBehaviorError, match="without a completed response"):
        await run.arun()
    assert run.result is not None
    assert run.checkpoint.history == (UserItem(text="x"),) and run.result.status == "failed"


async def test_unpriced_model_costs_nan_with_warning() -> None:
    ad = ScriptedAdapter([Step(text="a")], model="mystery-model")
    with pytest.warns(al.UnpricedModelWarning):
        r = await al.arun("openai:mystery-model", "x", adapter=ad)
    assert r.status == "completed" and not r.usage.cost.known
    assert r.usage.output_tokens is not None and r.usage.output_tokens > 0
    mc = [e for e in r.events if isinstance(e, ModelCallCompletedEvent)]
    assert mc[0].cost_usd is None


async def test_a_very_long_retry_after_fails_instead_of_waiting() -> None:
    from agentlab.errors import RateLimitError

    err = RateLimitError("slow down", provider="openai", status=429, retry_after=3600)
    ad = ScriptedAdapter([Step(error=err)])
    t0 = time.perf_counter()
    with pytest.raises(RateLimitError) as info:
        await al.arun(M, "x", adapter=ad, retries=2, retry_delay=0)
    assert info.value.retry_after == 3600 and time.perf_counter() - t0 < 5
    ad.assert_done()
