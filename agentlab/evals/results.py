"""One results model: every form results come in, made into one value that every function downstream takes.

The forms: a ``compare`` result (``Comparison``), a sweep (``SweepReport``), an evaluation
(``EvalResult``), a results file (its path, ``str`` or ``Path``), a ``load_results`` frame (or the
tidy runs table of ``EvalResult.runs()`` / ``runs_table``), a ``RunResult``, or a list of results.
:func:`as_results` turns each into a :class:`Results`; anything else is a :class:`ResultsFormError`
of one line naming the function and what it got.

Why one place: each downstream function used to guess on its own, and a frame (iterable, of column
names, which are iterable strings) sent a generic "iterate and recurse" into a ``RecursionError``,
while a ``SweepReport`` fell through to a ``TypeError``. Exports, reports, tool tables, timelines,
cost charts, MLflow logging and the paired tests all call :func:`as_results` first.

What a form holds decides what can be shown, and nothing is made up:

* ``frame`` (one row per run, the results file's columns) exists for every form; a comparison's
  and a lone run's are built from the same whitelisted scalars a sweep row holds.
* ``records`` (``(label, repeat, RunResult)``: per-call usage, tool results, timings) exist only
  where the runs are in memory (a comparison, run results). A results file never holds events: a
  tool table built from it has what the row kept (an evaluation's ``called_tools``: names and
  arguments), and a timeline has one bar per run (its start and latency).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentlab.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from agentlab.evals.run import EvalResult
    from agentlab.loop.result import RunResult
    from agentlab.sweeps.runner import SweepReport

__all__ = [
    "FORMS",
    "JUDGE_COLUMNS",
    "Results",
    "ResultsFormError",
    "as_results",
    "evaluation_results",
    "plot_costs",
    "runs_table",
    "transcripts_path",
]

FORMS = (
    "a compare result, a SweepReport, an EvalResult, a results-file path, "
    "a runs DataFrame (load_results or EvalResult.runs()) or RunResults"
)
"""What :func:`as_results` takes, as said in its error."""

Kind = Literal["run", "comparison", "sweep", "evaluation", "file", "frame"]
Record = tuple[str, int, "RunResult"]


JUDGE_COLUMNS: dict[str, str] = {
    "judge_input_tokens": "Int64",
    "judge_output_tokens": "Int64",
    "judge_reasoning_tokens": "Int64",
    "judge_cost_usd": "float64",
}
"""The judges' own spend per run (summed over the run's judges): never part of the candidate's cost."""


def transcripts_path(results: str | Path) -> Path:
    """Where an evaluation keeps its runs' durable records: ``<results stem>.transcripts.jsonl``."""
    p = Path(results)
    return p.with_name(p.stem + ".transcripts.jsonl")


class ResultsFormError(ConfigError):
    """A downstream function was given something that is not results (one line: who, what it takes)."""


@dataclass(frozen=True)
class Results:
    """Results in one shape, whatever form they came in (see the module docstring).

    ``frame``: one row per run in the results file's columns (``scores`` and ``called_tools`` kept
    when the form has them). ``records``: the runs held in memory, empty for files and frames.
    ``source``: what was given, for a function that shows more of it (a comparison's own summary).
    """

    kind: Kind
    frame: pd.DataFrame = field(repr=False)
    records: tuple[Record, ...] = field(default=(), repr=False)
    source: Any = field(default=None, repr=False)
    path: Path | None = None
    evaluation: EvalResult | None = field(default=None, repr=False)
    sweep: SweepReport | None = field(default=None, repr=False)

    def runs(self) -> pd.DataFrame:
        """The tidy runs table: ``frame`` with ``score_<name>`` and ``judge_*`` columns unpacked."""
        if self.evaluation is not None:
            return self.evaluation.runs()
        return runs_table(self.frame) if "scores" in self.frame.columns else self.frame

    def summary(self) -> pd.DataFrame:
        """A comparison's or an evaluation's own summary; per model and setting for the other forms."""
        from agentlab.sweeps.analysis import summarize

        own = getattr(self.source, "summary", None)
        if self.kind in ("comparison", "evaluation") and callable(own):
            out: pd.DataFrame = own()
            return out
        self.require(_SUMMARY_NEEDS, "a summary")
        by = [c for c in ("model", "setting") if c in self.frame.columns]
        return summarize(self.frame, by=by)

    def require(self, columns: tuple[str, ...], what: str) -> None:
        """``ResultsFormError`` (one line) when the runs frame lacks columns ``what`` is made of.

        A hand-made frame with a score per task and model is enough for the paired tests; a
        summary, a report or a cost chart needs the results file's columns.
        """
        missing = [c for c in columns if c not in self.frame.columns]
        if missing:
            raise ResultsFormError(
                f"this runs frame lacks column(s) {missing} that {what} needs; pass the results file, "
                "load_results(path) or EvalResult.runs()"
            )

    def labelled(self) -> Iterator[Record]:
        """``(label, repeat, RunResult)`` of every run held in memory."""
        yield from self.records


