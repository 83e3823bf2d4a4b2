"""The sync API works inside a running event loop (Jupyter) and gives the same result as the async one."""

from __future__ import annotations

import asyncio
import threading

import agentlab as al
from agentlab.costs.pricing import prices_override
from agentlab.testing import ScriptedAdapter, Step

M = "openai:sim-reasoner"


@al.tool
def ping(n: int) -> str:
    """Ping."""
    return f"pong {n}"


def script() -> list[Step]:
    return [
        Step(
            reasoning=["r1"], opaque=["o1"], tool_calls=[("ping", {"n": 1}, "c1"), ("ping", {"n": 2}, "c2")]
        ),
        Step(reasoning=["r2"], text="done", expect_continuation_from=[0]),
    ]


def comparable(r: al.RunResult) -> tuple[object, ...]:
    return (r.status, r.output, r.steps, r.history, r.usage.tokens, r.usage.cost, [c.usage for c in r.calls])


async def test_sync_run_inside_running_loop() -> None:
    asyncio.get_running_loop()  # we are inside a loop, like a notebook cell
    main = threading.get_ident()
    seen_threads: set[int] = set()
    r = al.run(
        M,
        "x",
        tools=[ping],
        adapter=ScriptedAdapter(script()),
        on_event=lambda e: seen_threads.add(threading.get_ident()),
    )
    assert r.status == "completed" and r.output == "done"
    assert seen_threads and main not in seen_threads  # ran on the worker thread's loop


def test_sync_run_without_loop_uses_asyncio_run() -> None:
    main = threading.get_ident()
    seen: set[int] = set()
    r = al.run(
        M,
        "x",
        tools=[ping],
        adapter=ScriptedAdapter(script()),
        on_event=lambda e: seen.add(threading.get_ident()),
    )
    assert r.output == "done" and seen == {main}


async def test_sync_async_parity() -> None:
    a = await al.arun(M, "x", tools=[ping], adapter=ScriptedAdapter(script()), run_id="same")
    s = al.run(M, "x", tools=[ping], adapter=ScriptedAdapter(script()), run_id="same")
    assert comparable(a) == comparable(s)
    assert [e.kind for e in a.events] == [e.kind for e in s.events]


async def test_sync_errors_propagate_from_worker_thread() -> None:
    err = al.ProviderAPIError("nope", provider="openai", status=400)
    try:
        al.run(M, "x", adapter=ScriptedAdapter([Step(error=err)]))
    except al.ProviderAPIError as e:
        assert e.status == 400
    else:  # pragma: no cover
        raise AssertionError("expected ProviderAPIError")


async def test_context_variables_cross_to_worker_thread() -> None:
    with prices_override(
        {"openai:sim-reasoner": {"input": 0, "cache_read": 0, "cache_write": 0, "output": 0}}
    ):
        r = al.run(M, "x", adapter=ScriptedAdapter([Step(text="free")]))
    assert r.usage.cost.total == 0.0 and r.usage.output_tokens and r.usage.output_tokens > 0


async def test_session_sync_inside_loop() -> None:
    s = al.Session()
    r = s.run(M, "x", adapter=ScriptedAdapter([Step(text="a")]))
    r2 = s.run(M, "y", adapter=ScriptedAdapter([Step(text="b")]))
    assert (r.output, r2.output) == ("a", "b")
    assert [i.kind for i in s.history] == ["user", "assistant_text", "user", "assistant_text"]
