"""What the three simulated batch APIs' routes share: the store, the live dispatch, the clock's end.

Why one module: the OpenAI, Anthropic and Gemini batch routes differ in their wire shapes (objects,
states, pagination, errors) but not in how they hold jobs or answer a line: every request of a batch
is answered at create time by the live endpoint's dispatch (:func:`agentlab.sim.app.handle`, the
very code a live call runs), jobs are listed newest first, and when the clock says a batch ended its
results are built exactly once, even with two pollers at once. Those three steps were written once
per API; here they are written once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from agentlab.sim.app import QUERY_HEADER, handle
from agentlab.sim.batch.store import BatchStore, Job
from agentlab.sim.errors import SimError
from agentlab.sim.protocols import RouteCall

__all__ = [
    "add_job",
    "cancel_once",
    "finish_once",
    "forwarded_headers",
    "live_answer",
    "newest_first",
    "query",
    "store",
]


def store(call: RouteCall) -> BatchStore:
    """The simulator's one batch store (files and jobs of all three APIs)."""
    return call.sim.batches


def query(call: RouteCall) -> dict[str, str]:
    """The request's query parameters, the last value of each (the app passes the raw query on)."""
    return {k: v[-1] for k, v in parse_qs(call.headers.get(QUERY_HEADER, "")).items()}


def forwarded_headers(call: RouteCall) -> dict[str, str]:
    """The batch request's own headers for each line's live call, as JSON (no pseudo-headers, no length)."""
    headers = {k: v for k, v in call.headers.items() if not k.startswith(":") and k != "content-length"}
    headers["content-type"] = "application/json"
    return headers


def live_answer(
    call: RouteCall, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], dict[str, Any]]:
    """``(status, reply headers, JSON body)`` of ``POST path`` answered by the live endpoint, not streamed."""
    sent = forwarded_headers(call) if headers is None else headers
    status, reply_headers, chunks = handle(call.sim, "POST", path, sent, json.dumps(body).encode())
    return status, reply_headers, json.loads(b"".join(c for c in chunks if isinstance(c, bytes)) or b"{}")


def job_of(call: RouteCall, job_id: str, api: str, missing: SimError) -> Job:
    """The job ``job_id`` of ``api``, else raise ``missing`` (another API's job is not found here either)."""
    job = store(call).jobs.get(job_id)
    if job is None or job.api != api:
        raise missing
    return job


def add_job(batches: BatchStore, job: Job) -> None:
    """Keep a created job (under the store's lock: pollers may be listing)."""
    with batches.lock:
        batches.jobs[job.id] = job


def newest_first(batches: BatchStore, api: str) -> list[Job]:
    """One API's jobs, newest first (as every list route shows them)."""
    with batches.lock:
        return [j for j in reversed(list(batches.jobs.values())) if j.api == api]


def finish_once(
    batches: BatchStore,
    job: Job,
    phase: str,
    ended: Callable[[], bool],
    finish: Callable[[BatchStore, Job], None],
) -> None:
    """When the clock's ``phase`` is ``ended``, build the job's results once.

    ``ended()`` is checked again under the store's lock: two pollers at once see the same phase.
    """
    if phase == "ended":
        with batches.lock:
            if not ended():  # two pollers at once: the results are built once
                finish(batches, job)


def cancel_once(batches: BatchStore, job: Job) -> float:
    """Mark ``job`` cancelled now, unless it already is (a second cancel does not restart it)."""
    with batches.lock:
        if job.cancelled_at is None:
            job.cancelled_at = time.time()
        return job.cancelled_at