def as_results(obj: Any, *, what: str = "this function") -> Results:
    """``obj`` in the one results shape; ``ResultsFormError`` (one line, naming ``what``) otherwise."""
    import pandas as pd

    if isinstance(obj, Results):
        return obj
    if isinstance(obj, pd.DataFrame):
        return _from_frame(obj, what)
    if isinstance(obj, str | Path):
        return _from_path(Path(obj), what)
    made = _from_object(obj)
    if made is not None:
        return made
    if isinstance(obj, list | tuple):
        return _from_list(obj, what)
    raise ResultsFormError(f"{what} takes {FORMS}; got {_name(obj)}")


def _name(obj: Any) -> str:
    return "a string" if isinstance(obj, str) else type(obj).__name__


def _from_object(obj: Any) -> Results | None:
    """A comparison, sweep report, evaluation or run result; None for anything else."""
    from agentlab.loop.result import RunResult
    from agentlab.sweeps.comparison import Comparison
    from agentlab.sweeps.report import SweepReport

    own = getattr(type(obj), "_as_results_", None)  # an evaluation says what it is (evals.run imports us)
    if callable(own):
        made: Results = own(obj)
        return made
    if isinstance(obj, SweepReport):
        from agentlab.sweeps.analysis import load_results

        return Results("sweep", load_results(obj.path), source=obj, path=obj.path, sweep=obj)
    if isinstance(obj, Comparison):
        records = tuple((e.label, e.repeat, e.result) for e in obj.entries if e.result is not None)
        return Results("comparison", obj.runs_frame(), records, source=obj)
    if isinstance(obj, RunResult):
        record = (f"{obj.provider}:{obj.model}", 0, obj)
        return Results("run", _records_frame([record]), (record,), source=obj)
    return None


def evaluation_results(ev: EvalResult) -> Results:
    """An evaluation as :class:`Results`: its rows (re-scored ones, or its results file)."""
    from agentlab.sweeps.analysis import load_results, rows_frame

    if ev.rows is not None:
        frame = rows_frame(ev.rows)
    elif ev.path is not None:
        frame = load_results(ev.path)
    else:
        raise ResultsFormError("this EvalResult has neither a results file nor rows")
    return Results("evaluation", frame, source=ev, path=ev.path, evaluation=ev, sweep=ev.report)


def _from_path(path: Path, what: str) -> Results:
    from agentlab.sweeps.analysis import load_results

    if not path.is_file():
        raise ResultsFormError(f"{what}: no results file at {path} (it takes {FORMS})")
    return Results("file", load_results(path), source=path, path=path)


_NEEDED = ("task_id", "model")
_SUMMARY_NEEDS = (
    "status", "success", "steps", "tool_calls", "input_tokens", "cache_read_tokens", "output_tokens",
    "reasoning_tokens", "total_cost_usd", "price_source", "latency_s",
)  # fmt: skip
_COST_NEEDS = (
    "run_id", "input_cost_usd", "cache_read_cost_usd", "cache_write_cost_usd", "output_cost_usd",
    "reasoning_cost_usd", "total_cost_usd",
)  # fmt: skip


def _from_frame(df: pd.DataFrame, what: str) -> Results:
    """A ``load_results`` frame or a tidy runs table (``runs()``): one row per run, by task and model."""
    missing = [c for c in _NEEDED if c not in df.columns]
    if missing:
        raise ResultsFormError(
            f"{what} takes a runs DataFrame (one row per run, from load_results or EvalResult.runs()); "
            f"this frame lacks column(s) {missing}"
        )
    return Results("frame", df, source=df)


def _from_list(items: list[Any] | tuple[Any, ...], what: str) -> Results:
    """Several results (run results, comparisons) as one: their runs in memory, in order."""
    records: list[Record] = []
    for item in items:
        made = _from_object(item)
        if made is None or made.kind not in ("run", "comparison"):
            raise ResultsFormError(f"{what} takes {FORMS}; got a list holding {_name(item)}")
        records.extend(made.records)
    return Results("run", _records_frame(records), tuple(records), source=list(items))


