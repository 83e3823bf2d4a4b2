"""The sync bridge: ``run_sync`` runs a coroutine to completion from sync code, also inside a running loop.

Why a module of its own: this is thread, signal and event-loop plumbing (a worker thread with its own
loop when one is already running, as in Jupyter; Ctrl-C turned into the run's cancellation with every
wait after it bounded), which has nothing to do with what a tool loop does. ``Run.run_sync``,
``agentlab.run``, ``Session.run``, ``compare`` and ``sweep`` all come through :func:`run_sync`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import signal
import threading
import time
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import agentlab.frontend as frontend
from agentlab.records.logs import get_logger

__all__ = ["CANCEL_WAIT_S", "run_sync"]

log = get_logger(__name__)

T = TypeVar("T")


CANCEL_WAIT_S = 1.0
"""After Ctrl-C, how long ``run_sync`` waits for the run to record itself ``cancelled`` (and again
for its worker loop to close) before leaving the worker thread behind and re-raising."""


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code.

    Without a running loop this is ``asyncio.run``. With one (Jupyter, or sync code called inside
    ``asyncio.run``), ``asyncio.run`` would fail, so the coroutine runs on a fresh loop in a worker
    thread while this thread waits; Ctrl-C cancels the worker's task (so the run records
    ``cancelled``, calls no model again and releases its continuation) and re-raises at once: the
    waits after it are bounded, a worker still busy after them is left behind (a daemon thread).
    Context variables (e.g. ``prices_override``) are carried over.

    In IPython the re-raised ``KeyboardInterrupt`` renders as one line (no frames of agentlab's
    internals); it is still a plain ``KeyboardInterrupt`` to ``except`` clauses.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # outside the except block: errors carry no "no running event loop" context
        try:
            return _run_here(coro)
        except KeyboardInterrupt as e:
            raise _short_interrupt(e) from None
    return _run_on_worker(coro)


def _run_here(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run``, with the clean-up after the main task bounded.

    Same Ctrl-C contract as ``asyncio.run`` (the first SIGINT cancels the main task and
    ``KeyboardInterrupt`` is raised once it has ended; a second one raises at once), but a task left
    behind that ignores its cancellation (an async tool swallowing ``CancelledError``) is waited for
    at most ``CANCEL_WAIT_S`` instead of forever: ``asyncio.run`` would need a second Ctrl-C.
    """
    loop = asyncio.new_event_loop()
    main = threading.current_thread() is threading.main_thread()
    if main:
        asyncio.set_event_loop(loop)
    task = loop.create_task(coro)
    interrupts = 0

    def on_sigint(signum: int, frame: Any) -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1 and not task.done():
            task.cancel()
            loop.call_soon_threadsafe(lambda: None)  # wake a select() waiting on a long timeout
            return
        raise KeyboardInterrupt

    install = main and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if install:
        signal.signal(signal.SIGINT, on_sigint)
    try:
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            if interrupts and task.uncancel() == 0:
                raise KeyboardInterrupt from None
            raise
        finally:
            if install and signal.getsignal(signal.SIGINT) is on_sigint:
                signal.signal(signal.SIGINT, signal.default_int_handler)
    finally:
        try:
            _close_bounded(loop)
        finally:
            if main:
                asyncio.set_event_loop(None)


def _close_bounded(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is left on ``loop``, wait for it at most ``CANCEL_WAIT_S``, then close the loop."""
    try:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for t in pending:
            t.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=CANCEL_WAIT_S))
            stuck = [t.get_name() for t in pending if not t.done()]
            if stuck:
                log.warning("left %d task(s) that ignored cancellation: %s", len(stuck), ", ".join(stuck))
            for t in pending:
                if t.done() and not t.cancelled() and t.exception() is not None:
                    loop.call_exception_handler(
                        {
                            "message": "unhandled exception during run_sync() shutdown",
                            "exception": t.exception(),
                            "task": t,
                        }
                    )
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()


class _Worker:
    """A fresh event loop on a daemon thread running one coroutine; its outcome in ``result``/``error``."""

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.coro = coro
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.ready = threading.Event()  # the task exists (or could not be made)
        self.settled = threading.Event()  # the task has finished
        self.done = threading.Event()  # the loop is closed
        ctx = contextvars.copy_context()
        self.thread = threading.Thread(target=ctx.run, args=(self._target,), name="agentlab-run", daemon=True)

    def _target(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            task = loop.create_task(self.coro)
            self.loop, self.task = loop, task
            self.ready.set()
            self.result = loop.run_until_complete(task)
        except BaseException as e:
            self.error = e
        finally:
            self.ready.set()
            self.settled.set()
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                loop.close()
                self.done.set()

    def cancel(self) -> None:
        """Cancel the task from another thread and wait (bounded) for it to record itself."""
        self.ready.wait(CANCEL_WAIT_S)
        loop, task = self.loop, self.task
        if loop is not None and task is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(task.cancel)
        if self.settled.wait(CANCEL_WAIT_S) and self.done.wait(CANCEL_WAIT_S):
            self.thread.join()
        else:
            log.warning(
                "the run's worker thread did not stop %.1f s after Ctrl-C; left behind", CANCEL_WAIT_S
            )


def _run_on_worker(coro: Coroutine[Any, Any, T]) -> T:
    w = _Worker(coro)
    w.thread.start()
    # Poll the Event with sleeps, not Thread.join (on Python 3.11 a KeyboardInterrupt inside join()
    # marks the still-running thread as stopped, so a later join() would return before the run
    # recorded itself) and not Event.wait (a KeyboardInterrupt landing inside Condition.wait, between
    # its lock's release and re-acquire, leaves the lock released twice: "release unlocked lock"
    # instead of the interrupt). ``is_set`` takes no lock and ``sleep`` is safe to interrupt.
    try:
        with _ctrl_c_raises():
            while not w.done.is_set():
                time.sleep(0.005)
        w.thread.join()
    except KeyboardInterrupt as e:
        w.cancel()
        raise _short_interrupt(e) from None
    if w.error is not None:
        raise w.error
    return w.result  # type: ignore[no-any-return]


@contextlib.contextmanager
def _ctrl_c_raises() -> Iterator[None]:
    """While this thread blocks on a worker, let SIGINT raise ``KeyboardInterrupt`` here.

    Inside ``asyncio.run`` the SIGINT handler only cancels the main task, which cannot happen while
    this (the loop's) thread is blocked waiting: the run would go on calling the model and the
    interrupt land only after it completed. So asyncio's handler is swapped for the default one
    for the wait; any other handler (a kernel's, the user's own, SIG_IGN) is left alone.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    current = signal.getsignal(signal.SIGINT)
    owner = getattr(getattr(current, "func", current), "__self__", None)
    if not isinstance(owner, asyncio.Runner):
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, current)


def _short_interrupt(e: KeyboardInterrupt) -> KeyboardInterrupt:
    """The interrupt to re-raise: one line in IPython (the frontend renders it; ``agentlab.frontend``)."""
    fe = frontend.current()
    return fe.interrupt(e) if fe is not None else e
