"""The scheduler of a sweep.

Per-provider limits, the budget guard, outage isolation and the storage stop, around ``run_plan``;
``execute`` drives it on this process's event loop.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentlab.adapters.base import Adapter, ModelRef, create_adapter
from agentlab.errors import (
    ConfigError,
    StorageError,
)
from agentlab.neutral._inputs import int_at_least
from agentlab.records.logs import get_logger
from agentlab.sweeps.limiter import AdaptiveLimiter, LimiterStats
from agentlab.sweeps.plan import Finished, Plan, spend
from agentlab.sweeps.progress import ProgressDisplay, SweepProgress
from agentlab.sweeps.rows import RunConfig, run_plan
from agentlab.sweeps.store import ResultsFile

__all__ = [
    "DONE",
    "Budget",
    "Scheduler",
    "check_limits",
    "concurrency_limits",
    "execute",
    "say_stopped",
    "stopped_on_storage",
]

log = get_logger("agentlab.sweeps.runner")


def concurrency_limits(value: int | Mapping[str, int], providers: Iterable[str]) -> dict[str, int]:
    """Runs in flight per provider, checked once (an int for all, or one per provider)."""
    out: dict[str, int] = {}
    for p in providers:
        v = value.get(p, 4) if isinstance(value, Mapping) else value
        out[p] = int_at_least(v, f"concurrency for {p}", 1)
    return out


DONE = object()


@dataclass
class _State:
    """Counters of one sweep call (mutated on the event loop only)."""

    done: int = 0
    failed: int = 0
    solved: int = 0
    running: int = 0
    usd: float = 0.0
    tokens: int = 0
    budget: str | None = None
    down: dict[str, str] = field(default_factory=dict)
    consecutive: dict[str, int] = field(default_factory=dict)
    storage: StorageError | None = None
    """Set when a row could not be written: the sweep stops (see :func:`stopped_on_storage`)."""
    unwritten: int = 0

    def stops(self, provider: str) -> bool:
        """No new run of ``provider`` may start: budget reached, provider down, or file unwritable."""
        return bool(self.budget) or provider in self.down or self.storage is not None


def stopped_on_storage(e: StorageError, st: _State, cancelled: int, not_started: int) -> StorageError:
    """The error a sweep raises when its results file could not take a row, with what happened."""
    return StorageError(
        f"{e}; sweep stopped: {st.done} run(s) recorded in this call, {st.unwritten} finished run(s) "
        f"could not be recorded, {cancelled} in flight were cancelled and {not_started} not started; "
        "call sweep again with the same results file to resume once it can be written (finished rows "
        "are kept, the rest is run then)",
        path=e.path,
        errno=e.errno,
    )


def check_limits(
    repeats: object,
    budget_usd: object,
    budget_tokens: object,
    max_consecutive_failures: object,
    retries: object,
) -> None:
    """The sweep's counts and budgets (bools are not counts; a NaN budget would never stop anything)."""
    int_at_least(repeats, "repeats", 1)
    if budget_usd is not None and (
        isinstance(budget_usd, bool)
        or not isinstance(budget_usd, int | float)
        or not math.isfinite(budget_usd)
        or budget_usd < 0
    ):
        raise ConfigError(f"budget_usd must be a number >= 0, got {budget_usd!r}")
    if budget_tokens is not None:
        int_at_least(budget_tokens, "budget_tokens", 0)
    if max_consecutive_failures is not None:
        int_at_least(max_consecutive_failures, "max_consecutive_failures", 1, note=" or None")
    int_at_least(retries, "retries", 0)


@dataclass(frozen=True)
class Budget:
    """The budget guard's two rules as pure functions of the spend figures (no sweep state inside)."""

    usd: float | None
    tokens: int | None

    def reached(self, usd: float, tokens: int) -> str | None:
        """Why no new run may start (a limit reached by the file's total spend), or ``None``."""
        if self.usd is not None and usd >= self.usd:
            return f"budget reached: ${usd:.4f} spent of budget_usd={self.usd}"
        if self.tokens is not None and tokens >= self.tokens:
            return f"budget reached: {tokens:,} tokens used of budget_tokens={self.tokens:,}"
        return None

    def would_overshoot(
        self, *, running: int, done: int, usd: float, tokens: int, base_usd: float, base_tokens: int
    ) -> bool:
        """Starting one more run now would likely cross a budget once the runs in flight finish.

        Projected from this call's average run (``(usd - base_usd) / done``, likewise tokens; the base
        is what the file held before this call); with nothing in flight a run still starts while the
        budget is not reached, so a sweep never stalls below its limit.
        """
        if running == 0 or done == 0:
            return False
        n = running + 1
        if self.usd is not None and usd + n * (usd - base_usd) / done > self.usd:
            return True
        return self.tokens is not None and tokens + n * (tokens - base_tokens) / done > self.tokens


