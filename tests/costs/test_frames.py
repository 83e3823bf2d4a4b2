"""usage_frame: documented columns, dtypes, <NA> for unknown reasoning, NaN for unknown cost."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import agentlab as al
from agentlab.costs.frames import USAGE_COLUMNS
from agentlab.neutral.usage import CallUsage
from agentlab.testing import ScriptedAdapter, Step

LEGACY = CallUsage(
    input_tokens=100,
    cache_read_tokens=20,
    cache_write_tokens=10,
    cache_write_1h_tokens=0,
    output_tokens=60,
    reasoning_tokens=None,
    reasoning_source="unknown",
)


@al.tool
def t(x: int) -> int:
    """Identity."""
    return x


def test_columns_and_dtypes() -> None:
    ad = ScriptedAdapter(
        [Step(reasoning=["r"], tool_calls=[("t", {"x": 1})]), Step(text="ok", usage=LEGACY)],
        provider="anthropic",
        model="sim-thinker-legacy",
    )
    r = al.run("anthropic:sim-thinker-legacy", "x", tools=[t], adapter=ad)
    df = r.usage_frame()
    assert list(df.columns) == list(USAGE_COLUMNS)
    assert {c: str(d) for c, d in df.dtypes.items()} == USAGE_COLUMNS
    assert len(df) == 2 and df["step"].tolist() == [1, 2]
    assert df["reasoning_tokens"].iloc[0] == 8
    assert df["reasoning_tokens"].iloc[1] is pd.NA  # unknown, never 0
    assert df["reasoning_source"].tolist() == ["reported", "unknown"]
    assert math.isnan(df["reasoning_cost_usd"].iloc[1]) and not math.isnan(df["total_cost_usd"].iloc[1])
    assert df["total_cost_usd"].sum() == pytest.approx(r.usage.cost.total)
    assert df["first_reasoning_s"].notna().iloc[0] and math.isnan(df["first_text_s"].iloc[0])
    assert r.usage.reasoning_tokens is None  # run total with one unknown part is unknown


def test_from_events_and_results_and_empty() -> None:
    r = al.run("openai:sim-reasoner", "x", adapter=ScriptedAdapter([Step(text="a")]))
    from_events = al.usage_frame([e for e in r.events if e.kind == "model_call_completed"])
    pd.testing.assert_frame_equal(from_events, r.usage_frame())
    both = al.usage_frame([r, r])
    assert len(both) == 2
    empty = al.usage_frame([])
    assert list(empty.columns) == list(USAGE_COLUMNS) and len(empty) == 0
    with pytest.raises(TypeError):
        al.usage_frame([object()])


def test_frames_read_records_through_the_protocols_not_the_loops_classes() -> None:
    """Anything shaped like a priced call (or a run holding such calls) makes rows: costs needs no loop."""
    import dataclasses

    from agentlab.costs.frames import PricedCall, RunCalls
    from agentlab.loop.result import CallRecord, RunResult

    r = al.run("openai:sim-reasoner", "x", adapter=ScriptedAdapter([Step(text="a")]))
    call: PricedCall = r.calls[0]  # the loop's records satisfy the protocols (mypy checks these two)
    run: RunCalls = r
    assert isinstance(call, CallRecord) and isinstance(run, RunResult)

    @dataclasses.dataclass
    class Mine:
        calls: tuple[PricedCall, ...]

    pd.testing.assert_frame_equal(al.usage_frame(Mine(calls=(call,))), r.usage_frame())
    pd.testing.assert_frame_equal(al.usage_frame([Mine(calls=(call,))]), r.usage_frame())


def test_usage_values_render_as_html_without_widgets() -> None:
    import agentlab as al
    from agentlab.testing import ScriptedAdapter, Step

    ad = ScriptedAdapter(
        [
            Step(
                text="hi",
                usage={
                    "input_tokens": 2746,
                    "cache_read_tokens": 2208,
                    "cache_write_tokens": 0,
                    "output_tokens": 482,
                    "reasoning_tokens": 448,
                    "reasoning_source": "reported",
                },
            )
        ],
        model="gpt-5.1",
    )
    r = al.run("openai:gpt-5.1", "x", adapter=ad)
    page = r.usage._repr_html_()
    # 538 uncached + 2,208 cached input, 482 output of which 448 reasoning (the README's worked example)
    assert "<table" in page and ">538<" in page and "2,208" in page and ">448<" in page
    assert "$0.00576" in page and "unpriced" not in page  # 538x1.25 + 2208x0.125 + 482x10 per 1M
    call = r.calls[0].usage._repr_html_()
    assert "<table" in call and "2,208" in call and "reported" in call


def test_usage_by_groups_numbers_only_and_keeps_unknown_unknown() -> None:
    import agentlab as al
    from agentlab.testing import ScriptedAdapter, Step

    def one(model: str, reasoning: int | None) -> al.RunResult:
        usage = {
            "input_tokens": 100,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "output_tokens": 50,
            "reasoning_tokens": reasoning,
            "reasoning_source": "reported" if reasoning is not None else "unknown",
        }
        ad = ScriptedAdapter([Step(text="ok", usage=usage)], provider="anthropic", model=model)
        return al.run(f"anthropic:{model}", "x", adapter=ad)

    runs = [one("sim-thinker", 30), one("sim-thinker", 20), one("sim-thinker-legacy", None)]
    frame = al.usage_frame(runs)
    g = al.usage_by(frame, "model")
    assert list(g.index) == ["sim-thinker", "sim-thinker-legacy"]
    assert g.loc["sim-thinker", "calls"] == 2 and g.loc["sim-thinker", "reasoning_tokens"] == 50
    assert g.loc["sim-thinker", "input_tokens"] == 200 and "run_id" not in g.columns
    assert g["reasoning_tokens"].isna().tolist() == [False, True]  # unknown stays <NA>, never 0
    with pytest.raises(KeyError, match="no column"):
        al.usage_by(frame, "nope")


def test_price_source_and_date_columns() -> None:
    sim = al.run("openai:sim-reasoner", "x", adapter=ScriptedAdapter([Step(text="a")]))
    real = al.run("openai:gpt-5.5", "x", adapter=ScriptedAdapter([Step(text="a")], model="gpt-5.5"))
    with pytest.warns(al.UnpricedModelWarning):
        unknown = al.run(
            "openai:frame-mystery-1", "x", adapter=ScriptedAdapter([Step(text="a")], model="frame-mystery-1")
        )
    with al.prices_override({"openai:gpt-5.5": {"input": 1, "cache_read": 1, "cache_write": 1, "output": 1}}):
        over = al.run("openai:gpt-5.5", "x", adapter=ScriptedAdapter([Step(text="a")], model="gpt-5.5"))
    df = al.usage_frame([sim, real, unknown, over])
    from agentlab.costs.library import library_source

    source, updated = library_source()
    assert df["price_source"].tolist()[:2] == ["agentlab simulated", source]
    assert df["price_source"].iloc[2] is pd.NA and df["price_updated"].iloc[2] is pd.NA
    assert df["price_source"].iloc[3] == "user override" and df["price_updated"].iloc[3] is pd.NA
    # A release date agentlab does not know is unknown: None from library_source, <NA> in the frame.
    assert df["price_updated"].iloc[0] == "2026-11-30"
    library_date = df["price_updated"].iloc[1]
    assert library_date == updated if updated is not None else library_date is pd.NA


def test_an_unknown_release_date_is_unknown_in_the_frame_and_a_known_one_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentlab.costs import library

    for version, want in (("0.0.0-unknown", None), ("0.2.3", "2026-11-10")):
        monkeypatch.setattr(library, "_version", lambda v=version: v)
        assert library.library_source() == (f"genai-prices {version}", want)
        library._cached.cache_clear()
        run = al.run("openai:gpt-5.5", "x", adapter=ScriptedAdapter([Step(text="a")], model="gpt-5.5"))
        cell = al.usage_frame([run])["price_updated"].iloc[0]
        assert cell == want if want is not None else cell is pd.NA
