"""Shared state of the simulated batch APIs: uploaded files, batch jobs and their compressed clock.

Why one store with a wall-clock schedule: a real batch takes up to 24 h; tests and sweep drivers
need the same state machine in well under a second, deterministically. Every job is answered in
full when it is created (the same handlers the live endpoints use); what the clock decides is only
which state a job *shows* at a given moment, so polling sees validating -> in_progress ->
finalizing -> ended in ``seconds`` of wall time. Knobs (attributes, or environment variables for
the loopback server) make chosen requests, or whole batches, expire.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

#: Where each phase ends, as a fraction of ``BatchStore.seconds``.
VALIDATING_END = 0.1
IN_PROGRESS_END = 0.8


def _env_seconds() -> float:
    raw = os.environ.get("AGENTLAB_SIM_BATCH_SECONDS", "0.5")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"AGENTLAB_SIM_BATCH_SECONDS must be a number of seconds, got {raw!r}") from None
    if value < 0:
        raise ValueError("AGENTLAB_SIM_BATCH_SECONDS must be >= 0")
    return value


def _env_ids() -> set[str]:
    raw = os.environ.get("AGENTLAB_SIM_BATCH_EXPIRE_IDS", "")
    return {p.strip() for p in raw.split(",") if p.strip()}


@dataclass
class Job:
    """One batch job: its wire object (provider-shaped), per-request results and timing."""

    id: str
    created: float
    obj: dict[str, Any]
    #: One ``(kind, custom_id, reply)`` per request, in file order; kind is "ok" or "error" (the
    #: live endpoint's answer); expiry and cancellation are decided when the job ends (``outcome``).
    results: list[tuple[str, str, dict[str, Any]]]
    cancelled_at: float | None = None
    expire_all: bool = False
    #: Which provider's API made it (``openai``, ``anthropic``, ``gemini``): the store is shared, and
    #: each API lists and finds only its own jobs, as a real host only knows its own.
    api: str = "openai"
    #: The ended job's results as served, for APIs that serve them from the job itself
    #: (Anthropic's ``results_url``); OpenAI's output files live in ``BatchStore.files``.
    output: bytes | None = None
    #: Scheme and host the creating client called (``http://127.0.0.1:8765``), for the absolute
    #: URLs a job shows (Anthropic's ``results_url``).
    base_url: str = ""
    #: Why the whole job fails when it ends (a Gemini input file with a line it cannot read), or
    #: ``None``; such a job has no per-request results.
    failure: str | None = None


@dataclass
class BatchStore:
    """Files and jobs of one simulator, and the clock and fault knobs of its batches. Thread-safe."""

    seconds: float = field(default_factory=_env_seconds)
    expire_ids: set[str] = field(default_factory=_env_ids)
    expire_all: bool = field(default_factory=lambda: os.environ.get("AGENTLAB_SIM_BATCH_EXPIRE_ALL") == "1")
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    #: Gemini resumable upload sessions begun but not finalized: upload id -> the file to create.
    uploads: dict[str, dict[str, Any]] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)  # re-entered by _finish -> next_id
    _n: int = 0

    def next_id(self, prefix: str) -> str:
        """A fresh, ordered id (``file-...``, ``batch_...``, ``msgbatch_...``, Gemini's ``batches/...``)."""
        with self.lock:
            self._n += 1
            return f"{prefix}{self._n:08d}{os.urandom(6).hex()}"

    def phase(self, job: Job, now: float | None = None) -> str:
        """``validating``, ``in_progress``, ``finalizing``, ``cancelling`` or ``ended``."""
        t = time.time() if now is None else now
        total = self.seconds
        if job.cancelled_at is not None:
            return "ended" if t - job.cancelled_at >= total * VALIDATING_END else "cancelling"
        elapsed = t - job.created
        if elapsed >= total:
            return "ended"
        if elapsed >= total * IN_PROGRESS_END:
            return "finalizing"
        if elapsed >= total * VALIDATING_END:
            return "in_progress"
        return "validating"

    def progress(self, job: Job, now: float | None = None) -> float:
        """Fraction of the job's requests done by ``now`` (by cancel time for a cancelled job)."""
        t = job.cancelled_at if job.cancelled_at is not None else (time.time() if now is None else now)
        span = self.seconds * (IN_PROGRESS_END - VALIDATING_END)
        if span <= 0:
            return 1.0
        return min(1.0, max(0.0, (t - job.created - self.seconds * VALIDATING_END) / span))

    def outcome(self, job: Job, index: int, kind: str, custom_id: str) -> str:
        """The final kind of request ``index``: its own, or expired / canceled by the knobs or a cancel."""
        if job.expire_all or custom_id in self.expire_ids:
            return "expired"
        if job.cancelled_at is not None and index >= int(self.progress(job) * len(job.results)):
            return "canceled"
        return kind
