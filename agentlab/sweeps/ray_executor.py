"""``sweep(..., executor="ray")``: each run inside one Ray task; the driver keeps the file and the rules.

Why this shape:

* **A run lives and dies in one worker process.** The task gets the plan entry (task, model,
  setting) and the sweep's shared configuration, builds its own adapter from the ``ModelRef``
  (``create_adapter(ref, max_retries=0)``, or the sweep's ``adapter_factory``), runs the whole tool
  loop there and returns only the portable results row (:func:`agentlab.sweeps.rows.run_plan`, the
  same function the asyncio executor runs). The continuation, the history and every opaque
  reasoning item stay in the worker's memory; nothing opaque is ever pickled into Ray's object
  store (``ProviderReasoningItem`` refuses pickling anyway).
* **One limiter for the cluster.** The per-provider :class:`~agentlab.sweeps.limiter.AdaptiveLimiter`
  logic runs inside one async Ray actor (:class:`_Limiters`): a task takes its run slot there before
  it starts, every model call passes the actor's cool-down gate, and 429s/overloads halve the limit
  for every worker on every node. The driver submits at most ``concurrency`` tasks per provider, so
  a task waits in the actor only while a rate limit has lowered the limit.
* **The driver owns what is durable.** Rows come back to the driver, which records them through the
  scheduler's own path (append + fsync, budget, outage isolation, storage stop, progress), so resume,
  budgets and the results file behave exactly as with asyncio. A task the driver stops waiting for
  (Ctrl-C, a storage stop) is cancelled and writes nothing.
* **Worker processes start empty.** Process-wide state set in the driver does not exist there, so
  the prices the driver would use (``set_price`` overrides included) are sent with the
  configuration and scoped around each run; custom providers registered at runtime must be
  registered by a module the workers import.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ray
import ray.exceptions

from agentlab.adapters._simulated import simulated_base
from agentlab.adapters.base import Adapter, ModelRef, create_adapter
from agentlab.costs.pricing import Price, get_price, prices_override
from agentlab.errors import ConfigError
from agentlab.records.logs import get_logger
from agentlab.sweeps.limiter import AdaptiveLimiter, LimiterStats
from agentlab.sweeps.plan import Plan
from agentlab.sweeps.progress import ProgressDisplay, SweepProgress
from agentlab.sweeps.rows import RunConfig, build_row, iso_now, run_plan
from agentlab.sweeps.schedule import Scheduler, say_stopped
from agentlab.sweeps.store import row_key
from agentlab.sweeps.tasks import Task

__all__ = ["RayExecutor", "prepare"]

log = get_logger(__name__)

DEFAULT_TASK_OPTIONS: dict[str, Any] = {"max_retries": 0}
"""Ray would rerun a task whose worker died (3 times); a rerun run is paid twice, so the sweep
records the crash as a failed row instead (``retry_failed=True`` redoes it). ``ray_options`` can
set it back."""
_STATS_EVERY_S = 0.5


# ---------------------------------------------------------------------- the shared limiter


class _Limiters:
    """The sweep's per-provider limiters in one async actor, so every worker shares them.

    Run slots are leases keyed by a token the driver gives each task: the task releases its own,
    and the driver releases the lease of a task that died or was cancelled (a lease released before
    it was granted is refused when it would be, so a cancelled waiter never holds a slot).
    """

    def __init__(self, concurrency: Mapping[str, int]) -> None:
        self.limiters = {p: AdaptiveLimiter(p, n) for p, n in concurrency.items()}
        self.held: dict[int, str] = {}
        self.revoked: set[int] = set()

    async def acquire(self, provider: str, token: int) -> bool:
        """Wait for a run slot; ``False`` when the driver gave the task up while it waited."""
        lim = self.limiters[provider]
        await lim.acquire()
        if token in self.revoked:
            self.revoked.discard(token)
            await lim.release()
            return False
        self.held[token] = provider
        return True

    async def release(self, token: int) -> None:
        """Free a slot (idempotent per token: the task and the driver may both release it)."""
        provider = self.held.pop(token, None)
        if provider is None:
            self.revoked.add(token)
            return
        await self.limiters[provider].release()

    def cool_down(self, provider: str) -> float:
        """Seconds until ``provider``'s new calls may go (0: now)."""
        return self.limiters[provider].cooling_down_s

    def on_rate_limited(self, provider: str, retry_after: float | None) -> None:
        """A worker's call got a 429/overloaded answer."""
        self.limiters[provider].on_rate_limited(retry_after)

    async def on_success(self, provider: str) -> None:
        """A worker's call completed."""
        await self.limiters[provider].on_success()

    def stats(self) -> dict[str, LimiterStats]:
        """Every provider's figures, for the driver's progress and report."""
        return {p: lim.stats() for p, lim in self.limiters.items()}


