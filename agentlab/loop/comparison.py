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
import html
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import agentlab.frontend as frontend
from agentlab.adapters.base import Adapter, ModelRef, parse_model
from agentlab.loop.runner import Run
from agentlab.loop.sync import run_sync
from agentlab.loop.tools import as_tools

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from agentlab.loop.result import RunResult

__all__ = ["Comparison", "ComparisonEntry", "acompare", "compare"]


@dataclass(frozen=True)
class ComparisonEntry:
    """One column of a comparison: a model's run, how long it took and whether it solved the task."""

    label: str
    """The model string, with ``#2``… appended when the same model appears twice."""
    model: str
    result: RunResult | None
    error: str | None
    duration_s: float
    solved: bool | None
    """``check(output)`` when a check was given; None (unknown) otherwise or when the run failed."""
    repeat: int = 0
    """Which of the model's ``repeats`` runs this is, from 0 (as a sweep's ``repeat`` column)."""
    repeats: int = 1
    """How many runs the comparison made of this model."""

    @property
    def key(self) -> str:
        """``label`` alone for one run per model; ``label r2`` and on (1-based) with repeats."""
        return self.label if self.repeats == 1 else f"{self.label} r{self.repeat + 1}"

    @property
    def status(self) -> str:
        """``failed`` when the run raised before producing a result (``error`` says why)."""
        return self.result.status if self.result is not None else "failed"

    @property
    def output(self) -> str | None:
        """The final answer; None when the run failed or ended without one."""
        return self.result.output if self.result is not None else None

    @property
    def output_value(self) -> Any:
        """The validated structured answer (``output_type=``); None without one or when the run failed."""
        return self.result.output_value if self.result is not None else None

    @property
    def steps(self) -> int:
        """Model calls made; 0 for a run that failed before producing a result."""
        return self.result.steps if self.result is not None else 0

    @property
    def cost_usd(self) -> float:
        """USD of the run; NaN when any of its calls was unpriced or the run failed."""
        return self.result.usage.cost.total if self.result is not None else math.nan


def _reported(r: RunResult | None) -> float:
    """The run's provider-reported cost (NaN: none reported, or the run failed)."""
    c = r.usage.provider_cost_usd if r is not None else None
    return math.nan if c is None else c


