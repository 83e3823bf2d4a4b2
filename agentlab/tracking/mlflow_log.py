"""Sweeps and comparisons into MLflow, through MLflow's own client (``MlflowClient``); nothing re-implemented.

Layout: one **parent run** per call (a sweep or a comparison) holding the summary frame (CSV and
HTML), the runs table (CSV) and the charts (PNG) as artifacts, with totals as metrics; under it one
**child run** per results row, i.e. per (task, model, setting, repeat), with the params, metrics and
tags of :mod:`agentlab.tracking.rows` (which decides, by whitelist, what may leave agentlab: labels
and numbers, never answers, error messages, reasoning text or opaque payloads; unknown values are
left out, not logged as 0).

Why from results rows and not from live events: the rows are agentlab's portable record of a run,
already built from whitelisted scalars (``agentlab.sweeps.store``); a tracker fed from them cannot
see reasoning, whatever a provider sent.

Where it writes: ``tracking_uri`` when given; else ``MLFLOW_TRACKING_URI`` when set (a shared
tracking server is ``tracking_uri="http://host:5000"`` or that variable); else agentlab's own local
store, :func:`default_store`: ``$AGENTLAB_CACHE_DIR/mlflow`` (default ``~/.cache/agentlab/mlflow``),
with the database ``mlflow.db`` and the artifacts under ``mlruns/``. Why not MLflow's own default:
it is the current directory, so logging from a notebook left ``mlflow.db`` and ``mlruns/`` beside
it. ``mlflow ui --backend-store-uri sqlite:///<that path>/mlflow.db`` opens it; every call returns
the URI it used (``LoggedRuns.tracking_uri``). MLflow itself handles authentication
(``MLFLOW_TRACKING_TOKEN`` ...), and agentlab never reads or logs it.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentlab.errors import ConfigError, MissingExtraError
from agentlab.tracking.rows import (
    METRIC_COLUMNS,
    PARAM_COLUMNS,
    TAG_COLUMNS,
    is_simulated_model,
    setting_params,
    tracked_run,
)

if TYPE_CHECKING:
    import pandas as pd
    from mlflow.tracking import MlflowClient

    from agentlab.sweeps.compare import Comparison
    from agentlab.sweeps.report import SweepReport
    from agentlab.sweeps.settings import Setting

__all__ = ["LoggedRuns", "default_store", "log_comparison", "log_sweep"]

log = logging.getLogger("agentlab.tracking")

_TOTALS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens",
           "total_cost_usd")  # fmt: skip


@dataclass(frozen=True)
class LoggedRuns:
    """Where a ``log_sweep`` / ``log_comparison`` call wrote: the ids to find its runs in MLflow."""

    tracking_uri: str
    experiment_id: str
    run_id: str
    """The parent run (summary, charts, totals)."""
    child_run_ids: tuple[str, ...]
    """One per results row, in the frame's order."""


def default_store() -> Path:
    """The MLflow store agentlab uses when neither ``tracking_uri`` nor ``MLFLOW_TRACKING_URI`` is given.

    ``$AGENTLAB_CACHE_DIR/mlflow``, default ``~/.cache/agentlab/mlflow`` (the cache directory the
    report's widget assets use too): never the current directory.
    """
    cache = os.environ.get("AGENTLAB_CACHE_DIR") or Path.home() / ".cache" / "agentlab"
    return Path(cache) / "mlflow"


def _where(tracking_uri: str | None, artifact_location: str | None) -> tuple[str | None, str | None]:
    """The store and artifact location to use: the caller's, MLflow's configured one, else ours."""
    if tracking_uri is not None or os.environ.get("MLFLOW_TRACKING_URI"):
        return tracking_uri, artifact_location
    root = default_store()
    root.mkdir(parents=True, exist_ok=True)
    uri = f"sqlite:///{root / 'mlflow.db'}"
    log.info("MLflow: no tracking_uri or MLFLOW_TRACKING_URI; writing to %s", uri)
    return uri, artifact_location or (root / "mlruns").as_uri()


def _client(tracking_uri: str | None, artifact_location: str | None) -> tuple[MlflowClient, str | None]:
    """The client on the store :func:`_where` picks, and the artifact location for a new experiment."""
    try:
        from mlflow.tracking import MlflowClient
    except ImportError as e:  # before anything is created on disk
        raise MissingExtraError("agentlab.tracking (MLflow logging)", "mlflow", "mlflow") from e
    tracking_uri, artifact_location = _where(tracking_uri, artifact_location)
    return MlflowClient(tracking_uri=tracking_uri), artifact_location


def _experiment_id(client: MlflowClient, name: str, artifact_location: str | None) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("experiment must be a non-empty name, e.g. experiment='continuity'")
    found = client.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    return str(client.create_experiment(name, artifact_location=artifact_location))


def _version() -> str:
    from agentlab._version import __version__

    return __version__