_LimiterActor = ray.remote(num_cpus=0)(_Limiters)


class _ActorGate:
    """The run's view of the shared limiter (what ``_GatedAdapter`` calls), one provider's."""

    def __init__(self, actor: Any, provider: str) -> None:
        self.actor = actor
        self.provider = provider

    async def ready(self) -> None:
        while (wait := await self.actor.cool_down.remote(self.provider)) > 0:
            await asyncio.sleep(wait)

    def on_rate_limited(self, retry_after: float | None) -> None:
        self.actor.on_rate_limited.remote(self.provider, retry_after)

    async def on_success(self) -> None:
        self.actor.on_success.remote(self.provider)  # no need to wait for the answer


# ---------------------------------------------------------------------- inside a worker


@dataclass(frozen=True)
class _Shared:
    """What every task of one sweep needs besides its plan entry (put in the object store once)."""

    config: RunConfig
    prices: dict[str, Price]
    """``provider:model`` -> the price the driver resolved (workers do not see ``set_price``)."""


async def _run_in_worker(p: Plan, shared: _Shared, actor: Any, token: int) -> dict[str, Any] | None:
    provider = p.ref.provider
    if not await actor.acquire.remote(provider, token):
        return None  # the driver stopped waiting for this task
    made: list[Adapter] = []

    def build() -> Adapter:
        factory = shared.config.adapter_factory
        a = factory(p.ref) if factory is not None else create_adapter(p.ref, max_retries=0)
        made.append(a)
        return a

    try:
        with prices_override(shared.prices):
            return await run_plan(p, build, _ActorGate(actor, provider), shared.config)
    finally:
        for a in made:  # the adapter (and its client) dies with the run, in this process
            try:
                await a.aclose()
            except Exception:  # pragma: no cover - closing must not lose the row
                log.warning("closing an adapter failed", exc_info=True)
        await actor.release.remote(token)


def _run_task(p: Plan, shared: _Shared, actor: Any, token: int) -> dict[str, Any] | None:
    """The Ray task: one run on a fresh event loop in this worker; only the row comes back."""
    return asyncio.run(_run_in_worker(p, shared, actor, token))


_remote_run = ray.remote(_run_task)


# ---------------------------------------------------------------------- before anything runs


def _check_picklable(what: str, value: object, keys: Sequence[str]) -> None:
    try:
        data = ray.cloudpickle.dumps(value)  # type: ignore[no-untyped-call]  # Ray's vendored cloudpickle
    except Exception as e:
        raise ConfigError(
            f"executor='ray' sends {what} to the worker processes, and it cannot be pickled "
            f"({type(e).__name__}); define it at module level or pass a picklable one"
        ) from None
    _refuse_secrets(what, data, keys)


def _env_keys() -> list[str]:
    """The values of every provider's key variable set here (read once per sweep)."""
    from agentlab.adapters.registry import get_provider, provider_names

    env = (get_provider(n).api_key_env for n in provider_names())
    return [v for name in env if name and len(v := os.environ.get(name, "")) >= 8]


