"""Views of results that render without a kernel: a task x model matrix, a run's transcript, disagreements.

Each view is a small value with a static ``_repr_html_`` (escaped text, inline styles, no widget
state, nothing loaded from outside), so it shows in a saved notebook, in nbviewer and in the HTML
report (``save_report``) exactly as it did live. The matrix carries one small inline script that
sorts it by a clicked column; where scripts do not run (an untrusted notebook, a mail client) it
is the same table, unsorted.

None of them can show reasoning text: they are built from results rows and durable run records
(the transcript from a run's durable events: the task, answer text, tool calls and results, usage
per step), which never held any. The transcript says so.

Every view takes every results form (:func:`agentlab.evals.results.as_results`).
"""

from __future__ import annotations

import hashlib
import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentlab.errors import ConfigError
from agentlab.evals.results import Results, as_results, transcripts_path
from agentlab.render.html_tables import NO_MATH, fmt_int, fmt_usd, table_html

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = [
    "Disagreements",
    "Matrix",
    "Transcript",
    "disagreements",
    "frontier_points",
    "matrix",
    "plot_frontier",
    "report_sections",
    "transcript",
]

NO_REASONING = (
    "Reasoning text is not stored: agentlab never writes it to results or records, so only "
    "reasoning-token counts are shown."
)


# ---------------------------------------------------------------- which score


def score_column(runs: pd.DataFrame, score: str | None) -> str:
    """The runs table's column for ``score`` (``"includes"`` or ``"score_includes"``; default: the first).

    Without scorers a sweep's ``success`` (its ``check``) is the score.
    """
    names = [c for c in runs.columns if str(c).startswith("score_")]
    if score is None:
        if names:
            return str(names[0])
        if "success" in runs.columns and runs["success"].notna().any():
            return "success"
        raise ConfigError("these results hold no scores: evaluate with scorers=, or sweep with a check")
    for c in (score, f"score_{score}"):
        if c in runs.columns:
            return c
    raise ConfigError(f"no score {score!r} in these results; they have {[n[6:] for n in names]}")


def _column_key(runs: pd.DataFrame) -> pd.Series:
    """The matrix column of each run: the model, with the setting when a model ran several."""
    if "setting" not in runs.columns or runs["setting"].nunique(dropna=True) <= 1:
        return runs["model"].astype("string")
    return (runs["model"].astype("string") + " · " + runs["setting"].astype("string")).astype("string")


def _values(runs: pd.DataFrame, col: str) -> pd.Series:
    import pandas as pd

    s = runs[col]
    return pd.to_numeric(s.astype("object").where(s.notna(), None), errors="coerce").astype("float64")


# ---------------------------------------------------------------- the matrix


@dataclass(frozen=True)
class Matrix:
    """Task x model: the score's mean over repeats per cell, its spread, and per model a mean with CI.

    ``mean`` / ``sd`` / ``repeats``: frames indexed by task, one column per model (``sd`` is the
    sample standard deviation across the cell's repeats, NaN with one). ``totals``: per model the
    mean of the per-task means with its t interval (:func:`agentlab.evals.stats.model_means`), the
    number of tasks and the mean cost per run.
    """

    score: str
    mean: pd.DataFrame = field(repr=False)
    sd: pd.DataFrame = field(repr=False)
    repeats: pd.DataFrame = field(repr=False)
    totals: pd.DataFrame = field(repr=False)

    def _repr_html_(self) -> str:
        return _matrix_html(self)

    def to_html(self) -> str:
        """The static HTML the notebook shows (and the report embeds)."""
        return _matrix_html(self)

    def __str__(self) -> str:
        cells = self.mean.map(lambda v: "<NA>" if math.isnan(v) else f"{v:.2f}")
        ci = [_ci_text(r) for _, r in self.totals.iterrows()]
        return f"{self.score} per task (mean over repeats)\n{cells.to_string()}\nmean (95% CI): " + "; ".join(
            f"{m}: {c}" for m, c in zip(self.totals.index, ci, strict=True)
        )

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


