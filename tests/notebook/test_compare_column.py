"""A compare's model column: its runs as HTML, their reasoning in one bounded live text until cell end."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agentlab.neutral.events import ModelCallStartedEvent, ReasoningDeltaEvent
from agentlab.notebook._coalesce import flush_now, wait_idle
from agentlab.notebook.panel import collapse_panels, options
from agentlab.notebook.run_view import CompareView


def _stream(view: CompareView, chars: int) -> None:
    """Every run starts step 1 and streams ``chars`` characters of reasoning, from a run's thread."""

    def feed() -> None:
        for k, col in enumerate(view.columns):
            col.on_event(ModelCallStartedEvent(run_id=f"r{k}", step=1, provider="openai", model="m"))
            for i in range(chars // 10):
                col.on_event(ReasoningDeltaEvent(run_id=f"r{k}", step=1, text=f"{k}:{i:06d}. ", block="0"))

    t = threading.Thread(target=feed, name="the-runs")
    t.start()
    t.join()
    assert wait_idle(30)


def test_the_live_text_shows_each_repeats_tail_within_the_panel_budget() -> None:
    view = CompareView(["m"], repeats=3)
    _stream(view, 20_000)
    (column,) = view.model_columns
    flush_now(column)
    assert column._live is not None and column._pushed is not None
    snap = column._pushed
    assert snap["streaming"] and "not saved" in snap["meta"]
    # the three repeats' tails, their last delta each, in about one panel's worth of text
    assert len(snap["text"]) <= options.live_chars + 3 * 80
    for k in range(3):
        assert f"r{k + 1} · step 1" in snap["text"] and f"{k}:{1999:06d}. " in snap["text"]
    assert column.runs[0]._steps[1].call.reasoning_chars == 20_000  # the rest stays in kernel memory
    assert "0:000000" not in snap["text"]


def test_cell_end_closes_the_live_text_and_the_column_says_what_was_not_saved() -> None:
    view = CompareView(["a", "b"])
    _stream(view, 200)
    for col in view.columns:
        col.finish("completed")
    assert wait_idle(30)
    assert all(c._live is not None for c in view.model_columns)
    collapse_panels()  # cell end
    for column in view.model_columns:
        assert column._live is None and list(column.children) == [column._body, column._tail]
        assert "200 chars of reasoning: not saved in the notebook" in column.html
        assert ":00001" not in column.html  # no reasoning text in what the page (and a save) holds
    # after the cell end, reasoning arriving late (a run left running) opens no live text again
    view.columns[0].on_event(ReasoningDeltaEvent(step=1, text="late", block="0"))
    assert wait_idle(30) and view.model_columns[0]._live is None


def test_a_column_made_for_a_static_final_state_is_retired() -> None:
    from agentlab.notebook import run_view

    view = CompareView(["a"], repeats=2)
    _stream(view, 100)
    for col in view.columns:
        col.finish("completed")
    assert wait_idle(30)
    run_view._retire(view)  # its output was replaced by its static final state
    (column,) = view.model_columns
    assert column._live is None and column._collapsed


def test_a_streaming_column_is_queued_once_per_render_not_once_per_delta(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each queueing takes the flusher's lock, on the runs' thread: 500 deltas, a handful of them."""
    from agentlab.notebook import _coalesce

    view = CompareView(["m"])
    (col,) = view.columns
    col.on_event(ModelCallStartedEvent(run_id="r", step=1, provider="openai", model="m"))
    assert wait_idle(30)
    marks = 0
    real = _coalesce._flusher.mark

    def counting(*a: Any, **kw: Any) -> None:
        nonlocal marks
        marks += 1
        real(*a, **kw)

    monkeypatch.setattr(_coalesce._flusher, "mark", counting)
    monkeypatch.setattr(_coalesce._flusher, "rate", 0.5)  # nothing is rendered meanwhile
    for i in range(500):
        col.on_event(ReasoningDeltaEvent(run_id="r", step=1, text=f"w{i} ", block="0"))
    assert marks <= 5, marks
    monkeypatch.setattr(_coalesce._flusher, "rate", _coalesce.MAX_RATE)
    flush_now(view.model_columns[0])
    snap = view.model_columns[0]._pushed
    assert snap is not None and "w499 " in snap["text"]  # the last delta is in the next render
