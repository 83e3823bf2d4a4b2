"""``evaluate``: a dataset x models x repeats, scored as each run finishes, resumable, re-scorable.

How an evaluation behaves:

* **It is a sweep** (:func:`agentlab.sweeps.asweep`): every (task, model, setting, repeat) is its
  own run pinned to one provider; one row per finished run is appended and fsynced to the results
  file; calling again with the same file resumes (finished runs are never redone); Kernel ›
  Interrupt keeps every finished run, and :func:`load_eval` reads the partial evaluation in one call.
* **Scores are part of the row**: the scorers run on the finished run before its row is written,
  so a row on disk always has its scores (``scores``: name -> value and explanation; a judge's
  spend in its own entry) and the run's tool calls (``called_tools``). ``success`` is the first
  scorer's verdict when it is a pass/fail. A run that failed (provider error, bad settings) is not
  scored: every score is ``None`` ("the run failed"), never a fail.
* **Each run's durable records are kept beside the file** (``<stem>.transcripts.jsonl``, through an
  ``EventLog``: the task, answer text, tool calls and results, usage and cost per step; never
  reasoning), so :meth:`EvalResult.transcript` shows any run after the fact.
* **Re-scoring reads the file only** (:func:`rescore`): new scorers on the stored answers and tool
  calls, no candidate model called. A judge among them does call its own model.
* **One tidy runs table** (:meth:`EvalResult.runs`): the sweep's runs frame (one row per run: task
  id, model, setting, repeat, status, tokens and cost by bucket, latency) plus one ``score_<name>``
  column per scorer and the judges' own ``judge_*`` tokens and cost. :meth:`EvalResult.reduce`
  folds repeats into one row per task x model x setting.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentlab.errors import ConfigError
from agentlab.evals.dataset import EvalTask, load_dataset, load_tasks_only
from agentlab.evals.results import Results, evaluation_results, runs_table, transcripts_path
from agentlab.evals.scorers import Attempt, CalledTool, Score, Scorer, as_scorer
from agentlab.loop.result import RunResult
from agentlab.loop.sync import run_sync
from agentlab.neutral._inputs import int_at_least
from agentlab.neutral.events import ToolCallEvent
from agentlab.sweeps.tasks import Task

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from agentlab.evals.views import Disagreements, Matrix, Transcript
    from agentlab.sweeps.report import SweepReport

__all__ = [
    "REDUCERS",
    "EvalResult",
    "aevaluate",
    "evaluate",
    "load_eval",
    "reduce_runs",
    "rescore",
    "runs_table",
    "transcripts_path",
]

Reducer = Literal["mean", "majority", "pass@k", "all"]
REDUCERS: tuple[Reducer, ...] = ("mean", "majority", "pass@k", "all")
_NOT_IN_SWEEPS = ("tasks", "tools", "score_run", "executor", "ray_options")


def _scorers(items: Iterable[Scorer | Callable[..., Any]] | Scorer) -> list[Scorer]:
    """The scorer list, checked once: at least one, unique names."""
    if isinstance(items, Scorer) or callable(items):
        items = [items]
    out = [as_scorer(s) for s in items]
    if not out:
        raise ConfigError("scorers is empty: give at least one, e.g. scorers=[al.exact()]")
    names = [s.name for s in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(
            f"duplicate scorer names {dup}; give each a name= of its own (names key the scores)"
        )
    return out


def _called_tools(result: RunResult | None) -> list[CalledTool]:
    """The run's tool calls (name and parsed arguments), from its durable events: no reasoning."""
    import json

    out: list[CalledTool] = []
    for ev in result.events if result is not None else ():
        if isinstance(ev, ToolCallEvent):
            try:
                args: Any = json.loads(ev.call.arguments)
            except ValueError:
                args = ev.call.arguments
            out.append(CalledTool(name=ev.call.name, arguments=args))
    return out


def _stored(score: Score) -> dict[str, Any]:
    """A score as the row keeps it (a non-finite float is unknown: JSON has no NaN)."""
    data = score.stored()
    if isinstance(data.get("value"), float) and not math.isfinite(data["value"]):
        data["value"] = None
    return data


