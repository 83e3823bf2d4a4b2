"""The usage frame a researcher reads (issue 17).

Grouped sources, <NA> shown, one money rule, throughput columns, a short display over a complete frame.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

import agentlab as al
from agentlab.costs.frames import THROUGHPUT_COLUMNS, USAGE_COLUMNS
from agentlab.neutral.usage import CallUsage
from agentlab.notebook.display import style_usage_frame
from agentlab.render.html_tables import fmt_usd
from agentlab.testing import ScriptedAdapter, Step

UNKNOWN = CallUsage(
    input_tokens=100,
    cache_read_tokens=0,
    cache_write_tokens=0,
    output_tokens=60,
    reasoning_tokens=None,
    reasoning_source="unknown",
)


@al.tool
def t(x: int) -> int:
    """Identity."""
    return x


def _runs(model: str = "sim-reasoner") -> list[al.RunResult]:
    """``model``: ``sim-reasoner+tps=N`` where the test reads tokens per second (timed, see below)."""
    known = al.run(
        f"openai:{model}",
        "x",
        tools=[t],
        adapter=ScriptedAdapter(
            [Step(reasoning=["r"], tool_calls=[("t", {"x": 1})]), Step(text="ok")], model=model
        ),
    )
    legacy = al.run(
        "anthropic:sim-thinker-legacy",
        "x",
        adapter=ScriptedAdapter(
            [Step(text="ok", usage=UNKNOWN)], provider="anthropic", model="sim-thinker-legacy"
        ),
    )
    return [known, legacy]


def test_usage_by_keeps_one_source_or_says_mixed() -> None:
    known, legacy = _runs()
    df = al.usage_frame([known, known, legacy])
    by_model = al.usage_by(df, "model")
    assert by_model.loc["sim-reasoner", "reasoning_source"] == "reported"  # not "reportedreported"
    assert by_model.loc["sim-thinker-legacy", "reasoning_source"] == "unknown"
    assert by_model.loc["sim-thinker-legacy", "reasoning_tokens"] is pd.NA
    everything = al.usage_by(df.assign(all="all"), "all")
    assert everything.loc["all", "reasoning_source"] == "mixed"
    assert everything.loc["all", "price_source"] == "agentlab simulated"
    assert int(everything.loc["all", "calls"]) == 5


def test_style_shows_unknown_as_na_text_not_a_blank_tag() -> None:
    _, legacy = _runs()
    html = style_usage_frame(legacy.usage_frame()).to_html()
    assert "&lt;NA&gt;" in html
    assert "<NA>" not in html  # a raw <NA> is an unknown tag: the browser shows an empty cell


def test_money_has_one_rule() -> None:
    assert [fmt_usd(v) for v in (0.01, 0.005556, 0.1234567, 1.23456, 12.345, 1234.5, 0)] == [
        "$0.01000",
        "$0.005556",
        "$0.1235",
        "$1.235",
        "$12.35",
        "$1,234.50",
        "$0",
    ]
    assert fmt_usd(math.nan) == "<NA>" and fmt_usd(-0.02) == "-$0.02000"


def test_throughput_columns_per_call_and_per_run() -> None:
    known, legacy = _runs("sim-reasoner+tps=1000")  # paced: a rate that means something
    df = al.usage_frame([known, legacy])
    assert list(df.columns)[-2:] == list(THROUGHPUT_COLUMNS)
    assert {c: str(d) for c, d in df.dtypes.items()} == USAGE_COLUMNS
    first = df.iloc[0]  # reasoning streamed, then a tool call (no answer text)
    window = first["latency_s"] - first["first_reasoning_s"]
    assert first["reasoning_tokens_per_s"] == pytest.approx(first["reasoning_tokens"] / window)
    assert math.isnan(first["answer_tokens_per_s"])  # no answer text streamed: unknown, not 0
    last = df.iloc[2]  # legacy: reasoning unknown
    assert math.isnan(last["reasoning_tokens_per_s"])
    per_run = al.usage_by(df, "run_id")
    run = per_run.loc[known.run_id]
    assert run["latency_s"] == pytest.approx(df[df.run_id == known.run_id]["latency_s"].sum())
    assert run["reasoning_tokens_per_s"] > 0 and not math.isnan(run["first_reasoning_s"])


def test_default_display_is_short_and_the_frame_complete() -> None:
    known, _ = _runs()
    df = known.usage_frame()
    assert isinstance(df, pd.DataFrame) and list(df.columns) == list(USAGE_COLUMNS)
    assert df["latency_s"].dtype == "float64"  # numeric seconds, formatted only in display
    html = df._repr_html_()
    assert "total_cost_usd" in html and "cache_write_cost_usd" not in html
    assert "frame(all_columns=True)" in html
    assert " ms" in html or " s<" in html  # seconds formatted in the display
    full = df.frame(all_columns=True).to_html()
    assert all(c in full for c in USAGE_COLUMNS)
    assert "cache_write_cost_usd" not in repr(df).split("\n[")[0]
    # derived frames are plain DataFrames: a selection shows what was selected
    assert type(df[["run_id", "cache_write_cost_usd"]]) is pd.DataFrame
