"""One run of a sweep and its row.

The gated adapter, ``run_plan`` (shared by every executor and the batch driver) and ``build_row``,
the portable results row a finished (or failed) run leaves.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import BaseModel

from agentlab.adapters.base import Adapter, ModelRef
from agentlab.costs.frames import token_cost_values
from agentlab.errors import (
    ConfigError,
    OutputValidationError,
    OverloadedError,
    RateLimitError,
)
from agentlab.loop.result import RunResult
from agentlab.loop.runner import Run, SessionLink
from agentlab.loop.settings import RunSettings
from agentlab.loop.tools import Tool, servers_label
from agentlab.neutral.error_text import durable_error_text
from agentlab.neutral.events import AdapterEvent, DiagnosticEvent, ToolCallEvent
from agentlab.neutral.request import ModelRequest
from agentlab.records.logs import redact_secrets
from agentlab.sweeps.plan import Plan
from agentlab.sweeps.settings import Setting
from agentlab.sweeps.tasks import Task

__all__ = ["RunConfig", "ScoreRun", "build_row", "check_task_tools", "iso_now", "run_plan"]

_ERROR_CHARS = 500


class _Gate(Protocol):
    """What a gated adapter reports to: a local ``AdaptiveLimiter``, or the Ray executor's actor proxy."""

    async def ready(self) -> None:
        """Wait out the provider's cool-down."""
        ...

    def on_rate_limited(self, retry_after: float | None) -> None:
        """A 429/overloaded answer."""
        ...

    async def on_success(self) -> None:
        """A completed call."""
        ...


class _GatedAdapter:
    """Every model call waits out the provider's cool-down; 429s/overloads feed the limiter."""

    def __init__(self, inner: Adapter, limiter: _Gate) -> None:
        self.inner = inner
        self.limiter = limiter
        self.provider = inner.provider
        self.api = inner.api
        self.model = inner.model
        self.base_url = inner.base_url
        # 0: the run retries status errors itself, so each attempt passes the gate (waits out the
        # cool-down); the sweep builds its adapters with the SDK's retries off.
        self.max_retries = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        await self.limiter.ready()
        try:
            async for ev in self.inner.stream(request):
                yield ev
        except RateLimitError as e:
            self.limiter.on_rate_limited(e.retry_after)
            raise
        except OverloadedError:
            self.limiter.on_rate_limited(None)
            raise
        await self.limiter.on_success()

    async def aclose(self) -> None:
        """Shared adapters are closed by the sweep, not by each run."""


def iso_now() -> str:
    """The time a row records (UTC, milliseconds), the same in every executor."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def build_row(
    plan: Plan,
    result: RunResult | None,
    err: BaseException | None,
    latency: float,
    at: str,
    fingerprint: str,
) -> dict[str, Any]:
    """A results row from whitelisted scalar fields (never events, history or reasoning)."""
    row: dict[str, Any] = {
        "task_id": plan.task.id,
        "model": str(plan.ref),
        "setting": plan.setting.name,
        "repeat": plan.key[3],
        "provider": plan.ref.provider,
        "latency_s": latency,
        "started_at": at,
        "settings_fingerprint": fingerprint,
    }
    if result is None:
        row.update(status="failed", steps=0, tool_calls=0, success=None)
        if err is not None:
            text = durable_error_text(err)  # the run's own rule: no arbitrary exception's text
            row.update(error_type=type(err).__name__, error=redact_secrets(text)[:_ERROR_CHARS])
        return row
    u, cost = result.usage.tokens, result.usage.cost
    tool_calls = retries = rate_limited = 0
    for ev in result.events:
        if isinstance(ev, ToolCallEvent):
            tool_calls += 1
        elif isinstance(ev, DiagnosticEvent) and ev.code == "retry":
            retries += 1
            if (ev.data or {}).get("error_type") in ("RateLimitError", "OverloadedError"):
                rate_limited += 1
    success: bool | None = None
    error_type, error = result.error_type, result.error
    if result.status in ("completed", "step_limit"):
        try:
            success = plan.task.score(result.output if result.status == "completed" else None)
        except Exception as e:  # a user checker that raised: unscored, and said so
            error_type, error = "CheckerError", f"task {plan.task.id}: check raised {type(e).__name__}: {e}"
    row.update(
        run_id=result.run_id,
        status=result.status,
        success=success,
        steps=result.steps,
        tool_calls=tool_calls,
        **token_cost_values(u, cost, result.usage.reasoning_items_dropped, result.usage.provider_cost_usd),
        price_source=cost.source,
        price_updated=cost.updated,
        retries=retries,
        rate_limited=rate_limited,
        stop_reason=result.stop_reason,
        output=result.output,
        **_output_columns(result),
        error_type=error_type,
        error=None if error is None else redact_secrets(error)[:_ERROR_CHARS],
        tool_servers=servers_label(result.tool_sources),
    )
    return row


def _output_columns(result: RunResult) -> dict[str, Any]:
    """``output_value`` (the structured answer as JSON text) and ``output_valid`` (None: not asked).

    The value is the final answer's own text in structured form (assistant output, portable), so it
    is stored as durably as ``output``; a mismatch leaves only the status (the run failed with
    ``OutputValidationError``, whose text names fields, never values).
    """
    value = result.output_value
    if value is not None:
        if isinstance(value, BaseModel):
            text = value.model_dump_json()
        else:
            text = json.dumps(value, ensure_ascii=False)
        return {"output_value": text, "output_valid": True}
    if result.error_type == OutputValidationError.__name__:
        return {"output_value": None, "output_valid": False}
    return {}


@dataclass(frozen=True)
class RunConfig:
    """What every run of the sweep shares besides its plan entry (validated before anything runs)."""

    tools: list[Tool]
    retries: int
    retry_delay: float
    tool_timeout: float | None
    fingerprints: dict[str, str]
    adapter_factory: Callable[[ModelRef], Adapter] | None
    max_consecutive_failures: int | None
    output_type: Any = None
    """Every run's ``output_type`` (checked once, before anything runs)."""
    score_run: ScoreRun | None = None
    """Extra row fields from the finished run, computed before its row is written (evaluations)."""


