"""Static HTML for results, usage and comparisons: what renders without widgets.

Widgets need a live kernel or an embedded widget manager; nbconvert's HTML, GitHub's notebook view
and a terminal do not have one. Everything users look at after the fact (a run's usage line, a
comparison table, a usage frame) therefore also exists as plain HTML built here. None of it ever
contains reasoning text: only portable items (answers, tool calls/results) and counters. The escaped
tables and number formats live in :mod:`agentlab.render.html_tables` (core renders with them too) and are
re-exported here.

Formatting rules (also in README): tokens with thousands separators; unknown is ``<NA>``, never 0;
USD with enough digits for the tiny amounts simulated and cached calls cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentlab.render.html_tables import PALETTE, fields_html, fmt_int, fmt_seconds, fmt_usd, table_html

if TYPE_CHECKING:
    import pandas as pd

    from agentlab.neutral.usage import CallUsage

__all__ = [
    "PALETTE",
    "UI_FONT",
    "fields_html",
    "fmt_int",
    "fmt_seconds",
    "fmt_usd",
    "style_usage_frame",
    "table_html",
]

UI_FONT = (
    "font-family:var(--jp-ui-font-family,system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif);"
    "line-height:1.45"
)
"""Widget HTML does not inherit the notebook's UI font everywhere (exported HTML falls back to serif), and
ipywidgets' ``HTML`` uses the 28 px control height as line height, which spreads wrapped text apart."""


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


def style_usage_frame(df: pd.DataFrame) -> Any:
    """A pandas ``Styler`` for a usage frame: thousands separators, dollars, ``<NA>`` for unknown.

    Works on the frame itself and on its groupings (``usage_by(df, "model")``): it formats the
    columns it recognises by name (``*_tokens`` as integers, ``cost*``/``*_usd`` as dollars,
    ``*_per_s`` as tokens per second, ``*_s`` as seconds) and leaves the others alone. The rules
    live in :mod:`agentlab.render.frame_style`, shared with the frame's own display.
    """
    from agentlab.render.frame_style import style_frame

    return style_frame(df)