def _records_frame(records: list[Record]) -> pd.DataFrame:
    """Runs held in memory as results rows (the same whitelisted scalars a sweep row holds)."""
    from agentlab.sweeps.analysis import rows_frame

    return rows_frame([_record_row(label, k, r) for label, k, r in records])


_TOKENS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens")
_COSTS = ("input", "cache_read", "cache_write", "output", "reasoning", "total")


def _record_row(label: str, repeat: int, r: RunResult) -> dict[str, Any]:
    from agentlab.neutral.events import ToolCallEvent

    u, cost = r.usage.tokens, r.usage.cost
    latencies = [c.latency_s for c in r.calls]
    row: dict[str, Any] = {
        "task_id": "run", "model": label, "setting": "default", "repeat": repeat,
        "provider": r.provider, "run_id": r.run_id, "status": r.status, "steps": r.steps,
        "tool_calls": sum(isinstance(e, ToolCallEvent) for e in r.events),
        "reasoning_source": u.reasoning_source, "price_source": cost.source,
        "latency_s": math.nan if not latencies or None in latencies else sum(x or 0.0 for x in latencies),
        "output": r.output, "stop_reason": r.stop_reason, "error_type": r.error_type,
    }  # fmt: skip
    row.update({k: getattr(u, k) for k in _TOKENS})
    row.update({f"{k}_cost_usd": getattr(cost, k) for k in _COSTS})
    return row


def plot_costs(results: Any, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """What a run costs per model, by token kind (mean run, with a 95% interval across runs).

    Takes every results form (see :func:`as_results`): drawn from the runs' cost buckets, so a
    results file draws the same chart as the comparison or sweep that wrote it.
    """
    from agentlab.render.charts import plot_cost_breakdown

    res = as_results(results, what="plot_costs")
    res.require(_COST_NEEDS, "plot_costs")
    frame = res.frame
    if frame.empty:
        raise ResultsFormError("plot_costs: the results hold no runs yet")
    ci = bool(frame.groupby("model", sort=False).size().max() > 1)
    return plot_cost_breakdown(frame, by="model", ax=ax, per_run=True, ci=ci, title=title)


def _score_columns(df: pd.DataFrame) -> dict[str, Any]:
    """``score_<name>`` columns from the rows' ``scores`` (boolean when every known value is)."""
    import pandas as pd

    stored = [s if isinstance(s, dict) else {} for s in df["scores"].tolist()]
    names: dict[str, None] = {}
    for s in stored:
        names.update(dict.fromkeys(s))
    cols: dict[str, Any] = {}
    for n in names:
        vals = [(s.get(n) or {}).get("value") for s in stored]
        known = [v for v in vals if v is not None]
        if known and all(isinstance(v, bool) for v in known):
            cols[f"score_{n}"] = pd.array(vals, dtype="boolean")
        else:
            cols[f"score_{n}"] = pd.array(
                [math.nan if v is None else float(v) for v in vals], dtype="float64"
            )
    return cols


def _judge_columns(df: pd.DataFrame) -> dict[str, Any]:
    """The judges' spend per run, summed over the run's judge scores (``<NA>`` when none judged it)."""
    import pandas as pd

    sums: dict[str, list[Any]] = {c: [] for c in JUDGE_COLUMNS}
    for s in df["scores"].tolist():
        judges = [v["judge"] for v in (s or {}).values() if isinstance(v, dict) and v.get("judge")]
        for c in JUDGE_COLUMNS:
            parts = [j.get(c.removeprefix("judge_")) for j in judges]
            sums[c].append(None if not parts or any(p is None for p in parts) else sum(parts))
    out: dict[str, Any] = {}
    for c, dtype in JUDGE_COLUMNS.items():
        data = sums[c] if dtype != "float64" else [math.nan if v is None else float(v) for v in sums[c]]
        out[c] = pd.array(data, dtype=dtype)
    return out


def runs_table(results: str | Path | pd.DataFrame) -> pd.DataFrame:
    """The tidy runs table of a results file (or a ``load_results`` frame): see :meth:`EvalResult.runs`."""
    import pandas as pd

    from agentlab.sweeps.analysis import load_results

    df = load_results(results) if isinstance(results, str | Path) else results
    if not isinstance(df, pd.DataFrame) or "scores" not in df.columns:
        raise ConfigError(
            f"runs_table takes a results file path or a load_results frame, got {type(results).__name__}"
        )
    extra = {**_score_columns(df), **_judge_columns(df)}
    base = df.drop(columns=["scores", "called_tools"]).reset_index(drop=True)
    return pd.concat([base, pd.DataFrame(extra, index=base.index)], axis=1)
