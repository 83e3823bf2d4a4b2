"""What ``compare`` returns: every run of every model, side by side, with frames, charts and views.

Kept apart from :mod:`agentlab.sweeps.compare` (which builds and runs them) so the result can be
read, pickled and rendered without the machinery that made it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentlab.adapters.base import parse_model

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from agentlab.loop.result import RunResult

__all__ = ["Comparison", "ComparisonEntry"]


@dataclass(frozen=True)
class ComparisonEntry:
    """One column of a comparison: a model's run, how long it took and whether it solved the task."""

    label: str
    """The model string, with ``#2``… appended when the same model appears twice."""
    model: str
    result: RunResult | None
    error: str | None
    duration_s: float
    solved: bool | None
    """``check(output)`` when a check was given; None (unknown) otherwise or when the run failed."""
    repeat: int = 0
    """Which of the model's ``repeats`` runs this is, from 0 (as a sweep's ``repeat`` column)."""
    repeats: int = 1
    """How many runs the comparison made of this model."""

    @property
    def key(self) -> str:
        """``label`` alone for one run per model; ``label r2`` and on (1-based) with repeats."""
        return self.label if self.repeats == 1 else f"{self.label} r{self.repeat + 1}"

    @property
    def status(self) -> str:
        """``failed`` when the run raised before producing a result (``error`` says why)."""
        return self.result.status if self.result is not None else "failed"

    @property
    def output(self) -> str | None:
        """The final answer; None when the run failed or ended without one."""
        return self.result.output if self.result is not None else None

    @property
    def output_value(self) -> Any:
        """The validated structured answer (``output_type=``); None without one or when the run failed."""
        return self.result.output_value if self.result is not None else None

    @property
    def steps(self) -> int:
        """Model calls made; 0 for a run that failed before producing a result."""
        return self.result.steps if self.result is not None else 0

    @property
    def cost_usd(self) -> float:
        """USD of the run; NaN when any of its calls was unpriced or the run failed."""
        return self.result.usage.cost.total if self.result is not None else math.nan


def _reported(r: RunResult | None) -> float:
    """The run's provider-reported cost (NaN: none reported, or the run failed)."""
    c = r.usage.provider_cost_usd if r is not None else None
    return math.nan if c is None else c