ScoreRun = Callable[[Task, RunResult | None], Awaitable[Mapping[str, Any]]]
"""``score_run(task, result)``: fields to add to a run's row (``scores``, ``success``,
``called_tools``), from the finished run (``None`` when it could not even start). It runs before the
row is written, so a row is never on disk without its scores; an interrupt while it runs loses that
run, like any run in flight."""


def _task_tools(task: Task, tools: Sequence[Tool]) -> list[Tool]:
    """The sweep's tools this task may use (its ``tools`` names; all of them when it names none)."""
    if task.tools is None:
        return list(tools)
    return [t for t in tools if t.name in task.tools]


def check_task_tools(tasks: Sequence[Task], tools: Sequence[Tool]) -> None:
    """A task naming a tool the sweep does not have fails here, before anything runs."""
    names = {t.name for t in tools}
    for task in tasks:
        unknown = sorted(set(task.tools or ()) - names)
        if unknown:
            raise ConfigError(
                f"task {task.id}: unknown tool(s) {unknown}; the tools given are {sorted(names)}"
            )


async def run_plan(
    p: Plan,
    adapter: Callable[[], Adapter],
    gate: _Gate,
    cfg: RunConfig,
    *,
    resume: tuple[SessionLink, int] | None = None,
    on_run: Callable[[Run], None] | None = None,
) -> dict[str, Any]:
    """Run one plan entry to its results row; a failing run becomes a failed row, not an error.

    One function for every executor and backend (the asyncio scheduler, a Ray worker, the batch
    driver), so a row means the same whichever ran it. ``adapter`` is called inside the try: an
    adapter that cannot be built (a bad option, a missing key) is that run's failed row.
    ``resume``: ``(session link, steps already done)`` of a run continued from portable history
    (the batch driver after a restart): it starts from the link's history, not the task prompt, with
    the steps left. ``on_run`` sees the ``Run`` before it starts (the batch driver tracks it).
    """
    s = p.setting
    prompt: str | None = p.task.prompt
    session: SessionLink | None = None
    max_steps = s.max_steps
    if resume is not None:
        session, done = resume
        prompt, max_steps = None, max(1, s.max_steps - done)
    at, t0 = iso_now(), time.perf_counter()
    run: Run | None = None
    err: BaseException | None = None
    try:
        gated = _GatedAdapter(adapter(), gate)
        run = Run(
            p.ref,
            prompt,
            tools=_task_tools(p.task, cfg.tools),
            settings=_run_settings(s, p.task.system, max_steps, cfg),
            adapter=gated,
            session=session,
            output_type=cfg.output_type,
        )
        if on_run is not None:
            on_run(run)
        await run.arun()
    except Exception as e:  # the run's own record says what failed; keep the sweep going
        err = e
    result = run.result if run is not None else None
    row = build_row(p, result, err, time.perf_counter() - t0, at, cfg.fingerprints[s.name])
    if cfg.score_run is not None:
        row.update(await cfg.score_run(p.task, result))
    return row


def _run_settings(s: Setting, task_system: str | None, max_steps: int, cfg: RunConfig) -> RunSettings:
    """The arm's settings for one task, the one settings value its ``Run`` gets.

    The task's own system prompt wins; the sweep's step cap, retries and tool time-out join it (an arm
    sets none of the last three, so nothing of the arm's is overridden).
    """
    extra = {"system": task_system} if task_system is not None else {}
    sweep_wide = {"retries": cfg.retries, "retry_delay": cfg.retry_delay, "tool_timeout": cfg.tool_timeout}
    return s.run_settings.replace(max_steps=max_steps, **sweep_wide, **extra)
