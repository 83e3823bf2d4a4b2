"""The one event loop every MCP connection of the process lives on, in a daemon thread.

Why a loop of its own: an MCP client session is a task group bound to the loop it was entered on,
while agentlab runs tool loops on many loops (``asyncio.run`` in a script, a worker thread's loop
inside Jupyter, one loop per sweep worker). On a loop of its own a server is shared by every run of a
compare or a sweep, whatever loop each run is on: a call is submitted here and awaited from the
caller's loop through a thread-safe future, which the caller may cancel (time-out, Ctrl-C).

The thread lives as long as the process: Linux's parent-death signal (see ``_launch.py``) is tied
to the thread that started a child, so servers are always started from this thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync", "submit"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _get() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="agentlab-mcp", daemon=True).start()
            _loop = loop
        return _loop


def on_loop() -> bool:
    """Whether the caller runs on the MCP loop (where a blocking wait would deadlock)."""
    try:
        return asyncio.get_running_loop() is _loop
    except RuntimeError:
        return False


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Run ``coro`` on the MCP loop; cancelling the returned future cancels it there."""
    return asyncio.run_coroutine_threadsafe(coro, _get())


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` on the MCP loop and wait for it from a plain thread (or a thread whose loop runs)."""
    if on_loop():
        coro.close()
        raise RuntimeError("agentlab.mcp: a blocking call made from the MCP loop itself")
    fut = submit(coro)
    try:
        return fut.result(timeout)
    except concurrent.futures.TimeoutError:
        fut.cancel()
        raise TimeoutError(f"no answer within {timeout:g} s") from None
    except BaseException:
        fut.cancel()
        raise
