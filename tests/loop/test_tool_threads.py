"""Sync tools run in reused daemon threads; a stuck one keeps its thread and holds nobody."""

from __future__ import annotations

import asyncio
import contextvars
import threading

from agentlab.loop.tools import tool

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="unset")


async def test_sequential_sync_calls_reuse_one_daemon_thread() -> None:
    seen: list[threading.Thread] = []  # kept alive, so no two can share an identity

    @tool
    def where(x: int) -> int:
        """Record the thread it ran on."""
        seen.append(threading.current_thread())
        return x

    for i in range(3):
        assert (await where.run({"x": i})).output == str(i)
    assert seen[0] is not threading.main_thread()
    assert seen[0].daemon
    assert seen[0] is seen[1] is seen[2], "a new thread per call (~90 µs CPU, up to 1 ms wall each)"


async def test_a_thread_is_named_for_its_tool_and_carries_the_callers_context() -> None:
    @tool
    def named() -> str:
        """Report the running thread's name and the context variable."""
        return f"{threading.current_thread().name}|{VAR.get()}"

    token = VAR.set("caller")
    try:
        out = (await named.run({})).output
    finally:
        VAR.reset(token)
    assert out == "agentlab-tool-named|caller"


async def test_a_stuck_tool_keeps_its_thread_and_the_next_call_runs_elsewhere() -> None:
    release = threading.Event()
    threads: dict[str, threading.Thread] = {}

    @tool(timeout=0.2)
    def stuck() -> str:
        """Block until released."""
        threads["stuck"] = threading.current_thread()
        release.wait(10)
        return "late"

    @tool
    def quick() -> str:
        """Answer at once."""
        threads["quick"] = threading.current_thread()
        return "ok"

    try:
        assert (await stuck.run({})).timed_out
        assert (await quick.run({})).output == "ok"
        assert threads["quick"] is not threads["stuck"]
        assert threads["stuck"].is_alive()
    finally:
        release.set()


async def test_parallel_calls_each_get_a_thread() -> None:
    parallel = 4
    barrier = threading.Barrier(parallel, timeout=5)

    @tool
    def meet() -> str:
        """Wait until every parallel call is running (needs one thread each)."""
        barrier.wait()
        return threading.current_thread().name

    outs = await asyncio.gather(*(meet.run({}) for _ in range(parallel)))
    assert [o.output for o in outs] == ["agentlab-tool-meet"] * parallel


async def test_an_idle_thread_keeps_nothing_of_its_last_call() -> None:
    import gc
    import weakref

    class Big:
        """Stands for a large value or an exception holding frames."""

    made: list[weakref.ref[Big]] = []

    @tool
    def make() -> str:
        """Return something that only the call should hold."""
        big = Big()
        made.append(weakref.ref(big))
        raise RuntimeError(big)  # the exception (and so ``big``) travels back to the caller

    out = await make.run({})
    assert out.is_error
    del out
    # The thread drops its references just after handing the outcome over, so the caller may get
    # here first: give it up to 2 s (before, it held them until its next job, or 30 s idle).
    for _ in range(200):
        gc.collect()
        if made[0]() is None:
            break
        await asyncio.sleep(0.01)
    assert made[0]() is None, "the idle tool thread still holds the last call's outcome"
