"""Export a run or a comparison: its frames as Parquet or CSV, and a one-file HTML report.

What is exported is what a result holds (usage, tool calls and results, answers, timings), never
reasoning: a ``RunResult`` cannot reach any (see ``agentlab.loop.result``), and the report is built
from the same frames and static HTML as the notebook's saved output.

Parquet needs ``pyarrow``, the ``parquet`` extra (``pip install 'agentlab[parquet]'``); without it
``export_frames(..., format="parquet")`` raises ``MissingExtraError`` naming the extra, before any
file is written. The HTML report is self-contained (styles inline, charts as inline SVG, no script),
so a colleague can open it in a browser without a kernel.

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

__all__ = ["export_frames", "report_html", "save_report"]

ExportFormat = Literal["parquet", "csv"]


def _frames(obj: Any) -> dict[str, pd.DataFrame]:
    import pandas as pd

    from agentlab.costs.frames import usage_frame
    from agentlab.loop.run_tables import labelled_results, timeline_frame, tool_frame

    pairs = list(labelled_results(obj))
    usage = []
    for label, r in pairs:
        df = pd.DataFrame(usage_frame(r))
        df.insert(0, "label", pd.array([label] * len(df), dtype="string"))
        usage.append(df)
    out = {
        "usage": pd.concat(usage, ignore_index=True) if usage else pd.DataFrame(usage_frame(())),
        "tools": tool_frame(obj),
        "timeline": timeline_frame(obj),
    }
    summary = getattr(obj, "summary", None)
    if callable(summary):
        out["summary"] = summary()
    return out


def _require_pyarrow() -> None:
    import importlib.util

    if importlib.util.find_spec("pyarrow") is None:
        raise MissingExtraError("Parquet export", "pyarrow", "parquet")


def export_frames(obj: Any, directory: str | Path, *, format: ExportFormat = "parquet") -> dict[str, Path]:
    """Write ``usage``, ``tools``, ``timeline`` (and a comparison's ``summary``) as files in ``directory``.

    ``obj``: a ``RunResult``, a ``Comparison`` or several results. Returns ``{name: path}``.
    """
    if format not in ("parquet", "csv"):
        raise ConfigError(f"export_frames format must be 'parquet' or 'csv', got {format!r}")
    if format == "parquet":
        _require_pyarrow()
    frames = _frames(obj)
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


def _sections(obj: Any, frames: dict[str, pd.DataFrame]) -> list[tuple[str, str]]:
    from agentlab.costs.usage_view import UsageFrame
    from agentlab.render.charts import plot_cost_breakdown, plot_reasoning_per_step
    from agentlab.render.frame_style import style_frame
    from agentlab.render.timeline_chart import chart_svg as _svg
    from agentlab.render.timeline_chart import plot_timeline

    parts: list[tuple[str, str]] = []
    head = obj._repr_html_() if hasattr(obj, "_repr_html_") else ""
    parts.append(("Summary", head))
    usage = frames["usage"]
    if len(usage):
        parts.append(("Usage per model call", UsageFrame(usage).frame().to_html()))
        parts.append(("What it cost", _svg(lambda d: plot_cost_breakdown(d, by="label"), usage)))
        parts.append(
            ("Reasoning tokens per step", _svg(lambda d: plot_reasoning_per_step(d, by="label"), usage))
        )
    if len(frames["timeline"]):
        parts.append(("Timeline", _svg(plot_timeline, frames["timeline"])))
    tools = frames["tools"]
    if len(tools):
        parts.append(("Tool calls", style_frame(tools.drop(columns=["run_id", "call_id"])).to_html()))
    return parts


def report_html(obj: Any, *, title: str | None = None) -> str:
    """The report as one HTML document (see ``save_report``)."""
    frames = _frames(obj)
    task = getattr(obj, "task", None)
    name = title or ("agentlab comparison" if hasattr(obj, "entries") else "agentlab run")
    body = [f"<h1>{html.escape(name)}</h1>"]
    if task:
        body.append(f"<p><b>task:</b> {html.escape(str(task))}</p>")
    body.append(
        "<p class='note'>Saved by agentlab: answers, tool calls, usage and timings. Reasoning is "
        "never saved, so none is shown.</p>"
    )
    for heading, content in _sections(obj, frames):
        body.append(f"<h2>{html.escape(heading)}</h2>{content}")
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(name)}</title><style>{_CSS}</style></head><body>"
        + "".join(body)
        + "</body></html>"
    )


def save_report(obj: Any, path: str | Path, *, title: str | None = None) -> Path:
    """Write a self-contained HTML report of a comparison (or a run) that opens without a kernel."""
    out = Path(path)
    page = report_html(obj, title=title)  # built before the file is touched
    ensure_dir(out.parent)
    write_atomic(out, page)
    return out
