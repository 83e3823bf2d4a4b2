"""Interrupts that work: tool timeouts, one Ctrl-C that returns at once, Ctrl-C inside ``asyncio.run``.

The Ctrl-C cases run in a real subprocess and get a real SIGINT (as a terminal sends it), because
the behaviour under test is the process's: whether control comes back to the caller, how fast, and
whether the run's record says ``cancelled`` with the abandoned tool named. The model is a
``ScriptedAdapter`` with spare steps, so a run that wrongly goes on is seen calling it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.errors import ConfigError, ToolDefinitionError
from agentlab.neutral.events import DiagnosticEvent, RunCompletedEvent, ToolResultEvent
from agentlab.testing import ScriptedAdapter, Step
from tests.support.interrupts import interrupt_when_started, spawn_script

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys, time
    import agentlab as al
    from agentlab.errors import ProviderError
    from agentlab.testing import ScriptedAdapter, Step

    mode, scenario, hang_s, log = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]

    def started():
        print("STARTED", flush=True)

    @al.tool
    def hang(city: str) -> str:
        \"\"\"Blocks like a stuck network call.\"\"\"
        started()
        time.sleep(hang_s)
        return "late"

    @al.tool(name="hang")
    async def stubborn(city: str) -> str:
        \"\"\"A polling loop that swallows every cancellation.\"\"\"
        started()
        while True:
            try:
                await asyncio.sleep(hang_s)
            except asyncio.CancelledError:
                pass

    class Counting:
        \"\"\"Counts model calls on any adapter.\"\"\"
        def __init__(self, inner):
            self.inner, self.consumed = inner, 0
        def __getattr__(self, name):
            return getattr(self.inner, name)
        def stream(self, request):
            self.consumed += 1
            if scenario == "compare" and all(a.consumed for a in adapters):
                started()  # every column is streaming (slowly) now
            return self.inner.stream(request)
        async def aclose(self):
            await self.inner.aclose()

    def slow(model):
        return Counting(al.create_adapter(model, extra_headers={"x-sim-fault": "slow:40"}))

    def on_event(ev):
        name = type(ev).__name__
        if (scenario == "stream" and name == "ReasoningDeltaEvent") or (
            scenario == "backoff" and getattr(ev, "code", None) == "retry"
        ):
            if not getattr(on_event, "done", False):
                on_event.done = True
                started()

    adapters = []
    if scenario in ("tool", "stubborn"):
        adapters = [ScriptedAdapter([Step(tool_calls=[("hang", {"city": "Paris"})])] + [Step(text="a")] * 5)]
    elif scenario == "backoff":
        flaky = ProviderError("overloaded", provider="openai", status=529, retryable=True)
        adapters = [ScriptedAdapter([Step(error=flaky)] + [Step(text="a")] * 5)]
    elif scenario == "stream":
        adapters = [slow("openai:sim-reasoner")]
    models = ["openai:sim-reasoner", "anthropic:sim-thinker"]
    tool = stubborn if scenario == "stubborn" else hang
    kw = dict(tools=[tool], event_log=log, on_event=on_event, retry_delay=hang_s)
    run = None
    if scenario != "compare":
        run = al.Run("openai:sim-reasoner", "Weather in Paris?", adapter=adapters[0], **kw)

    def call():
        if run is not None:
            return run.run_sync()
        adapters.extend(slow(m) for m in models)
        kw.pop("on_event")
        return al.compare("Weather in Paris and Rome?", models, adapters=adapters, live=False, **kw)

    def report(how):
        print("RETURNED", json.dumps({
            "how": how, "t": time.monotonic(), "status": run.result.status if run and run.result else None,
            "requests": [a.consumed for a in adapters],
        }), flush=True)

    try:
        if mode == "plain":
            call()
        else:
            async def main():
                return call()
            asyncio.run(main())
        report("returned")
    except KeyboardInterrupt:
        report("KeyboardInterrupt")
    """
)


def _spawn(
    tmp_path: Path, mode: str, hang_s: float, scenario: str = "tool"
) -> tuple[subprocess.Popen[str], Path]:
    log = tmp_path / "events.jsonl"
    return spawn_script(tmp_path, "hang.py", SCRIPT, mode, scenario, str(hang_s), str(log)), log


EXIT_S = 10.0
"""Process exit bound after the Ctrl-C: far below the 60 s a joined hung thread would take, above the
interpreter's own teardown (pandas, after compare/sweep) on a loaded 2-core machine."""