async def score_attempt(
    scorers: Sequence[Scorer], attempt: Attempt, task: EvalTask | None
) -> dict[str, Score]:
    """Every scorer's verdict; a failed run, a missing task or a scorer that raised scores ``None``."""
    out: dict[str, Score] = {}
    for s in scorers:
        if task is None:
            out[s.name] = Score(name=s.name, value=None, explanation="the task is not in the dataset")
        elif attempt.status in ("failed", "cancelled"):
            out[s.name] = Score(name=s.name, value=None, explanation=f"the run {attempt.status}")
        else:
            try:
                out[s.name] = await s.ascore(attempt, task)
            except Exception as e:  # a scorer's bug must not cost a paid-for run: unscored, and why
                out[s.name] = Score(
                    name=s.name, value=None, explanation=f"scorer raised {type(e).__name__}: {e}"[:300]
                )
    return out


def _row_fields(scores: Mapping[str, Score], called: Sequence[CalledTool]) -> dict[str, Any]:
    first = next(iter(scores.values()), None)
    success = first.value if first is not None and isinstance(first.value, bool) else None
    return {
        "scores": {n: _stored(s) for n, s in scores.items()},
        "called_tools": [c.model_dump(mode="json") for c in called],
        "success": success,
    }


def _keep_records(path: Path, result: RunResult | None) -> None:
    """The run's durable events, appended to the transcripts file (what ``EvalResult.transcript`` reads).

    Through an ``EventLog``, which takes durable records by exact type only: reasoning deltas and
    opaque provider items cannot reach the file. Opened per run, so nothing is held in memory.
    """
    from agentlab.records.eventlog import EventLog

    if result is not None and result.events:
        EventLog(path).extend(result.events)


def _score_hook(
    scorers: Sequence[Scorer], tasks: Mapping[str, EvalTask], transcripts: Path | None = None
) -> Callable[[Task, RunResult | None], Any]:
    """The sweep's ``score_run``: the evaluation's scorers on each finished run, before it is written."""

    async def score_run(task: Task, result: RunResult | None) -> dict[str, Any]:
        if transcripts is not None:
            _keep_records(transcripts, result)
        called = _called_tools(result)
        status = result.status if result is not None else "failed"
        answer = result.output if result is not None and result.status == "completed" else None
        attempt = Attempt(answer=answer, status=status, called_tools=tuple(called))
        return _row_fields(await score_attempt(scorers, attempt, tasks.get(task.id)), called)

    return score_run


@dataclass
class EvalResult:
    """An evaluation's results: the file (or re-scored rows) as tidy frames.

    ``report`` is the sweep's report for the call that produced it (``None`` from :func:`load_eval`
    or :func:`rescore`).
    """

    path: Path | None
    report: SweepReport | None = None
    reducer: Reducer = "mean"
    k: int | None = None
    rows: list[dict[str, Any]] | None = field(default=None, repr=False)

    def runs(self) -> pd.DataFrame:
        """One row per run: the sweep's columns, ``score_<name>`` per scorer, ``judge_*`` spend."""
        if self.rows is not None:
            from agentlab.sweeps.analysis import rows_frame

            return runs_table(rows_frame(self.rows))
        assert self.path is not None
        return runs_table(self.path)

    def reduce(self, reducer: Reducer | None = None, *, k: int | None = None) -> pd.DataFrame:
        """One row per task x model x setting, repeats folded by ``reducer`` (default: the call's)."""
        return reduce_runs(self.runs(), reducer or self.reducer, k=k if k is not None else self.k)

    def summary(self) -> pd.DataFrame:
        """Per model x setting: each score's mean over runs, runs, candidate cost and judge cost."""
        df = self.runs()
        cols = [c for c in df.columns if c.startswith("score_")]
        g = df.groupby(["model", "setting"], sort=False)
        out = g[cols].agg(lambda s: s.astype("float64").mean())
        out.insert(0, "runs", g.size())
        out["total_cost_usd"] = g["total_cost_usd"].sum(min_count=1)
        out["judge_cost_usd"] = g["judge_cost_usd"].sum(min_count=1)
        return out

    def _as_results_(self) -> Results:
        """The one results shape (``agentlab.evals.results.as_results`` asks: it cannot import us)."""
        return evaluation_results(self)

    # ------------------------------------------------------------ views (agentlab.evals.views)

    def matrix(self, score: str | None = None) -> Matrix:
        """Task x model: ``score`` per cell (mean ± sd across repeats), per model a mean with its CI."""
        from agentlab.evals.views import matrix

        return matrix(self, score)

    def transcript(self, run_id: str | None = None, **where: Any) -> Transcript:
        """One run after the fact (by ``run_id``, or ``task=``, ``model=``, ``repeat=``); never reasoning."""
        from agentlab.evals.views import transcript

        return transcript(self, run_id, **where)

    def disagreements(self, a: str, b: str, score: str | None = None) -> Disagreements:
        """The tasks where baseline ``a`` and candidate ``b`` score differently, largest gap first."""
        from agentlab.evals.views import disagreements

        return disagreements(self, a, b, score)

    def plot_frontier(self, score: str | None = None, *, ax: Axes | None = None) -> Axes:
        """Mean score against mean cost per run, per model, with 95% CIs on both and the frontier."""
        from agentlab.evals.views import plot_frontier

        return plot_frontier(self, score, ax=ax)

    def __str__(self) -> str:
        where = str(self.path) if self.path is not None else "re-scored rows"
        head = f"evaluation in {where}"
        return f"{head}\n{self.report}" if self.report is not None else head

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


