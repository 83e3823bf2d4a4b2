"""Signature-only thinking (Claude Opus 4.8+ with ``thinking.display: "omitted"``) end to end.

The blocks carry a signature and empty text. They go back verbatim, their tokens come from the usage
(never 0), and the panel and the run view say "reasoning not displayed by the provider" instead of
showing an empty block (or "0 chars of reasoning") as if nothing happened.
"""

from __future__ import annotations

from typing import Any

import agentlab as al
from agentlab.assembly.reducer import accumulate
from agentlab.neutral.events import ReasoningDeltaEvent
from agentlab.neutral.request import ReasoningSettings
from agentlab.neutral.usage import CallUsage
from agentlab.notebook.panel import NOT_DISPLAYED, ReasoningPanel


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "18 C", "Rome": "24 C"}.get(city, "20 C")


OMITTED = ReasoningSettings(adaptive=True, display="omitted")


async def test_a_loop_with_omitted_thinking_carries_it_and_counts_its_tokens() -> None:
    events: list[Any] = []
    r = await al.arun(
        "anthropic:sim-thinker",
        "Is it warmer in Paris or Rome?",
        tools=[get_weather],
        reasoning=OMITTED,
        on_event=events.append,
    )
    assert r.status == "completed" and len(r.calls) >= 2
    markers = [e for e in events if isinstance(e, ReasoningDeltaEvent)]
    assert markers and all(e.omitted and e.text == "" for e in markers)
    for call in r.calls:  # tokens from the usage: known and never 0
        assert call.usage.reasoning_source == "reported"
        assert call.usage.reasoning_tokens is not None and call.usage.reasoning_tokens > 0


def test_the_reducer_counts_omitted_blocks_without_text() -> None:
    snap = accumulate(None, ReasoningDeltaEvent(text="", block="0", omitted=True, step=1))
    assert (snap.reasoning_omitted, snap.reasoning_chars, snap.reasoning_blocks) == (1, 0, 0)
    snap = accumulate(snap, ReasoningDeltaEvent(text="shown", block="1", step=1))
    assert (snap.reasoning_omitted, snap.reasoning) == (1, "shown")


def test_the_panel_says_not_displayed_instead_of_an_empty_block(comm_messages: list[dict[str, Any]]) -> None:
    panel = ReasoningPanel("r")
    panel.feed(ReasoningDeltaEvent(text="", block="0", omitted=True, step=1))
    panel.set_usage(CallUsage(input_tokens=10, output_tokens=300, reasoning_tokens=240))
    panel.end()
    assert NOT_DISPLAYED in panel._body.value and "reasoning 240 tok" in panel._body.value
    panel.collapse()
    assert NOT_DISPLAYED in panel._body.value
    assert "0 chars of reasoning" not in panel._body.value


def test_a_panel_with_real_text_says_nothing_of_the_kind(comm_messages: list[dict[str, Any]]) -> None:
    panel = ReasoningPanel("r")
    panel.feed(ReasoningDeltaEvent(text="thinking", block="0", step=1))
    panel.end()
    panel.collapse()
    assert NOT_DISPLAYED not in panel._body.value and "8 chars of reasoning" in panel._body.value


def test_the_static_run_view_says_not_displayed(comm_messages: list[dict[str, Any]]) -> None:
    from agentlab.notebook.run_view import RunView

    view = RunView()
    r = al.run(
        "anthropic:sim-thinker",
        "Is it warmer in Paris or Rome?",
        tools=[get_weather],
        reasoning=OMITTED,
        on_event=view.on_event,
    )
    assert r.status == "completed"
    assert NOT_DISPLAYED in view.summary_html()
    assert all(NOT_DISPLAYED in p._body.value for p in view.panels)
