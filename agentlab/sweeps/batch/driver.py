"""``sweep(..., backend="batch")``: every run of the sweep advances one step per batch round.

The runs are ordinary ``Run`` objects held in this process (their continuations with them: opaque
items between rounds live in memory only, never in a file); each model's calls go through a
:class:`~agentlab.sweeps.batch.adapter.BatchedAdapter` into its :class:`RoundQueue`. Up to
``batch_runs`` runs per provider are in flight at once; all of them are admitted before the first
round is submitted, so round 1 holds every admitted run's first call.

Durable state: the results file (one row per finished run, as in every sweep), the manifest of
batch ids per round and the journal of portable checkpoints (:mod:`.manifest`). A restarted driver
cancels the batches the dead one left running, deletes at the provider every batch the manifest does
not show deleted (cancelled, failed or abandoned ones too), then resumes each unfinished run from its last
portable checkpoint: the opaque items of that loop died with the process, so the run continues the
way every provider documents for a loop resumed from portable items (the adapters' released-
continuation path), and says so with a ``batch_resumed`` diagnostic and the row's ``resumed_steps``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentlab.adapters.base import Adapter, ModelRef, create_adapter
from agentlab.adapters.batch_api import BatchAPI
from agentlab.adapters.registry import get_provider
from agentlab.errors import ConfigError
from agentlab.loop.checkpoint import Checkpoint
from agentlab.loop.runner import Run, RunStart
from agentlab.neutral._inputs import int_at_least
from agentlab.neutral.diagnostics import diagnostic
from agentlab.neutral.items import PortableItem
from agentlab.records.logs import get_logger
from agentlab.sweeps.batch.adapter import BatchedAdapter
from agentlab.sweeps.batch.manifest import Journal, Manifest, journal_path, manifest_path
from agentlab.sweeps.batch.rounds import Intent, Poll, RoundQueue, Submitted, discard
from agentlab.sweeps.plan import Plan
from agentlab.sweeps.progress import SweepProgress
from agentlab.sweeps.rows import run_plan
from agentlab.sweeps.schedule import DONE, Scheduler
from agentlab.sweeps.store import RunKey

__all__ = ["BatchOptions", "BatchScheduler", "batch_api_for", "batch_options"]

log = get_logger(__name__)


@dataclass(frozen=True)
class BatchOptions:
    """The batch backend's knobs (``sweep(..., backend="batch", batch={...})``)."""

    runs: int = 10_000
    """Runs in flight per provider (each holds its continuation in this process's memory)."""
    poll_s: float = Poll.poll_s  # the polling defaults live with the poller
    poll_max_s: float = Poll.poll_max_s


def batch_options(value: BatchOptions | Mapping[str, Any] | None) -> BatchOptions:
    """The checked options (``ConfigError`` naming the bad one, before anything runs)."""
    if value is None:
        return BatchOptions()
    if isinstance(value, BatchOptions):
        opts = value
    elif isinstance(value, Mapping):
        unknown = sorted(set(value) - {"runs", "poll_s", "poll_max_s"})
        if unknown:
            raise ConfigError(f"batch: unknown option(s) {unknown}; known: runs, poll_s, poll_max_s")
        opts = BatchOptions(**dict(value))
    else:
        raise ConfigError(f"batch must be a dict of options or BatchOptions, got {type(value).__name__}")
    int_at_least(opts.runs, "batch runs", 1)
    for name in ("poll_s", "poll_max_s"):
        v = getattr(opts, name)
        if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
            raise ConfigError(f"batch {name} must be a number of seconds > 0, got {v!r}")
    return opts


def batch_api_for(adapter: Adapter) -> BatchAPI:
    """The provider's batch API on ``adapter``'s client; ``ConfigError`` for a provider without one."""
    spec = get_provider(adapter.provider)
    cls = spec.batch_class()
    if cls is None:
        raise ConfigError(f"{spec.label} has no batch API in agentlab; run it with backend='asyncio'")
    api: BatchAPI = cls(adapter)
    return api


class _Resumed:
    """The session link of a run resumed from its journaled portable checkpoint."""

    def __init__(self, cp: Checkpoint, system: str | None) -> None:
        self._cp = cp
        self._system = system

    @property
    def system(self) -> str | None:
        return self._system

    @property
    def history(self) -> tuple[PortableItem, ...]:
        return self._cp.history

    def begin_run(self, run: Run) -> RunStart:
        note = diagnostic(
            "batch_resumed",
            f"the batch driver restarted: this run resumes after {self._cp.step} step(s) from portable "
            "items only (its opaque reasoning items were held by the process that died)",
        )
        return RunStart(history=self._cp.history, notices=(note,))

    def abandon_run(self, run: Run) -> None:
        """Nothing to give back: the link belongs to this one run."""

    def end_run(self, run: Run, held: int) -> None:
        """The results row records the run; the journal already has its portable steps."""