def matrix(results: Any, score: str | None = None, *, confidence: float = 0.95) -> Matrix:
    """The task x model matrix of ``score`` (default: the first scorer; a sweep's ``success``).

    Models are ordered by mean score (highest first, then by name), tasks by id: the same results
    give the same table however the runs finished. Click a header to sort by that column.
    """
    res = as_results(results, what="matrix")
    runs = res.runs()
    col = score_column(runs, score)
    frame = runs.assign(model=_column_key(runs), _v=_values(runs, col))
    totals = _totals(frame, confidence)
    models, tasks = list(totals.index), sorted(dict.fromkeys(frame["task_id"].astype(str)))
    g = frame.assign(task_id=frame["task_id"].astype(str)).groupby(["task_id", "model"], sort=False)["_v"]

    def grid(s: pd.Series) -> pd.DataFrame:
        out = s.unstack("model").reindex(index=tasks, columns=models).astype("float64")
        return out.rename_axis(index="task", columns="model")

    return Matrix(col.removeprefix("score_"), grid(g.mean()), grid(g.std(ddof=1)), grid(g.count()), totals)


def _totals(frame: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per model: the score's mean over tasks with its t interval, tasks, cost per run; best first."""
    from agentlab.evals.stats import model_means

    means = model_means(frame, ["_v"], confidence=confidence).set_index("model")
    totals = means[["mean", "ci_low", "ci_high", "n_tasks", "ci_method"]].copy()
    if _bounded(frame["_v"]):  # a score in [0, 1]: its interval is too (a t interval on few tasks is not)
        totals["ci_low"] = totals["ci_low"].clip(lower=0.0)
        totals["ci_high"] = totals["ci_high"].clip(upper=1.0)
    cost = frame.groupby("model", sort=False)["total_cost_usd"].mean() if "total_cost_usd" in frame else None
    totals["cost_per_run_usd"] = cost.reindex(totals.index) if cost is not None else math.nan
    order = sorted(totals.index, key=lambda m: (-_or(totals.loc[m, "mean"], -math.inf), str(m)))
    return totals.reindex(order).rename_axis("model")


def _bounded(values: pd.Series) -> bool:
    known = values.dropna()
    return len(known) > 0 and bool(((known >= 0) & (known <= 1)).all())


def _or(v: Any, default: float) -> float:
    f = float(v)
    return default if math.isnan(f) else f


def _ci_text(row: Any) -> str:
    if math.isnan(row["mean"]):
        return "<NA>"
    if math.isnan(row["ci_low"]):
        return f"{row['mean']:.2f} (no CI: {int(row['n_tasks'])} task)"
    return f"{row['mean']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"


def _shade(v: float, lo: float, hi: float) -> tuple[str, str]:
    """Background and text colour for a cell: white (lowest) to the palette's blue (highest)."""
    if math.isnan(v):
        return ("#f2f2f2", "#666666")
    t = 0.0 if hi <= lo else min(1.0, max(0.0, (v - lo) / (hi - lo)))
    blue = (0x00, 0x72, 0xB2)
    rgb = tuple(round(255 + (c - 255) * t) for c in blue)
    return ("#{:02x}{:02x}{:02x}".format(*rgb), "#ffffff" if t > 0.55 else "#222222")


def _cell(v: float, sd: float, n: float, lo: float, hi: float) -> str:
    bg, fg = _shade(v, lo, hi)
    if math.isnan(v):
        text, key = "<NA>", ""
    else:
        text = f"{v:.2f}" + ("" if math.isnan(sd) else f" ± {sd:.2f}")
        key = f"{v:.6g}"
    tip = f"{0 if math.isnan(n) else int(n)} repeat(s)"
    return (
        f"<td data-v='{key}' title='{tip}' style='background:{bg};color:{fg};text-align:right;"
        f"padding:2px 8px;white-space:nowrap'>{html.escape(text)}</td>"
    )


_TH = "text-align:left;padding:2px 8px;border-bottom:1px solid #ccc;white-space:nowrap"
#: A model's header may wrap (at the places _breakable marks), so five long model strings still fit.
_TH_MODEL = "text-align:left;padding:2px 8px;border-bottom:1px solid #ccc;vertical-align:bottom"


def _breakable(name: str) -> str:
    """Escaped, with line-break opportunities after ``:`` and ``·`` and before ``+`` options."""
    return html.escape(name).replace(":", ":<wbr>").replace("+", "<wbr>+").replace(" · ", " ·<wbr> ")

_SORT_JS = (
    "(function(){var t=document.getElementById('%s');if(!t||!t.tHead)return;"
    "var hs=t.tHead.rows[0].cells;Array.prototype.forEach.call(hs,function(h,i){"
    "h.style.cursor='pointer';h.title='click to sort';h.onclick=function(){"
    "var b=t.tBodies[0],rs=Array.prototype.slice.call(b.rows),d=h.getAttribute('data-d')==='1'?-1:1;"
    "h.setAttribute('data-d',d>0?'1':'0');rs.sort(function(x,y){"
    "var p=x.cells[i].getAttribute('data-v'),q=y.cells[i].getAttribute('data-v'),"
    "a=parseFloat(p),c=parseFloat(q);if(isNaN(a)||isNaN(c)){if(isNaN(a)&&isNaN(c))"
    "return d*String(p).localeCompare(String(q));return isNaN(a)?1:-1;}return d*(c-a);});"
    "rs.forEach(function(r){b.appendChild(r);});};});})();"
)
"""Sorts the body rows by a clicked header's column (numbers high first; again: reversed); the
totals stay in the footer. Plain ES5, no library, nothing fetched."""


def _matrix_html(m: Matrix) -> str:
    vals = [v for v in m.mean.to_numpy().ravel().tolist() if not math.isnan(v)]
    bounded = bool(vals) and min(vals) >= 0 and max(vals) <= 1
    lo, hi = (0.0, 1.0) if bounded else (min(vals or [0.0]), max(vals or [1.0]))
    models = list(m.mean.columns)
    body = []
    for task in m.mean.index:
        row_mean = m.mean.loc[task].mean(skipna=True)
        cells = "".join(
            _cell(float(m.mean.loc[task, c]), float(m.sd.loc[task, c]), float(m.repeats.loc[task, c]), lo, hi)
            for c in models
        )
        mean_key = "" if math.isnan(row_mean) else f"{row_mean:.6g}"
        mean_text = "<NA>" if math.isnan(row_mean) else f"{row_mean:.2f}"
        body.append(
            f"<tr><td data-v='{html.escape(str(task))}' style='text-align:left;padding:2px 8px'>"
            f"{html.escape(str(task))}</td>"
            f"{cells}<td data-v='{mean_key}' style='text-align:right;padding:2px 8px;color:#555'>"
            f"{mean_text}</td></tr>"
        )
    head = "".join(f"<th style='{_TH_MODEL if h in models else _TH}'>{_breakable(str(h))}</th>"
                   for h in ["task", *models, "task mean"])  # fmt: skip
    foot = _matrix_foot(m, models)
    ident = "agentlab-matrix-" + hashlib.sha1(
        (m.score + "|".join(models) + "|".join(map(str, m.mean.index))).encode(), usedforsecurity=False
    ).hexdigest()[:10]
    caption = (
        f"{m.score}: mean ± sd across repeats per task; per model the mean over tasks with its "
        f"95% CI ({m.totals['ci_method'].iloc[0] if len(m.totals) else ''})"
    )
    return (
        f"<div class='agentlab-matrix {NO_MATH}' style='overflow-x:auto'>"
        f"<table id='{ident}' style='border-collapse:collapse;"
        f"font-size:12px'><caption style='text-align:left;caption-side:bottom;font-size:11px;color:#555'>"
        f"{html.escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
        f"{foot}</table><script>{_SORT_JS % ident}</script></div>"
    )


def _matrix_foot(m: Matrix, models: Sequence[str]) -> str:
    style = "text-align:right;padding:2px 8px;border-top:1px solid #ccc;white-space:nowrap;font-weight:bold"
    ci = "".join(f"<td style='{style}'>{html.escape(_ci_text(m.totals.loc[c]))}</td>" for c in models)
    usd = [html.escape(fmt_usd(m.totals.loc[c, "cost_per_run_usd"])) for c in models]
    cost = "".join(f"<td style='{style};font-weight:normal'>{u}</td>" for u in usd)
    lead = "padding:2px 8px;border-top:1px solid #ccc;white-space:nowrap"
    return (
        f"<tfoot><tr><th style='{lead};text-align:left'>mean [95% CI]</th>{ci}<td></td></tr>"
        f"<tr><th style='{lead};text-align:left;font-weight:normal'>cost / run</th>{cost}<td></td></tr>"
        "</tfoot>"
    )


# ---------------------------------------------------------------- disagreements


@dataclass(frozen=True)
class Disagreements:
    """The tasks where two models' scores differ (per task: mean over repeats), largest gap first.

    ``frame``: ``task_id``, the two means, ``diff`` (b - a) and each model's first answer.
    """

    a: str
    b: str
    score: str
    frame: pd.DataFrame = field(repr=False)
    tasks: int = 0

    def _repr_html_(self) -> str:
        rows = [
            [r["task_id"], _num(r["mean_a"]), _num(r["mean_b"]), _num(r["diff"], signed=True),
             _short(r["answer_a"]), _short(r["answer_b"])]
            for _, r in self.frame.iterrows()
        ]  # fmt: skip
        cap = (
            f"{len(self.frame)} of {self.tasks} tasks where {self.b} (b) and {self.a} (a) disagree on "
            f"{self.score} (mean over repeats)"
        )
        header = ["task", f"a: {self.a}", f"b: {self.b}", "b − a", "answer a", "answer b"]
        return table_html(header, rows, caption=cap)

    def to_html(self) -> str:
        """The static HTML the notebook shows (and the report embeds)."""
        return self._repr_html_()

    def __str__(self) -> str:
        head = f"{len(self.frame)} of {self.tasks} tasks where {self.b} and {self.a} disagree on {self.score}"
        return head + ("\n" + self.frame.to_string(index=False) if len(self.frame) else "")

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


def _num(v: Any, signed: bool = False) -> str:
    f = float(v)
    return "<NA>" if math.isnan(f) else (f"{f:+.2f}" if signed else f"{f:.2f}")


def _short(v: Any, n: int = 160) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)) or str(v) == "<NA>":
        return "–"
    s = " ".join(str(v).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def disagreements(results: Any, a: str, b: str, score: str | None = None) -> Disagreements:
    """Baseline ``a`` against candidate ``b``: every task where their mean scores differ.

    ``a`` and ``b`` are models, or ``"model · setting"`` (the matrix's columns) when the results hold
    several settings: the same model with and without a knob is a baseline and a candidate too.
    """
    import pandas as pd

    res = as_results(results, what="disagreements")
    runs = res.runs()
    col = score_column(runs, score)
    frame = runs.assign(model=_column_key(runs), _v=_values(runs, col))  # "model · setting" with settings
    have = set(frame["model"].astype(str))
    missing = [m for m in (a, b) if m not in have]
    if missing:
        raise ConfigError(f"disagreements: no model {missing} in these results; they have {sorted(have)}")
    per = {}
    for m in (a, b):
        g = frame[frame["model"] == m].groupby("task_id", sort=False)
        per[m] = pd.DataFrame({"mean": g["_v"].mean(), "answer": g["output"].first()})
    both = per[a].add_suffix("_a").join(per[b].add_suffix("_b"), how="inner")
    both["diff"] = both["mean_b"] - both["mean_a"]
    differ = both[(both["diff"].abs() > 1e-12) | (both["mean_a"].isna() != both["mean_b"].isna())]
    out = differ.reset_index().rename(columns={"index": "task_id"})
    out["_gap"] = -out["diff"].abs().fillna(math.inf)
    out = out.sort_values(["_gap", "task_id"], kind="stable").reset_index(drop=True)  # ties: by task id
    cols = ["task_id", "mean_a", "mean_b", "diff", "answer_a", "answer_b"]
    return Disagreements(a, b, col.removeprefix("score_"), out[cols], tasks=len(both))


# ---------------------------------------------------------------- transcripts


@dataclass(frozen=True)
class Transcript:
    """One run after the fact: the portable history and, per step, tokens, reasoning tokens and cost.

    ``entries``: ``(who, text, detail)`` in order: ``user`` (the task), ``step`` (a model call: its
    tokens and cost), ``assistant`` (answer text), ``tool call``, ``tool result``, ``error``,
    ``end``. ``kept``: ``"records"`` when the run's durable records were found, ``"row"`` when only
    its results row was (answer, tool calls and totals; no per-step figures).
    """

    run_id: str
    title: str
    entries: tuple[tuple[str, str, str], ...]
    kept: str

    def _repr_html_(self) -> str:
        rows = [[who, text, detail] for who, text, detail in self.entries]
        note = NO_REASONING
        if self.kept == "row":
            note += (" No per-step records were kept for this run: the answer, tool calls and totals"
                     " are its results row.")
        return (
            f"<div class='agentlab-transcript {NO_MATH}'>"
            + table_html(["", "content", "tokens / cost"], rows, caption=self.title)
            + f"<p style='font-size:11px;color:#555'>{html.escape(note)}</p></div>"
        )

    def to_html(self) -> str:
        """The static HTML the notebook shows (and the report embeds)."""
        return self._repr_html_()

    def __str__(self) -> str:
        lines = [self.title]
        lines += [f"{who:>11}: {text}" + (f"  [{d}]" if d else "") for who, text, d in self.entries]
        return "\n".join([*lines, NO_REASONING])

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


def _step_detail(usage: Any, cost: float | None) -> str:
    parts = [f"in {fmt_int(usage.input_tokens)}", f"out {fmt_int(usage.output_tokens)}",
             f"reasoning {fmt_int(usage.reasoning_tokens)}", fmt_usd(cost)]  # fmt: skip
    return " · ".join(parts)


def _entries_from_events(events: Sequence[Any]) -> list[tuple[str, str, str]]:
    from agentlab.neutral import events as ev
    from agentlab.neutral.items import AssistantTextItem

    out: list[tuple[str, str, str]] = []
    for e in events:
        if isinstance(e, ev.RunStartedEvent):
            out.append(("user", e.task or "", ""))
        elif isinstance(e, ev.ModelCallCompletedEvent):
            out.append(("step", f"{e.step}: {e.provider}:{e.model} ({e.stop_reason})",
                        _step_detail(e.usage, e.cost_usd)))  # fmt: skip
            out += [("assistant", i.text, "") for i in e.items if isinstance(i, AssistantTextItem)]
        elif isinstance(e, ev.ToolCallEvent):
            out.append(("tool call", f"{e.call.name}({e.call.arguments})", ""))
        elif isinstance(e, ev.ToolResultEvent):
            status = "error" if e.result.is_error else "ok"
            out.append(("tool result", _short(e.result.output, 600), status))
        elif isinstance(e, ev.ErrorEvent):
            out.append(("error", f"{e.error_type}: {e.message}", ""))
        elif isinstance(e, ev.RunCompletedEvent):
            out.append(("end", f"{e.status} after {e.steps} step(s)", _step_detail(e.usage, e.cost_usd)))
    return out


def _entries_from_row(row: Any) -> list[tuple[str, str, str]]:
    import json

    out: list[tuple[str, str, str]] = []
    for call in row.get("called_tools") or [] if isinstance(row.get("called_tools"), list) else []:
        args = call.get("arguments")
        out.append(("tool call", f"{call.get('name')}({json.dumps(args, sort_keys=True)})", ""))
    answer = row.get("output")
    if isinstance(answer, str):
        out.append(("assistant", answer, ""))
    if isinstance(row.get("error"), str):
        out.append(("error", f"{row.get('error_type')}: {row['error']}", ""))
    detail = " · ".join([
        f"in {fmt_int(row.get('input_tokens'))}", f"out {fmt_int(row.get('output_tokens'))}",
        f"reasoning {fmt_int(row.get('reasoning_tokens'))}", fmt_usd(row.get("total_cost_usd")),
    ])  # fmt: skip
    out.append(("end", f"{row.get('status')} after {fmt_int(row.get('steps'))} step(s)", detail))
    return out


def _find_row(res: Results, run_id: str | None, key: dict[str, Any]) -> Any:
    frame = res.frame
    hit = frame[frame["run_id"] == run_id] if run_id is not None else frame
    for k, v in key.items():
        if v is not None:
            hit = hit[hit[k].astype(str) == str(v)]
    if len(hit) != 1:
        given = ", ".join(f"{k}={v!r}" for k, v in key.items() if v is not None)
        what = f"run_id={run_id!r}" if run_id else given
        raise ConfigError(f"transcript: {len(hit)} runs match {what}; give a run_id from runs()['run_id']")
    return hit.iloc[0]


def _stored_events(res: Results, run_id: str) -> list[Any]:
    from agentlab.records.eventlog import EventLog

    if res.path is None or not transcripts_path(res.path).is_file():
        return []
    return [e for e in EventLog.read(transcripts_path(res.path)) if e.run_id == run_id]


def transcript(
    results: Any,
    run_id: str | None = None,
    *,
    task: str | None = None,
    model: str | None = None,
    repeat: int | None = None,
) -> Transcript:
    """One run's transcript, found by ``run_id`` or by ``task`` / ``model`` / ``repeat``.

    From the run's durable records where they exist (a compare result in memory; an evaluation's
    ``.transcripts.jsonl`` beside its results file), else from its results row.
    """
    res = as_results(results, what="transcript")
    for label, _k, r in res.records:
        if r.run_id == run_id or (run_id is None and model in (label, None) and task is None):
            return _built(r.run_id, f"run {r.run_id} · {label} · {r.status}", list(r.events), "records")
    row = _find_row(res, run_id, {"task_id": task, "model": model, "repeat": repeat})
    rid = str(row["run_id"]) if isinstance(row.get("run_id"), str) else ""
    title = (f"run {rid or '?'} · task {row['task_id']} · {row['model']} · repeat {row.get('repeat')}"
             f" · {row.get('status')}")
    events = _stored_events(res, rid) if rid else []
    if events:
        return _built(rid, title, events, "records")
    return Transcript(rid, title, tuple(_entries_from_row(row)), "row")


def _built(run_id: str, title: str, events: list[Any], kept: str) -> Transcript:
    return Transcript(run_id, title, tuple(_entries_from_events(events)), kept)


# ---------------------------------------------------------------- score against cost


def frontier_points(results: Any, score: str | None = None, *, confidence: float = 0.95) -> pd.DataFrame:
    """Per model: mean score and mean cost per run over tasks, each with its t interval.

    Both come from :func:`agentlab.evals.stats.model_means` (repeats averaged per task first; the
    interval on tasks - 1 degrees of freedom), so the chart's bars are the same CIs as the matrix's.
    """
    import pandas as pd

    from agentlab.evals.stats import model_means

    runs = as_results(results, what="plot_frontier").runs()
    col = score_column(runs, score)
    frame = runs.assign(model=_column_key(runs), _v=_values(runs, col))
    means = model_means(frame, ["total_cost_usd"], confidence=confidence)
    out = []
    for model, s in _totals(frame, confidence).iterrows():
        c = means[(means["model"] == model) & (means["metric"] == "total_cost_usd")].iloc[0]
        out.append({"model": model, "score": s["mean"], "score_low": s["ci_low"], "score_high": s["ci_high"],
                    "cost": c["mean"], "cost_low": c["ci_low"], "cost_high": c["ci_high"],
                    "n_tasks": s["n_tasks"]})  # fmt: skip
    points = pd.DataFrame(out)
    points.attrs["score"] = col.removeprefix("score_")
    return points


def plot_frontier(
    results: Any, score: str | None = None, *, ax: Axes | None = None, title: str | None = None
) -> Axes:
    """The score-against-cost chart of any results form (see :func:`agentlab.render.charts.plot_frontier`)."""
    from agentlab.render.charts import plot_frontier as draw

    points = frontier_points(results, score)
    return draw(points, score_name=points.attrs["score"], ax=ax, title=title)


# ---------------------------------------------------------------- in the HTML report


def report_sections(res: Results) -> list[tuple[str, str]]:
    """The views an HTML report of scored results shows: matrix, frontier, disagreements, transcripts.

    Only for results of a task set with a score (an evaluation's scorers, a sweep's check); each model's first
    run's transcript, so a reader can see what a run did without a kernel. Empty otherwise.
    """
    from agentlab.render.timeline_chart import chart_svg

    if res.kind in ("comparison", "run"):  # one task: the comparison's own table says it all
        return []
    runs = res.runs()
    try:
        col = score_column(runs, None)
    except ConfigError:
        return []
    m = matrix(res, col)
    parts = [(f"Task × model: {m.score}", m.to_html())]
    if "total_cost_usd" in runs.columns and runs["total_cost_usd"].notna().any():
        parts.append((f"{m.score} against cost", chart_svg(lambda r: plot_frontier(r, col), res)))
    models = list(m.totals.index)
    if len(models) >= 2 and "model" in res.frame.columns:
        base, best = models[1], models[0]
        parts.append((f"Where {best} and {base} disagree", disagreements(res, base, best, col).to_html()))
    shown = [transcript(res, str(r)).to_html() for r in _first_runs(res)]
    if shown:
        parts.append(("Transcripts: each model's first run", "".join(shown)))
    return parts


def _first_runs(res: Results) -> list[str]:
    """The run id of each model's first run (by task, then repeat), for the report's transcripts."""
    frame = res.frame
    if "run_id" not in frame.columns:
        return []
    known = frame[frame["run_id"].notna()].sort_values(["model", "task_id", "repeat"])
    return [str(g["run_id"].iloc[0]) for _, g in known.groupby("model", sort=True)]
