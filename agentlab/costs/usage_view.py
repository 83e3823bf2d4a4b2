"""``UsageFrame``: the usage frame's DataFrame, with a short default display.

A raw usage frame has two dozen columns of unformatted numbers; what people read first is a handful
(which call, tokens, reasoning, cost, time). The data stays complete (every column, raw dtypes:
``latency_s`` is float seconds); only ``_repr_html_`` / ``repr`` pick ``MAIN_COLUMNS``, formatted,
and say how to see the rest: ``df.frame(all_columns=True)``.

Derived frames (``df[...]``, ``groupby``, ``concat``) are plain DataFrames (``_constructor``), so the
short display never hides columns a user selected.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["MAIN_COLUMNS", "UsageFrame"]

MAIN_COLUMNS: tuple[str, ...] = (
    "label",
    "repeat",
    "run_id",
    "step",
    "provider",
    "model",
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "reasoning_source",
    "total_cost_usd",
    "latency_s",
    "first_text_s",
    "stop_reason",
)
"""The columns the default display shows (those present, in this order). ``repeat`` and ``run_id``
are among them: with ``compare(repeats=N)`` the rows of one model are N runs, and a table that hid
which run a row belongs to would read as one long run."""


class UsageFrame(pd.DataFrame):  # type: ignore[misc]  # pandas is untyped here
    """A complete usage frame whose notebook display shows ``MAIN_COLUMNS`` formatted."""

    @property
    def _constructor(self) -> Any:
        return pd.DataFrame

    def frame(self, *, all_columns: bool = False) -> Any:
        """A formatted ``Styler``: the main columns, or every column with ``all_columns=True``."""
        from agentlab.render.frame_style import style_frame

        df = pd.DataFrame(self)
        if not all_columns:
            df = df[[c for c in MAIN_COLUMNS if c in df.columns]]
        return style_frame(df)

    def _hidden_note(self) -> str:
        hidden = [str(c) for c in self.columns if c not in MAIN_COLUMNS]
        if not hidden:
            return ""
        return (
            f"{len(self)} call(s); {len(hidden)} more column(s) ({', '.join(hidden[:4])}, ...): "
            "df.frame(all_columns=True), or df.columns for the list"
        )

    def _repr_html_(self) -> str:
        import html

        note = self._hidden_note()
        foot = f"<div style='font-size:11px;opacity:0.75'>{html.escape(note)}</div>" if note else ""
        return f"<div class='agentlab-usage-frame'>{self.frame().to_html()}{foot}</div>"

    def __repr__(self) -> str:
        df = pd.DataFrame(self)
        shown = df[[c for c in MAIN_COLUMNS if c in df.columns]]
        note = self._hidden_note()
        return repr(shown) + (f"\n[{note}]" if note else "")