def _pass_at_k(n: int, c: int, k: int) -> float:
    """Chen et al. (2021)'s unbiased pass@k: 1 - C(n-c, k) / C(n, k) for n samples, c correct."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _fold(values: Sequence[Any], reducer: Reducer, k: int | None) -> Any:
    """One task's repeats to one value; unknown (``None``) repeats are left out."""
    known = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not known:
        return None
    nums = [float(v) for v in known]
    if reducer == "mean":
        return sum(nums) / len(nums)
    if reducer == "majority":
        counts: dict[float, int] = {}
        for x in nums:
            counts[x] = counts.get(x, 0) + 1
        return min(counts, key=lambda x: (-counts[x], x))  # most common; ties: the lower
    passed = sum(1 for x in nums if x >= 1.0)
    if reducer == "all":
        return float(passed == len(nums))
    return _pass_at_k(len(nums), passed, min(k or len(nums), len(nums)))


def reduce_runs(runs: pd.DataFrame, reducer: Reducer = "mean", *, k: int | None = None) -> pd.DataFrame:
    """One row per task x model x setting: ``runs`` (repeats) and each ``score_<name>`` folded.

    ``mean``: the mean of the repeats (pass = 1); ``majority``: the most common value (ties: the
    lower); ``pass@k``: the unbiased estimate that at least one of ``k`` repeats (default: all)
    passes; ``all``: 1.0 when every repeat passed. A pass is ``True`` or a value >= 1.
    """
    import pandas as pd

    if reducer not in REDUCERS:
        raise ConfigError(f"reducer must be one of {REDUCERS}, got {reducer!r}")
    if k is not None:
        int_at_least(k, "k", 1)
    keys = ["task_id", "model", "setting"]
    cols = [c for c in runs.columns if c.startswith("score_")]
    # Group positions over the key columns only, then fold plain lists: slicing the whole runs
    # frame per group cost ~1 ms a group (3,000 groups for 1,000 tasks x 3 models).
    values = {c: [None if pd.isna(x) else x for x in runs[c].tolist()] for c in cols}
    groups = sorted(runs[keys].groupby(keys, sort=False).indices.items(), key=lambda kv: int(kv[1][0]))
    rows: list[dict[str, Any]] = []
    for key, idx in groups:
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row["runs"] = len(idx)
        for c in cols:
            v = _fold([values[c][i] for i in idx], reducer, k)
            row[c] = math.nan if v is None else float(v)
        rows.append(row)
    out = pd.DataFrame(rows, columns=[*keys, "runs", *cols])
    return out.astype({**{c: "string" for c in keys}, "runs": "Int64", **{c: "float64" for c in cols}})


def _check_call(reducer: object, sweep_kw: Mapping[str, Any]) -> None:
    if reducer not in REDUCERS:
        raise ConfigError(f"reducer must be one of {REDUCERS}, got {reducer!r}")
    taken = sorted(set(sweep_kw) & set(_NOT_IN_SWEEPS))
    if taken:
        raise ConfigError(f"evaluate does not take {taken}: the dataset holds the tasks and tools= its tools")


