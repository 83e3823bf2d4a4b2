"""The daemon threads sync tools run in: reused while idle, abandoned when stuck.

Why not a fresh thread per call: starting one costs about 90 µs of CPU and up to a millisecond of
wall time before the tool even begins, on every sync tool call of every run. Why not
``concurrent.futures``/``asyncio.to_thread``: their pool threads are joined when the loop shuts down
and at interpreter exit, so one stuck tool would hold the caller after a timeout or a Ctrl-C.

Here a thread that finishes a job waits (``_IDLE_S`` at most) for the next one; a job whose thread
never comes back (a stuck tool, abandoned at its timeout) simply keeps that thread, and the next job
gets an idle thread or a new one. Every thread is a daemon: nothing ever waits for one. A reused
thread keeps what a tool left in ``threading.local`` storage, as pool threads do.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

__all__ = ["Job", "run_in_tool_thread"]

_IDLE_S = 30.0  # an idle thread ends after this long without a job
_MAX_IDLE = 8  # more idle threads than this end at once (a burst of parallel calls passed)

Job = Callable[[], Callable[[], object]]
"""Runs the work and returns how to hand its outcome over; neither part may raise."""

_lock = threading.Lock()
_idle: list[_Worker] = []


class _Worker:
    """One daemon thread and the queue it takes jobs from."""

    __slots__ = ("jobs", "thread")

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[tuple[Job, str]] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._main, name="agentlab-tool", daemon=True)
        self.thread.start()

    def _main(self) -> None:
        while True:
            try:
                job, name = self.jobs.get(timeout=_IDLE_S)
            except queue.Empty:
                with _lock:
                    if self not in _idle:  # taken just now: its job is on the way
                        continue
                    _idle.remove(self)
                return
            self.thread.name = name
            deliver = job()  # never raises: it returns how to hand its outcome over
            self.thread.name = "agentlab-tool"
            with _lock:
                stay = len(_idle) < _MAX_IDLE
                if stay:  # idle before the outcome is handed over: the caller's next call reuses it
                    _idle.append(self)
            deliver()
            # Held until the next job otherwise: the tool's arguments, its value or exception
            # (with its traceback's frames) would outlive the call by up to _IDLE_S.
            del job, deliver
            if not stay:
                return


def run_in_tool_thread(job: Job, name: str) -> None:
    """Run ``job`` in an idle tool thread (a new one when none is idle), named ``name`` meanwhile.

    The thread is back among the idle ones before the outcome is handed over, so a caller that makes
    its next call as soon as it has the outcome gets the same thread (see ``tools._start_in_thread``).
    """
    with _lock:
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _Worker()
    worker.jobs.put((job, name))
