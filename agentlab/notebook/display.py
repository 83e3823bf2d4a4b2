"""Static HTML for results, usage and comparisons: what renders without widgets.

Widgets need a live kernel or an embedded widget manager; nbconvert's HTML, GitHub's notebook view
and a terminal do not have one. Everything users look at after the fact (a run's usage line, a
comparison table, a usage frame) therefore also exists as plain HTML built here. None of it ever
contains reasoning text: only portable items (answers, tool calls/results) and counters.

Formatting rules (also in README): tokens with thousands separators; unknown is ``<NA>``, never 0;
USD with enough digits for the tiny amounts simulated and cached calls cost.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from ..usage import CallUsage

__all__ = [
    "PALETTE",
    "UI_FONT",
    "fields_html",
    "fmt_int",
    "fmt_seconds",
    "fmt_usd",
    "style_usage_frame",
    "table_html",
    "usage_line_html",
]

PALETTE: dict[str, str] = {
    # Okabe-Ito: distinguishable with the common colour-vision deficiencies.
    "blue": "#0072B2",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "grey": "#999999",
}


UI_FONT = (
    "font-family:var(--jp-ui-font-family,system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif);"
    "line-height:1.45"
)
"""Widget HTML does not inherit the notebook's UI font everywhere (exported HTML falls back to serif), and
ipywidgets' ``HTML`` uses the 28 px control height as line height, which spreads wrapped text apart."""


def fmt_int(v: Any) -> str:
    """Thousands separators; ``<NA>`` for unknown (None/NaN/pd.NA)."""
    if v is None:
        return "<NA>"
    try:
        if v != v:  # NaN
            return "<NA>"
        return f"{int(v):,}"
    except (TypeError, ValueError):
        return "<NA>"


def fmt_usd(v: Any) -> str:
    """Dollars: 4 significant decimals below a cent, cents above; ``<NA>`` for unknown."""
    if v is None:
        return "<NA>"
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "<NA>"
    if math.isnan(f):
        return "<NA>"
    if f == 0:
        return "$0"
    if abs(f) < 0.01:
        return f"${f:.6f}"
    return f"${f:,.4f}" if abs(f) < 1 else f"${f:,.2f}"


def fmt_seconds(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.2f} s"


def usage_line(usage: CallUsage | None, cost_usd: float | None = None, *, calls: int | None = None) -> str:
    """One line of text: ``input 1,234 (cache read 1,000) · output 456 (reasoning 300) · $0.0012``."""
    if usage is None:
        return "usage <NA>"
    bits = [f"input {fmt_int(usage.input_tokens)}"]
    cached = []
    if usage.cache_read_tokens:
        cached.append(f"cache read {fmt_int(usage.cache_read_tokens)}")
    if usage.cache_write_tokens:
        cached.append(f"cache write {fmt_int(usage.cache_write_tokens)}")
    if cached:
        bits[0] += f" ({', '.join(cached)})"
    out = f"output {fmt_int(usage.output_tokens)}"
    out += f" (reasoning {fmt_int(usage.reasoning_tokens)})"
    bits.append(out)
    if cost_usd is not None:
        bits.append(fmt_usd(cost_usd))
    if calls is not None:
        bits.append(f"{calls} call{'s' if calls != 1 else ''}")
    return " · ".join(bits)


def usage_line_html(
    usage: CallUsage | None, cost_usd: float | None = None, *, calls: int | None = None
) -> str:
    return f'<span style="font-size:12px">{html.escape(usage_line(usage, cost_usd, calls=calls))}</span>'


def fields_html(
    rows: Iterable[tuple[str, Any]], *, body: str | None = None, css_class: str = "agentlab-run"
) -> str:
    """A name/value table, then ``body`` as preformatted text: every part escaped here.

    The static results (``RunResult``, ...) are built from this and ``table_html`` only, so text
    from outside (model names, provider error messages that echo them, answers, tool output) cannot
    carry markup into a notebook's output: the callers pass plain text, never HTML.
    """
    cells = "".join(
        f"<tr><th style='text-align:left'>{html.escape(str(k))}</th>"
        f"<td style='text-align:left'>{html.escape(str(v))}</td></tr>"
        for k, v in rows
    )
    pre = f"<pre style='white-space:pre-wrap'>{html.escape(body)}</pre>" if body is not None else ""
    return f"<div class='{html.escape(css_class)}'><table>{cells}</table>{pre}</div>"


def table_html(header: Sequence[str], rows: Iterable[Sequence[Any]], *, caption: str | None = None) -> str:
    """A small, escaped HTML table (cells are escaped; pass plain, pre-formatted strings, never HTML)."""
    head = "".join(f"<th style='text-align:left;padding:2px 8px'>{html.escape(str(h))}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(
            f"<td style='text-align:left;padding:2px 8px;vertical-align:top'>{html.escape(str(c))}</td>"
            for c in row
        )
        body.append(f"<tr>{cells}</tr>")
    cap = (
        f"<caption style='text-align:left;font-weight:bold'>{html.escape(caption)}</caption>"
        if caption
        else ""
    )
    return (
        f"<table class='agentlab-table' style='border-collapse:collapse;font-size:12px'>{cap}"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


_TOKEN_COLS = (
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "uncached_input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "non_reasoning_output_tokens",
    "total_tokens",
    "calls",
    "steps",
)


def style_usage_frame(df: pd.DataFrame) -> Any:
    """A pandas ``Styler`` for a usage frame: thousands separators, dollars, ``<NA>`` for unknown.

    Works on the frame itself and on its groupings (``df.groupby("model").sum()``): it formats the
    columns it recognises by name (``*_tokens`` as integers, ``cost*``/``*_usd`` as dollars, ``*_s``
    as seconds) and leaves the others alone.
    """
    fmt: dict[str, Any] = {}
    for col in df.columns:
        name = str(col)
        if name in _TOKEN_COLS or name.endswith("_tokens"):
            fmt[col] = fmt_int
        elif name.startswith("cost") or name.endswith("_usd"):
            fmt[col] = fmt_usd
        elif name.endswith("_s"):
            fmt[col] = lambda v: fmt_seconds(None if v is None or v != v else float(v))
    # escape="html": text cells and index labels (model names, run ids) come from outside.
    styler = df.style.format(fmt, na_rep="<NA>", escape="html").format_index(escape="html", axis=0)
    styler = styler.format_index(escape="html", axis=1)
    return styler.hide(axis="index") if _flat_index(df) else styler


def _flat_index(df: pd.DataFrame) -> bool:
    # A default RangeIndex carries no information; a grouped index does, so keep that one.
    import pandas as pd

    return isinstance(df.index, pd.RangeIndex)
