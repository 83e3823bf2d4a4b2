"""Throughput figures and the timeline strip in the run view, the compare columns and the saved state.

Fed agentlab events (the views consume nothing else), or a scripted run: per step the time to first
reasoning / answer token and the tokens per second, per run the same over its calls, the strip's
bars at the recorded times, unknown figures left out (never 0), no reasoning in any saved text.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import pytest

import agentlab as al
from agentlab.neutral.events import (
    ModelCallCompletedEvent,
    ModelCallStartedEvent,
    RunCompletedEvent,
    RunStartedEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentlab.neutral.items import ToolCallItem, ToolResultItem
from agentlab.neutral.usage import CallUsage
from agentlab.notebook._coalesce import wait_idle
from agentlab.notebook._compare_column import CompareRun
from agentlab.notebook.panel import collapse_panels
from agentlab.notebook.run_view import CompareView, RunView
from agentlab.render.html_tables import fmt_rate
from agentlab.testing import ScriptedAdapter, Step

CANARY = f"CANARY-{uuid.uuid4().hex}"
RID = "run_x"


@al.tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    time.sleep(0.02)
    return f"{city}: 21 C"


def _scripted(view: RunView | CompareRun) -> al.RunResult:
    steps = [
        Step(reasoning=[CANARY, " more"], tool_calls=[("get_weather", {"city": "Paris"})]),
        Step(reasoning=["again " + CANARY], text=["Paris ", "is mild."]),
    ]
    return al.run(
        "openai:sim-reasoner+tps=1000",  # paced: the view shows its tokens per second
        "q",
        tools=[get_weather],
        adapter=ScriptedAdapter(steps, model="sim-reasoner+tps=1000"),
        on_event=view.on_event,
    )


def _bars(html: str) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in re.findall(r"left:([\d.]+)%;width:([\d.]+)%", html)]


def test_each_step_and_the_run_show_throughput(comm_messages: list[Any]) -> None:
    view = RunView()
    r = _scripted(view)
    collapse_panels()
    text = view.summary_text()
    step_lines = [ln for ln in text.splitlines() if ln.strip().startswith("Step ")]
    assert len(step_lines) == 2
    df = al.usage_frame(r)
    for line, (_, row) in zip(step_lines, df.iterrows(), strict=True):
        assert f"reasoning {fmt_rate(row['reasoning_tokens_per_s'])}" in line
        assert "1st reasoning" in line
    # step 1 streamed no answer text: no answer figures (unknown, not 0); step 2 has them
    assert "1st answer" not in step_lines[0] and "answer " not in step_lines[0].split("throughput:")[1]
    assert "1st answer" in step_lines[1] and "answer" in step_lines[1].split("throughput:")[1]
    (run_line,) = [ln for ln in text.splitlines() if ln.startswith("Run throughput:")]
    by = al.usage_by(df, "run_id").iloc[0]
    assert "mean 1st reasoning" in run_line
    assert fmt_rate(by["answer_tokens_per_s"]) in run_line
    for saved in (text, view.summary_html()):
        assert CANARY not in saved


def test_unknown_throughput_is_left_out_never_zero(comm_messages: list[Any]) -> None:
    view = RunView("sim:m")
    view.on_event(RunStartedEvent(run_id=RID, provider="sim", model="m"))
    view.on_event(ModelCallStartedEvent(run_id=RID, step=1, provider="sim", model="m"))
    # not streamed (no first-token times), reasoning figure unknown
    usage = CallUsage(input_tokens=5, output_tokens=7)
    view.on_event(
        ModelCallCompletedEvent(
            run_id=RID, step=1, provider="sim", model="m", stop_reason="end_turn", usage=usage, latency_s=0.4
        )
    )
    view.on_event(RunCompletedEvent(run_id=RID, status="completed", output="ok", steps=1, usage=usage))
    text = view.summary_text()
    assert "throughput" not in text and "tok/s" not in text and "1st " not in text
    assert "0 tok/s" not in view.summary_html()


def _tool(step: int, cid: str, name: str, started: float | None, dur: float, err: bool = False) -> list[Any]:
    call = ToolCallItem(call_id=cid, name=name, arguments="{}")
    res = ToolResultItem(call_id=cid, name=name, output="x", is_error=err)
    return [
        ToolCallEvent(run_id=RID, step=step, call=call),
        ToolResultEvent(run_id=RID, step=step, result=res, duration_s=dur, started_s=started),
    ]


def _recorded_run(stamped: bool = True) -> RunView:
    """A call from 0.5 s to 1.5 s, then tools a (1.6-2.6 s) and b (2.0-2.3 s, failed) overlapping."""
    view = RunView("sim:m")
    view.on_event(RunStartedEvent(run_id=RID, provider="sim", model="m"))
    view.on_event(ModelCallStartedEvent(run_id=RID, step=1, provider="sim", model="m"))
    usage = CallUsage(input_tokens=5, output_tokens=7, reasoning_tokens=3)
    view.on_event(
        ModelCallCompletedEvent(
            run_id=RID, step=1, provider="sim", model="m", stop_reason="tool_use", usage=usage,
            latency_s=1.0, first_reasoning_s=0.1, started_s=0.5 if stamped else None,
        )
    )  # fmt: skip
    for ev in _tool(1, "a", "alpha", 1.6 if stamped else None, 1.0) + _tool(
        1, "b", "beta", 2.0 if stamped else None, 0.3, err=True
    ):
        view.on_event(ev)
    return view


def test_the_strip_places_bars_at_the_recorded_times(comm_messages: list[Any]) -> None:
    view = _recorded_run()
    view.finish("completed")
    html = view.summary_html()
    assert html.count('class="agentlab-timeline"') == 1
    total = 2.6  # the last bar's end
    bars = _bars(html)
    assert bars == [
        pytest.approx((100 * 0.5 / total, 100 * 1.0 / total), abs=0.01),
        pytest.approx((100 * 1.6 / total, 100 * 1.0 / total), abs=0.01),
        pytest.approx((100 * 2.0 / total, 100 * 0.3 / total), abs=0.01),
    ]
    # a and b overlap (the rebuild from durations would start both at 1.5 s), b is drawn as an error
    (a_left, a_w), (b_left, _) = bars[1], bars[2]
    assert a_left < b_left < a_left + a_w
    assert "beta (tool error)" in html
    text = view.summary_text()
    assert "Timeline (recorded, seconds from run start):" in text
    assert "step 1: sim:m 500 ms–1.50 s; alpha 1.60 s–2.60 s; beta error 2.00 s–2.30 s" in text


def test_events_without_stamps_are_placed_by_the_view_clock(comm_messages: list[Any]) -> None:
    view = _recorded_run(stamped=False)
    view.finish("completed")
    assert "(view clock)" in view.summary_html() and "Timeline (view clock" in view.summary_text()
    assert len(_bars(view.summary_html())) == 3


def test_the_strip_goes_through_the_coalescing_flusher(comm_messages: list[Any]) -> None:
    view = RunView()
    assert view._timeline in view._synced  # gated: only the flusher sends it
    reasoning = [f"r{i} " for i in range(400)]
    two = [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    steps = [Step(reasoning=reasoning, tool_calls=two), Step(reasoning=reasoning, text="mild")]
    r = al.run("openai:sim-reasoner", "q", tools=[get_weather], adapter=ScriptedAdapter(steps),
               on_event=view.on_event)  # fmt: skip
    assert r.status == "completed"
    assert wait_idle()
    comm_id = view._timeline.comm.comm_id
    updates = [
        m for m in comm_messages if m["comm_id"] == comm_id and "value" in (m["data"] or {}).get("state", {})
    ]
    # it changes only when a call or a tool ends (4 ends here), never per delta
    assert 1 <= len(updates) <= 4
    last = updates[-1]["data"]["state"]["value"]
    assert "agentlab-timeline" in last and len(_bars(last)) == 4
    assert "r399" not in last


def test_compare_columns_and_their_saved_state_have_strips_and_rates(comm_messages: list[Any]) -> None:
    cmp = CompareView(["a", "b"])
    for col in cmp.columns:
        _scripted(col)
    collapse_panels()
    data = cmp._repr_mimebundle_()
    assert data["text/html"].count('class="agentlab-timeline"') == 2
    assert data["text/plain"].count("Timeline (recorded") == 2
    assert data["text/plain"].count("Run throughput:") == 2 and "tok/s" in data["text/html"]
    for mime in ("text/plain", "text/html"):
        assert CANARY not in data[mime]


@pytest.mark.parametrize(
    ("model", "timed"),
    [("openai:sim-reasoner", False), ("openai:sim-reasoner+tps=800", True)],
)
def test_tokens_per_second_only_where_the_timing_is_real(
    comm_messages: list[Any], model: str, timed: bool
) -> None:
    """On the real simulator: unpaced, the view says why there is no rate; paced, it shows one."""
    view = RunView()
    r = al.run(model, "What is 12 * (3 + 4)?", on_event=view.on_event)
    collapse_panels()
    text = view.summary_text()
    step = next(ln for ln in text.splitlines() if ln.strip().startswith("Step "))
    (run_line,) = [ln for ln in text.splitlines() if ln.startswith("Run throughput:")]
    df = al.usage_frame(r)
    if timed:
        rate = df["reasoning_tokens_per_s"].iloc[0]
        assert 0 < rate < 8 * 800, rate  # the paced rate, not millions of "tokens per second"
        assert f"reasoning {fmt_rate(rate)}" in step and "n/a" not in step
    else:
        assert "n/a (unpaced simulator)" in step and "n/a (unpaced simulator)" in run_line
        assert "reasoning " not in step.split("throughput:")[1].replace("1st reasoning", "")
        assert df["reasoning_tokens_per_s"].isna().all() and df["answer_tokens_per_s"].isna().all()
        assert "1st reasoning" in step  # the first-token times stay: they are measured