def _abandoned(log: Path) -> list[DiagnosticEvent]:
    return [r for r in al.EventLog.read(log) if isinstance(r, DiagnosticEvent) and r.code == "tool_abandoned"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("mode", ["plain", "inside_asyncio_run"])
def test_one_ctrl_c_during_a_hung_sync_tool_returns_at_once(mode: str, tmp_path: Path) -> None:
    """The tool sleeps 60 s; one SIGINT gives control back within ~2 s.

    The run is ``cancelled``, the model is not called again, and the abandoned tool is named in a durable
    diagnostic.
    """
    proc, log = _spawn(tmp_path, mode, 60)
    back_s, rep, exited_s = interrupt_when_started(proc)
    assert rep["how"] == "KeyboardInterrupt", rep
    assert back_s < 2.0, f"control came back {back_s:.2f} s after Ctrl-C"
    assert exited_s < EXIT_S, f"the process took {exited_s:.2f} s to exit (a hung thread was joined?)"
    assert rep["status"] == "cancelled" and rep["requests"] == [1], rep
    recs = al.EventLog.read(log)
    assert isinstance(recs[-1], RunCompletedEvent) and recs[-1].status == "cancelled"
    notes = _abandoned(log)
    assert len(notes) == 1 and "hang" in notes[0].message, [n.message for n in notes]
    assert notes[0].data["tool"] == "hang"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("mode", ["plain", "inside_asyncio_run"])
def test_one_ctrl_c_with_an_async_tool_that_swallows_cancellation(mode: str, tmp_path: Path) -> None:
    """An async tool whose retry loop swallows every ``CancelledError``.

    One Ctrl-C still ends the call at once (the tool is abandoned after a short grace, and named), and the
    process exits.
    """
    proc, log = _spawn(tmp_path, mode, 60, "stubborn")
    back_s, rep, exited_s = interrupt_when_started(proc)
    assert rep == {**rep, "how": "KeyboardInterrupt", "status": "cancelled", "requests": [1]}, rep
    assert back_s < 2.0 and exited_s < EXIT_S, (back_s, exited_s)
    notes = _abandoned(log)
    assert len(notes) == 1 and notes[0].data["tool"] == "hang"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_inside_asyncio_run_stops_calling_the_model(tmp_path: Path) -> None:
    """Sync ``run`` inside ``asyncio.run``: a Ctrl-C during a 3 s tool cancels the run.

    It does not wait the tool out, call the model again and end ``completed``.
    """
    proc, _ = _spawn(tmp_path, "inside_asyncio_run", 3)
    back_s, rep, _ = interrupt_when_started(proc)
    assert rep == {**rep, "how": "KeyboardInterrupt", "status": "cancelled", "requests": [1]}, rep
    assert back_s < 2.0


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("mode", ["plain", "inside_asyncio_run"])
@pytest.mark.parametrize("scenario", ["stream", "backoff"])
def test_one_ctrl_c_mid_stream_or_mid_backoff(mode: str, scenario: str, tmp_path: Path) -> None:
    """Ctrl-C while the model streams slowly, or while the run sleeps 60 s before a retry.

    Control comes back at once, the run is ``cancelled``, no further model call is made.
    """
    proc, log = _spawn(tmp_path, mode, 60, scenario)
    back_s, rep, exited_s = interrupt_when_started(proc)
    assert rep == {**rep, "how": "KeyboardInterrupt", "status": "cancelled", "requests": [1]}, rep
    assert back_s < 2.0 and exited_s < EXIT_S, (back_s, exited_s)
    recs = al.EventLog.read(log)
    assert isinstance(recs[-1], RunCompletedEvent) and recs[-1].status == "cancelled"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("mode", ["plain", "inside_asyncio_run"])
def test_one_ctrl_c_cancels_every_column_of_a_comparison(mode: str, tmp_path: Path) -> None:
    proc, log = _spawn(tmp_path, mode, 60, "compare")
    back_s, rep, exited_s = interrupt_when_started(proc)
    assert rep["how"] == "KeyboardInterrupt" and rep["requests"] == [1, 1], rep
    assert back_s < 2.0 and exited_s < EXIT_S, (back_s, exited_s)
    done = [r for r in al.EventLog.read(log) if isinstance(r, RunCompletedEvent)]
    assert sorted(r.status for r in done) == ["cancelled", "cancelled"], done


# ---------------------------------------------------------------------- tool timeouts (in process)


def _slow_sync(seconds: float, **opts: Any) -> al.Tool:
    @al.tool(name="slow", **opts)
    def slow(city: str) -> str:
        """Slow lookup."""
        time.sleep(seconds)
        return "ok"

    return slow


def _script() -> ScriptedAdapter:
    return ScriptedAdapter([Step(tool_calls=[("slow", {"city": "Paris"})]), Step(text="gave up")])


def _timeout_checks(result: al.RunResult, seconds: float) -> None:
    assert result.status == "completed" and result.output == "gave up"
    res = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert len(res) == 1 and res[0].result.is_error
    assert "slow" in res[0].result.output and "timed out" in res[0].result.output
    notes = [e for e in result.events if isinstance(e, DiagnosticEvent) and e.code == "tool_timeout"]
    assert len(notes) == 1 and "slow" in notes[0].message
    assert notes[0].data == {"tool": "slow", "timeout_s": seconds, "call_id": res[0].result.call_id}


def test_per_tool_timeout_becomes_an_error_result(tmp_path: Path) -> None:
    t0 = time.monotonic()
    result = al.run("openai:sim-reasoner", "t", tools=[_slow_sync(5, timeout=0.3)], adapter=_script())
    assert time.monotonic() - t0 < 2.0
    _timeout_checks(result, 0.3)


def test_per_run_timeout_applies_to_tools_without_their_own(tmp_path: Path) -> None:
    log = tmp_path / "ev.jsonl"
    t0 = time.monotonic()
    result = al.run(
        "openai:sim-reasoner", "t", tools=[_slow_sync(5)], adapter=_script(), tool_timeout=0.3, event_log=log
    )
    assert time.monotonic() - t0 < 2.0
    _timeout_checks(result, 0.3)
    assert any(isinstance(r, DiagnosticEvent) and r.code == "tool_timeout" for r in al.EventLog.read(log))


def test_tool_timeout_wins_over_the_run_timeout() -> None:
    result = al.run(
        "openai:sim-reasoner", "t", tools=[_slow_sync(0.5, timeout=5)], adapter=ScriptedAdapter(
            [Step(tool_calls=[("slow", {"city": "Paris"})]), Step(text="fine")]
        ), tool_timeout=0.1,
    )  # fmt: skip
    res = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert res[0].result.output == "ok" and not res[0].result.is_error


def test_no_timeout_when_none() -> None:
    from agentlab.loop.tools import DEFAULT_TOOL_TIMEOUT_S

    run = al.Run("openai:sim-reasoner", "t", tools=[_slow_sync(0.01)], tool_timeout=None)
    assert run.tool_timeout is None
    assert al.Run("openai:sim-reasoner", "t").tool_timeout == DEFAULT_TOOL_TIMEOUT_S == 120.0


async def test_async_tool_timeout_even_if_it_ignores_cancellation() -> None:
    """An async tool that swallows ``CancelledError`` cannot hold the run past its timeout."""

    @al.tool(name="slow", timeout=0.2)
    async def stubborn(city: str) -> str:
        """Ignores cancellation."""
        for _ in range(50):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.1)
        return "late"

    t0 = time.monotonic()
    result = await al.arun("openai:sim-reasoner", "t", tools=[stubborn], adapter=_script())
    assert time.monotonic() - t0 < 2.5
    _timeout_checks(result, 0.2)


