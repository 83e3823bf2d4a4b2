"""A pandas ``Styler`` for usage frames and their groupings: the one place their cells are formatted.

Below core and the notebook layer, so a ``UsageFrame`` (core) and ``style_usage_frame`` (notebook)
format the same way. The DataFrame keeps raw numbers (``latency_s`` is float seconds, costs float
USD); only this display turns them into ``1,234`` / ``$0.005556`` / ``29 ms`` / ``<NA>``.

Why every formatter escapes its own result: pandas' ``escape="html"`` escapes the cell value before
a formatter runs, not the formatter's output nor ``na_rep``, so a raw ``<NA>`` reached the browser as
an unknown tag and rendered as a blank cell.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentlab.render.html_tables import fmt_int, fmt_rate, fmt_seconds, fmt_usd

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NA_HTML", "cell_formatter", "style_frame"]

NA_HTML = "&lt;NA&gt;"
"""``<NA>`` as HTML text: unknown is shown, never a blank cell."""

_COUNT_COLS = frozenset(
    {
        "uncached_input_tokens",
        "non_reasoning_output_tokens",
        "total_tokens",
        "calls",
        "steps",
        "step",
        "reasoning_items_dropped",
    }
)


def _seconds(v: Any) -> str:
    return fmt_seconds(None if v is None or v != v else float(v))


def cell_formatter(name: str) -> Callable[[Any], str] | None:
    """The plain-text formatter for a column, by its name (None: leave the column's own text)."""
    if name in _COUNT_COLS or name.endswith("_tokens"):
        return fmt_int
    if name.startswith("cost") or name.endswith("_usd"):
        return fmt_usd
    if name.endswith("_per_s"):
        return fmt_rate
    if name.endswith("_s"):
        return _seconds
    return None


def _escaped(f: Callable[[Any], str]) -> Callable[[Any], str]:
    def out(v: Any) -> str:
        try:
            if v is None or v != v:  # None, NaN, pd.NA
                return NA_HTML
        except TypeError:  # pd.NA != pd.NA raises in a boolean context
            return NA_HTML
        return html.escape(f(v))

    return out


def style_frame(df: pd.DataFrame) -> Any:
    """Thousands separators, dollars, seconds, ``<NA>`` for unknown; every text cell escaped."""
    import pandas as pd

    fmt: dict[Any, Any] = {}
    for col in df.columns:
        f = cell_formatter(str(col))
        if f is not None:
            fmt[col] = _escaped(f)
    # escape="html": text cells and index labels (model names, run ids) come from outside.
    styler = df.style.format(fmt, na_rep=NA_HTML, escape="html").format_index(escape="html", axis=0)
    styler = styler.format_index(escape="html", axis=1)
    return styler.hide(axis="index") if isinstance(df.index, pd.RangeIndex) else styler
