"""What a run view says once a run is over (or cut off), and while tool calls are still forming.

Fed agentlab events directly (the view consumes nothing else): a cancelled stream must read as
unknown usage (never "reasoning 0 · $0") and never stay "streaming…"; a tool call says "arguments
streaming…" until its arguments are complete, then "running…"; a tool error reads once; a repeated
error reads once; the toggle says "Hide reasoning" while open; the saved text is the final state.
"""

from __future__ import annotations

from typing import Any

from agentlab.neutral.events import (
    ErrorEvent,
    ModelCallStartedEvent,
    ReasoningDeltaEvent,
    RunCompletedEvent,
    RunStartedEvent,
    ToolCallDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentlab.neutral.items import ToolCallItem, ToolResultItem
from agentlab.neutral.usage import sum_usage
from agentlab.notebook.panel import ReasoningPanel, collapse_panels
from agentlab.notebook.run_view import RunView


def _started(view: RunView) -> None:
    view.on_event(RunStartedEvent(run_id="run_x", provider="sim", model="m"))
    view.on_event(ModelCallStartedEvent(run_id="run_x", step=1, provider="sim", model="m"))


def test_a_cancelled_stream_reads_unknown_not_zero_and_not_streaming(comm_messages: list[Any]) -> None:
    view = RunView("sim:m")
    _started(view)
    view.on_event(ReasoningDeltaEvent(run_id="run_x", step=1, text="thinking " * 50))
    # What a cancelled run reports: no call completed, so its totals are the empty sum (zeros, $0).
    view.on_event(RunCompletedEvent(run_id="run_x", status="cancelled", usage=sum_usage([]), cost_usd=0.0))
    footer, step_title = view._render_footer(), view._render_step_title(view._steps[1])
    assert "reasoning &lt;NA&gt;" in footer and "cost unknown" in footer, footer
    assert "reasoning 0" not in footer and "$0" not in footer
    assert "streaming" not in step_title and "cancelled" in step_title
    collapse_panels()
    assert "streaming" not in view.summary_text() and "cancelled" in view.summary_text()


def test_tool_calls_say_arguments_streaming_then_running_and_errors_read_once(
    comm_messages: list[Any],
) -> None:
    view = RunView("sim:m")
    _started(view)
    delta = ToolCallDeltaEvent(run_id="run_x", step=1, call_id="c1", name="lookup", arguments_delta='{"ci')
    view.on_event(delta)
    assert "arguments streaming…" in view._render_tools(view._steps[1])
    call = ToolCallItem(call_id="c1", name="lookup", arguments='{"city": "Atlantis"}')
    view.on_event(ToolCallEvent(run_id="run_x", step=1, call=call))
    tools = view._render_tools(view._steps[1])
    assert "running…" in tools and "arguments streaming" not in tools
    output = "Error: ValueError: no such city"
    result = ToolResultItem(call_id="c1", name="lookup", output=output, is_error=True)
    view.on_event(ToolResultEvent(run_id="run_x", step=1, result=result, duration_s=0.01))
    tools = view._render_tools(view._steps[1])
    assert "error: ValueError: no such city" in tools and "error: Error" not in tools
    column = RunView("sim:m", compact=True)  # a compare column: its error is raised nowhere else
    for v in (view, column):
        for _ in range(2):  # the same failure reported twice (e.g. by the adapter and by the loop)
            v.on_event(
                ErrorEvent(run_id="run_x", error_type="MissingApiKeyError", message="set OPENAI_API_KEY")
            )
    assert column._render_footer().count("set OPENAI_API_KEY") == 1
    # A single run raises its error into the cell (whose output shows the message): named once, not repeated.
    footer = view._render_footer()
    assert "set OPENAI_API_KEY" not in footer and footer.count("MissingApiKeyError") == 1


def test_the_toggle_says_hide_reasoning_while_open(comm_messages: list[Any]) -> None:
    panel = ReasoningPanel()
    panel.append("some reasoning")
    panel.end()
    collapse_panels()
    assert panel._toggle.description == "Show reasoning"
    panel.show()
    assert panel._toggle.description == "Hide reasoning"
    collapse_panels()
    assert panel._toggle.description == "Show reasoning"


def test_the_saved_mimebundle_is_the_final_state_without_reasoning(comm_messages: list[Any]) -> None:
    view = RunView("sim:m")
    view.set_status("importing the sim SDK (first call in this kernel)…")
    _started(view)
    view.on_event(ReasoningDeltaEvent(run_id="run_x", step=1, text="SECRET-REASONING-CANARY"))
    view.on_event(RunCompletedEvent(run_id="run_x", status="completed", output="Paris", steps=1))
    collapse_panels()
    data = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    for mime in ("text/plain", "text/html"):
        assert "completed" in data[mime] and "Paris" in data[mime] and "importing" not in data[mime]
        assert "SECRET-REASONING-CANARY" not in data[mime]