def _totals(frame: pd.DataFrame) -> dict[str, float]:
    """Run counts and, where every run's value is known, the frame's token and cost totals."""
    out = {"runs": float(len(frame)), "failed_runs": float((frame["status"] == "failed").sum())}
    for c in _TOTALS:
        col = frame[c]
        if len(col) and not col.isna().any():
            out[c] = float(col.sum())
    return out


def _figures(summary: pd.DataFrame) -> dict[str, Any]:
    """The sweep charts of ``summary`` as matplotlib Figures (no pyplot state: nothing left open)."""
    from agentlab.render import charts

    out: dict[str, Any] = {}
    plots: dict[str, Callable[..., Any]] = {
        "success_rate": charts.plot_success_rate,
        "cost_per_solved": charts.plot_cost_per_solved,
        "reasoning_share": charts.plot_reasoning_share,
    }
    for name, plot in plots.items():
        out[f"charts/{name}.png"] = plot(summary, ax=charts.detached_ax()).figure
    return out


def _html(title: str, frame: pd.DataFrame) -> str:
    import html

    table = frame.to_html(na_rep="<NA>", border=0)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;font-size:13px}td,th{padding:2px 8px;text-align:right}"
        f"</style></head><body><h3>{html.escape(title)}</h3>{table}</body></html>"
    )


@dataclass
class _Parent:
    """What the parent run gets besides its children: the caller's part of it."""

    name: str
    kind: str
    params: dict[str, str]
    metrics: dict[str, float]
    tags: dict[str, str]
    summary: pd.DataFrame
    chart_summary: pd.DataFrame
    extra_figures: dict[str, Any]


def _log_children(
    client: MlflowClient,
    experiment_id: str,
    parent_id: str,
    frame: pd.DataFrame,
    knobs: Mapping[str, Mapping[str, str]],
) -> list[str]:
    from mlflow.entities import Metric, Param
    from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID

    ids: list[str] = []
    version = _version()
    for row in frame.to_dict(orient="records"):
        tr = tracked_run(row, knobs.get(str(row.get("setting")), {}))
        run = client.create_run(
            experiment_id,
            start_time=tr.start_ms,
            tags={**tr.tags, MLFLOW_PARENT_RUN_ID: parent_id, "agentlab.version": version},
            run_name=tr.name,
        )
        rid = run.info.run_id
        at = tr.end_ms if tr.end_ms is not None else int(time.time() * 1000)
        client.log_batch(
            rid,
            metrics=[Metric(k, v, at, 0) for k, v in tr.metrics.items()],
            params=[Param(k, v) for k, v in tr.params.items()],
        )
        client.set_terminated(rid, status="FAILED" if tr.failed else "FINISHED", end_time=tr.end_ms)
        ids.append(rid)
    return ids


def _logged_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs table as an artifact: the whitelisted columns only (no answers, no error text)."""
    cols = [c for c in (*PARAM_COLUMNS, *METRIC_COLUMNS, *TAG_COLUMNS) if c in frame.columns]
    return frame[cols]


def _log(
    client: MlflowClient,
    experiment_id: str,
    frame: pd.DataFrame,
    parent: _Parent,
    knobs: Mapping[str, Mapping[str, str]],
) -> LoggedRuns:
    from mlflow.entities import Metric, Param

    tags = {"agentlab.version": _version(), "agentlab.kind": parent.kind, **parent.tags}
    if any(is_simulated_model(str(m)) for m in frame["model"].dropna()):
        tags["agentlab.simulated"] = "true"
    run = client.create_run(experiment_id, tags=tags, run_name=parent.name)
    pid = run.info.run_id
    try:
        now = int(time.time() * 1000)
        metrics = {**_totals(frame), **parent.metrics}
        client.log_batch(
            pid,
            metrics=[Metric(k, v, now, 0) for k, v in metrics.items() if math.isfinite(v)],
            params=[Param(k, v) for k, v in parent.params.items()],
        )
        client.log_text(pid, parent.summary.to_csv(), "summary.csv")
        client.log_text(pid, _html(parent.name, parent.summary), "summary.html")
        client.log_text(pid, _logged_columns(frame).to_csv(index=False), "runs.csv")
        for path, fig in {**_figures(parent.chart_summary), **parent.extra_figures}.items():
            client.log_figure(pid, fig, path)
        children = _log_children(client, experiment_id, pid, frame, knobs)
    except BaseException:
        client.set_terminated(pid, status="FAILED")
        raise
    client.set_terminated(pid, status="FINISHED")
    return LoggedRuns(client.tracking_uri, experiment_id, pid, tuple(children))


def _sweep_frame(source: Any) -> tuple[pd.DataFrame, SweepReport | None]:
    """The runs to log and the sweep's report when there is one: every results form is taken."""
    from agentlab.evals.results import as_results

    res = as_results(source, what="log_sweep")
    return res.frame, res.sweep


