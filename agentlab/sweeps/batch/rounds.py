"""One model's batch rounds: collect every pending call, submit them together, poll, hand back.

A round is submitted when every run of the model that is still going waits on a model call (the
others are in tools, or finished): that is "advance all runs one step per round". A round larger than
the provider's limits (requests, bytes) goes out as several batches; calls whose requests need
different headers (Anthropic betas) go in separate batches, since headers are per batch.

Polling backs off geometrically from ``poll_s`` to ``poll_max_s``: real batches take minutes to
hours, the simulator's a fraction of a second (its time compression), and neither should be hammered.

What a round creates at the provider is recorded before it exists and removed on every exit:
``on_intent`` is called (and must succeed) before the create call, so a batch is never created that
the manifest could not name; once created, the batch is deleted at the provider whatever happens
next: read, failed (a provider error, or the manifest unable to take its id), or cancelled (the
sweep interrupted). Where a provider deletes only ended batches, it is cancelled and waited for, up
to ``Poll.cleanup_s``; what is left after that is deleted by the next sweep call (:func:`discard`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agentlab.adapters.batch_api import BatchAPI, BatchState, LineOutcome, PendingLine
from agentlab.errors import AgentlabError, ProviderError
from agentlab.records.logs import get_logger

__all__ = ["Intent", "Poll", "RoundQueue", "Submitted", "discard"]

log = get_logger(__name__)
_T = TypeVar("_T")


@dataclass(frozen=True)
class Poll:
    """How often a batch is asked for its status: ``poll_s`` first, times ``factor`` up to ``poll_max_s``."""

    poll_s: float = 1.0
    poll_max_s: float = 60.0
    factor: float = 1.5
    cleanup_s: float = 120.0
    """How long a cancelled or failed round waits for its batch to end so it can be deleted."""


@dataclass(frozen=True)
class Intent:
    """A batch about to be created: what the manifest records *before* the create call."""

    round: int
    intent: str
    """A fresh id, also sent with the batch (metadata or display name where the provider has one)."""
    provider: str
    model: str
    custom_ids: tuple[str, ...]


@dataclass(frozen=True)
class Submitted:
    """A batch just created at the provider: what the manifest records so a restart finds it."""

    round: int
    batch_id: str
    provider: str
    model: str
    custom_ids: tuple[str, ...]
    intent: str | None = None


async def discard(api: BatchAPI, batch_id: str, poll: Poll, *, ended: bool = False) -> bool:
    """Remove the batch at the provider: cancel it unless it has ended, wait, delete every copy.

    True when nothing of it is left there (a batch the provider no longer knows counts as gone);
    False when it did not end within ``poll.cleanup_s`` and the provider keeps what it deletes only
    once ended (the manifest still lists it, and the next sweep call tries again).
    """
    if not ended:
        try:
            state = await api.state(batch_id)
        except ProviderError as e:
            if e.status == 404:
                return True
            raise
        ended = state.ended
        if not ended:
            await api.cancel(batch_id)
            ended = await _ends_within(api, batch_id, poll)
    return await api.delete(batch_id, ended=ended)


async def _ends_within(api: BatchAPI, batch_id: str, poll: Poll) -> bool:
    deadline = time.monotonic() + poll.cleanup_s
    delay = poll.poll_s
    while time.monotonic() < deadline:
        await asyncio.sleep(min(delay, max(0.0, deadline - time.monotonic())))
        if (await api.state(batch_id)).ended:
            return True
        delay = min(delay * poll.factor, poll.poll_max_s)
    return False


@dataclass
class _Waiting:
    line: PendingLine
    future: asyncio.Future[LineOutcome]


@dataclass
class RoundQueue:
    """The pending calls of one model, and the rounds that answer them."""

    api: BatchAPI
    model: str
    poll: Poll = field(default_factory=Poll)
    on_intent: Callable[[Intent], None] = lambda i: None
    on_void: Callable[[str, str], None] = lambda intent, why: None
    on_submitted: Callable[[Submitted], None] = lambda s: None
    on_ended: Callable[[BatchState], None] = lambda s: None
    on_deleted: Callable[[str], None] = lambda batch_id: None
    active: int = 0
    rounds: int = 0
    batches: int = 0
    _waiting: list[_Waiting] = field(default_factory=list)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _in_flight: set[str] = field(default_factory=set)

    # -------------------------------------------------------------- the runs

    def enter(self) -> None:
        """A run of this model has started (it will call, or finish)."""
        self.active += 1

    def leave(self) -> None:
        """A run has ended: the round may now be complete without it."""
        self.active -= 1
        self._maybe_submit()

    async def call(self, line: PendingLine) -> LineOutcome:
        """Wait for this call's line in the next round; its outcome (body or typed error) back."""
        fut: asyncio.Future[LineOutcome] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Waiting(line, fut))
        self._maybe_submit()
        return await fut

    # -------------------------------------------------------------- the rounds

    def _maybe_submit(self) -> None:
        if not self._waiting or len(self._waiting) < self.active:
            return
        batch, self._waiting = self._waiting, []
        self.rounds += 1
        t = asyncio.get_running_loop().create_task(self._round(self.rounds, batch))
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    def _split(self, waiting: Sequence[_Waiting]) -> list[list[_Waiting]]:
        """Group by request headers, then cut at the provider's request and byte limits."""
        groups: dict[tuple[tuple[str, str], ...], list[list[_Waiting]]] = {}
        sizes: dict[tuple[tuple[str, str], ...], int] = {}
        for w in waiting:
            key = tuple(sorted(w.line.built.headers.items()))
            size = self.api.line_size(w.line)
            chunks = groups.setdefault(key, [[]])
            if chunks[-1] and (
                len(chunks[-1]) >= self.api.max_requests or sizes.get(key, 0) + size > self.api.max_bytes
            ):
                chunks.append([])
                sizes[key] = 0
            chunks[-1].append(w)
            sizes[key] = sizes.get(key, 0) + size
        return [c for chunks in groups.values() for c in chunks if c]

    async def _round(self, n: int, waiting: Sequence[_Waiting]) -> None:
        await asyncio.gather(*(self._batch(n, part) for part in self._split(waiting)))

    async def _batch(self, n: int, part: Sequence[_Waiting]) -> None:
        """Record, submit, poll to the end, read, delete; resolve each call (errors go to its caller)."""
        intent = Intent(n, os.urandom(8).hex(), self.api.provider, self.model,
                        tuple(w.line.custom_id for w in part))  # fmt: skip
        batch_id: str | None = None
        try:
            self.on_intent(intent)  # write-ahead: if it cannot be recorded, nothing is created
            batch_id, interrupted = await self._create(intent, part)
            self.on_submitted(Submitted(n, batch_id, intent.provider, self.model, intent.custom_ids,
                                        intent.intent))  # fmt: skip
            if interrupted:  # cancelled while the create call was out: the batch exists, remove it
                raise asyncio.CancelledError
            state = await self._wait(batch_id)
            outcomes = {o.custom_id: o for o in await self.api.results(batch_id)}
            self._in_flight.discard(batch_id)
            self.on_ended(state)
        except asyncio.CancelledError:
            for w in part:
                w.future.cancel()
            if batch_id is not None:
                await self._remove(batch_id, "cancelled by the driver")
            raise
        except AgentlabError as e:  # the whole batch failed: every call of it fails the same way
            if batch_id is not None:
                await self._remove(batch_id, f"round failed ({type(e).__name__})")
            for w in part:
                if not w.future.done():
                    w.future.set_result(LineOutcome(w.line.custom_id, error=e))
            return
        await self._remove(batch_id, None)
        for w in part:
            if w.future.done():
                continue
            got = outcomes.get(w.line.custom_id)
            if got is None:
                got = _missing(self.api.provider, w.line.custom_id, state)
            w.future.set_result(got)

    async def _create(self, intent: Intent, part: Sequence[_Waiting]) -> tuple[str, bool]:
        """The batch's id, and whether the round was cancelled while the create call was out.

        The call is never cut short: a batch the provider created while the answer was on its way
        would exist with no id known here. A create that failed is marked void in the manifest.
        """
        meta = {"agentlab_round": str(intent.round), "agentlab_model": self.model,
                "agentlab_intent": intent.intent}  # fmt: skip
        task, interrupted = await _to_the_end(self.api.submit([w.line for w in part], metadata=meta))
        failure = asyncio.CancelledError() if task.cancelled() else task.exception()
        if failure is not None:
            with contextlib.suppress(AgentlabError):  # unrecorded, a restart looks for it
                self.on_void(intent.intent, "the create call failed")
            raise asyncio.CancelledError if interrupted else failure
        batch_id = task.result()
        self.batches += 1
        self._in_flight.add(batch_id)
        return batch_id, interrupted

    async def _remove(self, batch_id: str, why: str | None) -> None:
        """Every copy of the batch deleted at the provider (best effort, never masking the exit).

        ``why`` is None for a batch that ended and was read; otherwise the round stopped early and
        the batch is cancelled first. What cannot be deleted now stays listed in the manifest.
        """
        running = why is not None and batch_id in self._in_flight
        self._in_flight.discard(batch_id)
        task, interrupted = await _to_the_end(discard(self.api, batch_id, self.poll, ended=not running))
        gone = not task.cancelled() and task.exception() is None and task.result()
        if not gone:
            log.warning("batch %s is not deleted at %s yet; the next sweep call deletes it", batch_id,
                        self.api.provider)  # fmt: skip
        with contextlib.suppress(AgentlabError):  # a restart cleans up what is not recorded here
            if running:
                self.on_ended(BatchState(batch_id, str(why), True, {}))
            if gone:
                self.on_deleted(batch_id)
        if interrupted:
            raise asyncio.CancelledError  # the sweep was interrupted meanwhile: now it may stop

    async def _wait(self, batch_id: str) -> BatchState:
        delay = self.poll.poll_s
        while True:
            await asyncio.sleep(delay)
            state = await self.api.state(batch_id)
            if state.ended:
                return state
            delay = min(delay * self.poll.factor, self.poll.poll_max_s)

    async def aclose(self) -> None:
        """Cancel what is still running (an interrupted sweep): its batches are cancelled too."""
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


async def _to_the_end(aw: Coroutine[Any, Any, _T]) -> tuple[asyncio.Task[_T], bool]:
    """Run ``aw`` to its end even if this task is cancelled meanwhile (each such call is bounded).

    A sweep that stops (a storage stop, an error, Ctrl-C) cancels its rounds, some of them creating
    or deleting a batch: cut short, a batch would stay at the provider with nobody to delete it.
    Returns the finished task (result or exception) and whether a cancellation came meanwhile, for
    the caller to raise once the batch is dealt with.
    """
    task = asyncio.ensure_future(aw)
    interrupted = False
    while not task.done():
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.shield(task)
        interrupted = interrupted or not task.done()
    return task, interrupted


def _missing(provider: str, cid: str, state: BatchState) -> LineOutcome:
    """A line the ended batch gave no result for (e.g. a failed batch): retryable, said so."""
    return LineOutcome(
        cid,
        error=ProviderError(
            f"batch ended ({state.status}) without a result for this request",
            provider=provider,
            error_type="batch_missing_result",
            retryable=True,
        ),
    )