class BatchScheduler(Scheduler):
    """The sweep scheduler with batched adapters and one dispatcher per provider."""

    def __init__(
        self,
        *,
        options: BatchOptions,
        manifest: Manifest,
        journal: Journal,
        resumed: Mapping[RunKey, Checkpoint],
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.options = options
        self.manifest = manifest
        self.journal = journal
        self.resumed = dict(resumed)
        self.round_queues: dict[str, RoundQueue] = {}
        self.batched: dict[str, BatchedAdapter] = {}
        self.live: dict[str, tuple[RunKey, Run]] = {}
        """run id -> (key, run) of the runs in flight (the journal and manifest read them)."""

    # -------------------------------------------------------------- adapters and rounds

    def adapter_for(self, ref: ModelRef) -> Adapter:
        """The model's batched adapter (one per model: one SDK client, one round queue)."""
        b = self.batched.get(str(ref))
        if b is None:
            factory = self.config.adapter_factory
            inner = factory(ref) if factory is not None else create_adapter(ref)
            self.adapters[str(ref)] = inner  # closed by close_adapters
            api = batch_api_for(inner)
            queue = RoundQueue(
                api,
                str(ref),
                Poll(self.options.poll_s, self.options.poll_max_s),
                on_intent=self._intent,
                on_void=self.manifest.void,
                on_submitted=self._submitted,
                on_ended=self.manifest.ended,
                on_deleted=self.manifest.deleted,
            )
            self.round_queues[str(ref)] = queue
            b = self.batched[str(ref)] = BatchedAdapter(inner, api, queue)
        return b

    def _keys(self, custom_ids: Sequence[str]) -> dict[str, RunKey]:
        keys: dict[str, RunKey] = {}
        for cid in custom_ids:
            entry = self.live.get(cid.rsplit("_", 1)[0])
            if entry is not None:
                keys[cid] = entry[0]
        return keys

    def _intent(self, i: Intent) -> None:
        """Manifest the batch about to be created (before it is: write-ahead)."""
        self.manifest.intent(i, self._keys(i.custom_ids))

    def _submitted(self, s: Submitted) -> None:
        """Manifest the batch, then journal each run's portable checkpoint as of this request."""
        self.manifest.submitted(s, self._keys(s.custom_ids))
        for cid in s.custom_ids:
            entry = self.live.get(cid.rsplit("_", 1)[0])
            if entry is not None:
                self.journal.record(entry[0], entry[1].checkpoint)

    # -------------------------------------------------------------- one run

    async def run_one(self, p: Plan) -> dict[str, Any]:
        """One run to its row through ``run_plan``, resumed from its journaled checkpoint after a restart."""
        cp = self.resumed.get(p.key)
        batched = self.adapter_for(p.ref)  # built by the dispatcher already, before the run entered
        queue = self.round_queues[str(p.ref)]
        seen: list[Run] = []

        def track(run: Run) -> None:
            seen.append(run)
            self.live[run.run_id] = (p.key, run)

        try:
            row = await run_plan(
                p,
                lambda: batched,
                self.limiters[p.ref.provider],
                replace(self.config, retry_delay=0.0),  # the next round is the delay
                resume=(_Resumed(cp, p.setting.system), cp.step) if cp is not None else None,
                on_run=track,
            )
        finally:
            for run in seen:
                self.live.pop(run.run_id, None)
            queue.leave()
        row.update(backend="batch", pricing_tier="batch", resumed_steps=cp.step if cp is not None else None)
        if cp is not None and isinstance(row.get("steps"), int):
            row["steps"] += cp.step
        return row

    # -------------------------------------------------------------- dispatch

    def _admit(self, provider: str, in_flight: int) -> bool:
        if not self.queues[provider] or self.st.stops(provider):
            return False
        return in_flight < self.concurrency[provider] and not self.would_overshoot()

    async def _finish(self, p: Plan) -> tuple[Plan, dict[str, Any]]:
        try:
            return p, await self.run_one(p)
        finally:
            self.st.running -= 1

    async def worker(self, provider: str) -> None:
        """Admit runs up to the limit (all before the first round goes out), record them as they end."""
        q, in_flight = self.queues[provider], set[asyncio.Task[tuple[Plan, dict[str, Any]]]]()
        try:
            while True:
                while self._admit(provider, len(in_flight)):
                    p = q.popleft()
                    self.adapter_for(p.ref)
                    self.round_queues[str(p.ref)].enter()  # before any run can call: round 1 holds all
                    self.st.running += 1
                    in_flight.add(asyncio.get_running_loop().create_task(self._finish(p)))
                if not in_flight:
                    return
                self.events.put_nowait(None)
                done, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                for t in done:
                    p, row = t.result()
                    self.record(p, row)
                    self.events.put_nowait(self.snapshot())
        finally:
            for t in in_flight:
                t.cancel()
            if in_flight:
                await asyncio.gather(*in_flight, return_exceptions=True)
            for rq in list(self.round_queues.values()):  # this provider's rounds only
                if rq.api.provider == provider:
                    await rq.aclose()
            self.events.put_nowait(DONE)

    def start_workers(self) -> list[asyncio.Task[None]]:
        """One dispatcher per provider with queued runs (it admits them up to ``batch runs``)."""
        return [
            asyncio.create_task(self.worker(prov), name=f"agentlab-batch-{prov}")
            for prov in self.concurrency
            if self.queues[prov]
        ]

    def snapshot(self, message: str | None = None) -> SweepProgress:
        """The progress figures, with the round the batches are in when nothing else is said."""
        rounds = sum(q.rounds for q in self.round_queues.values())
        return super().snapshot(message or (f"batch round {rounds}" if rounds else None))


async def clean_up_left_batches(
    manifest: Manifest, left: list[dict[str, Any]], apis: Mapping[str, BatchAPI], poll: Poll
) -> tuple[int, int]:
    """Cancel what a previous driver left running, delete every batch not yet deleted at its provider.

    A running batch's answers need the continuations that died with that driver, so it is abandoned;
    an ended one (cancelled, failed, or read while its delete failed) still holds the loop's prompts
    and opaque items at the provider. Returns (abandoned, deleted).
    """
    open_ids = {str(r["batch_id"]) for r in Manifest.open_batches(manifest.path)}
    abandoned = deleted = 0
    for rec in left:
        api, bid = apis.get(str(rec.get("model"))), str(rec["batch_id"])
        if api is None:
            continue
        if bid in open_ids:
            manifest.abandoned(bid, "driver restarted")
            abandoned += 1
        try:
            gone = await discard(api, bid, poll, ended=False)
        except Exception:
            log.warning("could not delete batch %s left by a previous driver at %s", bid, api.provider)
            continue
        if gone:
            manifest.deleted(bid)
            deleted += 1
    return abandoned, deleted


async def find_unrecorded(
    manifest: Manifest, intents: list[dict[str, Any]], apis: Mapping[str, BatchAPI]
) -> list[dict[str, Any]]:
    """Batches created by a driver that died before recording their ids, found by their intent tag.

    Each is recorded (``recovered``, as ``submitted`` with its batch id) so the clean-up deletes it;
    an intent the provider has no batch for, or cannot be searched by (Anthropic keeps no tag), is
    closed as ``void`` with the reason, said once in the log.
    """
    found: list[dict[str, Any]] = []
    for rec in intents:
        api = apis.get(str(rec.get("model")))
        if api is None:
            continue
        ids = await api.find(str(rec["intent"]))
        for bid in ids:
            found.append(manifest.recovered(rec, bid))
        if not ids:
            why = "not found at the provider" if api.searchable else "the provider keeps no tag to find it by"
            log.warning("batch sweep: a previous driver died creating a %s batch (round %s): %s",
                        api.provider, rec.get("round"), why)  # fmt: skip
            manifest.void(str(rec["intent"]), why)
    return found


async def _clean_up(sched: BatchScheduler, manifest: Manifest, todo: Sequence[Plan], poll: Poll) -> None:
    """What earlier calls left at the providers: found, cancelled if running, deleted."""
    left, intents = Manifest.undeleted(manifest.path), Manifest.unresolved(manifest.path)
    if not left and not intents:
        return
    by_model = {str(p.ref): p.ref for p in todo}
    apis: dict[str, BatchAPI] = {}
    for rec in (*left, *intents):
        ref = by_model.get(str(rec.get("model")))
        if ref is not None and str(ref) not in apis:
            sched.adapter_for(ref)
            apis[str(ref)] = sched.round_queues[str(ref)].api
    left += await find_unrecorded(manifest, intents, apis)
    n, gone = await clean_up_left_batches(manifest, left, apis, poll)
    log.warning(
        "batch sweep %s: cancelled %d, deleted %d batch(es) earlier calls left", manifest.path, n, gone
    )


def check_batch_providers(refs: Sequence[ModelRef]) -> None:
    """Refuse, before anything runs, a model whose provider has no batch API here."""
    missing = sorted({r.provider for r in refs if not get_provider(r.provider).batch})
    if missing:
        raise ConfigError(
            f"backend='batch': no batch API for provider(s) {missing} in agentlab; "
            "sweep those models with backend='asyncio'"
        )


async def batch_scheduler(
    *, path: Path, options: BatchOptions, fsync: bool, todo: Sequence[Plan], **common: Any
) -> BatchScheduler:
    """The batch scheduler, after a restart's clean-up: open batches cancelled, checkpoints read."""
    manifest = Manifest(manifest_path(path), fsync=fsync)
    journal = Journal(journal_path(path), fsync=fsync)
    # Only runs that never got a row resume mid-loop; a failed run redone (retry_failed) starts afresh.
    recorded = common["finished"].last_status
    pending = {p.key for p in todo if p.key not in recorded}
    resumed = {k: cp for k, cp in Journal.latest(journal.path).items() if k in pending and cp.step > 0}
    sched = BatchScheduler(
        options=options, manifest=manifest, journal=journal, resumed=resumed, todo=todo, **common
    )
    await _clean_up(sched, manifest, todo, Poll(options.poll_s, options.poll_max_s))
    return sched