class Comparison:
    """What ``compare`` returns: per-model results, the combined usage frame, and charts.

    ``wall_s`` is the wall time of the whole comparison; ``sum_s`` the sum of the runs' own durations
    (what running them one after another would have cost, roughly).
    """

    def __init__(self, task: str, entries: Sequence[ComparisonEntry], wall_s: float) -> None:
        self.task = task
        self.entries: tuple[ComparisonEntry, ...] = tuple(entries)
        self.wall_s = wall_s

    # ------------------------------------------------------------------ data

    @property
    def repeats(self) -> int:
        """Runs per model (``compare(..., repeats=N)``)."""
        return max((e.repeats for e in self.entries), default=1)

    @property
    def labels(self) -> list[str]:
        """Model labels in order, once each: the model strings, a model given twice numbered ``#2``."""
        return list(dict.fromkeys(e.label for e in self.entries))

    @property
    def keys(self) -> list[str]:
        """One per run: the label, or with repeats ``label r1``, ``label r2``… (the dicts' keys)."""
        return [e.key for e in self.entries]

    @property
    def results(self) -> dict[str, RunResult]:
        """The runs that produced a result, by key (failed ones are left out, see ``entries``)."""
        return {e.key: e.result for e in self.entries if e.result is not None}

    @property
    def answers(self) -> dict[str, str | None]:
        """Every run's final answer by key, None for a failed run, to read answers side by side."""
        return {e.key: e.output for e in self.entries}

    @property
    def values(self) -> dict[str, Any]:
        """Every run's structured answer (``output_type=``) by key, None where there is none."""
        return {e.key: e.output_value for e in self.entries}

    @property
    def steps(self) -> dict[str, int]:
        """Model calls per run, by key."""
        return {e.key: e.steps for e in self.entries}

    @property
    def sum_s(self) -> float:
        """What the runs took one after another; set beside ``wall_s`` it shows the concurrency gain."""
        return sum(e.duration_s for e in self.entries)

    @property
    def usage(self) -> pd.DataFrame:
        """Every model call of every run, one row each (the usage frame, plus a ``label`` column)."""
        import pandas as pd

        frames = []
        for e in self.entries:
            if e.result is None:
                continue
            df = e.result.usage_frame()
            df.insert(0, "label", e.label)
            df.insert(1, "repeat", pd.array([e.repeat] * len(df), dtype="Int64"))
            frames.append(df)
        if not frames:
            from agentlab.costs.frames import usage_frame

            empty = usage_frame(())
            empty.insert(0, "label", pd.Series(dtype="string"))
            empty.insert(1, "repeat", pd.Series(dtype="Int64"))
            return empty
        from agentlab.costs.usage_view import UsageFrame

        return UsageFrame(pd.concat(frames, ignore_index=True))  # short display, complete data

    def summary(self) -> pd.DataFrame:
        """One row per run: label, repeat, status, steps, tokens, cost, duration, solved, answer.

        ``duration_s`` is the run's own time, from its first request; ``setup_s`` (before it, never
        inside it) the time spent importing the provider SDK and building its client, NaN when an
        adapter was given.

        ``cost_usd`` is agentlab's (from ``price_source``); ``provider_cost_usd`` the provider's own
        figure beside it where the provider reports one (OpenRouter's ``usage.cost``), else NaN.
        """
        import pandas as pd

        rows = []
        for e in self.entries:
            r = e.result
            t = r.usage.tokens if r is not None else None
            rows.append(
                {
                    "label": e.label,
                    "repeat": e.repeat,
                    "provider": parse_model(e.model).provider,
                    "model": parse_model(e.model).model,
                    "status": e.status,
                    "steps": e.steps,
                    "input_tokens": t.input_tokens if t else None,
                    "cache_read_tokens": t.cache_read_tokens if t else None,
                    "output_tokens": t.output_tokens if t else None,
                    "reasoning_tokens": t.reasoning_tokens if t else None,
                    "cost_usd": e.cost_usd,
                    "provider_cost_usd": _reported(r),
                    "price_source": r.usage.cost.source if r is not None else None,
                    "duration_s": e.duration_s,
                    "setup_s": r.setup_s if r is not None else None,
                    "solved": e.solved,
                    "answer": e.output if e.output is not None else e.error,
                }
            )
        df = pd.DataFrame(rows)
        for col in (
            "repeat",
            "steps",
            "input_tokens",
            "cache_read_tokens",
            "output_tokens",
            "reasoning_tokens",
        ):
            df[col] = df[col].astype("Int64")
        df["solved"] = df["solved"].astype("boolean")
        df["cost_usd"] = df["cost_usd"].astype("float64")
        df["provider_cost_usd"] = df["provider_cost_usd"].astype("float64")
        df["price_source"] = df["price_source"].astype("string")
        df["setup_s"] = df["setup_s"].astype("float64")
        return df

    def runs_frame(self) -> pd.DataFrame:
        """One row per run in the sweep results' columns (``agentlab.sweeps.store.ROW_FIELDS``).

        Built from the same whitelisted scalars a sweep row holds (never events or reasoning), so
        the sweeps' summaries apply unchanged; ``model`` is the label, ``latency_s`` the run's time.
        """
        from agentlab.sweeps.comparison_frames import runs_frame

        return runs_frame(self.entries)

    def spread(self) -> pd.DataFrame:
        """Per model: the sweeps' summary plus cost, tokens and time per run as mean and 95% interval.

        :func:`agentlab.sweeps.analysis.spread` over :meth:`runs_frame`: ``success_rate`` with its
        Wilson interval (over runs with a check and a verdict), ``total_cost_usd_mean`` /
        ``_ci_low`` / ``_ci_high``, the same for input/output/reasoning tokens and ``latency_s``.
        One run per model gives no interval (NaN): use ``repeats=``.
        """
        from agentlab.sweeps.analysis import spread

        return spread(self.runs_frame(), by=("model",)).rename_axis("label")

    # ------------------------------------------------------------------ charts

    def plot_costs(self, ax: Axes | None = None, **kw: Any) -> Axes:
        """Stacked cost per model: reasoning, other output, uncached input, cache (see charts).

        With repeats, a bar is the model's mean run (not the sum of its repeats), with an error bar
        for the 95% interval of that mean.
        """
        from agentlab.render.charts import plot_cost_breakdown

        if self.repeats > 1:
            kw.setdefault("ci", True)
        return plot_cost_breakdown(self.usage, by="label", ax=ax, **kw)

    def plot_reasoning(self, ax: Axes | None = None, **kw: Any) -> Axes:
        """Reasoning tokens per step, one line per model."""
        from agentlab.render.charts import plot_reasoning_per_step

        return plot_reasoning_per_step(self.usage, by="label", ax=ax, **kw)

    # ------------------------------------------------------------------ display

    def _rows(self) -> list[list[str]]:
        from agentlab.render.html_tables import fmt_int, fmt_seconds, fmt_usd

        rows = []
        for e in self.entries:
            t = e.result.usage.tokens if e.result is not None else None
            answer = e.output if e.output is not None else (e.error or "")
            rows.append(
                [
                    e.key,
                    e.status,
                    str(e.steps),
                    fmt_int(t.input_tokens if t else None),
                    fmt_int(t.output_tokens if t else None),
                    fmt_int(t.reasoning_tokens if t else None),
                    fmt_usd(e.cost_usd),
                    fmt_seconds(e.duration_s),
                    "<NA>" if e.solved is None else ("yes" if e.solved else "no"),
                    answer if len(answer) <= 300 else answer[:299] + "…",
                ]
            )
        return rows

    _HEADER = ("model", "status", "steps", "input", "output", "reasoning", "cost", "time", "solved", "answer")

    def _repr_html_(self) -> str:
        from agentlab.render.html_tables import fmt_seconds, table_html

        if self.repeats > 1:
            from agentlab.sweeps.comparison_frames import SPREAD_HEADER, spread_rows

            caption = (
                f"Comparison of {len(self.labels)} models × {self.repeats} repeats · wall "
                f"{fmt_seconds(self.wall_s)} (sum of runs {fmt_seconds(self.sum_s)}) · mean [95% "
                "bootstrap interval] per run; success: Wilson 95% interval"
            )
            return (
                f"<div class='agentlab-comparison'><div style='font-size:12px;opacity:0.8'>task: "
                f"{html.escape(self.task[:300])}</div>"
                f"{table_html(SPREAD_HEADER, spread_rows(self.spread()), caption=caption)}</div>"
            )
        caption = (
            f"Comparison of {len(self.entries)} models · wall {fmt_seconds(self.wall_s)} "
            f"(sum of runs {fmt_seconds(self.sum_s)})"
        )
        return (
            f"<div class='agentlab-comparison'><div style='font-size:12px;opacity:0.8'>task: "
            f"{html.escape(self.task[:300])}</div>"
            f"{table_html(self._HEADER, self._rows(), caption=caption)}</div>"
        )

    def __str__(self) -> str:
        header: Sequence[str] = self._HEADER
        body = self._rows()
        if self.repeats > 1:
            from agentlab.sweeps.comparison_frames import SPREAD_HEADER, spread_rows

            header, body = SPREAD_HEADER, spread_rows(self.spread())
        rows = [list(header), *body]
        widths = [min(40, max(len(r[i]) for r in rows)) for i in range(len(header))]
        lines = ["  ".join(c[:w].ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        return (
            f"task: {self.task}\n"
            + "\n".join(lines)
            + f"\nwall {self.wall_s:.2f} s, sum of runs {self.sum_s:.2f} s"
        )

    def __repr__(self) -> str:
        reps = f" x{self.repeats}" if self.repeats > 1 else ""
        return f"<Comparison {self.labels}{reps} wall={self.wall_s:.2f}s sum={self.sum_s:.2f}s>"
