"""Reasoning shown in a panel never enters the state a saved notebook holds.

What a save writes is the widget manager state (JupyterLab's "Save Widget State Automatically", the
frontend's copy of every live model; nbclient's ``store_widget_state``, every state the kernel ever
sent) and the cell outputs (every repr a cell displays). Each test runs reasoning carrying a unique
canary into the panels, then opens "Show reasoning" as the frontend does (the user's click changes
the frontend model and is sent to the kernel as an ``update``), and scans all of those, plus the
kernel's own copy (``Widget.get_manager_state()``, each widget's ``get_state()``): while streaming,
with the text shown on demand, and with the panel left open. The positive controls check that the
canary did reach the page (by custom messages, which no save keeps), and that the explicit keep
option does put it into the saved state (so the scan can fail).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import ipywidgets
import pytest

import agentlab
import agentlab.notebook.panel
from agentlab.notebook._coalesce import wait_idle
from agentlab.notebook.panel import ReasoningPanel, collapse_panels
from agentlab.notebook.run_view import CompareView, RunView
from agentlab.testing import ScriptedAdapter, Step

from .conftest import Frontend


@pytest.fixture
def canary() -> str:
    return f"CANARY-{uuid.uuid4().hex}"


def descendants(w: Any) -> Iterator[Any]:
    """``w`` and every widget reachable from it through traits (children, layout, style, ...)."""
    seen: set[int] = set()
    todo = [w]
    while todo:
        x = todo.pop()
        if id(x) in seen or not isinstance(x, ipywidgets.Widget):
            continue
        seen.add(id(x))
        yield x
        for name in x.keys:
            v = getattr(x, name, None)
            todo.extend(v if isinstance(v, (list, tuple)) else [v])


def saved_places(frontend: Frontend, *objects: Any) -> dict[str, str]:
    """Every place a saved notebook (or its HTML export) could take text from, by name."""
    places = {
        "frontend widget state (JupyterLab save)": frontend.saved_state(),
        "every state sent (nbclient store_widget_state)": frontend.every_state_ever_sent(),
        "kernel Widget.get_manager_state()": json.dumps(ipywidgets.Widget.get_manager_state(), default=str),
    }
    for i, obj in enumerate(objects):
        places[f"repr of object {i}"] = repr(obj)
        for meth in ("_repr_mimebundle_", "_repr_html_"):
            if hasattr(obj, meth):
                places[f"{meth} of object {i}"] = json.dumps(getattr(obj, meth)(), default=str)
        for w in descendants(obj):
            places[f"get_state of {type(w).__name__} {w.model_id}"] = json.dumps(w.get_state(), default=str)
            places[f"repr of {type(w).__name__} {w.model_id}"] = repr(w)
    return places


def assert_not_saved(canary: str, frontend: Frontend, *objects: Any) -> None:
    leaks = [name for name, text in saved_places(frontend, *objects).items() if canary in text]
    assert leaks == [], f"reasoning text in what a saved notebook holds: {leaks}"


def reached_the_page(canary: str, frontend: Frontend) -> bool:
    return canary in json.dumps(frontend.custom(), ensure_ascii=False)


def show_controls(root: Any) -> list[Any]:
    return [w for w in descendants(root) if getattr(w, "description", None) == "Show reasoning"]


def hidden_by_a_rule(frontend: Frontend, w: Any) -> bool:
    """Whether a ``<style>`` in a model the page holds hides ``w`` (a panel hides its toggle so)."""
    rules = [f".{c}{{display:none" for c in w._dom_classes]
    values = [str(m.get("value", "")) for m in frontend.models().values()]
    return any(r in v for r in rules for v in values)


def click_show(frontend: Frontend, root: Any) -> int:
    """Click every "Show reasoning" control under ``root`` that is on screen, as the frontend does."""
    n = 0
    for w in show_controls(root):
        if w.layout.display == "none" or hidden_by_a_rule(frontend, w):
            continue
        if isinstance(w, ipywidgets.ToggleButton):
            frontend.set(w, value=True)
        else:
            frontend.send(w, {"event": "click"})
        n += 1
    return n


def test_show_reasoning_keeps_the_text_out_of_the_saved_state(frontend: Frontend, canary: str) -> None:
    panel = ReasoningPanel("r")
    panel.feed(agentlab.ReasoningDeltaEvent(text=f"thinking about {canary} ", block="0", step=1))
    panel.end()
    collapse_panels()  # the cell ends
    assert_not_saved(canary, frontend, panel)
    assert click_show(frontend, panel) == 1
    wait_idle()
    # Left open: a save now (JupyterLab's autosave, Ctrl-S) must not find the text ...
    assert_not_saved(canary, frontend, panel)
    # ... although the page was given it to show.
    assert reached_the_page(canary, frontend)
    # The next cell end hides it again; nothing was left behind.
    collapse_panels()
    assert_not_saved(canary, frontend, panel)
    assert canary in panel.text  # kernel memory keeps it while the kernel lives


def test_streaming_reasoning_is_not_in_the_saved_state(frontend: Frontend, canary: str) -> None:
    panel = ReasoningPanel("r", live_chars=10**6)
    for i in range(200):
        panel.feed(agentlab.ReasoningDeltaEvent(text=f"{canary} {i} ", block="0", step=1))
    assert wait_idle()
    assert_not_saved(canary, frontend, panel)  # a save in the middle of the stream
    assert reached_the_page(canary, frontend)  # the page did stream it
    panel.end()
    assert wait_idle()
    assert_not_saved(canary, frontend, panel)  # ended, cell still running
    collapse_panels()
    assert_not_saved(canary, frontend, panel)


def _adapter(canary: str, model: str = "openai:sim-reasoner") -> ScriptedAdapter:
    provider, name = model.split(":")
    return ScriptedAdapter(
        [
            Step(
                reasoning=[f"I should check {canary}", " then compare"],
                opaque=[b'{"sig":"a"}'],
                text="Let me check.",
                tool_calls=[("get_weather", {"city": "Paris"})],
            ),
            Step(reasoning=[f"Paris it is {canary}"], text="Paris is warmer.", expect_continuation_from=[0]),
        ],
        provider=provider,
        model=name,
    )


@agentlab.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: 21 C"


def test_run_view_steps_never_save_reasoning(frontend: Frontend, canary: str) -> None:
    view = RunView()
    result = agentlab.run(
        "openai:sim-reasoner", "Paris?", tools=[get_weather], adapter=_adapter(canary), on_event=view.on_event
    )
    assert result.status == "completed" and len(view.panels) == 2
    assert wait_idle()
    assert_not_saved(canary, frontend, view, result)  # run over, cell still running: panels show text
    assert reached_the_page(canary, frontend)
    collapse_panels()
    assert click_show(frontend, view) == 2
    assert wait_idle()
    assert_not_saved(canary, frontend, view, result)
    collapse_panels()
    assert_not_saved(canary, frontend, view, result)
    assert "Paris is warmer." in frontend.saved_state()  # portable output is saved as before


def test_compare_columns_never_save_reasoning(frontend: Frontend, canary: str) -> None:
    models = ["openai:sim-reasoner", "anthropic:sim-thinker"]
    view = CompareView(models, task="Paris?")
    for model, col in zip(models, view.columns, strict=True):
        agentlab.run(
            model, "Paris?", tools=[get_weather], adapter=_adapter(canary, model), on_event=col.on_event
        )
    assert wait_idle()
    assert reached_the_page(canary, frontend)  # streamed by each column's live text (custom messages)
    assert_not_saved(canary, frontend, view)
    collapse_panels()
    assert all(c._live is None for c in view.model_columns)  # the cell end closed the live texts
    assert show_controls(view) == []  # a compare column has no "Show reasoning" to click
    assert wait_idle()
    assert_not_saved(canary, frontend, view)
    assert all("not saved in the notebook" in c.html for c in view.model_columns)


def test_show_controls_say_nothing_of_the_text(frontend: Frontend, canary: str) -> None:
    """Descriptions, tooltips and placeholders are synced state too."""
    panel = ReasoningPanel(f"title {uuid.uuid4().hex[:6]}")
    panel.append(canary)
    panel.end()
    collapse_panels()
    click_show(frontend, panel)
    for w in descendants(panel):
        for trait in ("description", "tooltip", "placeholder"):
            assert canary not in str(getattr(w, trait, "") or "")


def test_the_page_asks_again_and_gets_the_text_from_kernel_memory(frontend: Frontend, canary: str) -> None:
    """A view created after the text went out (a second view, a page reload) asks the kernel for it."""
    panel = ReasoningPanel("r")
    panel.append(canary)
    panel.end()
    collapse_panels()
    click_show(frontend, panel)
    wait_idle()
    live = [w for w in descendants(panel) if getattr(w, "_model_module", "") == "anywidget"]
    assert len(live) == 1
    before = len(frontend.custom())
    frontend.send(live[0], {"type": "ready"})
    assert len(frontend.custom()) == before + 1 and canary in json.dumps(frontend.custom()[-1])
    assert_not_saved(canary, frontend, panel)


def test_keep_option_does_put_the_text_in_the_saved_state(frontend: Frontend, canary: str) -> None:
    """The explicit opt-in (``keep_reasoning``): the same scan finds the text, so the scan can fail."""
    panel = ReasoningPanel("r", keep_text=True)
    panel.append(canary)
    panel.end()
    collapse_panels()
    places = saved_places(frontend, panel)
    assert canary in places["frontend widget state (JupyterLab save)"]
    assert canary in places["every state sent (nbclient store_widget_state)"]
    assert canary in places["kernel Widget.get_manager_state()"]


def test_compare_live_and_its_result_reprs_never_save_reasoning(frontend: Frontend, canary: str) -> None:
    """``agentlab.compare(live=True)`` as a notebook cell runs it, and the reprs its result displays."""
    before = {id(p) for p in agentlab.notebook.panel.live_panels()}
    models = ["openai:sim-reasoner", "anthropic:sim-thinker"]
    cmp = agentlab.compare(
        "Paris?", models, tools=[get_weather], adapters=[_adapter(canary, m) for m in models], live=True
    )
    # no panel per step: each model column streams its runs' reasoning in one live text
    assert [p for p in agentlab.notebook.panel.live_panels() if id(p) not in before] == []
    assert wait_idle()
    assert reached_the_page(canary, frontend)
    assert_not_saved(canary, frontend, cmp, *cmp.results.values())
    collapse_panels()
    assert wait_idle()
    assert_not_saved(canary, frontend, cmp, *cmp.results.values())


def test_stored_state_after_the_cell_loads_in_a_static_widget_manager(
    frontend: Frontend, canary: str
) -> None:
    """Closed live texts must use standard modules, which the static HTML manager knows.

    Nbclient keeps closed models; the static HTML manager (nbconvert, the report) must load every model of
    that state, and it knows only the standard modules.
    """
    view = RunView()
    agentlab.run(
        "openai:sim-reasoner", "Paris?", tools=[get_weather], adapter=_adapter(canary), on_event=view.on_event
    )
    assert any(
        s.get("_model_module") == "anywidget" for s in frontend.models().values()
    )  # live while it runs
    collapse_panels()
    stored = frontend.stored_by_nbclient()
    assert {s["_model_module"] for s in stored.values()} <= {
        "@jupyter-widgets/base",
        "@jupyter-widgets/controls",
    }
    assert all(s.get("_model_module") != "anywidget" for s in frontend.models().values())
    assert canary not in json.dumps(stored)