def _refuse_secrets(what: str, data: bytes, keys: Sequence[str]) -> None:
    """Refuse to send an API key through Ray's object store, which spills to local disk.

    What a task is sent is pickled by value (a closure with its constants), lives in the object store
    and, under memory pressure, in Ray's spill files, which nothing cleans up when a cluster dies. A
    key the worker needs belongs in its environment, where ``create_adapter`` reads it.
    """
    from agentlab.neutral.redaction import redact_secrets

    text = data.decode("latin-1")
    if any(k in text for k in keys) or redact_secrets(text) != text:
        raise ConfigError(
            f"executor='ray' would write an API key into Ray's object store (which spills to disk): "
            f"{what} holds one; let the workers read it from their environment instead"
        )


def _resolved_prices(refs: Sequence[ModelRef]) -> dict[str, Price]:
    out: dict[str, Price] = {}
    for r in refs:
        price = get_price(r.provider, r.model)
        if price is not None:
            out[f"{r.provider}:{simulated_base(r.model)}"] = price
    return out


def prepare(
    config: RunConfig, refs: Sequence[ModelRef], tasks: Sequence[Task], ray_options: Mapping[str, Any] | None
) -> RayExecutor:
    """Check everything a Ray sweep sends to its workers; start nothing (no cluster yet)."""
    if ray_options is not None and (
        not isinstance(ray_options, Mapping) or not all(isinstance(k, str) for k in ray_options)
    ):
        raise ConfigError(f"ray_options must be a dict of Ray task options, got {type(ray_options).__name__}")
    options = {**DEFAULT_TASK_OPTIONS, **(ray_options or {})}
    try:
        remote = _remote_run.options(**options)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"ray_options: {e}") from None
    keys = _env_keys()
    for t in config.tools:
        _check_picklable(f"tool {t.name!r}", t, keys)
    if config.adapter_factory is not None:
        _check_picklable("adapter_factory", config.adapter_factory, keys)
    if config.output_type is not None:
        _check_picklable("output_type", config.output_type, keys)
    for task in tasks:
        _check_picklable(f"task {task.id!r}", task, keys)
    return RayExecutor(_Shared(config, _resolved_prices(refs)), remote)


# ---------------------------------------------------------------------- the driver


@dataclass
class _InFlight:
    plan: Plan
    ref: Any
    token: int
    at: str
    """When the driver submitted it (ISO), for the row of a task Ray lost."""
    t0: float


class RayExecutor:
    """Submits runs as Ray tasks within the scheduler's rules and records what comes back."""

    def __init__(self, shared: _Shared, remote: Any) -> None:
        self.shared = shared
        self.remote = remote

    async def execute(
        self,
        sched: Scheduler,
        display: ProgressDisplay | None,
        on_progress: Callable[[SweepProgress], Any] | None,
    ) -> int:
        """Run the queued plan on the cluster; returns the runs cancelled in flight by a storage stop.

        Connects with ``ray.init()`` when Ray is not initialized yet (``RAY_ADDRESS`` or a local
        cluster, Ray's own rule); a cluster the caller started is used as is and left running.
        """
        try:
            if not ray.is_initialized():
                ray.init()
            actor: Any = _LimiterActor.remote(sched.concurrency)
        except BaseException:
            sched.writer.close()  # as the asyncio executor does whatever happens
            raise
        driver = _Driver(sched, actor, self.remote.remote, self.shared, display, on_progress)
        finished_ok = False
        try:
            cancelled = await driver.run()
            finished_ok = sched.st.storage is None
            return cancelled
        finally:
            driver.cancel_all()
            sched.writer.close()
            await driver.refresh_stats(force=True)
            ray.kill(actor)
            if not finished_ok:
                say_stopped(sched, display)