async def test_cancelling_arun_with_a_tool_that_ignores_cancellation() -> None:
    """``task.cancel()`` on ``arun`` ends the run ``cancelled`` promptly.

    This holds even when the tool swallows the ``CancelledError`` (it would otherwise return a value and the
    loop would call the model again).
    """
    entered = asyncio.Event()
    caller = asyncio.get_running_loop()  # async tools run on the tool loop: signal thread-safely

    @al.tool(name="slow")
    async def stubborn(city: str) -> str:
        """Swallows cancellation and returns."""
        caller.call_soon_threadsafe(entered.set)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            return "swallowed"
        return "late"

    adapter = ScriptedAdapter([Step(tool_calls=[("slow", {"city": "Paris"})])] + [Step(text="more")] * 3)
    run = al.Run("openai:sim-reasoner", "t", tools=[stubborn], adapter=adapter)
    task = asyncio.create_task(run.arun())
    await asyncio.wait_for(entered.wait(), 5)
    t0 = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - t0 < 1.5
    assert run.result is not None and run.result.status == "cancelled"
    assert adapter.consumed == 1, "no model call after the cancellation"


@pytest.mark.parametrize("bad", [0, -1, "5", True, float("nan")])
def test_bad_timeouts_are_typed_errors(bad: Any) -> None:
    def f(city: str) -> str:
        return city

    with pytest.raises(ToolDefinitionError, match="timeout"):
        al.tool(timeout=bad)(f)
    with pytest.raises(ConfigError, match="tool_timeout"):
        al.Run("openai:sim-reasoner", "t", tool_timeout=bad)


# ---------------------------------------------------------------------- Session as plain data

CANARY = b"OPAQUE-CANARY-7f3a"


