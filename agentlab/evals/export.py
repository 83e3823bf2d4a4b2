"""Export a run or a comparison: its frames as Parquet or CSV, and a one-file HTML report.

What is exported is what a result holds (usage, tool calls and results, answers, timings), never
reasoning: a ``RunResult`` cannot reach any (see ``agentlab.loop.result``), and the report is built
from the same frames and static HTML as the notebook's saved output.

Parquet needs ``pyarrow``, the ``parquet`` extra (``pip install 'agentlab[parquet]'``); without it
``export_frames(..., format="parquet")`` raises ``MissingExtraError`` naming the extra, before any
file is written. The HTML report is self-contained (styles inline, charts as inline SVG, nothing fetched),
so a colleague can open it in a browser without a kernel. Scored results (an evaluation, a sweep with
a check) add the views of ``agentlab.evals.views``: the task x model matrix (with one small inline
script that sorts it; without scripts it is the same table), the score-against-cost chart, the
tasks where the two best models disagree and each model's first transcript.

Every file is written whole or not at all (:func:`agentlab.records.atomic_file.write_atomic`): on
a full disk the earlier file, if any, is left as it was and a ``StorageError`` names the path.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentlab.errors import ConfigError, MissingExtraError
from agentlab.records.atomic_file import ensure_dir, write_atomic

if TYPE_CHECKING:
    import pandas as pd

    from agentlab.evals.results import Results

__all__ = ["export_frames", "report_html", "save_report"]

ExportFormat = Literal["parquet", "csv"]


def _frames(res: Results) -> dict[str, pd.DataFrame]:
    import pandas as pd

    from agentlab.costs.frames import usage_frame
    from agentlab.evals.run_tables import timeline_frame, tool_frame

    usage = []
    for label, _k, r in res.records:
        df = pd.DataFrame(usage_frame(r))
        df.insert(0, "label", pd.array([label] * len(df), dtype="string"))
        usage.append(df)
    return {
        "usage": pd.concat(usage, ignore_index=True) if usage else pd.DataFrame(usage_frame(())),
        "tools": tool_frame(res),
        "timeline": timeline_frame(res),
        "summary": res.summary(),
        "runs": _portable(res.runs()),
    }


def _portable(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs table without its nested columns (scores, tool calls): CSV and Parquet want scalars.

    Scores are in the ``score_<name>`` columns already; tool calls are the ``tools`` frame.
    """
    return runs.drop(columns=[c for c in ("scores", "called_tools") if c in runs.columns])


def _require_pyarrow() -> None:
    import importlib.util

    if importlib.util.find_spec("pyarrow") is None:
        raise MissingExtraError("Parquet export", "pyarrow", "parquet")


def export_frames(obj: Any, directory: str | Path, *, format: ExportFormat = "parquet") -> dict[str, Path]:
    """Write ``usage``, ``tools``, ``timeline``, ``summary`` and ``runs`` as files in ``directory``.

    ``obj``: any results form (a comparison, a sweep report, an evaluation, a results file, a
    ``load_results`` frame, run results; see ``agentlab.evals.results``). ``runs`` is the tidy runs
    table, one row per run; ``usage`` (per model call) is empty for a results file, which keeps
    totals per run only. Returns ``{name: path}``.
    """
    from agentlab.evals.results import as_results

    res = as_results(obj, what="export_frames")
    if format not in ("parquet", "csv"):
        raise ConfigError(f"export_frames format must be 'parquet' or 'csv', got {format!r}")
    if format == "parquet":
        _require_pyarrow()
    frames = _frames(res)
    out_dir = ensure_dir(directory)
    paths: dict[str, Path] = {}
    for name, df in frames.items():
        path = out_dir / f"{name}.{format}"
        write_atomic(path, _encoded(df, format))
        paths[name] = path
    return paths


def _encoded(df: pd.DataFrame, format: ExportFormat) -> bytes:
    """The file's bytes, built in memory: a full disk then costs the new file, never the old one."""
    if format == "csv":
        text: str = df.to_csv(index=False)
        return text.encode("utf-8")
    import io

    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


_CSS = (
    "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:24px;"
    "max-width:1200px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
    "table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;text-align:left;"
    "vertical-align:top;border-bottom:1px solid #eee}svg{max-width:100%;height:auto}"
    ".note{font-size:12px;opacity:0.75}"
)


def _head(res: Results) -> str:
    """The report's summary: the object's own HTML (a comparison, a run), else the summary table."""
    from agentlab.render.frame_style import style_frame

    own = getattr(res.source, "_repr_html_", None)
    if res.kind in ("comparison", "run") and callable(own):
        return str(own())
    return str(style_frame(res.summary()).to_html())


def _sections(res: Results, frames: dict[str, pd.DataFrame]) -> list[tuple[str, str]]:
    from agentlab.costs.usage_view import UsageFrame
    from agentlab.evals.views import report_sections
    from agentlab.render.charts import plot_cost_breakdown, plot_reasoning_per_step
    from agentlab.render.frame_style import style_frame
    from agentlab.render.timeline_chart import chart_svg as _svg
    from agentlab.render.timeline_chart import plot_timeline

    parts: list[tuple[str, str]] = [("Summary", _head(res)), *report_sections(res)]
    usage = frames["usage"]
    if len(usage):
        parts.append(("Usage per model call", UsageFrame(usage).frame().to_html()))
        parts.append(("What it cost", _svg(lambda d: plot_cost_breakdown(d, by="label"), usage)))
        parts.append(
            ("Reasoning tokens per step", _svg(lambda d: plot_reasoning_per_step(d, by="label"), usage))
        )
    elif len(res.frame):
        parts.append(("What it cost", _svg(_plot_costs, res)))
    if len(frames["timeline"]):
        parts.append(("Timeline", _svg(plot_timeline, frames["timeline"])))
    tools = frames["tools"]
    if len(tools):
        parts.append(("Tool calls", style_frame(tools.drop(columns=["run_id", "call_id"])).to_html()))
    return parts


def _plot_costs(res: Results) -> Any:
    from agentlab.evals.results import plot_costs

    return plot_costs(res)


_TITLES = {"comparison": "agentlab comparison", "run": "agentlab run", "evaluation": "agentlab evaluation"}


def report_html(obj: Any, *, title: str | None = None) -> str:
    """The report as one HTML document (see ``save_report``); takes every results form."""
    from agentlab.evals.results import as_results

    res = as_results(obj, what="save_report")
    frames = _frames(res)
    task = getattr(res.source, "task", None) if res.kind == "comparison" else None
    name = title or _TITLES.get(res.kind, "agentlab sweep")
    body = [f"<h1>{html.escape(name)}</h1>"]
    if task:
        body.append(f"<p><b>task:</b> {html.escape(str(task))}</p>")
    body.append(
        "<p class='note'>Saved by agentlab: answers, tool calls, usage and timings. Reasoning is "
        "never saved, so none is shown.</p>"
    )
    for heading, content in _sections(res, frames):
        body.append(f"<h2>{html.escape(heading)}</h2>{content}")
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(name)}</title><style>{_CSS}</style></head><body>"
        + "".join(body)
        + "</body></html>"
    )


def save_report(obj: Any, path: str | Path, *, title: str | None = None) -> Path:
    """Write a self-contained HTML report of any results form that opens without a kernel."""
    out = Path(path)
    page = report_html(obj, title=title)  # built before the file is touched
    ensure_dir(out.parent)
    write_atomic(out, page)
    return out
