"""One model's batch rounds: collect every pending call, submit them together, poll, hand back.

A round is submitted when every run of the model that is still going waits on a model call (the
others are in tools, or finished): that is "advance all runs one step per round". A round larger than
the provider's limits (requests, bytes) goes out as several batches; calls whose requests need
different headers (Anthropic betas) go in separate batches, since headers are per batch.

Polling backs off geometrically from ``poll_s`` to ``poll_max_s``: real batches take minutes to
hours, the simulator's a fraction of a second (its time compression), and neither should be hammered.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentlab.adapters.batch_api import BatchAPI, BatchState, LineOutcome, PendingLine
from agentlab.errors import AgentlabError, ProviderError
from agentlab.records.logs import get_logger

__all__ = ["Poll", "RoundQueue", "Submitted"]

log = get_logger(__name__)


@dataclass(frozen=True)
class Poll:
    """How often a batch is asked for its status: ``poll_s`` first, times ``factor`` up to ``poll_max_s``."""

    poll_s: float = 1.0
    poll_max_s: float = 60.0
    factor: float = 1.5


@dataclass(frozen=True)
class Submitted:
    """A batch just created at the provider: what the manifest records so a restart finds it."""

    round: int
    batch_id: str
    provider: str
    model: str
    custom_ids: tuple[str, ...]


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
    on_submitted: Callable[[Submitted], None] = lambda s: None
    on_ended: Callable[[BatchState], None] = lambda s: None
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
        """Submit, poll to the end, read the results, resolve each call (errors go to its caller)."""
        batch_id: str | None = None
        try:
            batch_id = await self.api.submit(
                [w.line for w in part], metadata={"agentlab_round": str(n), "agentlab_model": self.model}
            )
            self.batches += 1
            self._in_flight.add(batch_id)
            self.on_submitted(
                Submitted(n, batch_id, self.api.provider, self.model, tuple(w.line.custom_id for w in part))
            )
            state = await self._wait(batch_id)
            outcomes = {o.custom_id: o for o in await self.api.results(batch_id)}
            self._in_flight.discard(batch_id)
            self.on_ended(state)
        except asyncio.CancelledError:
            if batch_id is not None and batch_id in self._in_flight:
                await self._cancel_quietly(batch_id)
                with contextlib.suppress(Exception):  # a restart cancels it again if this is lost
                    self.on_ended(BatchState(batch_id, "cancelled by the driver", True, {}))
            for w in part:
                w.future.cancel()
            raise
        except AgentlabError as e:  # the whole batch failed: every call of it fails the same way
            for w in part:
                if not w.future.done():
                    w.future.set_result(LineOutcome(w.line.custom_id, error=e))
            return
        for w in part:
            if w.future.done():
                continue
            got = outcomes.get(w.line.custom_id)
            if got is None:
                got = _missing(self.api.provider, w.line.custom_id, state)
            w.future.set_result(got)

    async def _wait(self, batch_id: str) -> BatchState:
        delay = self.poll.poll_s
        while True:
            await asyncio.sleep(delay)
            state = await self.api.state(batch_id)
            if state.ended:
                return state
            delay = min(delay * self.poll.factor, self.poll.poll_max_s)

    async def _cancel_quietly(self, batch_id: str) -> None:
        """An interrupted round's batch is cancelled at the provider (best effort, never masking)."""
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.shield(self.api.cancel(batch_id))
        self._in_flight.discard(batch_id)

    async def aclose(self) -> None:
        """Cancel what is still running (an interrupted sweep): its batches are cancelled too."""
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


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