class Comparison:
    """What ``compare`` returns: per-model results, the combined usage frame, and charts.

    ``wall_s`` is the wall time of the whole comparison; ``sum_s`` the sum of the runs' own durations
    (what running them one after another would have cost, roughly).
    """

    def __init__(self, task: str, entries: Sequence[ComparisonEntry], wall_s: float) -> None:
        self.task = task
        self.entries: tuple[ComparisonEntry, ...] = tuple(entries)
        self.wall_s = wall_s

    # ------------------------------------------------------------------ data

    @property
    def repeats(self) -> int:
        """Runs per model (``compare(..., repeats=N)``)."""
        return max((e.repeats for e in self.entries), default=1)

    @property
    def labels(self) -> list[str]:
        """Model labels in order, once each: the model strings, a model given twice numbered ``#2``."""
        return list(dict.fromkeys(e.label for e in self.entries))

    @property
    def keys(self) -> list[str]:
        """One per run: the label, or with repeats ``label r1``, ``label r2``… (the dicts' keys)."""
        return [e.key for e in self.entries]

    @property
    def results(self) -> dict[str, RunResult]:
        """The runs that produced a result, by key (failed ones are left out, see ``entries``)."""
        return {e.key: e.result for e in self.entries if e.result is not None}

    @property
    def answers(self) -> dict[str, str | None]:
        """Every run's final answer by key, None for a failed run, to read answers side by side."""
        return {e.key: e.output for e in self.entries}

    @property
    def values(self) -> dict[str, Any]:
        """Every run's structured answer (``output_type=``) by key, None where there is none."""
        return {e.key: e.output_value for e in self.entries}

    @property
    def steps(self) -> dict[str, int]:
        """Model calls per run, by key."""
        return {e.key: e.steps for e in self.entries}

    @property
    def sum_s(self) -> float:
        """What the runs took one after another; set beside ``wall_s`` it shows the concurrency gain."""
        return sum(e.duration_s for e in self.entries)

    @property
    def usage(self) -> pd.DataFrame:
        """Every model call of every run, one row each (the usage frame, plus a ``label`` column)."""
        import pandas as pd

        frames = []
        for e in self.entries:
            if e.result is None:
                continue
            df = e.result.usage_frame()
            df.insert(0, "label", e.label)
            df.insert(1, "repeat", pd.array([e.repeat] * len(df), dtype="Int64"))
            frames.append(df)
        if not frames:
            from agentlab.costs.frames import usage_frame

            empty = usage_frame(())
            empty.insert(0, "label", pd.Series(dtype="string"))
            empty.insert(1, "repeat", pd.Series(dtype="Int64"))
            return empty
        from agentlab.costs.usage_view import UsageFrame

        return UsageFrame(pd.concat(frames, ignore_index=True))  # short display, complete data

    def summary(self) -> pd.DataFrame:
        """One row per run: label, repeat, status, steps, tokens, cost, duration, solved, answer.

        ``duration_s`` is the run's own time, from its first request; ``setup_s`` (before it, never
        inside it) the time spent importing the provider SDK and building its client, NaN when an
        adapter was given.

        ``cost_usd`` is agentlab's (from ``price_source``); ``provider_cost_usd`` the provider's own
        figure beside it where the provider reports one (OpenRouter's ``usage.cost``), else NaN.
        """
        import pandas as pd

        rows = []
        for e in self.entries:
            r = e.result
            t = r.usage.tokens if r is not None else None
            rows.append(
                {
                    "label": e.label,
                    "repeat": e.repeat,
                    "provider": parse_model(e.model).provider,
                    "model": parse_model(e.model).model,
                    "status": e.status,
                    "steps": e.steps,
                    "input_tokens": t.input_tokens if t else None,
                    "cache_read_tokens": t.cache_read_tokens if t else None,
                    "output_tokens": t.output_tokens if t else None,
                    "reasoning_tokens": t.reasoning_tokens if t else None,
                    "cost_usd": e.cost_usd,
                    "provider_cost_usd": _reported(r),
                    "price_source": r.usage.cost.source if r is not None else None,
                    "duration_s": e.duration_s,
                    "setup_s": r.setup_s if r is not None else None,
                    "solved": e.solved,
                    "answer": e.output if e.output is not None else e.error,
                }
            )
        df = pd.DataFrame(rows)
        for col in (
            "repeat",
            "steps",
            "input_tokens",
            "cache_read_tokens",
            "output_tokens",
            "reasoning_tokens",
        ):
            df[col] = df[col].astype("Int64")
        df["solved"] = df["solved"].astype("boolean")
        df["cost_usd"] = df["cost_usd"].astype("float64")
        df["provider_cost_usd"] = df["provider_cost_usd"].astype("float64")
        df["price_source"] = df["price_source"].astype("string")
        df["setup_s"] = df["setup_s"].astype("float64")
        return df

    def runs_frame(self) -> pd.DataFrame:
        """One row per run in the sweep results' columns (``agentlab.sweeps.store.ROW_FIELDS``).

        Built from the same whitelisted scalars a sweep row holds (never events or reasoning), so
        the sweeps' summaries apply unchanged; ``model`` is the label, ``latency_s`` the run's time.
        """
        from agentlab.loop.comparison_frames import runs_frame

        return runs_frame(self.entries)

    def spread(self) -> pd.DataFrame:
        """Per model: the sweeps' summary plus cost, tokens and time per run as mean and 95% interval.

        :func:`agentlab.sweeps.analysis.spread` over :meth:`runs_frame`: ``success_rate`` with its
        Wilson interval (over runs with a check and a verdict), ``total_cost_usd_mean`` /
        ``_ci_low`` / ``_ci_high``, the same for input/output/reasoning tokens and ``latency_s``.
        One run per model gives no interval (NaN): use ``repeats=``.
        """
        from agentlab.sweeps.analysis import spread

        return spread(self.runs_frame(), by=("model",)).rename_axis("label")

    # ------------------------------------------------------------------ charts

    def plot_costs(self, ax: Axes | None = None, **kw: Any) -> Axes:
        """Stacked cost per model: reasoning, other output, uncached input, cache (see charts).

        With repeats, a bar is the model's mean run (not the sum of its repeats), with an error bar
        for the 95% interval of that mean.
        """
        from agentlab.render.charts import plot_cost_breakdown

        if self.repeats > 1:
            kw.setdefault("ci", True)
        return plot_cost_breakdown(self.usage, by="label", ax=ax, **kw)

    def plot_reasoning(self, ax: Axes | None = None, **kw: Any) -> Axes:
        """Reasoning tokens per step, one line per model."""
        from agentlab.render.charts import plot_reasoning_per_step

        return plot_reasoning_per_step(self.usage, by="label", ax=ax, **kw)

    # ------------------------------------------------------------------ display

    def _rows(self) -> list[list[str]]:
        from agentlab.render.html_tables import fmt_int, fmt_seconds, fmt_usd

        rows = []
        for e in self.entries:
            t = e.result.usage.tokens if e.result is not None else None
            answer = e.output if e.output is not None else (e.error or "")
            rows.append(
                [
                    e.key,
                    e.status,
                    str(e.steps),
                    fmt_int(t.input_tokens if t else None),
                    fmt_int(t.output_tokens if t else None),
                    fmt_int(t.reasoning_tokens if t else None),
                    fmt_usd(e.cost_usd),
                    fmt_seconds(e.duration_s),
                    "<NA>" if e.solved is None else ("yes" if e.solved else "no"),
                    answer if len(answer) <= 300 else answer[:299] + "…",
                ]
            )
        return rows

    _HEADER = ("model", "status", "steps", "input", "output", "reasoning", "cost", "time", "solved", "answer")

    def _repr_html_(self) -> str:
        from agentlab.render.html_tables import fmt_seconds, table_html

        if self.repeats > 1:
            from agentlab.loop.comparison_frames import SPREAD_HEADER, spread_rows

            caption = (
                f"Comparison of {len(self.labels)} models × {self.repeats} repeats · wall "
                f"{fmt_seconds(self.wall_s)} (sum of runs {fmt_seconds(self.sum_s)}) · mean [95% "
                "bootstrap interval] per run; success: Wilson 95% interval"
            )
            return (
                f"<div class='agentlab-comparison'><div style='font-size:12px;opacity:0.8'>task: "
                f"{html.escape(self.task[:300])}</div>"
                f"{table_html(SPREAD_HEADER, spread_rows(self.spread()), caption=caption)}</div>"
            )
        caption = (
            f"Comparison of {len(self.entries)} models · wall {fmt_seconds(self.wall_s)} "
            f"(sum of runs {fmt_seconds(self.sum_s)})"
        )
        return (
            f"<div class='agentlab-comparison'><div style='font-size:12px;opacity:0.8'>task: "
            f"{html.escape(self.task[:300])}</div>"
            f"{table_html(self._HEADER, self._rows(), caption=caption)}</div>"
        )

    def __str__(self) -> str:
        header: Sequence[str] = self._HEADER
        body = self._rows()
        if self.repeats > 1:
            from agentlab.loop.comparison_frames import SPREAD_HEADER, spread_rows

            header, body = SPREAD_HEADER, spread_rows(self.spread())
        rows = [list(header), *body]
        widths = [min(40, max(len(r[i]) for r in rows)) for i in range(len(header))]
        lines = ["  ".join(c[:w].ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        return (
            f"task: {self.task}\n"
            + "\n".join(lines)
            + f"\nwall {self.wall_s:.2f} s, sum of runs {self.sum_s:.2f} s"
        )

    def __repr__(self) -> str:
        reps = f" x{self.repeats}" if self.repeats > 1 else ""
        return f"<Comparison {self.labels}{reps} wall={self.wall_s:.2f}s sum={self.sum_s:.2f}s>"


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
    from agentlab.adapters.registry import get_provider, option_prefixes
    from agentlab.errors import InvalidSettingsError

    if not isinstance(value, Mapping):
        return [value] * len(models)
    mine = {m: get_provider(parse_model(m).provider).option_prefix for m in models}
    compared = tuple(dict.fromkeys(mine.values()))
    others = tuple(p for p in option_prefixes() if p not in compared)
    keys = [k for k in value if isinstance(k, str)]
    stray = sorted(k for k in keys if k.startswith(others) and not k.startswith(compared))
    if stray:
        raise InvalidSettingsError(
            f"provider_options {stray} are for no model of this compare (its providers take "
            f"{', '.join(p + '*' for p in compared)})"
        )
    shared = {k: v for k, v in value.items() if not (isinstance(k, str) and k.startswith(compared))}
    return [
        {**shared, **{k: v for k, v in value.items() if k in keys and k.startswith(mine[m])}} for m in models
    ]


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
    from agentlab.neutral._inputs import check_kwargs

    check_kwargs(
        run_kw, Run.__init__, "compare", also=("tools", "check", "live", "adapters", "repeats", "concurrency")
    )
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
        raise UserError(f"repeats must be an int >= 1 (runs per model), got {repeats!r}")
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

    if concurrency is None:
        return total
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise UserError(f"concurrency must be an int >= 1 (runs at once) or None, got {concurrency!r}")
    return concurrency


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
    _limit(concurrency, 1)  # a bad value fails before anything is built or sent
    labels, model_list, runs, finish = _prepare(task, models, tools, live, adapters, run_kw, check, repeats)
    return await _execute(
        task, labels, model_list, runs, finish, check, len(runs) // len(labels), concurrency
    )


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
    _limit(concurrency, 1)
    labels, model_list, runs, finish = _prepare(task, models, tools, live, adapters, run_kw, check, repeats)
    return run_sync(
        _execute(task, labels, model_list, runs, finish, check, len(runs) // len(labels), concurrency)
    )
