"""``agentlab.compare``: the same task and tools on several models at once, side by side.

Every model gets its own :class:`~agentlab.run.Run` (each pinned to its provider; nothing opaque
crosses between them), and the runs are awaited together with ``asyncio.gather`` in one event loop,
so the wall time is about that of the slowest run, not the sum. In a Jupyter kernel a compare view
streams one column per model while they run; elsewhere nothing is drawn and the returned
:class:`Comparison` prints as a table.

One failing model does not stop the others: its entry has ``status="failed"`` and the error.

``repeats=N`` runs every model N times (at most ``concurrency`` runs at once), because one run of
a stochastic model proves little. :meth:`Comparison.spread` then gives, per model, the sweeps'
own summary (:func:`agentlab.sweeps.analysis.spread`: success rate with its Wilson interval, cost,
tokens and time per run as mean and 95% interval), and the frames carry a ``repeat`` column
(0-based, as in sweep results).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any

import agentlab.frontend as frontend
from agentlab.adapters.base import Adapter, ModelRef, parse_model
from agentlab.loop.runner import Run
from agentlab.loop.sync import run_sync
from agentlab.loop.tools import as_tools
from agentlab.sweeps.comparison import Comparison, ComparisonEntry

__all__ = ["Comparison", "ComparisonEntry", "acompare", "compare"]


def _labels(models: Sequence[str | ModelRef]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for m in models:
        s = str(parse_model(m))
        seen[s] = seen.get(s, 0) + 1
        out.append(s if seen[s] == 1 else f"{s}#{seen[s]}")
    return out


def _options_per_model(value: object, models: Sequence[str]) -> list[object]:
    """Each model's share of a compare's ``provider_options``: the keys with its provider's prefix.

    A compare across providers carries every provider's escape-hatch keys in one dict; each run is
    pinned to one provider and refuses another's keys, so each gets its own. A key of a provider
    that is not in the compare would do nothing anywhere: refused, like a misspelt keyword. Anything
    else (not a dict, a key without a provider's prefix) goes to every run, for ``Run`` to refuse.
    """
    from agentlab.adapters.option_rules import option_owner
    from agentlab.adapters.registry import get_provider, option_prefixes
    from agentlab.errors import InvalidSettingsError

    if not isinstance(value, Mapping):
        return [value] * len(models)
    mine = {m: get_provider(parse_model(m).provider).option_prefix for m in models}
    compared = tuple(dict.fromkeys(mine.values()))
    prefixes = tuple(dict.fromkeys((*option_prefixes(), *compared)))
    owner = {k: option_owner(k, prefixes) for k in value if isinstance(k, str)}
    stray = sorted(k for k, o in owner.items() if o is not None and o not in compared)
    if stray:
        raise InvalidSettingsError(
            f"provider_options {stray} are for no model of this compare (its providers take "
            f"{', '.join(p + '*' for p in compared)})"
        )
    shared = {k: v for k, v in value.items() if owner.get(k) is None}
    return [{**shared, **{k: v for k, v in value.items() if owner.get(k) == mine[m]}} for m in models]


def _prepare(
    task: str,
    models: Iterable[str | ModelRef],
    tools: Iterable[Any],
    live: bool | None,
    adapters: Sequence[Adapter | None] | None,
    run_kw: dict[str, Any],
    check: object = None,
    repeats: object = 1,
) -> tuple[list[str], list[str], list[Run], Callable[[], None] | None]:
    """Build the runs and (in a kernel) display the compare view, on the *calling* thread.

    Displaying from the caller, not from ``run_sync``'s worker thread, keeps the view's output in
    the cell that asked for it; the worker thread then only sets traits.
    """
    from agentlab.errors import UserError
    from agentlab.neutral._inputs import check_kwargs, int_at_least

    check_kwargs(
        run_kw, Run.__init__, "compare", also=("tools", "check", "live", "adapters", "repeats", "concurrency")
    )
    repeats = int_at_least(repeats, "repeats", 1, note=" (runs per model)", error=UserError)
    if check is not None and not callable(check):
        raise UserError(
            f"check must be a function of the answer (str | None) -> bool, got {type(check).__name__}"
        )
    if isinstance(models, str | ModelRef):
        raise UserError(f"models must be a list, e.g. models=[{str(models)!r}]; got one model")
    model_list = [str(parse_model(m)) for m in models]
    if not model_list:
        raise UserError(
            "compare needs at least one model, e.g. models=['openai:sim-reasoner', 'anthropic:sim-thinker']"
        )
    for bad in ("model", "task", "on_event", "run_id", "session", "adapter"):
        if bad in run_kw:
            raise UserError(f"compare sets {bad!r} itself for each run; do not pass it")
    labels = _labels(model_list)
    tool_list = list(as_tools(tools).values())  # a bare tool (not a list) is refused in one line
    total = len(model_list) * repeats
    if adapters is not None and len(adapters) not in (len(model_list), total):
        raise UserError(
            f"adapters has {len(adapters)} entries for {len(model_list)} models; give one per model"
            + (f" (or one per run: {total})" if repeats > 1 else "")
        )
    if adapters is None:
        per_run: list[Adapter | None] = [None] * total
    elif len(adapters) == total:
        per_run = list(adapters)  # model by model, its repeats in order
    else:
        per_run = [a for a in adapters for _ in range(repeats)]
    models_x = [m for m in model_list for _ in range(repeats)]
    if "provider_options" in run_kw:  # each run gets its own provider's keys
        kw = dict(run_kw)
        shares = _options_per_model(kw.pop("provider_options"), models_x)
        runs = [
            Run(m, task, tools=tool_list, adapter=a, provider_options=o, **kw)  # type: ignore[arg-type]
            for m, a, o in zip(models_x, per_run, shares, strict=True)
        ]
    else:
        runs = [
            Run(m, task, tools=tool_list, adapter=a, **run_kw) for m, a in zip(models_x, per_run, strict=True)
        ]
    fe = frontend.current(force=live is True)  # live=True builds the view even outside a kernel
    finish = fe.present_compare(runs, labels, task, live, repeats=repeats) if fe is not None else None
    return labels, model_list, runs, finish


def _limit(concurrency: object, total: int) -> int:
    """Runs at once: all of them by default (wall time is the slowest run's), else ``concurrency``."""
    from agentlab.errors import UserError
    from agentlab.neutral._inputs import int_at_least

    if concurrency is None:
        return total
    return int_at_least(concurrency, "concurrency", 1, note=" (runs at once) or None", error=UserError)


async def _execute(
    task: str,
    labels: list[str],
    models: list[str],
    runs: list[Run],
    finish: Callable[[], None] | None,
    check: Callable[[str | None], bool] | None,
    repeats: int = 1,
    concurrency: int | None = None,
) -> Comparison:
    gate = asyncio.Semaphore(_limit(concurrency, len(runs)))

    async def timed(r: Run) -> tuple[float, BaseException | None]:
        async with gate:  # a run waiting for a slot is not timed: duration_s is its own
            t0 = time.perf_counter()
            try:
                await r.arun()
                return time.perf_counter() - t0, None
            except Exception as e:  # the run recorded it in r.result; the others go on
                return time.perf_counter() - t0, e

    t0 = time.perf_counter()
    for r in runs:  # every SDK imported and client built before any clock starts (see Run.prepare)
        r.prepare()
    try:
        outcomes = await asyncio.gather(*(timed(r) for r in runs))
    finally:
        if finish is not None:
            finish()
    wall = time.perf_counter() - t0

    entries = []
    per_run = [(lb, m, k) for lb, m in zip(labels, models, strict=True) for k in range(repeats)]
    for (label, m, k), r, (dur, err) in zip(per_run, runs, outcomes, strict=True):
        res = r.result
        solved = None
        if check is not None and res is not None and res.status == "completed":
            solved = bool(check(res.output))
        error = None
        if err is not None:
            error = f"{type(err).__name__}: {err}"
        elif res is not None and res.error:
            error = res.error
        entries.append(ComparisonEntry(label, m, res, error, dur, solved, k, repeats))
    return Comparison(task, entries, wall)


async def acompare(
    task: str,
    models: Iterable[str | ModelRef],
    *,
    tools: Iterable[Any] = (),
    check: Callable[[str | None], bool] | None = None,
    live: bool | None = None,
    adapters: Sequence[Adapter | None] | None = None,
    repeats: int = 1,
    concurrency: int | None = None,
    **run_kw: Any,
) -> Comparison:
    """Run ``task`` on every model concurrently; return a :class:`Comparison`.

    ``run_kw`` goes to every :class:`Run` (``system``, ``reasoning``, ``max_steps``…). ``check``
    judges an answer (for "cost per solved task"). ``live`` shows the streaming compare view
    (default: when in a Jupyter kernel; ``live=True`` outside one builds the view without showing
    it, for tests). ``adapters`` (one per model, None for the default) is for tests and custom
    transports, like ``Run(adapter=...)``; with ``repeats`` it may also give one per run.

    ``repeats=N`` runs each model N times (see :meth:`Comparison.spread`); ``concurrency`` bounds
    the runs in flight (default: all at once), e.g. to stay under a provider's rate limit.
    ``provider_options`` may hold the keys of every compared provider: each run gets its own
    provider's (a key for no compared provider is refused). Every run is built, and so every option
    checked, before any of them starts.
    """
    return await _start(task, models, tools, check, live, adapters, repeats, concurrency, run_kw)


def compare(
    task: str,
    models: Iterable[str | ModelRef],
    *,
    tools: Iterable[Any] = (),
    check: Callable[[str | None], bool] | None = None,
    live: bool | None = None,
    adapters: Sequence[Adapter | None] | None = None,
    repeats: int = 1,
    concurrency: int | None = None,
    **run_kw: Any,
) -> Comparison:
    """Sync form of :func:`acompare`; works in scripts and inside Jupyter's running event loop."""
    return run_sync(_start(task, models, tools, check, live, adapters, repeats, concurrency, run_kw))


def _start(
    task: str,
    models: Iterable[str | ModelRef],
    tools: Iterable[Any],
    check: Callable[[str | None], bool] | None,
    live: bool | None,
    adapters: Sequence[Adapter | None] | None,
    repeats: int,
    concurrency: int | None,
    run_kw: dict[str, Any],
) -> Coroutine[Any, Any, Comparison]:
    """Build every run (and the live view) here, in the caller's thread; return what runs them.

    Everything is checked before any run starts, and the view appears in the calling cell even when
    ``compare`` runs the coroutine on another thread (``run_sync`` inside Jupyter's loop).
    """
    _limit(concurrency, 1)  # a bad value fails before anything is built or sent
    labels, model_list, runs, finish = _prepare(task, models, tools, live, adapters, run_kw, check, repeats)
    return _execute(task, labels, model_list, runs, finish, check, len(runs) // len(labels), concurrency)