def _opaque_script() -> ScriptedAdapter:
    return ScriptedAdapter(
        [
            Step(reasoning=["thinking"], opaque=[CANARY], tool_calls=[("slow", {"city": "Paris"})]),
            Step(text="done", expect_continuation_from=[0]),
        ]
    )


def _no_opaque(blob: bytes) -> None:
    assert CANARY not in blob and b"ProviderReasoningItem" not in blob and b"Continuation" not in blob


@pytest.mark.parametrize("how", ["pickle", "deepcopy", "copy"])
def test_session_copies_as_plain_data(how: str) -> None:
    import copy
    import pickle

    s = al.Session(system="Be brief.")
    s.run("openai:sim-reasoner", "t", tools=[_slow_sync(0)], adapter=_opaque_script())
    _no_opaque(pickle.dumps(s))
    dup = {"pickle": lambda x: pickle.loads(pickle.dumps(x)), "deepcopy": copy.deepcopy, "copy": copy.copy}
    c = dup[how](s)
    assert c is not s and c.history == s.history and c.system == s.system
    assert [r.run_id for r in c.results] == [r.run_id for r in s.results]
    assert repr(c) == repr(s)
    # The copy is a working session of its own (its own lock, no active run).
    r2 = c.run("openai:sim-reasoner", "again", adapter=ScriptedAdapter([Step(text="ok")]))
    assert r2.status == "completed" and len(c.results) == 2 and len(s.results) == 1


async def test_session_copied_mid_run_carries_no_run_or_continuation() -> None:
    import copy
    import pickle

    s = al.Session()
    run = s.start("openai:sim-reasoner", "t", tools=[_slow_sync(0)], adapter=_opaque_script())
    gen = run.events()
    async for ev in gen:
        if type(ev).__name__ == "ToolCallEvent":
            break
    assert run.checkpoint.provider_continuation, "the live loop holds the opaque item now"
    blob = pickle.dumps(s)
    _no_opaque(blob)
    for c in (pickle.loads(blob), copy.deepcopy(s)):
        assert c._active is None and c.history == s.history
        r = await c.arun("openai:sim-reasoner", "other", adapter=ScriptedAdapter([Step(text="ok")]))
        assert r.status == "completed"
    async for _ in gen:
        pass
    assert run.result is not None and run.result.status == "completed" and len(s.results) == 1


# ---------------------------------------------------------------------- sweeps

SWEEP_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys, time
    import agentlab as al

    mode, results = sys.argv[1], sys.argv[2]
    starts = []

    def factory(ref):
        inner = al.create_adapter(ref, max_retries=0, extra_headers={"x-sim-fault": "slow:40"})
        class Counting:
            def __getattr__(self, name):
                return getattr(inner, name)
            def stream(self, request):
                starts.append(time.monotonic())
                return inner.stream(request)
            async def aclose(self):
                await inner.aclose()
        return Counting()

    def on_progress(p):
        if p.done == 1:
            print("STARTED", flush=True)

    tasks = [f"What is {i} + {i}?" for i in range(6)]

    def call():
        return al.sweep(tasks, ["openai:sim-reasoner"], results=results, concurrency=1,
                        adapter_factory=factory, on_progress=on_progress, progress=None)

    try:
        if mode == "plain":
            call()
        else:
            async def main():
                return call()
            asyncio.run(main())
        how = "returned"
    except KeyboardInterrupt:
        how = "KeyboardInterrupt"
    print("RETURNED", json.dumps({"how": how, "t": time.monotonic(), "starts": starts}), flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("mode", ["plain", "inside_asyncio_run"])
def test_one_ctrl_c_stops_a_sweep_and_leaves_a_resumable_file(mode: str, tmp_path: Path) -> None:
    """Ctrl-C after the first run of six was recorded: control comes back at once.

    No model call starts after the interrupt, every row in the file is whole, and calling again completes it.
    """
    results = tmp_path / "results.jsonl"
    proc = spawn_script(tmp_path, "sweep.py", SWEEP_SCRIPT, mode, str(results))
    back_s, rep, exited_s = interrupt_when_started(proc)
    assert rep["how"] == "KeyboardInterrupt", rep
    assert back_s < 2.0 and exited_s < EXIT_S, (back_s, exited_s)
    t_sig = rep["t"] - back_s
    assert all(t < t_sig for t in rep["starts"]), "no model call started after the Ctrl-C"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert 1 <= len(rows) < 6 and all(r["status"] == "completed" for r in rows)
    report = al.sweep(
        [f"What is {i} + {i}?" for i in range(6)], ["openai:sim-reasoner"], results=results, progress=None
    )
    assert report.status == "completed" and report.from_file == len(rows) and report.ran == 6 - len(rows)
    assert len(al.load_results(results)) == 6
