"""Where async tools run: agentlab's own event loop, on a daemon thread, never the caller's loop.

Why not the caller's loop: on it a tool can hold the run beyond any timeout. A blocking call inside
``async def`` (``time.sleep``, ``requests.get``) stops the whole loop, so the timeout cannot even
fire; a tool that swallows ``CancelledError`` stays a task of that loop, and ``asyncio.run`` waits
for every task at exit, forever. Neither can be fixed from the same loop: a blocked loop runs
nothing, and asyncio offers no public way to forget a task. On a loop of its own, in a daemon
thread, a tool is bounded the way a sync tool in its thread is: the run waits on its own loop, with
its own clock, and a call still running after its timeout (plus a short grace to clean up) is
abandoned. That loop is then retired (new calls get a fresh one), it stops once its last task ends,
and as a daemon thread it never keeps the process alive.

Why one shared loop rather than one per call: async clients (``httpx.AsyncClient``, connection
pools) bind to the loop they first run on. A loop that lives across calls and runs keeps a
module-level client working from call to call, as it would on a single loop; only a retired loop
(after an abandoned call) starts afresh. The price: asyncio objects a tool shares with the caller's
loop (an ``asyncio.Event`` the caller awaits, a future of the caller's loop) belong to another
thread's loop, so they must be signalled thread-safely (``loop.call_soon_threadsafe``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["ToolLoopCall", "start_on_tool_loop"]


class _ToolLoop:
    """An event loop running forever on a daemon thread, until it is retired and has no tasks left."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.tasks: set[asyncio.Task[Any]] = set()
        self.retired = False
        self.thread = threading.Thread(target=self._main, name="agentlab-tool-loop", daemon=True)
        self.thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            with _LOCK:  # however it ended, the next call gets a new loop
                global _SHARED
                if _SHARED is self:
                    _SHARED = None
                self.loop.close()

    def retire(self) -> None:
        """No new calls come here; the loop stops once what still runs on it has ended."""
        with _LOCK:
            global _SHARED
            if _SHARED is self:
                _SHARED = None
            self.retired = True
        self.call_soon(self._stop_if_idle)

    def call_soon(self, fn: Any, *args: Any) -> bool:
        """Schedule ``fn`` on this loop from any thread; False once the loop has closed."""
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:
            return False
        return True

    def _stop_if_idle(self) -> None:
        if self.retired and not self.tasks:
            self.loop.stop()

    def forget(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        self._stop_if_idle()


_LOCK = threading.Lock()
_SHARED: _ToolLoop | None = None


def _acquire(caller: asyncio.AbstractEventLoop) -> _ToolLoop:
    """The shared tool loop, or a private one when the caller already runs on it (a run inside a tool).

    A nested call on the same loop would share its fate: a blocking inner tool would stall the
    loop that is supposed to time it out. Called under ``_LOCK``.
    """
    global _SHARED
    if _SHARED is None:
        _SHARED = _ToolLoop()
    if _SHARED.loop is not caller:
        return _SHARED
    private = _ToolLoop()
    private.retired = True  # stops after its one call
    return private


def _forget_after_fork() -> None:
    """A forked child has no tool-loop thread: its first async tool starts a new loop.

    The lock too is new: another thread may have held it at the fork, and nothing would release it.
    """
    global _SHARED, _LOCK
    _SHARED = None
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


class ToolLoopCall:
    """One async tool call on the tool loop, seen from the caller's loop.

    ``future`` (a future of the caller's loop) gets the call's outcome: its value, its exception,
    or cancelled when the tool ended cancelled. ``cancel_seen`` says whether the tool loop ran the
    cancellation request at all: if not, the loop was blocked (a blocking call inside the tool).
    """

    def __init__(self, home: _ToolLoop, future: asyncio.Future[Any]) -> None:
        self.home = home
        self.future = future
        self.task: asyncio.Task[Any] | None = None
        self.cancel_requested = False
        self.cancel_seen = False

    def request_cancel(self) -> None:
        """Ask the tool loop to cancel the call (thread-safe); the tool may take a moment to clean up."""
        self.home.call_soon(self._cancel_there)

    def _cancel_there(self) -> None:
        self.cancel_seen = True
        self.cancel_requested = True
        if self.task is not None:
            self.task.cancel()

    def abandon(self) -> None:
        """Leave the call running: its loop is retired, and its late outcome is dropped."""
        self.home.retire()
        if not self.future.done():
            self.future.cancel()


async def _started(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Await ``make()``, made inside the task.

    A call cancelled before its task starts then leaves no coroutine behind never awaited (a
    ``RuntimeWarning`` at garbage collection).
    """
    return await make()


def start_on_tool_loop(make: Callable[[], Coroutine[Any, Any, Any]]) -> ToolLoopCall:
    """Run ``make()`` as a task of the tool loop, in a copy of the caller's context (like a task)."""
    caller = asyncio.get_running_loop()
    ctx = contextvars.copy_context()
    def settle(task: asyncio.Task[Any]) -> None:  # on the caller's loop
        fut = call.future
        if fut.done():
            return
        if task.cancelled():
            fut.cancel()
        elif (exc := task.exception()) is not None:
            fut.set_exception(exc)
        else:
            fut.set_result(task.result())

    def finished(task: asyncio.Task[Any]) -> None:  # on the tool loop
        home.forget(task)
        if not task.cancelled():
            task.exception()  # retrieved here: the caller may be gone ("never retrieved" at GC)
        with contextlib.suppress(RuntimeError):  # the caller's loop closed: nobody waits any more
            caller.call_soon_threadsafe(settle, task)

    def begin() -> None:  # on the tool loop
        task = home.loop.create_task(_started(make), context=ctx)
        call.task = task
        home.tasks.add(task)
        task.add_done_callback(finished)
        if call.cancel_requested:
            task.cancel()

    with _LOCK:  # chosen and queued at once: a loop retired meanwhile still runs what it was given
        home = _acquire(caller)
        call = ToolLoopCall(home, caller.create_future())
        queued = home.call_soon(begin)
    if not queued:  # pragma: no cover - a loop is forgotten (under the lock) before it closes
        raise RuntimeError("the tool loop has closed")
    return call
