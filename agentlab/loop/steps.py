"""The run loop's pure steps: retry classification and applying a completed response.

``Run`` (``agentlab.loop.runner``) composes these with its streaming and tool steps. They are kept apart
from it so that each rule can be read and tested on its own, without a provider, a stream or an
event loop: :func:`retry_decision` says whether a failed model call is tried again and after how
long; :func:`apply_response` turns a completed response into the step's ``CallRecord``, its
diagnostics and its ``ModelCallCompletedEvent``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from agentlab.costs.pricing import price_call
from agentlab.costs.reported import cost_check
from agentlab.errors import ProviderAPIError, ProviderError
from agentlab.loop.result import CallRecord
from agentlab.neutral.diagnostics import dropped as dropped_items
from agentlab.neutral.events import (
    DiagnosticEvent,
    EventOrigin,
    ModelCallCompletedEvent,
    ResponseCompletedEvent,
)

if TYPE_CHECKING:
    from agentlab.adapters.base import ModelRef
    from agentlab.neutral.request import ModelRequest

__all__ = [
    "MAX_RETRY_WAIT_S",
    "AppliedResponse",
    "CallTiming",
    "RetryDecision",
    "apply_response",
    "retry_decision",
]

MAX_RETRY_WAIT_S = 120.0
"""A provider asking to wait longer than this (``retry-after``) fails the call instead of a silent wait."""


@dataclass(frozen=True, slots=True)
class RetryDecision:
    """Whether a failed model call is tried again, after how many seconds, and why (for logs and tests)."""

    retry: bool
    delay_s: float
    reason: str


def retry_decision(
    error: ProviderError, attempt: int, retries: int, retry_delay: float, sdk_retries: int
) -> RetryDecision:
    """Classify a provider error raised by attempt number ``attempt`` (0 = the first try).

    HTTP status errors were already retried by the SDK (bounded, honouring ``retry-after``) when its
    retries are on (``sdk_retries > 0``); retrying them here too would multiply the attempts. The run
    retries what the SDK cannot (a stream broken mid-way, a reset), and status errors only when the
    adapter's SDK retries are off. Only errors the adapter marked ``retryable`` are retried, at most
    ``retries`` times, with exponential back-off from ``retry_delay``, raised to a ``retry-after``
    the provider sent; a ``retry-after`` above ``MAX_RETRY_WAIT_S`` fails the call instead.
    """
    if not error.retryable:
        return RetryDecision(False, 0.0, "not retryable")
    if isinstance(error, ProviderAPIError) and sdk_retries > 0:
        return RetryDecision(False, 0.0, "already retried by the SDK")
    if attempt >= retries:
        return RetryDecision(False, 0.0, "retries used up")
    delay = retry_delay * (2**attempt)
    retry_after = getattr(error, "retry_after", None)
    if isinstance(retry_after, int | float):
        if retry_after > MAX_RETRY_WAIT_S:
            return RetryDecision(False, 0.0, "retry-after too long")
        delay = max(delay, float(retry_after))
    return RetryDecision(True, delay, "retryable")


class CallTiming:
    """One model call's wall time and its completed response, filled in by the run as it streams.

    A plain mutable holder (the streaming step is a generator and cannot return a value). Each
    attempt starts it afresh, so a retried call is timed from its last attempt. Its repr is the
    default (no request or response shown), so it is safe in a traceback's locals.

    ``run_t0`` is the run's start on the same clock (``time.perf_counter``, monotonic), so the call
    can say when its last attempt began relative to the run (``started_s``, for the timeline).
    """

    __slots__ = ("completed", "elapsed", "request", "run_t0", "step", "t0")

    def __init__(self, request: ModelRequest, step: int, run_t0: float | None = None) -> None:
        self.request = request
        self.step = step
        self.run_t0 = run_t0
        self.start()

    @property
    def started_s(self) -> float | None:
        """Seconds from the run's start to this attempt's start (None without a run clock)."""
        return None if self.run_t0 is None else self.t0 - self.run_t0

    def start(self) -> None:
        """Begin an attempt: the clock restarts, nothing is completed."""
        self.t0 = time.perf_counter()
        self.elapsed: float | None = None
        self.completed: ResponseCompletedEvent | None = None

    def stop(self) -> None:
        """The stream ended: note the wall time since the attempt began."""
        self.elapsed = time.perf_counter() - self.t0


@dataclass(frozen=True, slots=True)
class AppliedResponse:
    """What one completed response adds to a run: its record, its diagnostics, its durable event."""

    record: CallRecord
    diagnostics: tuple[DiagnosticEvent, ...]
    completed: ModelCallCompletedEvent


def apply_response(
    completed: ResponseCompletedEvent,
    timing: CallTiming,
    *,
    ref: ModelRef,
    run_id: str,
    step: int,
    policy: Literal["verbatim", "drop"],
    refused: int,
    carried_drop: int = 0,
) -> AppliedResponse:
    """The accounting of one completed response, as values (the caller records and emits them).

    ``refused`` is how many of its opaque reasoning items the continuation did not keep (all of them
    under ``policy="drop"``): they are counted as dropped, with a ``reasoning_item_dropped``
    diagnostic that says why. ``carried_drop`` is what an earlier run in the session dropped and
    this run reports on its first call. Timings are the adapter's (taken once, by its assembler);
    the run's wall time of the attempt stands in for a latency an adapter did not report.
    """
    resp = completed.response
    dropped = resp.reasoning_items_dropped + carried_drop + refused
    diagnostics: tuple[DiagnosticEvent, ...] = ()
    if refused:
        why = (
            "continuation_policy='drop'"
            if policy == "drop"
            else "made by another provider/API/model/endpoint"
        )
        diagnostics = (
            dropped_items(
                count=refused,
                reason="policy_drop" if policy == "drop" else "other_origin",
                provider=ref.provider,
                detail=f"not kept: {why}",
                origin=EventOrigin(run_id=run_id, step=step),
            ),
        )
    usage = resp.usage
    cost = price_call(usage, ref.provider, ref.model, tier=resp.pricing_tier)
    origin = EventOrigin(run_id=run_id, step=step)
    differs = cost_check(cost.total, resp.provider_cost_usd, provider=ref.provider, origin=origin)
    if differs is not None:
        diagnostics = (*diagnostics, differs)
    event = ModelCallCompletedEvent(
        run_id=run_id,
        step=step,
        provider=ref.provider,
        model=ref.model,
        response_id=resp.response_id,
        request_id=resp.request_id,
        stop_reason=resp.stop_reason,
        usage=usage,
        cost_usd=cost.total if cost.known else None,
        latency_s=_first(completed.latency_s, timing.elapsed),
        first_reasoning_s=completed.first_reasoning_s,
        first_text_s=completed.first_text_s,
        reasoning_items_dropped=dropped,
        items=resp.items,
        provider_cost_usd=resp.provider_cost_usd,
        started_s=timing.started_s,
    )
    record = CallRecord.of(event, api=ref.api, cost=cost)
    return AppliedResponse(record, diagnostics, event)


def _first(adapter_value: float | None, run_value: float | None) -> float | None:
    return adapter_value if adapter_value is not None else run_value