class _Driver:
    """The submit / wait / record loop of one Ray sweep (state on the driver's event loop only)."""

    def __init__(
        self,
        sched: Scheduler,
        actor: Any,
        submit: Callable[..., Any],
        shared: _Shared,
        display: ProgressDisplay | None,
        on_progress: Callable[[SweepProgress], Any] | None,
    ) -> None:
        self.sched, self.actor, self.submit = sched, actor, submit
        self.shared_ref: Any | None = None
        self.shared = shared
        self.display, self.on_progress = display, on_progress
        self.inflight: dict[asyncio.Future[Any], _InFlight] = {}
        self.per_provider = dict.fromkeys(sched.concurrency, 0)
        self.tokens = itertools.count()
        self.stats_at = 0.0

    def fill(self) -> int:
        """Submit queued runs while each provider has room and the budget guard allows; returns how many."""
        sched, st, n = self.sched, self.sched.st, 0
        for prov, q in sched.queues.items():
            while q and self.per_provider[prov] < sched.concurrency[prov]:
                if st.stops(prov) or sched.would_overshoot():
                    break
                if self.shared_ref is None:  # put once, on the first submission
                    self.shared_ref = ray.put(self.shared)
                p = q.popleft()
                token = next(self.tokens)
                ref = self.submit(p, self.shared_ref, self.actor, token)
                job = _InFlight(p, ref, token, iso_now(), time.perf_counter())
                self.inflight[asyncio.wrap_future(ref.future())] = job
                self.per_provider[prov] += 1
                st.running += 1
                n += 1
        return n

    async def run(self) -> int:
        """Until nothing is queued or in flight; returns the runs in flight at a storage stop."""
        sched = self.sched
        if self.display is not None:
            self.display.update(sched.snapshot())
        while True:
            if self.fill() and self.display is not None:
                self.display.update(sched.snapshot())
            if not self.inflight:
                return 0
            done, _ = await asyncio.wait(self.inflight, return_when=asyncio.FIRST_COMPLETED)
            for fut in done:
                self.land(fut)
                if sched.st.storage is not None:
                    return len(self.inflight)
                await self.refresh_stats()
                snap = sched.snapshot()
                if self.display is not None:
                    self.display.update(snap)
                if self.on_progress is not None:
                    self.on_progress(snap)

    def land(self, fut: asyncio.Future[Any]) -> None:
        """Record one finished task: its row, or a failed row when Ray itself lost the task."""
        job = self.inflight.pop(fut)
        p = job.plan
        self.per_provider[p.ref.provider] -= 1
        self.sched.st.running -= 1
        try:
            row = fut.result()
        except ray.exceptions.RayError as e:  # a crashed or lost worker: the run failed, say how
            self.actor.release.remote(job.token)
            row = _lost_row(job, e, self.sched.config)
        if not isinstance(row, dict) or row_key(row) != p.key:
            raise RuntimeError(f"a Ray task returned no row for {p.key}")  # pragma: no cover - a bug
        self.sched.record(p, row)

    async def refresh_stats(self, *, force: bool = False) -> None:
        """Pull the actor's limiter figures for progress and the report (at most every 0.5 s)."""
        now = time.monotonic()
        if not force and now - self.stats_at < _STATS_EVERY_S:
            return
        self.stats_at = now
        try:
            self.sched.remote_stats = await self.actor.stats.remote()
        except ray.exceptions.RayError:  # pragma: no cover - the figures are informative only
            log.warning("could not read the shared limiter's figures", exc_info=True)

    def cancel_all(self) -> None:
        """Give up every task still in flight: cancel it and release its slot; it records nothing."""
        for fut, job in self.inflight.items():
            fut.cancel()
            ray.cancel(job.ref)
            self.actor.release.remote(job.token)
        self.sched.st.running -= len(self.inflight)
        self.inflight.clear()


def _lost_row(job: _InFlight, e: ray.exceptions.RayError, config: RunConfig) -> dict[str, Any]:
    """A failed row when Ray lost the task (worker crash, node lost, out of memory).

    It names Ray's error class only: the error's text holds the remote traceback, whose frames
    can show any value the run touched.
    """
    p = job.plan
    row = build_row(p, None, None, time.perf_counter() - job.t0, job.at, config.fingerprints[p.setting.name])
    row.update(
        error_type=type(e).__name__,
        error=f"the Ray task of this run ended without a row ({type(e).__name__}); "
        "retry_failed=True runs it again",
    )
    return row