def _names(values: Iterable[Any]) -> str:
    return ",".join(dict.fromkeys(str(v) for v in values))


def log_sweep(
    report_or_results: Any,
    *,
    experiment: str,
    tracking_uri: str | None = None,
    settings: Iterable[Setting] = (),
    run_name: str | None = None,
    artifact_location: str | None = None,
) -> LoggedRuns:
    """Log a sweep to MLflow: a parent run (summary, charts, totals) and a child run per results row.

    ``report_or_results``: any results form (what ``sweep`` or ``evaluate`` returned, a results
    file, ``load_results()``'s frame, a comparison; see ``agentlab.evals.results``).
    ``settings``: the sweep's ``Setting``s, to log their knobs as ``setting.*`` params on each child
    (the results file holds only each setting's name and fingerprint). ``artifact_location`` is used
    only when the experiment is created here (MLflow's default otherwise). Calling it again logs a
    new parent run (MLflow runs are records, not a mirror of the file).
    """
    from agentlab.sweeps.analysis import summarize

    frame, report = _sweep_frame(report_or_results)
    if frame.empty:
        raise ConfigError("log_sweep: the results hold no runs yet")
    summary = summarize(frame)
    params = {
        "models": _names(frame["model"]),
        "settings": _names(frame["setting"]),
        "tasks": str(frame["task_id"].nunique()),
        "repeats": str(int(frame["repeat"].max()) + 1),
    }
    metrics: dict[str, float] = {}
    tags: dict[str, str] = {}
    if report is not None:
        params["results_file"] = report.path.name
        metrics.update(planned=report.planned, ran=report.ran, from_file=report.from_file,
                       not_started=report.not_started, wall_s=report.wall_s)  # fmt: skip
        tags["agentlab.sweep_status"] = report.status
    elif isinstance(report_or_results, str | Path):
        params["results_file"] = Path(report_or_results).name
    parent = _Parent(
        name=run_name or f"sweep {params.get('results_file', '')}".strip(),
        kind="sweep",
        params=params,
        metrics=metrics,
        tags=tags,
        summary=summary,
        chart_summary=summary,
        extra_figures={},
    )
    client, artifact_location = _client(tracking_uri, artifact_location)
    exp = _experiment_id(client, experiment, artifact_location)
    return _log(client, exp, frame, parent, setting_params(settings))


def _comparison_figures(comparison: Comparison) -> dict[str, Any]:
    from agentlab.render.charts import detached_ax

    out: dict[str, Any] = {}
    plots = {"costs": comparison.plot_costs, "reasoning_per_step": comparison.plot_reasoning}
    for name, plot in plots.items():
        out[f"charts/{name}.png"] = plot(ax=detached_ax()).figure
    return out


def log_comparison(
    comparison: Any,
    *,
    experiment: str,
    tracking_uri: str | None = None,
    run_name: str | None = None,
    artifact_location: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> LoggedRuns:
    """Log a ``compare`` result to MLflow: a parent run and a child run per run (each repeat its own).

    Children come from ``comparison.runs_frame()`` (task id ``compare``, setting ``default``, model =
    the comparison's label); the parent holds ``spread()`` (per model: success with its Wilson
    interval, cost, tokens and time per run as mean and 95% interval) as the summary, the sweep
    charts and the comparison's cost and reasoning-per-step charts. The task's text is not logged
    (it is the user's prompt); ``params`` adds your own labels to the parent (e.g. the knobs the
    runs were given: a comparison does not keep them). Any other results form is logged as
    :func:`log_sweep` logs it (``params`` then unused).
    """
    from agentlab.evals.results import as_results
    from agentlab.sweeps.analysis import summarize

    res = as_results(comparison, what="log_comparison")
    if res.kind != "comparison":  # another form: logged as the sweep it is, with the same knobs
        return log_sweep(res, experiment=experiment, tracking_uri=tracking_uri, run_name=run_name,
                         artifact_location=artifact_location)  # fmt: skip
    frame = comparison.runs_frame()
    if frame.empty:
        raise ConfigError("log_comparison: the comparison holds no runs")
    extra = {str(k): str(v) for k, v in (params or {}).items()}
    parent = _Parent(
        name=run_name or f"compare {len(comparison.labels)} models",
        kind="comparison",
        params={"models": _names(comparison.labels), "repeats": str(comparison.repeats), **extra},
        metrics={"wall_s": comparison.wall_s, "sum_s": comparison.sum_s},
        tags={},
        summary=comparison.spread(),
        chart_summary=summarize(frame),
        extra_figures=_comparison_figures(comparison),
    )
    client, artifact_location = _client(tracking_uri, artifact_location)
    exp = _experiment_id(client, experiment, artifact_location)
    return _log(client, exp, frame, parent, {})