class Scheduler:
    """The shared mutable state of one sweep call, as explicit fields, and the steps that change it.

    Why one object: workers of every provider read and write the same counters (budget, provider
    down, storage stop), and the progress loop reads them; keeping them here, mutated on the event
    loop only, makes each rule ("may this run start", "record a result") one method to read.
    """

    def __init__(
        self,
        *,
        plan_size: int,
        from_file: int,
        todo: Sequence[Plan],
        concurrency: Mapping[str, int],
        finished: Finished,
        budget: Budget,
        writer: ResultsFile,
        config: RunConfig,
        t_start: float,
    ) -> None:
        self.plan_size = plan_size
        self.from_file = from_file
        self.concurrency = dict(concurrency)
        self.budget = budget
        self.base_usd, self.base_tokens = finished.usd, finished.tokens
        self.writer = writer
        self.config = config
        self.t_start = t_start
        self.limiters = {p: AdaptiveLimiter(p, n) for p, n in concurrency.items()}
        self.queues: dict[str, collections.deque[Plan]] = {p: collections.deque() for p in concurrency}
        for p in todo:
            self.queues[p.ref.provider].append(p)
        self.adapters: dict[str, Adapter] = {}
        self.events: asyncio.Queue[Any] = asyncio.Queue()
        """``None`` when a run starts, a ``SweepProgress`` when one was recorded, ``DONE`` per worker."""
        self.st = _State(usd=finished.usd, tokens=finished.tokens, consecutive=dict.fromkeys(concurrency, 0))
        self.st.budget = self.budget.reached(self.st.usd, self.st.tokens)
        self.remote_stats: dict[str, LimiterStats] | None = None
        """Set by the Ray executor: its limiters live in a shared actor, not in these objects."""

    # -------------------------------------------------------------- progress

    def not_started(self) -> int:
        """Runs still queued (not started in this call)."""
        return sum(len(q) for q in self.queues.values())

    def limiter_stats(self) -> dict[str, LimiterStats]:
        """The limiters' figures: the local ones, or the last the Ray executor's shared actor sent."""
        if self.remote_stats is not None:
            return dict(self.remote_stats)
        return {p: lim.stats() for p, lim in self.limiters.items()}

    def snapshot(self, message: str | None = None) -> SweepProgress:
        """The progress figures now (runs still queued count as not started only once stopped)."""
        st, stats = self.st, self.limiter_stats()
        return SweepProgress(
            total=self.plan_size,
            from_file=self.from_file,
            done=st.done,
            running=st.running,
            failed=st.failed,
            solved=st.solved,
            not_started=self.not_started() if (st.budget or st.down) else 0,
            cost_usd=st.usd,
            tokens=st.tokens,
            elapsed_s=time.monotonic() - self.t_start,
            rate_limited=sum(lim.rate_limited for lim in stats.values()),
            message=message,
            limits={p: lim.limit for p, lim in stats.items()},
        )

    # -------------------------------------------------------------- may this run start

    def would_overshoot(self) -> bool:
        """Whether the runs in flight, at this call's average cost, would cross the budget."""
        st = self.st
        return self.budget.would_overshoot(
            running=st.running,
            done=st.done,
            usd=st.usd,
            tokens=st.tokens,
            base_usd=self.base_usd,
            base_tokens=self.base_tokens,
        )

    # -------------------------------------------------------------- one run

    def adapter_for(self, ref: ModelRef) -> Adapter:
        """One shared adapter per model (one client and connection pool), built on first use."""
        a = self.adapters.get(str(ref))
        if a is None:
            factory = self.config.adapter_factory
            a = factory(ref) if factory is not None else create_adapter(ref, max_retries=0)
            self.adapters[str(ref)] = a
        return a

    async def run_one(self, p: Plan) -> dict[str, Any]:
        """Run one plan entry to its results row on the model's shared adapter."""
        return await run_plan(p, lambda: self.adapter_for(p.ref), self.limiters[p.ref.provider], self.config)

    # -------------------------------------------------------------- record a result

    def record(self, p: Plan, row: dict[str, Any]) -> None:
        """Append the row, then count it; a row the file cannot take stops the sweep instead."""
        st = self.st
        try:
            self.writer.append(row)
        except StorageError as e:  # the file is as it was; stop spending on rows it cannot keep
            st.storage = st.storage or e
            st.unwritten += 1
            return
        c, t = spend(row)
        st.usd += c
        st.tokens += t
        st.done += 1
        if row["status"] == "failed":
            st.failed += 1
            self._count_failure(p.ref.provider, row)
        else:
            st.consecutive[p.ref.provider] = 0
        if row.get("success") is True:
            st.solved += 1
        if st.budget is None:
            st.budget = self.budget.reached(st.usd, st.tokens)

    def _count_failure(self, prov: str, row: Mapping[str, Any]) -> None:
        """After ``max_consecutive_failures`` in a row, mark only this provider down (an outage)."""
        st, limit = self.st, self.config.max_consecutive_failures
        st.consecutive[prov] += 1
        n = st.consecutive[prov]
        if limit is not None and n >= limit and prov not in st.down:
            st.down[prov] = (
                f"{prov}: {n} runs in a row failed (last: {row.get('error_type')}: "
                f"{(row.get('error') or '')[:200]}); no more {prov} runs started in this call"
            )
            log.warning("%s", st.down[prov])

    # -------------------------------------------------------------- workers

    async def worker(self, provider: str) -> None:
        """Take this provider's queued runs one at a time, within its limiter and the budget guard."""
        st, lim, q = self.st, self.limiters[provider], self.queues[provider]
        try:
            while q:
                if st.stops(provider):
                    return
                if self.would_overshoot():
                    await asyncio.sleep(0.01)  # let the runs in flight land, then decide again
                    continue
                await lim.acquire()
                try:
                    if not q or st.stops(provider):
                        return
                    p = q.popleft()
                    st.running += 1
                    self.events.put_nowait(None)
                    try:
                        row = await self.run_one(p)
                    finally:
                        st.running -= 1
                    self.record(p, row)
                    snap_after = self.snapshot()
                finally:
                    await lim.release()
                self.events.put_nowait(snap_after)  # the state right after this run was recorded
                # A run on an in-process simulator never suspends, so without this the worker would do
                # its whole queue in one step: no progress, on_progress or Ctrl-C until the very end.
                await asyncio.sleep(0)
        finally:
            self.events.put_nowait(DONE)

    def start_workers(self) -> list[asyncio.Task[None]]:
        """``concurrency`` workers per provider that has queued runs (the limiter may admit fewer).

        Every model's adapter is built first: an SDK import holds the event loop for seconds, and
        built while another run's call is in flight it would be counted in that call's latency. A
        model whose adapter fails to build is left to its runs, which record the error themselves.
        """
        for q in self.queues.values():
            for p in q:
                with contextlib.suppress(Exception):
                    self.adapter_for(p.ref)
        return [
            asyncio.create_task(self.worker(prov), name=f"agentlab-sweep-{prov}-{i}")
            for prov, n in self.concurrency.items()
            if self.queues[prov]
            for i in range(n)
        ]

    async def close_adapters(self) -> None:
        """Close the shared adapters the sweep built; a failing close never masks the outcome."""
        for a in self.adapters.values():
            try:
                await a.aclose()
            except Exception:  # pragma: no cover - closing must not mask the sweep's outcome
                log.warning("closing an adapter failed", exc_info=True)


