"""Cancellation and Ctrl-C in the middle of a stream and in the middle of a tool call.

Each case asserts the run is recorded ``cancelled`` with nothing half-written (history as before the
interrupted step), the continuation released, and nothing leaked: no asyncio task left behind, no
response stream left open (the recording transport tracks every body it handed out; the socket case
counts file descriptors), no thread left running.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.neutral.events import ReasoningDeltaEvent, RunCompletedEvent, ToolCallEvent
from agentlab.neutral.items import UserItem
from tests.reliability.support import (
    MODELS,
    PROVIDERS,
    TASK,
    TEMPS,
    RecordingTransport,
    check_history_consistent,
    close_adapter,
    get_weather,
    make_adapter,
    no_live_continuation,
    open_sockets,
    socket_adapter,
)

SLOW = "slow:30"


def _other_tasks() -> set[asyncio.Task[Any]]:
    me = asyncio.current_task()
    return {t for t in asyncio.all_tasks() if t is not me and not t.done()}


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.is_alive()}


def _wait_threads(baseline: set[str], timeout: float = 3.0) -> set[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        extra = _threads() - baseline
        if not extra:
            return extra
        time.sleep(0.02)
    return _threads() - baseline


def _assert_cancelled_clean(run: al.Run, rec: RecordingTransport, log: Path, *, step: int) -> None:
    assert run.result is not None and run.result.status == "cancelled"
    cp = run.checkpoint
    assert cp.status == "cancelled" and cp.step == step
    check_history_consistent(cp.history)
    assert cp.provider_continuation is None and no_live_continuation(run.run_id)
    assert rec.exchanges and not rec.unclosed, "every response stream was closed"
    recs = al.EventLog.read(log)
    assert isinstance(recs[-1], RunCompletedEvent) and recs[-1].status == "cancelled"


@pytest.fixture
def slow_first_call() -> Iterator[RecordingTransport]:
    yield RecordingTransport(plan=lambda n, _p: SLOW if n == 0 else None)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_task_cancelled_mid_stream(provider: str, tmp_path: Path) -> None:
    rec = RecordingTransport(plan=lambda n, _p: SLOW)
    adapter = make_adapter(provider, rec)
    log = tmp_path / "events.jsonl"
    streaming = asyncio.Event()

    def on_event(ev: Any) -> None:
        if isinstance(ev, ReasoningDeltaEvent):
            streaming.set()

    before = _other_tasks()
    run = al.Run(
        f"{provider}:{MODELS[provider]}", TASK, tools=[get_weather], adapter=adapter, event_log=log,
        on_event=on_event,
    )  # fmt: skip
    task = asyncio.create_task(run.arun())
    await asyncio.wait_for(streaming.wait(), 5)
    assert not rec.exchanges[0].closed, "cancelled while the response was still streaming"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await close_adapter(adapter)
    _assert_cancelled_clean(run, rec, log, step=0)
    assert run.checkpoint.history == (UserItem(text=TASK),)
    await asyncio.sleep(0)
    assert _other_tasks() <= before, f"leaked tasks: {_other_tasks() - before}"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_task_cancelled_mid_tool_call(provider: str, tmp_path: Path) -> None:
    """Cancelled while an async tool awaits: the tool sees the cancellation.

    History keeps no call without its result; the continuation, which held step 1's opaque items, is released.
    """
    entered = asyncio.Event()
    caller = asyncio.get_running_loop()  # async tools run on the tool loop: signal thread-safely
    started: list[str] = []
    tool_cancelled: list[bool] = []

    @al.tool(name="get_weather")
    async def slow_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: City name.
        """
        started.append(city)
        if len(started) == 2:  # both parallel calls are running
            caller.call_soon_threadsafe(entered.set)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            tool_cancelled.append(True)
            raise
        return TEMPS[city]

    rec = RecordingTransport()
    adapter = make_adapter(provider, rec)
    log = tmp_path / "events.jsonl"
    before = _other_tasks()
    run = al.Run(f"{provider}:{MODELS[provider]}", TASK, tools=[slow_weather], adapter=adapter, event_log=log)
    task = asyncio.create_task(run.arun())
    await asyncio.wait_for(entered.wait(), 5)
    held = run.checkpoint.provider_continuation
    assert held is not None and len(held) >= 1, "step 1's opaque items are live during the tool call"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await close_adapter(adapter)
    assert tool_cancelled and len(tool_cancelled) == 2, "both parallel tool calls were cancelled"
    _assert_cancelled_clean(run, rec, log, step=0)
    assert run.checkpoint.history == (UserItem(text=TASK),), "no tool call without its result"
    assert held.released
    recs = al.EventLog.read(log)
    assert sum(isinstance(r, ToolCallEvent) for r in recs) == 2  # the calls were recorded as made
    await asyncio.sleep(0)
    assert _other_tasks() <= before, f"leaked tasks: {_other_tasks() - before}"