async def aevaluate(
    dataset: Any,
    models: Sequence[str],
    *,
    scorers: Iterable[Scorer | Callable[..., Any]] | Scorer,
    results: str | Path,
    repeats: int = 1,
    tools: Mapping[str, Any] | Iterable[Any] | None = None,
    reducer: Reducer = "mean",
    k: int | None = None,
    **sweep_kw: Any,
) -> EvalResult:
    """Run and score every (task, model, setting, repeat) not yet in ``results``; see the module docstring.

    ``dataset``: anything :func:`~agentlab.evals.dataset.load_dataset` takes (``tools`` are the tools
    its tasks may use). ``scorers``: :class:`~agentlab.evals.scorers.Scorer`s or functions
    ``(answer, task) -> value``. ``reducer`` / ``k``: the default of :meth:`EvalResult.reduce`.
    Every other keyword is the sweep's (``settings``, ``concurrency``, ``budget_usd``,
    ``progress``, ``adapter_factory``, ``retry_failed``, ...). Validated before anything runs.
    """
    from agentlab.sweeps.runner import asweep

    _check_call(reducer, sweep_kw)
    ds = load_dataset(dataset, tools=tools)
    scorer_list = _scorers(scorers)
    report = await asweep(
        [t.sweep_task() for t in ds],
        models,
        results=results,
        tools=ds.tools,
        repeats=repeats,
        score_run=_score_hook(scorer_list, ds.by_id(), transcripts_path(results)),
        **sweep_kw,
    )
    return EvalResult(Path(results), report, reducer, k)


def evaluate(
    dataset: Any,
    models: Sequence[str],
    *,
    scorers: Iterable[Scorer | Callable[..., Any]] | Scorer,
    results: str | Path,
    progress: Any = "auto",
    **kw: Any,
) -> EvalResult:
    """Sync form of :func:`aevaluate` (works inside Jupyter's running loop).

    Kernel › Interrupt keeps every finished run in ``results``: ``load_eval(results)`` reads them,
    and the same call again resumes.
    """
    from agentlab.sweeps.progress import make_display

    display = make_display(progress) if isinstance(progress, str) else progress
    return run_sync(aevaluate(dataset, models, scorers=scorers, results=results, progress=display, **kw))


def load_eval(results: str | Path, *, reducer: Reducer = "mean", k: int | None = None) -> EvalResult:
    """An evaluation's results file, finished or not (after an interrupt: every finished run)."""
    path = Path(results)
    if not path.exists():
        raise ConfigError(f"no results file at {path}")
    return EvalResult(path, None, reducer, k)


async def _rescore_rows(
    path: Path, tasks: Mapping[str, EvalTask], scorers: Sequence[Scorer]
) -> list[dict[str, Any]]:
    """The file's runs (last row per key), each with the new scorers' verdicts merged into its scores."""
    from agentlab.sweeps.store import read_rows, row_key

    last: dict[Any, dict[str, Any]] = {}
    for r in read_rows(path):
        last.pop(row_key(r), None)
        last[row_key(r)] = r
    out: list[dict[str, Any]] = []
    for row in last.values():
        called = tuple(CalledTool.model_validate(c) for c in row.get("called_tools") or [])
        answer = row.get("output") if row.get("status") == "completed" else None
        attempt = Attempt(answer=answer, status=str(row.get("status")), called_tools=called)
        scores = await score_attempt(scorers, attempt, tasks.get(row["task_id"]))
        fields = _row_fields(scores, called)
        merged = {**(row.get("scores") or {}), **fields["scores"]}
        out.append({**row, "scores": merged})
    return out


def rescore(
    results: str | Path,
    dataset: Any,
    *,
    scorers: Iterable[Scorer | Callable[..., Any]] | Scorer,
    into: str | Path | None = None,
    fields: Mapping[str, str] | None = None,
) -> EvalResult:
    """Score the runs in ``results`` again with ``scorers``, without calling any candidate model.

    Scorers see what the file kept of each run (final answer, status, tool calls) and the task from
    ``dataset`` (its targets; ``fields`` as for ``load_dataset``; tool names are not resolved, no
    tool runs); their verdicts are merged into each run's scores (a scorer of the same
    name replaces the stored one). ``results`` is not changed; ``into`` writes the re-scored runs (last
    row per key) to a new results file. A judge among ``scorers`` calls its own model.
    """
    src = Path(results)
    if not src.exists():
        raise ConfigError(f"no results file at {src}")
    tasks = {t.id: t for t in load_tasks_only(dataset, fields=fields)}
    rows = run_sync(_rescore_rows(src, tasks, _scorers(scorers)))
    if into is None:
        return EvalResult(None, rows=rows)
    return EvalResult(_write_rows(Path(into), src, rows))


def _write_rows(dest: Path, src: Path, rows: Sequence[dict[str, Any]]) -> Path:
    """Re-scored rows to a new results file (never over the source, never into an existing file)."""
    from agentlab.sweeps.store import ResultsFile

    if dest.resolve() == src.resolve() or dest.exists():
        raise ConfigError(f"rescore into= must be a new file (results are append-only), got {dest}")
    with ResultsFile(dest) as f:
        for r in rows:
            f.append({k: v for k, v in r.items() if k != "v"})
    return dest
