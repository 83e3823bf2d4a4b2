"""What a live view costs the run it watches: widget models per step, flusher wake-ups per delta.

A view is fed on the run's own event loop; in a compare that loop runs every column. Each widget
model a step creates is a comm and a ``comm_open`` message, made on that path, and every wake-up of
the flusher thread contends for the GIL with the runs (issue 33, item 3: a 15-run compare took 2.31 s
with the view, 0.63 s without). The wall-time figures are in ``python -m bench --only live_view``.
"""

from __future__ import annotations

import threading

import pytest

from agentlab.neutral.events import ModelCallStartedEvent, ReasoningDeltaEvent
from agentlab.notebook import _coalesce
from agentlab.notebook.run_view import RunView


def _models() -> int:
    from ipywidgets.widgets.widget import _instances  # the registry of live widget models

    return len(_instances)


def test_a_new_step_creates_few_widget_models() -> None:
    """A step (title, tools line, box, reasoning panel) shares its layouts and styles: 8 models, not 18."""
    view = RunView("m")
    view.on_event(ModelCallStartedEvent(run_id="r", step=1, provider="openai", model="m"))
    before = _models()
    view.on_event(ModelCallStartedEvent(run_id="r", step=2, provider="openai", model="m"))
    assert _models() - before <= 8


def test_deltas_to_a_queued_view_do_not_wake_the_flusher(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a view is queued, its next deltas only update state: the flusher is not woken per delta."""
    view = RunView("m")
    view.on_event(ModelCallStartedEvent(run_id="r", step=1, provider="openai", model="m"))
    wakes = 0
    cond = _coalesce._flusher._cond
    real = cond.notify_all

    def counting() -> None:
        nonlocal wakes
        if threading.current_thread().name != "agentlab-view-flusher":
            wakes += 1
        real()

    monkeypatch.setattr(cond, "notify_all", counting)
    monkeypatch.setattr(_coalesce._flusher, "rate", 0.5)  # nothing is sent meanwhile: all stay queued
    for i in range(500):
        view.on_event(ReasoningDeltaEvent(run_id="r", step=1, text=f"w{i} ", block="0"))
    assert wakes <= 5, wakes  # the view and its panel joining the queue, not 500 deltas x 2


def test_a_run_thread_makes_no_widget_the_view_needs_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fed from a run's worker thread (a kernel's ``run_sync``), the view only records its steps.

    Their widgets are made by the flusher thread (or when asked for, ``view.panels``), not on the
    loop the runs and their timings run on.
    """
    from ipywidgets import Widget

    opened_on: list[threading.Thread] = []
    real_open = Widget.open

    def open_(self: Widget) -> None:
        opened_on.append(threading.current_thread())
        real_open(self)

    monkeypatch.setattr(Widget, "open", open_)
    view = RunView("m")

    def feed() -> None:
        for s in (1, 2, 3):
            view.on_event(ModelCallStartedEvent(run_id="r", step=s, provider="openai", model="m"))
            view.on_event(ReasoningDeltaEvent(run_id="r", step=s, text="thinking", block="0"))
        view.finish("completed")

    t = threading.Thread(target=feed, name="a-run")
    t.start()
    t.join()
    assert not [th for th in opened_on if th is t]
    assert _coalesce.wait_idle(30)  # the flusher made them, also after the run's end rendered
    assert all(st.panel is not None for st in view._steps.values())
    assert [p.text for p in view.panels] == ["thinking"] * 3  # each from its call so far


def test_a_15_run_compare_view_opens_few_widget_models_on_the_callers_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 5-model x 3-repeat compare view, built in the caller's thread before any run starts.

    Every model opened there is a comm and a ``comm_open`` on the compare's wall time: it opened 137
    (each run view's header, steps box, timeline and footer, an own layout per fold). Now a run is its
    line, its fold and its (empty) run view; the rest is made at its first render, off that thread.
    """
    from ipywidgets import Widget

    from agentlab.notebook.run_view import CompareView

    CompareView(["warm"], repeats=2)  # the shared layouts and styles exist already in a used kernel
    here = threading.current_thread()
    opened: list[str] = []
    real_open = Widget.open

    def open_(self: Widget) -> None:
        if threading.current_thread() is here:
            opened.append(type(self).__name__)
        real_open(self)

    monkeypatch.setattr(Widget, "open", open_)
    view = CompareView([f"m{i}" for i in range(5)], task="t", repeats=3)
    assert len(opened) <= 3 * 15 + 2 * 5 + 3, sorted(opened)  # per run 3, per model 2, the frame 3
    monkeypatch.setattr(Widget, "open", real_open)

    def feed() -> None:  # a run's worker thread: it makes no widget either
        for col in view.columns:
            col.on_event(ModelCallStartedEvent(run_id="r", step=1, provider="openai", model="m"))
            col.finish("completed")

    t = threading.Thread(target=feed, name="the-runs")
    t.start()
    t.join()
    assert _coalesce.wait_idle(30)
    for col in view.columns:  # the flusher made each column's own widgets, and its step's
        assert col._header is not None and col._footer is not None
        assert list(col.children) == [col._header, col._steps_box, col._timeline, col._footer]
        assert "completed" in col._header.value and len(col.panels) == 1