async def _pump(
    sched: Scheduler,
    workers: Sequence[asyncio.Task[None]],
    display: ProgressDisplay | None,
    on_progress: Callable[[SweepProgress], Any] | None,
) -> int:
    """Relay worker events to the display and ``on_progress`` until every worker is done.

    Returns how many runs were in flight when a storage error stopped the sweep (they are cancelled
    by the caller). An exception from ``on_progress`` propagates and stops the sweep.
    """
    alive = len(workers)
    if display is not None:
        display.update(sched.snapshot())
    while alive:
        if sched.st.storage is not None:
            return sched.st.running
        item = await sched.events.get()
        if item is DONE:
            alive -= 1
            continue
        if display is not None:
            display.update(sched.snapshot())
        if item is not None and on_progress is not None:
            on_progress(item)
    if sched.st.storage is None:
        for w in workers:
            w.result()  # a bug in the sweep itself surfaces here, not silently
    return 0


async def execute(
    sched: Scheduler,
    display: ProgressDisplay | None,
    on_progress: Callable[[SweepProgress], Any] | None,
) -> int:
    """Run the workers to the end; whatever happens, cancel them, close the file and the adapters.

    An interrupted or storage-stopped sweep leaves a final progress line saying finished runs are
    saved. Returns the count of runs cancelled in flight by a storage stop.
    """
    workers = sched.start_workers()
    finished_ok = False
    cancelled = 0
    try:
        cancelled = await _pump(sched, workers, display, on_progress)
        finished_ok = sched.st.storage is None
    finally:
        for w in workers:
            w.cancel()
        if workers:
            await asyncio.gather(*workers, return_exceptions=True)
        sched.writer.close()
        await sched.close_adapters()
        if not finished_ok:
            say_stopped(sched, display)
    return cancelled


def say_stopped(sched: Scheduler, display: ProgressDisplay | None) -> None:
    """The final progress line of an interrupted or storage-stopped sweep (either executor)."""
    if display is not None:
        why = "results file not writable" if sched.st.storage else "interrupted"
        display.update(sched.snapshot(f"{why}: finished runs are saved; call again to resume"), final=True)
