"""Per-provider concurrency that backs off on rate limits (AIMD), so a sweep slows down, not fails.

Why adaptive: a fixed concurrency is either too low (slow sweeps) or, under a provider's rate limit,
too high: every run then burns its retries on 429s. The limiter keeps one provider's runs within
``max_concurrency``; a 429 (or 529/503 overloaded) halves the current limit (at most once per
cool-down window, so a burst of 429s from runs in flight counts once) and holds *every* new model
call to that provider until the server's ``retry-after`` has passed; each ``limit`` successful calls
add one slot back, up to ``max_concurrency``. Other providers have their own limiter and never wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, fields

__all__ = ["AdaptiveLimiter", "LimiterStats"]

DEFAULT_BACKOFF_S = 1.0
"""Cool-down after a 429 that gave no ``retry-after``."""


@dataclass(frozen=True)
class LimiterStats:
    """A snapshot for progress displays and reports."""

    provider: str
    max_concurrency: int
    limit: int
    in_flight: int
    max_in_flight: int
    rate_limited: int
    cooling_down_s: float


class AdaptiveLimiter:
    """Run slots for one provider (``async with limiter.slot():``) plus a call gate (``await ready()``).

    Must be used from one event loop (the sweep's).
    """

    def __init__(self, provider: str, max_concurrency: int) -> None:
        if not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise ValueError(f"concurrency for {provider} must be an int >= 1, got {max_concurrency!r}")
        self.provider = provider
        self.max_concurrency = max_concurrency
        self.limit = max_concurrency
        self.in_flight = 0
        self.max_in_flight = 0
        self.rate_limited = 0
        self._successes = 0
        self._cool_until = 0.0
        self._cond = asyncio.Condition()

    # -------------------------------------------------------------- run slots

    async def acquire(self) -> None:
        """Wait for a free slot under the current limit and past any cool-down."""
        async with self._cond:
            while True:
                wait = self.cooling_down_s
                if wait > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._cond.wait(), timeout=wait)
                    continue
                if self.in_flight < self.limit:
                    break
                await self._cond.wait()
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    async def release(self) -> None:
        """Free the slot taken by ``acquire`` and wake the waiters (a raised limit may admit several)."""
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    # -------------------------------------------------------------- call gate

    async def ready(self) -> None:
        """Wait until no cool-down is active (every model call of this provider passes here)."""
        while (wait := self.cooling_down_s) > 0:
            await asyncio.sleep(wait)

    def on_rate_limited(self, retry_after: float | None) -> None:
        """A 429/overloaded answer: halve the limit (once per window) and cool down."""
        self.rate_limited += 1
        now = time.monotonic()
        delay = retry_after if retry_after is not None and retry_after >= 0 else DEFAULT_BACKOFF_S
        if now >= self._cool_until:
            self.limit = max(1, self.limit // 2)
        self._cool_until = max(self._cool_until, now + delay)
        self._successes = 0

    async def on_success(self) -> None:
        """A completed call: additive increase back towards ``max_concurrency``."""
        if self.limit >= self.max_concurrency:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            async with self._cond:
                self.limit += 1
                self._cond.notify_all()

    @property
    def cooling_down_s(self) -> float:
        """Seconds until this provider's new calls may go (0: now)."""
        return max(0.0, self._cool_until - time.monotonic())

    def stats(self) -> LimiterStats:
        """A snapshot of the limiter for a sweep's result and progress, taken without its lock.

        Each ``LimiterStats`` field is the limiter's figure of that name, so a new one is declared once.
        """
        return LimiterStats(**{f.name: getattr(self, f.name) for f in fields(LimiterStats)})
