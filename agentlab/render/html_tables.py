"""Escaped HTML tables and the number formats of agentlab's static ``_repr_html_`` output.

Below both core and the notebook layer: ``RunResult``, ``Usage`` and ``Comparison`` render
themselves with these helpers without importing the notebook package (which knows IPython and
ipywidgets), and ``agentlab.notebook.display`` re-exports them for the views. Cells are escaped
here, so text from outside (model names, provider errors, answers, tool output) cannot carry
markup into a notebook's output.

Formatting rules (also in README): tokens with thousands separators; unknown is ``<NA>``, never 0;
USD with enough digits for the tiny amounts simulated and cached calls cost. ``PALETTE`` is the one
colour set shared by the HTML views and the charts.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["PALETTE", "fields_html", "fmt_int", "fmt_rate", "fmt_seconds", "fmt_usd", "table_html"]

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


NO_MATH = "tex2jax_ignore mathjax_ignore"
"""Classes MathJax skips (2 and 3): JupyterLab typesets ``$...$`` in HTML outputs, so a cell holding
two amounts (``$0.003579 ± $0``) would otherwise be set as maths (pandas' Styler does the same)."""

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


def _known(v: Any) -> float | None:
    """``v`` as a float, or None when it is unknown (None, NaN, ``pd.NA``) or not a number."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def fmt_usd(v: Any) -> str:
    """Dollars, one rule everywhere: 4 significant digits, at least cents; ``<NA>`` for unknown.

    ``$0.01000`` sits next to ``$0.005556`` and ``$1.234`` next to ``$12.35``, so amounts line up
    by magnitude; whole cents from $10 up (``$1,234.50``), never scientific notation.
    """
    f = _known(v)
    if f is None:
        return "<NA>"
    if f == 0:
        return "$0"
    decimals = max(2, 3 - math.floor(math.log10(abs(f))))
    return f"{'-' if f < 0 else ''}${abs(f):,.{decimals}f}"


def fmt_rate(v: Any) -> str:
    """Tokens per second, 3 significant digits (``412 tok/s``); ``<NA>`` for unknown."""
    f = _known(v)
    if f is None:
        return "<NA>"
    return f"{f:,.0f} tok/s" if abs(f) >= 100 else f"{f:.3g} tok/s"


def fmt_seconds(v: float | None) -> str:
    """Seconds, as ms below one second; an en dash when no timing was taken (unknown, not zero)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.2f} s"


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
    return f"<div class='{html.escape(css_class)} {NO_MATH}'><table>{cells}</table>{pre}</div>"


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
        f"<table class='agentlab-table {NO_MATH}' style='border-collapse:collapse;font-size:12px'>{cap}"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )
