"""The run view and the reasoning panel keep their state as the shared reducer's snapshot.

So a view that renders only every k-th frame (the coalescing flusher drops the rest) still ends on
the full fold of the events: the same snapshot, the same rendered text, the same tool timeline.
"""

from __future__ import annotations

from typing import Any

import pytest

import agentlab
from agentlab.assembly.reducer import fold
from agentlab.notebook.panel import ReasoningPanel, collapse_panels
from agentlab.notebook.run_view import RunView
from agentlab.testing import ScriptedAdapter, Step


@agentlab.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: 21 C"


def _events() -> list[Any]:
    """A real run's events (scripted adapter): two steps, reasoning in blocks, text, two tool calls."""
    adapter = ScriptedAdapter(
        [
            Step(
                reasoning=[f"block {b} " + "word " * 40 for b in range(3)],
                text="Let me check " * 20,
                tool_calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
            ),
            Step(reasoning=["Paris and Rome agree"], text="Both are 21 C. " * 30),
        ]
    )
    seen: list[Any] = []
    result = agentlab.run(
        "openai:sim-reasoner", "Paris or Rome?", tools=[get_weather], adapter=adapter, on_event=seen.append
    )
    assert result.status == "completed"
    return seen


def _rendered(view: RunView) -> list[str]:
    view._flush()
    return [view._footer.value] + [  # (the header holds a clock)
        w.value for st in view._steps.values() for w in (st.title, st.tools_html) if w is not None
    ]


@pytest.mark.parametrize("k", [1, 3, 10, 97])
def test_run_view_rendering_every_kth_frame_ends_on_the_full_fold(k: int) -> None:
    events = _events()
    view = RunView("m")
    for n, ev in enumerate(events, 1):
        view.on_event(ev)
        if n % k == 0:
            view._flush()  # a frame; the others are dropped
    steps = sorted({ev.step for ev in events if getattr(ev, "step", None)})
    assert steps == [1, 2]
    for s in steps:
        full = fold(ev for ev in events if getattr(ev, "step", None) == s)
        got = view._steps[s].call
        assert got == full and got.text == full.text and got.reasoning == full.reasoning
        panel = view._steps[s].panel
        assert panel is not None and panel.text == full.reasoning
        assert [t.arguments for t in got.tool_calls] == [t.arguments for t in full.tool_calls]
    reference = RunView("m")
    for ev in events:
        reference.on_event(ev)
    assert _rendered(view) == _rendered(reference)
    tools = view._steps[1].tools_html
    assert tools is not None and "Rome: 21 C" in tools.value
    collapse_panels()


@pytest.mark.parametrize("k", [1, 5, 50])
def test_panel_rendering_every_kth_frame_shows_the_whole_text(k: int) -> None:
    events = [ev for ev in _events() if getattr(ev, "step", None) == 1]
    panel = ReasoningPanel("r", live_chars=10**9)
    for n, ev in enumerate(events, 1):
        panel.feed(ev)
        if n % k == 0:
            panel._flush()
    full = fold(ev for ev in events if type(ev).__name__ in ("ReasoningDeltaEvent", "TextDeltaEvent"))
    panel._flush()
    assert panel.text == full.reasoning and panel._call == full
    snap = panel._live_snapshot()
    assert snap["text"] == full.reasoning
    collapse_panels()