def _sigint_soon() -> None:
    os.kill(os.getpid(), signal.SIGINT)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals: main thread")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_ctrl_c_mid_stream_in_a_script(provider: str, tmp_path: Path) -> None:
    """A real SIGINT while ``run_sync`` (``asyncio.run``) streams.

    ``KeyboardInterrupt`` reaches the caller, the run is ``cancelled``, nothing leaks.
    """
    rec = RecordingTransport(plan=lambda n, _p: SLOW)
    adapter = make_adapter(provider, rec)
    log = tmp_path / "events.jsonl"
    sent: list[bool] = []

    def on_event(ev: Any) -> None:
        if isinstance(ev, ReasoningDeltaEvent) and not sent:
            sent.append(True)
            _sigint_soon()

    baseline = _threads()
    run = al.Run(
        f"{provider}:{MODELS[provider]}", TASK, tools=[get_weather], adapter=adapter, event_log=log,
        on_event=on_event,
    )  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        run.run_sync()
    asyncio.run(close_adapter(adapter))
    assert sent
    _assert_cancelled_clean(run, rec, log, step=0)
    assert not _wait_threads(baseline), f"threads left running: {_threads() - baseline}"


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals: main thread")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_ctrl_c_mid_sync_tool_call(provider: str, tmp_path: Path) -> None:
    """SIGINT while a sync tool runs in its worker thread.

    The run is ``cancelled`` with no half step, and the worker thread finishes (no thread outlives the call).
    """
    in_tool = threading.Event()

    @al.tool(name="get_weather")
    def blocking_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: City name.
        """
        if not in_tool.is_set():
            in_tool.set()
            _sigint_soon()
        time.sleep(0.1)
        return TEMPS[city]

    rec = RecordingTransport()
    adapter = make_adapter(provider, rec)
    log = tmp_path / "events.jsonl"
    baseline = _threads()
    run = al.Run(
        f"{provider}:{MODELS[provider]}", TASK, tools=[blocking_weather], adapter=adapter, event_log=log
    )
    with pytest.raises(KeyboardInterrupt):
        run.run_sync()
    asyncio.run(close_adapter(adapter))
    assert in_tool.is_set()
    _assert_cancelled_clean(run, rec, log, step=0)
    assert run.checkpoint.history == (UserItem(text=TASK),)
    assert not _wait_threads(baseline), f"threads left running: {_threads() - baseline}"


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals: main thread")
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_ctrl_c_mid_stream_inside_a_running_loop(provider: str, tmp_path: Path) -> None:
    """The Jupyter path: ``run_sync`` inside a running loop runs on a worker thread.

    A SIGINT to the waiting thread cancels the worker's task, the worker thread ends, the loop it made is
    closed.
    """
    rec = RecordingTransport(plan=lambda n, _p: SLOW)
    adapter = make_adapter(provider, rec)
    log = tmp_path / "events.jsonl"
    sent: list[bool] = []

    def on_event(ev: Any) -> None:
        if isinstance(ev, ReasoningDeltaEvent) and not sent:
            sent.append(True)
            _sigint_soon()  # from the worker thread: delivered to the main (waiting) thread

    baseline = _threads()
    run = al.Run(
        f"{provider}:{MODELS[provider]}", TASK, tools=[get_weather], adapter=adapter, event_log=log,
        on_event=on_event,
    )  # fmt: skip
    # A kernel turns SIGINT into KeyboardInterrupt in the main thread (the test runner's loop would
    # otherwise just cancel its own task); do the same for the duration of the call.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            run.run_sync()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sent and "agentlab-run" not in _threads()
    _assert_cancelled_clean(run, rec, log, step=0)
    assert not _wait_threads(baseline), f"threads left running: {_threads() - baseline}"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_consumer_leaving_events_early(provider: str, tmp_path: Path) -> None:
    """Breaking out of ``events()`` mid-stream (and closing it) is a cancellation too."""
    rec = RecordingTransport(plan=lambda n, _p: SLOW)
    adapter = make_adapter(provider, rec)
    log = tmp_path / "events.jsonl"
    run = al.Run(f"{provider}:{MODELS[provider]}", TASK, tools=[get_weather], adapter=adapter, event_log=log)
    gen = run.events()
    async for ev in gen:
        if isinstance(ev, ReasoningDeltaEvent):
            break
    await gen.aclose()
    await close_adapter(adapter)
    _assert_cancelled_clean(run, rec, log, step=0)


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc to count sockets")
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_cancel_mid_stream_over_a_real_socket_closes_the_connection(provider: str, server: str) -> None:
    """Over a real socket: cancelling mid-body must close that connection.

    It cannot go back to the pool half-read; after the client closes, the process holds no more sockets than
    before.
    """
    before = open_sockets()
    adapter = socket_adapter(provider, server, timeout=10, fault=SLOW)
    streaming = asyncio.Event()

    def on_event(ev: Any) -> None:
        if isinstance(ev, ReasoningDeltaEvent):
            streaming.set()

    run = al.Run(
        f"{provider}:{MODELS[provider]}", TASK, tools=[get_weather], adapter=adapter, on_event=on_event
    )
    task = asyncio.create_task(run.arun())
    await asyncio.wait_for(streaming.wait(), 5)
    assert open_sockets() > before, "the stream holds a connection while it runs"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert open_sockets() <= before, "the half-read connection was closed at cancellation"
    await close_adapter(adapter)
    assert open_sockets() <= before
    assert run.result is not None and run.result.status == "cancelled"
    assert no_live_continuation(run.run_id)
