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

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentlab.adapters.base import Adapter, ModelRef
from agentlab.errors import (
    ConfigError,
)
from agentlab.loop.output import structured_output
from agentlab.loop.sync import run_sync
from agentlab.loop.tools import DEFAULT_TOOL_TIMEOUT_S, Tool, ToolLike, as_tools, check_timeout
from agentlab.neutral import _inputs
from agentlab.sweeps.execution import EXECUTORS, Backend, ExecutionOptions, Executor
from agentlab.sweeps.plan import Finished, build_plan, check_arms, pending, read_finished, resolve_models
from agentlab.sweeps.progress import ProgressDisplay, SweepProgress, make_display
from agentlab.sweeps.report import SweepReport, SweepStatus, build_report
from agentlab.sweeps.rows import RunConfig, ScoreRun, check_task_tools
from agentlab.sweeps.schedule import Budget, Scheduler, check_limits, concurrency_limits, execute
from agentlab.sweeps.settings import Setting, continuity_settings, parse_settings
from agentlab.sweeps.store import ResultsFile
from agentlab.sweeps.tasks import Task, load_tasks

if TYPE_CHECKING:
    from agentlab.sweeps.batch.driver import BatchOptions

__all__ = [
    "EXECUTORS",
    "ExecutionOptions",
    "Executor",
    "Setting",
    "SweepReport",
    "SweepStatus",
    "asweep",
    "continuity_settings",
    "sweep",
]

def _open_results(path: Path, fsync: bool, fingerprints: Mapping[str, str]) -> tuple[ResultsFile, Finished]:
    """Open the results file (cutting a torn last line first, so reading sees none) and read it.

    The writer is closed again if reading fails (a changed setting definition, unreadable file).
    """
    writer = ResultsFile(path, fsync=fsync)
    try:
        return writer, read_finished(path, fingerprints)
    except BaseException:
        writer.close()
        raise


async def asweep(
    tasks: str | Path | Iterable[Task | Mapping[str, Any] | str],
    models: Sequence[str | ModelRef],
    *,
    results: str | Path,
    tools: Iterable[ToolLike] = (),
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
    execution: ExecutionOptions | None = None,
    backend: Backend = "asyncio",
    batch: Mapping[str, Any] | Any = None,
    executor: Executor = "asyncio",
    ray_options: Mapping[str, Any] | None = None,
    score_run: ScoreRun | None = None,
) -> SweepReport:
    """Run every (task, model, setting, repeat) not yet in ``results``; see the module docstring.

    ``tasks``: a JSONL path or ``Task``s / dicts / prompts; ``models``: ``provider:model`` strings;
    ``settings``: ``Setting``s, names or ``{name: {field: value}}``; ``concurrency``: runs in flight
    per provider (an int or ``{"openai": 8}``). ``on_progress(SweepProgress)`` after each run (raising
    stops the sweep); ``adapter_factory(ref)`` builds each model's shared adapter (the sweep closes
    it); ``tool_timeout`` bounds each tool call; ``output_type`` asks every run for a structured
    answer; ``score_run`` adds fields to each row before it is written (:data:`ScoreRun`).
    ``execution`` (or ``backend``, ``batch``, ``executor``, ``ray_options``): how the runs are carried
    out, see :class:`~agentlab.sweeps.execution.ExecutionOptions`. All is checked before anything runs.
    """
    t_start = time.monotonic()
    exe = ExecutionOptions.resolve(
        execution, backend=backend, batch=batch, executor=executor, ray_options=ray_options
    )
    task_list, refs, setting_list, tool_list = _checked(tasks, models, settings, tools, adapter_factory)
    check_limits(repeats, budget_usd, budget_tokens, max_consecutive_failures, retries)
    for fn, name in ((on_progress, "on_progress"), (score_run, "score_run")):
        _inputs.callable_or_none(fn, name)
    check_timeout(tool_timeout, "tool_timeout", ConfigError)
    structured = structured_output(output_type)
    check_arms(refs, setting_list, budget_usd)
    exe.check_models(refs)
    conc = concurrency_limits(exe.runs_in_flight(concurrency), dict.fromkeys(r.provider for r in refs))
    fingerprints = {s.name: s.fingerprint(structured.spec if structured else None) for s in setting_list}
    plan = build_plan(task_list, refs, setting_list, repeats)
    display = progress if not isinstance(progress, str | type(None)) else make_display(progress)
    if not plan:
        raise ConfigError("no (model, setting) combination applies: check each setting's providers=")
    config = RunConfig(
        tools=tool_list, retries=retries, retry_delay=retry_delay, tool_timeout=tool_timeout,
        fingerprints=fingerprints, adapter_factory=adapter_factory,
        max_consecutive_failures=max_consecutive_failures, output_type=output_type, score_run=score_run,
    )  # fmt: skip
    ray_exec = exe.ray_executor(config, refs, task_list)
    path = Path(results)
    writer, finished = _open_results(path, fsync, fingerprints)
    todo = pending(plan, finished.last_status, retry_failed)
    sched = await _scheduler(
        exe.batch_options, path, fsync, plan_size=len(plan), from_file=len(plan) - len(todo), todo=todo,
        concurrency=conc, finished=finished, budget=Budget(budget_usd, budget_tokens), writer=writer,
        config=config, t_start=t_start,
    )  # fmt: skip
    run_all = execute if ray_exec is None else ray_exec.execute
    return build_report(sched, path, display, await run_all(sched, display, on_progress))


def _checked(
    tasks: str | Path | Iterable[Task | Mapping[str, Any] | str],
    models: Sequence[str | ModelRef],
    settings: Iterable[Setting | str] | Mapping[str, Mapping[str, Any]] | None,
    tools: Iterable[ToolLike],
    adapter_factory: Callable[[ModelRef], Adapter] | None,
) -> tuple[list[Task], list[ModelRef], list[Setting], list[Tool]]:
    """The tasks, models, settings and tools, each checked once (a bad tool fails here, not in every run)."""
    task_list = load_tasks(tasks)
    if not task_list:
        raise ConfigError("no tasks to run")
    refs = resolve_models(models, adapter_factory)
    _inputs.callable_or_none(adapter_factory, "adapter_factory")
    setting_list = parse_settings(settings)
    tool_list = list(as_tools(tools).values())
    check_task_tools(task_list, tool_list)
    return task_list, refs, setting_list, tool_list


async def _scheduler(batch: BatchOptions | None, path: Path, fsync: bool, **common: Any) -> Scheduler:
    """The asyncio scheduler, or the batch driver's (journal and manifest next to ``path``)."""
    if batch is None:
        return Scheduler(**common)
    from agentlab.sweeps.batch.driver import batch_scheduler

    return await batch_scheduler(path=path, options=batch, fsync=fsync, **common)


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
