"""An async tool cannot hold the run, or the process, past its timeout.

Two ways an ``async def`` tool used to escape its timeout: swallowing ``CancelledError`` (``arun``
returned, but the abandoned task kept ``asyncio.run`` from ever returning: the process hung) and
blocking its event loop (``time.sleep(4)`` under ``timeout=0.5`` finished 4 s late and counted as a
success). The hang case runs in a subprocess with a hard timeout, so a regression fails here
instead of hanging the suite.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import agentlab as al
from agentlab.neutral.events import DiagnosticEvent, ToolResultEvent
from agentlab.testing import ScriptedAdapter, Step

ROOT = Path(__file__).resolve().parents[2]
HARD_TIMEOUT_S = 30.0

SWALLOWS = textwrap.dedent(
    """
    import asyncio, contextlib, json, time
    import agentlab as al
    from agentlab.testing import ScriptedAdapter, Step

    @al.tool(name="slow", timeout=0.5)
    async def stubborn(city: str) -> str:
        \"\"\"Swallows every cancellation, forever.\"\"\"
        while True:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.05)

    async def main():
        script = ScriptedAdapter([Step(tool_calls=[("slow", {"city": "Paris"})]), Step(text="gave up")])
        t0 = time.monotonic()
        r = await al.arun("openai:sim-reasoner", "t", tools=[stubborn], adapter=script)
        codes = [e.code for e in r.events if type(e).__name__ == "DiagnosticEvent"]
        return {"status": r.status, "arun_s": time.monotonic() - t0, "codes": codes}

    t0 = time.monotonic()
    out = asyncio.run(main())
    out["asyncio_run_s"] = time.monotonic() - t0
    print("RETURNED", json.dumps(out), flush=True)
    """
)


def test_asyncio_run_returns_when_an_async_tool_swallows_its_cancellation(tmp_path: Path) -> None:
    script = tmp_path / "swallow.py"
    script.write_text(SWALLOWS)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AGENTLAB_NO_WIDGETS": "1"}
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        out, err = proc.communicate(timeout=HARD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"the process hung after the tool's timeout; stdout={out!r}") from None
    assert proc.returncode == 0, err
    line = next(x for x in out.splitlines() if x.startswith("RETURNED "))
    rep = json.loads(line.removeprefix("RETURNED "))
    assert rep["status"] == "completed" and rep["codes"] == ["tool_timeout"], rep
    assert rep["arun_s"] < 3.0 and rep["asyncio_run_s"] < 3.0, rep
    assert time.monotonic() - t0 < HARD_TIMEOUT_S


def _script() -> ScriptedAdapter:
    return ScriptedAdapter([Step(tool_calls=[("slow", {"city": "Paris"})]), Step(text="gave up")])


async def test_an_async_tool_blocking_its_loop_is_timed_out_not_a_success() -> None:
    """``time.sleep(4)`` inside ``async def`` with ``timeout=0.5``: a timeout, recorded as such, on time.

    The caller's loop keeps running meanwhile (its heartbeat ticks), and the diagnostic says why.
    """

    @al.tool(name="slow", timeout=0.5)
    async def blocking(city: str) -> str:
        """A sync call inside async def."""
        time.sleep(4)
        return "late"

    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    beat = asyncio.create_task(heartbeat())
    t0 = time.monotonic()
    try:
        result = await al.arun("openai:sim-reasoner", "t", tools=[blocking], adapter=_script())
    finally:
        beat.cancel()
    elapsed = time.monotonic() - t0
    res = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert len(res) == 1 and res[0].result.is_error and "timed out" in res[0].result.output
    assert res[0].duration_s is not None and 0.5 <= res[0].duration_s < 2.0, res[0].duration_s
    notes = [e for e in result.events if isinstance(e, DiagnosticEvent) and e.code == "tool_timeout"]
    assert len(notes) == 1 and notes[0].data["timeout_s"] == 0.5
    assert "event loop was blocked" in notes[0].message
    assert result.status == "completed" and result.output == "gave up" and elapsed < 2.5
    assert ticks >= 10, "the caller's loop kept running while the tool blocked"


async def test_a_tool_ignoring_cancellation_is_not_said_to_block_its_loop() -> None:
    @al.tool(name="slow", timeout=0.3)
    async def stubborn(city: str) -> str:
        """Swallows cancellation for a while."""
        for _ in range(40):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.05)
        return "late"

    result = await al.arun("openai:sim-reasoner", "t", tools=[stubborn], adapter=_script())
    notes = [e for e in result.events if isinstance(e, DiagnosticEvent) and e.code == "tool_timeout"]
    assert len(notes) == 1 and "blocked" not in notes[0].message


def test_async_tools_share_one_loop_across_runs_until_a_call_is_abandoned() -> None:
    """A client bound to the loop it first ran on keeps working from run to run.

    After a call is abandoned its loop is retired, and the next call runs on a fresh one.
    """
    loops: list[int] = []

    @al.tool(name="slow")
    async def where(city: str) -> str:
        """Which loop am I on."""
        loops.append(id(asyncio.get_running_loop()))
        if city == "stuck":
            time.sleep(1.0)
        return "ok"

    def once(city: str, timeout: float | None = None) -> None:
        script = ScriptedAdapter([Step(tool_calls=[("slow", {"city": city})]), Step(text="done")])
        al.run("openai:sim-reasoner", "t", tools=[where], adapter=script, tool_timeout=timeout)

    once("Paris")
    once("Rome")
    once("stuck", timeout=0.2)
    once("Oslo")
    assert loops[0] == loops[1] == loops[2] != loops[3], loops


async def test_a_tool_and_the_caller_do_not_share_a_loop_so_cancellation_still_reaches_the_tool() -> None:
    cancelled: list[bool] = []
    caller = asyncio.get_running_loop()
    entered = asyncio.Event()

    @al.tool(name="slow")
    async def waits(city: str) -> str:
        """Waits to be cancelled."""
        assert asyncio.get_running_loop() is not caller
        caller.call_soon_threadsafe(entered.set)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "late"

    task = asyncio.create_task(al.arun("openai:sim-reasoner", "t", tools=[waits], adapter=_script()))
    await asyncio.wait_for(entered.wait(), 5)
    task.cancel()
    t0 = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - t0 < 1.5 and cancelled == [True]


async def test_a_run_inside_an_async_tool_still_bounds_its_own_tools() -> None:
    """An agent as a tool: the inner run's blocking tool is timed out, not run on (and stalling) its loop."""

    @al.tool(name="inner", timeout=0.3)
    async def inner(city: str) -> str:
        """Blocks its loop."""
        time.sleep(2)
        return "late"

    @al.tool(name="slow", timeout=5)
    async def outer(city: str) -> str:
        """Runs an agent of its own."""
        script = ScriptedAdapter([Step(tool_calls=[("inner", {"city": city})]), Step(text="inner gave up")])
        r = await al.arun("openai:sim-reasoner", "t", tools=[inner], adapter=script)
        return r.output or ""

    t0 = time.monotonic()
    result = await al.arun("openai:sim-reasoner", "t", tools=[outer], adapter=_script())
    res = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert res[0].result.output == "inner gave up" and not res[0].result.is_error
    assert time.monotonic() - t0 < 2.0
