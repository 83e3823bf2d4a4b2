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


def _scripted_runs(view: object) -> None:
    """Every run of ``view`` (a compare view), two steps each, reasoning and a tool, on this thread."""
    import agentlab
    from agentlab.testing import ScriptedAdapter, Step

    @agentlab.tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"{city}: 21 C"

    for col in view.columns:  # type: ignore[attr-defined]
        adapter = ScriptedAdapter(
            [
                Step(
                    reasoning=["Let me ", "check."], text="", tool_calls=[("get_weather", {"city": "Paris"})]
                ),
                Step(reasoning=["Paris ", "it is."], text="Paris is warmer."),
            ]
        )
        agentlab.run(
            "openai:sim-reasoner", "Paris?", tools=[get_weather], adapter=adapter, on_event=col.on_event
        )


def test_a_15_run_compare_opens_few_widget_models_from_start_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5-model x 3-repeat compare, built, then its 15 runs (2 steps each, reasoning, a tool) fed.

    Every widget model is a comm and a ``comm_open``, made on the compare's wall time or on a thread
    contending with its runs: it opened 58 before any run started (a run view per run, its line, its
    fold) and 8 more per step while they ran. Now a model's column is an HTML widget, and a live text
    (with its layout) once it has reasoning to stream: 13 at the start, 23 in all, whatever the runs do.
    """
    from ipywidgets import Widget

    from agentlab.notebook.run_view import CompareView

    CompareView(["warm"], repeats=2)  # the shared layouts and styles exist already in a used kernel
    opened: list[tuple[str, threading.Thread]] = []
    real_open = Widget.open

    def open_(self: Widget) -> None:
        opened.append((type(self).__name__, threading.current_thread()))
        real_open(self)

    monkeypatch.setattr(Widget, "open", open_)
    view = CompareView([f"m{i}" for i in range(5)], task="t", repeats=3)
    assert len(opened) <= 2 * 5 + 3, sorted(n for n, _ in opened)  # per model 2, the frame 3
    t = threading.Thread(target=_scripted_runs, args=(view,), name="the-runs")
    t.start()
    t.join()
    assert _coalesce.wait_idle(30)
    assert all(c.status == "completed" for c in view.columns)
    assert len(opened) <= 2 * 5 + 3 + 2 * 5, sorted(n for n, _ in opened)  # + a live text per model
    assert not [n for n, th in opened if th is t]  # none on the runs' thread
    for column in view.model_columns:  # the flusher rendered each column's runs
        assert column.html.count("completed") >= 3 and column._live is not None


def test_a_compare_run_ending_renders_nothing_on_the_runs_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's end leaves its column's rendering to the flusher: its thread is the compare's runs' own.

    A column renders all of its runs' steps, timelines and footers; rendered at each run's end on
    the runs' thread (twice: the run's last event, then the compare's own ``finish``), it was on the
    compare's wall time, once per run.
    """
    from agentlab.notebook import timeline_strip
    from agentlab.notebook.run_view import CompareView

    drawn_on: list[threading.Thread] = []
    real_row = timeline_strip._row

    def row(*a: object, **kw: object) -> object:
        drawn_on.append(threading.current_thread())
        return real_row(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(timeline_strip, "_row", row)
    view = CompareView(["m0", "m1"], repeats=2)

    def runs() -> None:
        _scripted_runs(view)
        for col in view.columns:
            col.finish("completed")  # as the compare does at its end, on its runs' thread

    t = threading.Thread(target=runs, name="the-runs")
    t.start()
    t.join()
    assert _coalesce.wait_idle(30)
    assert drawn_on and not [th for th in drawn_on if th is t]  # drawn, by the flusher only


def test_a_live_text_is_made_without_a_class_of_its_own() -> None:
    """One class for every live text: its synced traits are the class's, with the same state.

    ``AnyWidget.__init__`` made a subclass per instance (``add_traits``: ~1 ms a live text, one per
    compare column or panel, made while the runs stream).
    """
    from agentlab.notebook._live_text import _ESM, LiveText

    live = LiveText(lambda: {"type": "snapshot", "meta": "", "text": "", "streaming": False})
    assert type(live) is LiveText
    state = live.get_state()
    assert state["_esm"] == _ESM and state["_anywidget_id"] == "agentlab.notebook._live_text.LiveText"
    assert state["_model_module"] == "anywidget" and state["_view_name"] == "AnyView"
    live.close()
