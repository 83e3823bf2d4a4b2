"""``sweep``: tasks x models x settings x repeats, each an independent pinned run, resumable.

How a sweep behaves (the contract the tests hold it to):

* **Every combination is its own ``Run``** on one provider, with the setting's continuation policy,
  reasoning and step limit. Runs of one model share one adapter (one SDK client and connection
  pool); nothing else is shared, and nothing opaque crosses runs.
* **Two executors, one contract**: ``executor="asyncio"`` (default) runs every run on this
  process's event loop; ``executor="ray"`` runs each inside one Ray task
  (:mod:`agentlab.sweeps.ray_executor`: its own adapter per run, the limiters in a shared actor,
  only the row comes back). Both build rows with :func:`run_plan` and record them here, so
  resume, budget, outage isolation and storage stops below hold for either.
* **Results stream to disk** (:mod:`agentlab.sweeps.store`): one row per finished run, written and
  fsynced as it finishes. Cancelled runs (Ctrl-C, kernel interrupt, an exception from
  ``on_progress``) write nothing and are redone on resume; finished rows are never redone.
* **Resume** is the same call again: keys ``(task_id, model, setting, repeat)`` already in the file
  are skipped; ``retry_failed=True`` also redoes runs whose last row failed (provider outage). A
  setting whose definition changed under the same name is refused (``ConfigError``): mixing two
  definitions under one name would corrupt the comparison.
* **Per-provider concurrency** (:class:`~agentlab.sweeps.limiter.AdaptiveLimiter`): at most
  ``concurrency`` runs in flight per provider; 429/overloaded answers halve that and hold the
  provider's new calls for ``retry-after``; the run retries on the same adapter (SDK-level retries
  are turned off so every 429 is seen). Other providers keep going.
* **Outage isolation**: after ``max_consecutive_failures`` failed runs in a row on one provider, that
  provider starts no more runs in this call (they stay unrecorded, so a later resume runs them); the
  other providers are not affected.
* **A results file that cannot be written stops the sweep**: when a row cannot be appended (disk
  full, I/O error) no new run starts (no spending on results it cannot keep), the runs in flight
  are cancelled, and the call raises ``StorageError`` naming the file, the errno and the counts. The
  file holds whole rows only, so calling again once space is back resumes where it stopped.
* **Budget guard**: before starting each run, the file's spend so far (every row, including earlier
  calls and superseded failed attempts: money actually spent) is compared with ``budget_usd`` and
  ``budget_tokens`` (input + output). Past a limit no new run starts; runs in flight finish and are
  recorded. A run is also held back while the runs in flight, at this call's average cost, would
  cross the limit, so the overshoot stays near one run's cost rather than ``concurrency`` runs. The
  report then has ``status="budget_exceeded"`` and a message; ``report.raise_for_status()`` raises
  ``BudgetExceededError``. A USD budget needs a price for every model (else ``ConfigError``).

Continuity as a knob: ``Setting(continuation_policy="drop")`` is the ablation where the provider
accepts it (reasoning items are not sent back within the loop): OpenAI, and Gemini (Gemini 3 gets
Google's documented dummy signature in place of the withheld ones, 2.5 takes none). Anthropic
rejects a tool loop whose thinking blocks are not sent back while thinking is on, so that
combination is refused with an explanation; the Anthropic ablation is thinking off
(:func:`continuity_settings` builds both).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import json
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel

from agentlab.adapters.base import Adapter, ModelRef, check_simulated, create_adapter, parse_model
from agentlab.adapters.registry import get_provider, provider_names
from agentlab.errors import (
    BudgetExceededError,
    ConfigError,
    InvalidSettingsError,
    MissingExtraError,
    OutputValidationError,
    OverloadedError,
    RateLimitError,
    StorageError,
)
from agentlab.loop.output import structured_output
from agentlab.loop.result import RunResult
from agentlab.loop.runner import ContinuationPolicy, Run, SessionLink
from agentlab.loop.sync import run_sync
from agentlab.loop.tools import DEFAULT_TOOL_TIMEOUT_S, Tool, as_tools, check_timeout
from agentlab.neutral import _inputs
from agentlab.neutral.error_text import durable_error_text
from agentlab.neutral.events import AdapterEvent, DiagnosticEvent, ToolCallEvent
from agentlab.neutral.output import OutputSpec
from agentlab.neutral.request import CallOptions, ModelRequest, ReasoningSettings, ServiceTier
from agentlab.records.logs import get_logger, redact_secrets
from agentlab.sweeps.limiter import AdaptiveLimiter, LimiterStats
from agentlab.sweeps.progress import ProgressDisplay, SweepProgress, make_display
from agentlab.sweeps.store import ResultsFile, RunKey, read_rows, row_key
from agentlab.sweeps.tasks import Task, load_tasks

if TYPE_CHECKING:
    import pandas as pd

    from agentlab.sweeps.ray_executor import RayExecutor

__all__ = ["Setting", "SweepReport", "SweepStatus", "asweep", "continuity_settings", "sweep"]

log = get_logger(__name__)

SweepStatus = Literal["completed", "budget_exceeded", "provider_down"]
Executor = Literal["asyncio", "ray"]
EXECUTORS: tuple[Executor, ...] = ("asyncio", "ray")
_ERROR_CHARS = 500


def _reasoning(
    value: ReasoningSettings | Mapping[str, Any] | str | None, name: str
) -> ReasoningSettings | None:
    """Same rules as ``Run(reasoning=...)`` (one helper owns them); ``None`` stays "the default"."""
    return None if value is None else _inputs.reasoning_settings(value, f"setting {name!r}: reasoning")


@dataclass(frozen=True)
class Setting:
    """One arm of a sweep: how each run is configured. ``name`` labels it in results.

    ``providers`` restricts the setting to some providers (``None``: all), which is how an ablation
    that only one provider can run (``drop`` on OpenAI) sits beside its counterpart on the other
    (thinking off on Anthropic) in one sweep.

    The per-call knobs (``temperature``, ``tool_choice``, ``stream``, ...) are fields too, flat or as
    one ``options=CallOptions(...)`` (or a dict), exactly as ``Run`` takes them; after construction
    ``options`` holds them all and the flat fields are left as given. A knob a provider refuses fails
    that model's runs (a failed row naming the knob), before anything is sent.
    """

    name: str
    continuation_policy: ContinuationPolicy = "verbatim"
    reasoning: ReasoningSettings | None = None
    max_steps: int = 20
    max_output_tokens: int | None = None
    system: str | None = None
    providers: tuple[str, ...] | None = None
    options: CallOptions | Mapping[str, Any] | None = None
    temperature: float | None = None
    top_p: float | None = None
    tool_choice: str | None = None
    parallel_tool_calls: bool | None = None
    stream: bool | None = None
    stop_sequences: Sequence[str] | None = None
    metadata: Mapping[str, str] | None = None
    user_id: str | None = None
    service_tier: ServiceTier | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError(f"a setting needs a non-empty name, got {self.name!r}")
        if self.continuation_policy not in ("verbatim", "drop"):
            raise ConfigError(
                f"setting {self.name!r}: continuation_policy must be 'verbatim' or 'drop', "
                f"got {self.continuation_policy!r}"
            )
        object.__setattr__(self, "reasoning", _reasoning(self.reasoning, self.name))
        where = f"setting {self.name!r}:"
        _inputs.positive_int(self.max_steps, f"{where} max_steps")
        if self.max_output_tokens is not None:
            _inputs.positive_int(
                self.max_output_tokens, f"{where} max_output_tokens", error=InvalidSettingsError
            )
        if self.system is not None:
            _inputs.check_text(self.system, f"{where} system")
        if self.providers is not None:
            if isinstance(self.providers, str):  # tuple("openai") would be six one-letter providers
                raise ConfigError(f"{where} providers must be a list, e.g. providers=({self.providers!r},)")
            object.__setattr__(self, "providers", tuple(self.providers))
        flat = {k: getattr(self, k) for k in _inputs.CALL_KNOBS if k != "reset_tool_choice"}
        object.__setattr__(self, "options", _inputs.call_options(self.options, f"{where} options", **flat))

    @property
    def call_options(self) -> CallOptions:
        """The knobs every run of this setting gets (``options`` after construction, typed)."""
        assert isinstance(self.options, CallOptions)
        return self.options

    def applies_to(self, provider: str) -> bool:
        """Whether this setting runs for ``provider`` (``providers=None``: every provider)."""
        return self.providers is None or provider in self.providers

    @property
    def thinking(self) -> bool:
        """Whether reasoning is on (``reasoning=None`` is a run's default, which reasons)."""
        return self.reasoning is None or self.reasoning.enabled

    def fingerprint(self, output: OutputSpec | None = None) -> str:
        """A hash of what changes a run (not the name, not ``providers``).

        ``output`` is the sweep's ``output_type`` as sent (name, schema, strictness): rows answered
        in one schema must not resume as rows of another. Without it (and without knobs) the hash is
        the one results files written before either existed hold, so they still resume.
        """
        data = {
            "continuation_policy": self.continuation_policy,
            "reasoning": self.reasoning.model_dump(mode="json") if self.reasoning else None,
            "max_steps": self.max_steps,
            "max_output_tokens": self.max_output_tokens,
            "system": self.system,
        }
        if self.call_options != CallOptions():  # settings without knobs keep their earlier fingerprint
            data["options"] = self.call_options.model_dump(mode="json")
        if output is not None:
            data["output"] = output.model_dump(mode="json", include={"name", "json_schema", "strict"})
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def continuity_settings(*, max_steps: int = 20) -> list[Setting]:
    """The continuity ablation each provider can actually run (the arms follow the specs).

    ``verbatim`` (all providers): opaque reasoning goes back within the loop (the default).
    ``drop`` (OpenAI, Google Gemini): reasoning items are not sent back; the model loses its plan
    (on Gemini 3 the calls carry Google's documented dummy signature, which the API accepts in place
    of the real one; the model works without its earlier steps' reasoning).
    ``thinking_off`` (Anthropic): Anthropic cannot drop thinking blocks mid-loop while thinking
    is on (the API rejects it), so its ablation is no thinking at all: a different question (what
    reasoning buys), labelled as such.
    """
    can_drop, cannot = _drop_split()
    return [
        Setting("verbatim", max_steps=max_steps),
        Setting("drop", continuation_policy="drop", max_steps=max_steps, providers=can_drop),
        Setting(
            "thinking_off",
            reasoning=ReasoningSettings(enabled=False),
            max_steps=max_steps,
            providers=cannot,
        ),
    ]


def _drop_split() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(providers that can drop reasoning mid-loop, providers that cannot)``, from their specs."""
    specs = [get_provider(n) for n in provider_names()]
    return (
        tuple(s.name for s in specs if s.drop_with_reasoning),
        tuple(s.name for s in specs if not s.drop_with_reasoning),
    )


def _check_combination(ref: ModelRef, s: Setting) -> None:
    spec = get_provider(ref.provider)
    refusal = spec.drop_refusal_for(ref.model) if s.continuation_policy == "drop" and s.thinking else None
    if refusal is not None:
        can_drop, _ = _drop_split()
        raise InvalidSettingsError(
            f"setting {s.name!r} (continuation_policy='drop') cannot run on {ref}: {refusal}, "
            "so a 'drop' run would only be possible by rewriting the tool calls as plain text, which is "
            f"a different experiment, not the ablation. For {spec.label}, ablate with "
            f"{spec.reasoning_term} off: "
            "Setting('thinking_off', reasoning=ReasoningSettings(enabled=False), "
            f"providers=({spec.name!r},)), and give 'drop' providers={can_drop!r}; "
            "agentlab.sweeps.continuity_settings() builds exactly that."
        )


def _settings(settings: Iterable[Setting | str] | Mapping[str, Mapping[str, Any]] | None) -> list[Setting]:
    if settings is None:
        return [Setting("default")]
    out: list[Setting] = []
    if isinstance(settings, Mapping):
        for name, kw in settings.items():
            if not isinstance(kw, Mapping):
                raise ConfigError(f"setting {name!r}: expected a dict of Setting fields, got {kw!r}")
            try:
                out.append(Setting(name, **dict(kw)))
            except TypeError as e:
                raise ConfigError(f"setting {name!r}: {e}") from None
    else:
        for s in settings:
            out.append(Setting(s) if isinstance(s, str) else s)
            if not isinstance(out[-1], Setting):
                raise ConfigError(f"settings must be Setting objects, names or a dict, got {s!r}")
    names = [s.name for s in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"duplicate setting names {dup}; names key the results")
    if not out:
        raise ConfigError("settings is empty; pass None for one default setting")
    return out


# ---------------------------------------------------------------------- the gate around an adapter


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


# ---------------------------------------------------------------------- the report


@dataclass
class SweepReport:
    """What one ``sweep`` call did. The data is in the results file: ``frame()`` / ``summary()``."""

    path: Path
    status: SweepStatus
    planned: int
    from_file: int
    ran: int
    failed: int
    not_started: int
    cost_usd: float
    tokens: int
    wall_s: float
    message: str | None = None
    limiters: dict[str, LimiterStats] = field(default_factory=dict)

    def frame(self) -> pd.DataFrame:
        """The results file as a frame (one row per run key; see ``load_results``)."""
        from agentlab.sweeps.analysis import load_results

        return load_results(self.path)

    def summary(self, by: Sequence[str] = ("model", "setting")) -> pd.DataFrame:
        """Success rate with Wilson intervals, steps, tokens, cost per solved task, reasoning share."""
        from agentlab.sweeps.analysis import summarize

        return summarize(self.frame(), by=by)

    def raise_for_status(self) -> SweepReport:
        """Return self, or raise ``BudgetExceededError`` when the budget guard stopped the sweep."""
        if self.status == "budget_exceeded":
            raise BudgetExceededError(self.message or "sweep budget exceeded")
        return self

    def __str__(self) -> str:
        head = (
            f"sweep {self.status}: {self.from_file + self.ran}/{self.planned} runs in {self.path} "
            f"({self.ran} ran now, {self.from_file} from file, {self.failed} failed, "
            f"{self.not_started} not started), ${self.cost_usd:.4f} in the file, {self.wall_s:.1f} s"
        )
        return f"{head}\n{self.message}" if self.message else head

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


# ---------------------------------------------------------------------- the sweep


@dataclass
class _Plan:
    key: RunKey
    task: Task
    ref: ModelRef
    setting: Setting


def _iso_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _concurrency(value: int | Mapping[str, int], providers: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in providers:
        v = value.get(p, 4) if isinstance(value, Mapping) else value
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ConfigError(f"concurrency for {p} must be an int >= 1, got {v!r}")
        out[p] = v
    return out


def _row(
    plan: _Plan,
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
        input_tokens=u.input_tokens,
        cache_read_tokens=u.cache_read_tokens,
        cache_write_tokens=u.cache_write_tokens,
        output_tokens=u.output_tokens,
        reasoning_tokens=u.reasoning_tokens,
        reasoning_source=u.reasoning_source,
        reasoning_items_dropped=result.usage.reasoning_items_dropped,
        input_cost_usd=cost.input,
        cache_read_cost_usd=cost.cache_read,
        cache_write_cost_usd=cost.cache_write,
        output_cost_usd=cost.output,
        reasoning_cost_usd=cost.reasoning,
        total_cost_usd=cost.total,
        provider_cost_usd=result.usage.provider_cost_usd,
        price_source=cost.source,
        price_updated=cost.updated,
        retries=retries,
        rate_limited=rate_limited,
        stop_reason=result.stop_reason,
        output=result.output,
        **_output_columns(result),
        error_type=error_type,
        error=None if error is None else redact_secrets(error)[:_ERROR_CHARS],
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


def _usd(v: Any) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) else 0.0


def _spend(row: Mapping[str, Any]) -> tuple[float, int]:
    """What a row cost (USD, input + output tokens): the run's, plus its judges' (an evaluation's).

    A judge's spend is kept out of the run's own columns, but it is money spent, so the budget
    guard and the report count it.
    """
    usd = _usd(row.get("total_cost_usd"))
    tokens = (row.get("input_tokens") or 0) + (row.get("output_tokens") or 0)
    for score in (row.get("scores") or {}).values():
        judge = score.get("judge") if isinstance(score, dict) else None
        if isinstance(judge, dict):
            usd += _usd(judge.get("cost_usd"))
            tokens += (judge.get("input_tokens") or 0) + (judge.get("output_tokens") or 0)
    return usd, int(tokens)


_DONE = object()


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
    """Set when a row could not be written: the sweep stops (see :func:`_stopped_on_storage`)."""
    unwritten: int = 0

    def stops(self, provider: str) -> bool:
        """No new run of ``provider`` may start: budget reached, provider down, or file unwritable."""
        return bool(self.budget) or provider in self.down or self.storage is not None


def _stopped_on_storage(e: StorageError, st: _State, cancelled: int, not_started: int) -> StorageError:
    """The error a sweep raises when its results file could not take a row, with what happened."""
    return StorageError(
        f"{e}; sweep stopped: {st.done} run(s) recorded in this call, {st.unwritten} finished run(s) "
        f"could not be recorded, {cancelled} in flight were cancelled and {not_started} not started; "
        "call sweep again with the same results file to resume once it can be written (finished rows "
        "are kept, the rest is run then)",
        path=e.path,
        errno=e.errno,
    )


def _check_limits(
    repeats: object,
    budget_usd: object,
    budget_tokens: object,
    max_consecutive_failures: object,
    retries: object,
) -> None:
    """The sweep's counts and budgets (bools are not counts; a NaN budget would never stop anything)."""
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
        raise ConfigError(f"repeats must be an int >= 1, got {repeats!r}")
    if budget_usd is not None and (
        isinstance(budget_usd, bool)
        or not isinstance(budget_usd, int | float)
        or not math.isfinite(budget_usd)
        or budget_usd < 0
    ):
        raise ConfigError(f"budget_usd must be a number >= 0, got {budget_usd!r}")
    if budget_tokens is not None and (
        isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0
    ):
        raise ConfigError(f"budget_tokens must be an int >= 0, got {budget_tokens!r}")
    if max_consecutive_failures is not None and (
        isinstance(max_consecutive_failures, bool)
        or not isinstance(max_consecutive_failures, int)
        or max_consecutive_failures < 1
    ):
        raise ConfigError(
            f"max_consecutive_failures must be an int >= 1 or None, got {max_consecutive_failures!r}"
        )
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise ConfigError(f"retries must be an int >= 0, got {retries!r}")


# ---------------------------------------------------------------------- the steps of a sweep


def _models(
    models: Sequence[str | ModelRef], adapter_factory: Callable[[ModelRef], Adapter] | None
) -> list[ModelRef]:
    """Parse and check the model list once, so a typo fails before anything runs, not in every run."""
    if isinstance(models, str):
        raise ConfigError("models must be a list of 'provider:model' strings, e.g. ['openai:sim-reasoner']")
    refs = [parse_model(m) for m in models]
    if not refs:
        raise ConfigError("no models to run")
    for ref in refs if adapter_factory is None else ():
        check_simulated(ref)  # a simulated-model typo fails here with the nearest name, not in every run
    dup = sorted({str(r) for r in refs if sum(str(x) == str(r) for x in refs) > 1})
    if dup:
        raise ConfigError(f"duplicate models {dup}")
    return refs


def _check_arms(refs: Sequence[ModelRef], setting_list: Sequence[Setting], budget_usd: float | None) -> None:
    """Refuse combinations a provider cannot run, and a USD budget that could not be measured."""
    for ref in refs:
        for s in setting_list:
            if s.applies_to(ref.provider):
                _check_combination(ref, s)
    if budget_usd is not None:
        from agentlab.costs.pricing import get_price

        unpriced = [str(r) for r in refs if get_price(r.provider, r.model) is None]
        if unpriced:
            raise ConfigError(
                f"budget_usd needs a price for every model; none for {unpriced}. Add one with "
                "agentlab.set_price(provider, model, {...}) or use budget_tokens."
            )


def _build_plan(
    task_list: Sequence[Task], refs: Sequence[ModelRef], setting_list: Sequence[Setting], repeats: int
) -> list[_Plan]:
    """Every (task, model, setting, repeat) the sweep covers, in a fixed order (tasks outermost).

    Pure: the same inputs give the same keys in the same order, which is what resume relies on.
    Settings restricted to other providers (``providers=``) are left out for that model.
    """
    plan: list[_Plan] = []
    for task in task_list:
        for ref in refs:
            for s in setting_list:
                if not s.applies_to(ref.provider):
                    continue
                for rep in range(repeats):
                    plan.append(_Plan((task.id, str(ref), s.name, rep), task, ref, s))
    return plan


@dataclass
class _Finished:
    """What the results file already holds: the last status per key and the money spent so far."""

    last_status: dict[RunKey, str] = field(default_factory=dict)
    usd: float = 0.0
    tokens: int = 0


def _read_finished(path: Path, fingerprints: Mapping[str, str]) -> _Finished:
    """Read every row (including superseded failures: their money was spent) and check definitions.

    A setting whose fingerprint differs from the one recorded under its name is refused, since mixing
    two definitions under one name would corrupt the comparison.
    """
    out = _Finished()
    for row in read_rows(path):
        key = row_key(row)
        out.last_status[key] = str(row.get("status"))
        c, t = _spend(row)
        out.usd += c
        out.tokens += t
        name = key[2]
        if name in fingerprints and row.get("settings_fingerprint") not in (None, fingerprints[name]):
            raise ConfigError(
                f"{path}: setting {name!r} was run with a different definition before (fingerprint "
                f"{row.get('settings_fingerprint')} vs {fingerprints[name]} now); give the changed "
                "setting a new name or use a new results file"
            )
    return out


def _pending(plan: Sequence[_Plan], last_status: Mapping[RunKey, str], retry_failed: bool) -> list[_Plan]:
    """The plan minus finished keys; ``retry_failed`` also keeps keys whose last row failed."""
    todo: list[_Plan] = []
    for p in plan:
        prev = last_status.get(p.key)
        if prev is None or (retry_failed and prev == "failed"):
            todo.append(p)
    return todo


@dataclass(frozen=True)
class _Budget:
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


@dataclass(frozen=True)
class _RunConfig:
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


def _check_task_tools(tasks: Sequence[Task], tools: Sequence[Tool]) -> None:
    """A task naming a tool the sweep does not have fails here, before anything runs."""
    names = {t.name for t in tools}
    for task in tasks:
        unknown = sorted(set(task.tools or ()) - names)
        if unknown:
            raise ConfigError(
                f"task {task.id}: unknown tool(s) {unknown}; the tools given are {sorted(names)}"
            )


async def run_plan(
    p: _Plan,
    adapter: Callable[[], Adapter],
    gate: _Gate,
    cfg: _RunConfig,
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
    at, t0 = _iso_now(), time.perf_counter()
    run: Run | None = None
    err: BaseException | None = None
    try:
        gated = _GatedAdapter(adapter(), gate)
        run = Run(
            p.ref,
            prompt,
            tools=_task_tools(p.task, cfg.tools),
            system=p.task.system if p.task.system is not None else s.system,
            reasoning=s.reasoning,
            max_steps=max_steps,
            max_output_tokens=s.max_output_tokens,
            options=s.call_options,
            continuation_policy=s.continuation_policy,
            adapter=gated,
            session=session,
            retries=cfg.retries,
            retry_delay=cfg.retry_delay,
            tool_timeout=cfg.tool_timeout,
            output_type=cfg.output_type,
        )
        if on_run is not None:
            on_run(run)
        await run.arun()
    except Exception as e:  # the run's own record says what failed; keep the sweep going
        err = e
    result = run.result if run is not None else None
    row = _row(p, result, err, time.perf_counter() - t0, at, cfg.fingerprints[s.name])
    if cfg.score_run is not None:
        row.update(await cfg.score_run(p.task, result))
    return row


class _Scheduler:
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
        todo: Sequence[_Plan],
        concurrency: Mapping[str, int],
        finished: _Finished,
        budget: _Budget,
        writer: ResultsFile,
        config: _RunConfig,
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
        self.queues: dict[str, collections.deque[_Plan]] = {p: collections.deque() for p in concurrency}
        for p in todo:
            self.queues[p.ref.provider].append(p)
        self.adapters: dict[str, Adapter] = {}
        self.events: asyncio.Queue[Any] = asyncio.Queue()
        """``None`` when a run starts, a ``SweepProgress`` when one was recorded, ``_DONE`` per worker."""
        self.st = _State(usd=finished.usd, tokens=finished.tokens, consecutive=dict.fromkeys(concurrency, 0))
        self.st.budget = self.budget.reached(self.st.usd, self.st.tokens)
        self.remote_stats: dict[str, LimiterStats] | None = None
        """Set by the Ray executor: its limiters live in a shared actor, not in these objects."""

    # -------------------------------------------------------------- progress

    def not_started(self) -> int:
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

    async def run_one(self, p: _Plan) -> dict[str, Any]:
        """Run one plan entry to its results row on the model's shared adapter."""
        return await run_plan(p, lambda: self.adapter_for(p.ref), self.limiters[p.ref.provider], self.config)

    # -------------------------------------------------------------- record a result

    def record(self, p: _Plan, row: dict[str, Any]) -> None:
        """Append the row, then count it; a row the file cannot take stops the sweep instead."""
        st = self.st
        try:
            self.writer.append(row)
        except StorageError as e:  # the file is as it was; stop spending on rows it cannot keep
            st.storage = st.storage or e
            st.unwritten += 1
            return
        c, t = _spend(row)
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
            self.events.put_nowait(_DONE)

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
    sched: _Scheduler,
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
        if item is _DONE:
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


async def _execute(
    sched: _Scheduler,
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


def say_stopped(sched: _Scheduler, display: ProgressDisplay | None) -> None:
    """The final progress line of an interrupted or storage-stopped sweep (either executor)."""
    if display is not None:
        why = "results file not writable" if sched.st.storage else "interrupted"
        display.update(sched.snapshot(f"{why}: finished runs are saved; call again to resume"), final=True)


def _report(sched: _Scheduler, path: Path, display: ProgressDisplay | None, cancelled: int) -> SweepReport:
    """The final status, message and figures (or the ``StorageError`` of a storage stop)."""
    st = sched.st
    not_started = sched.not_started()
    if st.storage is not None:
        raise _stopped_on_storage(st.storage, st, cancelled, not_started)
    status: SweepStatus = "completed"
    msgs: list[str] = []
    if st.budget:
        status = "budget_exceeded"
        msgs.append(f"{st.budget}; {not_started} run(s) not started (raise the budget and call again)")
    if st.down:
        if status == "completed":
            status = "provider_down"
        msgs += list(st.down.values())
        msgs.append(
            "call again later to run what was not started (retry_failed=True also redoes failed runs)"
        )
    message = "\n".join(msgs) or None
    if display is not None:
        display.update(sched.snapshot(message), final=True)
    return SweepReport(
        path=path,
        status=status,
        planned=sched.plan_size,
        from_file=sched.from_file,
        ran=st.done,
        failed=st.failed,
        not_started=not_started,
        cost_usd=st.usd,
        tokens=st.tokens,
        wall_s=time.monotonic() - sched.t_start,
        message=message,
        limiters=sched.limiter_stats(),
    )


def _open_results(path: Path, fsync: bool, fingerprints: Mapping[str, str]) -> tuple[ResultsFile, _Finished]:
    """Open the results file (cutting a torn last line first, so reading sees none) and read it.

    The writer is closed again if reading fails (a changed setting definition, unreadable file).
    """
    writer = ResultsFile(path, fsync=fsync)
    try:
        return writer, _read_finished(path, fingerprints)
    except BaseException:
        writer.close()
        raise


async def asweep(
    tasks: str | Path | Iterable[Task | Mapping[str, Any] | str],
    models: Sequence[str | ModelRef],
    *,
    results: str | Path,
    tools: Iterable[Tool | Callable[..., Any]] = (),
    settings: Iterable[Setting | str] | Mapping[str, Mapping[str, Any]] | None = None,
    repeats: int = 1,
    concurrency: int | Mapping[str, int] = 4,
    budget_usd: float | None = None,
    budget_tokens: int | None = None,
    retry_failed: bool = False,
    max_consecutive_failures: int | None = 5,
    retries: int = 6,
    retry_delay: float = 0.5,
    progress: str | ProgressDisplay | None = "auto",
    on_progress: Callable[[SweepProgress], Any] | None = None,
    adapter_factory: Callable[[ModelRef], Adapter] | None = None,
    fsync: bool = True,
    tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT_S,
    output_type: Any = None,
    backend: Literal["asyncio", "batch"] = "asyncio",
    batch: Mapping[str, Any] | Any = None,
    executor: Executor = "asyncio",
    ray_options: Mapping[str, Any] | None = None,
    score_run: ScoreRun | None = None,
) -> SweepReport:
    """Run every (task, model, setting, repeat) not yet in ``results``; see the module docstring.

    ``tasks``: a JSONL path or a list of ``Task``s / dicts / prompts. ``models``: ``provider:model``
    strings. ``settings``: ``Setting``s, names, or ``{name: {field: value}}`` (default: one setting
    ``"default"``). ``concurrency``: runs in flight per provider (an int, or ``{"openai": 8, ...}``).
    ``on_progress`` gets a :class:`SweepProgress` after each finished run; an exception it raises
    stops the sweep (runs in flight are cancelled and not recorded). ``adapter_factory(ref)`` builds
    the shared adapter of each model (default: ``create_adapter(ref, max_retries=0)``); the sweep
    closes what it builds. ``tool_timeout`` bounds each tool call of every run (see ``Run``);
    ``output_type`` asks every run for a structured answer (its row holds the validated value as
    JSON in ``output_value`` and ``output_valid``). ``backend="batch"`` sends every model call
    through the provider's batch API, all runs advancing one step per round, at batch prices
    (:mod:`agentlab.sweeps.batch.driver`; ``batch={"runs", "poll_s", "poll_max_s"}`` tunes it).
    ``executor="ray"`` runs each (live) run inside one Ray task (:mod:`agentlab.sweeps.ray_executor`;
    the ``ray`` extra), with ``ray_options`` (e.g. ``{"num_cpus": 0.25}``) passed to each task; the
    default ``"asyncio"`` runs them all on this process's event loop. ``score_run`` adds fields to
    each row before it is written (see :data:`ScoreRun`; ``agentlab.evals.evaluate`` passes its
    scorers this way). The whole configuration is validated before anything runs.
    """
    t_start = time.monotonic()
    task_list = load_tasks(tasks)
    if not task_list:
        raise ConfigError("no tasks to run")
    refs = _models(models, adapter_factory)
    setting_list = _settings(settings)
    _check_limits(repeats, budget_usd, budget_tokens, max_consecutive_failures, retries)
    tool_list = list(as_tools(tools).values())  # a bad tool fails here, once, not in every run
    _check_task_tools(task_list, tool_list)
    _inputs.callable_or_none(on_progress, "on_progress")
    _inputs.callable_or_none(adapter_factory, "adapter_factory")
    _inputs.callable_or_none(score_run, "score_run")
    check_timeout(tool_timeout, "tool_timeout", ConfigError)
    structured = structured_output(output_type)
    _check_arms(refs, setting_list, budget_usd)
    if backend not in ("asyncio", "batch"):
        raise ConfigError(f"backend must be 'asyncio' or 'batch', got {backend!r}")
    batch_opts = None
    if backend == "batch":
        from agentlab.sweeps.batch.driver import batch_options, check_batch_providers

        batch_opts = batch_options(batch)
        check_batch_providers(refs)
        concurrency = batch_opts.runs
    elif batch is not None:
        raise ConfigError("batch= options need backend='batch'")
    conc = _concurrency(concurrency, dict.fromkeys(r.provider for r in refs))
    fingerprints = {s.name: s.fingerprint(structured.spec if structured else None) for s in setting_list}
    plan = _build_plan(task_list, refs, setting_list, repeats)
    display = progress if not isinstance(progress, str | type(None)) else make_display(progress)
    if not plan:
        raise ConfigError("no (model, setting) combination applies: check each setting's providers=")

    config = _RunConfig(
        tools=tool_list,
        retries=retries,
        retry_delay=retry_delay,
        tool_timeout=tool_timeout,
        fingerprints=fingerprints,
        adapter_factory=adapter_factory,
        max_consecutive_failures=max_consecutive_failures,
        output_type=output_type,
        score_run=score_run,
    )
    ray_exec = _ray_executor(executor, ray_options, backend, config, refs, task_list)

    path = Path(results)
    writer, finished = _open_results(path, fsync, fingerprints)
    todo = _pending(plan, finished.last_status, retry_failed)
    common: dict[str, Any] = dict(
        plan_size=len(plan),
        from_file=len(plan) - len(todo),
        todo=todo,
        concurrency=conc,
        finished=finished,
        budget=_Budget(budget_usd, budget_tokens),
        writer=writer,
        config=config,
        t_start=t_start,
    )
    if batch_opts is not None:
        from agentlab.sweeps.batch.driver import batch_scheduler

        sched: _Scheduler = await batch_scheduler(path=path, options=batch_opts, fsync=fsync, **common)
    else:
        sched = _Scheduler(**common)
    if ray_exec is None:
        cancelled = await _execute(sched, display, on_progress)
    else:
        cancelled = await ray_exec.execute(sched, display, on_progress)
    return _report(sched, path, display, cancelled)


def _ray_executor(
    executor: object,
    ray_options: Mapping[str, Any] | None,
    backend: str,
    config: _RunConfig,
    refs: Sequence[ModelRef],
    tasks: Sequence[Task],
) -> RayExecutor | None:
    """Check the executor choice (``None``: asyncio); Ray's module is imported only when chosen."""
    if executor not in EXECUTORS:
        raise ConfigError(f"executor must be one of {', '.join(map(repr, EXECUTORS))}, got {executor!r}")
    if executor == "asyncio":
        if ray_options is not None:
            raise ConfigError("ray_options applies to executor='ray' only")
        return None
    if backend == "batch":
        raise ConfigError(
            "executor='ray' runs live calls, one run per Ray task; backend='batch' needs every run's "
            "calls in one driver process: use one or the other"
        )
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise MissingExtraError("The Ray executor (executor='ray')", "ray", "ray")
    from agentlab.sweeps.ray_executor import prepare

    return prepare(config, refs, tasks, ray_options)


def sweep(
    tasks: str | Path | Iterable[Task | Mapping[str, Any] | str],
    models: Sequence[str | ModelRef],
    *,
    results: str | Path,
    progress: str | ProgressDisplay | None = "auto",
    **kw: Any,
) -> SweepReport:
    """Sync form of :func:`asweep` (works inside Jupyter's running loop; Ctrl-C stops it cleanly).

    The progress display is created here, in the caller's thread, so a notebook bar appears in the
    calling cell.
    """
    _inputs.check_kwargs(kw, asweep, "sweep")
    display = make_display(progress) if isinstance(progress, str) else progress
    return run_sync(asweep(tasks, models, results=results, progress=display, **kw))
