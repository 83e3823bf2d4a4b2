"""The run view fed by a real Run (scripted adapter): steps, tools, answer, usage; no reasoning kept."""

from __future__ import annotations

import json
from typing import Any

import pytest

import agentlab
from agentlab.notebook.panel import collapse_panels
from agentlab.notebook.run_view import CompareView, RunView
from agentlab.testing import ScriptedAdapter, Step

CANARY = "CANARY-RUNVIEW-91c2"


@agentlab.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    if city == "Atlantis":
        raise ValueError("no such city")
    return f"{city}: 21 C"


def _adapter() -> ScriptedAdapter:
    return ScriptedAdapter(
        [
            Step(
                reasoning=[f"I should check both cities {CANARY}", "then compare"],
                opaque=[b'{"sig":"a"}'],
                text="Let me check.",
                tool_calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Atlantis"})],
            ),
            Step(reasoning=["Paris is 21 C"], text="Paris is warmer.", expect_continuation_from=[0]),
        ]
    )


def test_run_view_renders_the_timeline(comm_messages: list[dict[str, Any]]) -> None:
    view = RunView()
    result = agentlab.run(
        "openai:sim-reasoner",
        "Paris or Atlantis?",
        tools=[get_weather],
        adapter=_adapter(),
        on_event=view.on_event,
    )
    assert result.status == "completed"
    assert view.status == "completed"
    assert [p.title for p in view.panels] == ["Reasoning · step 1", "Reasoning · step 2"]
    assert CANARY in view.panels[0].text
    assert view._steps[1].tools_html is not None and view._steps[2].title is not None
    assert view._steps[1].title is not None
    tools = view._steps[1].tools_html.value
    assert "get_weather" in tools and "Paris: 21 C" in tools and "error:" in tools and "no such city" in tools
    assert "Let me check." in tools
    footer = view._footer.value
    assert "Paris is warmer." in footer and "Σ input" in footer and "$" in footer
    assert "openai:sim-reasoner" in view._header.value and "completed" in view._header.value
    assert "tool_use" in view._steps[1].title.value and "end_turn" in view._steps[2].title.value
    collapse_panels()
    last: dict[str, dict[str, Any]] = {}
    for m in comm_messages:
        if isinstance(m["data"], dict) and m["data"].get("state"):
            last.setdefault(m["comm_id"], {}).update(m["data"]["state"])
    saved = json.dumps(last)
    assert CANARY not in saved and "Paris is warmer." in saved
    assert CANARY not in repr(view)


def test_run_view_shows_failures() -> None:
    from agentlab.errors import ProviderServerError

    view = RunView("x")
    adapter = ScriptedAdapter(
        [
            Step(
                reasoning=["hmm"],
                error=ProviderServerError("boom", provider="openai", status=500),
                error_after=1,
            )
        ]
    )
    with pytest.raises(agentlab.ProviderError):
        agentlab.run("openai:sim-reasoner", "q", adapter=adapter, on_event=view.on_event, retries=0)
    assert view.status == "failed"
    # A single run raises its error into the cell, whose output shows the message: the view names the
    # error's type once and points there (the message would otherwise be read twice).
    assert "ProviderServerError" in view._footer.value and "error below" in view._footer.value
    assert "boom" not in view._footer.value


def test_compare_view_has_one_column_per_model() -> None:
    v = CompareView(["openai:sim-reasoner", "anthropic:sim-thinker"], task="t")
    assert [c.title for c in v.columns] == ["openai:sim-reasoner", "anthropic:sim-thinker"]
    assert "Compare" in v.children[0].value


def test_sdk_import_note_only_when_the_sdk_is_not_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from agentlab.notebook.live import sdk_note

    run = agentlab.Run("anthropic:sim-thinker", "q")
    monkeypatch.delitem(sys.modules, "anthropic", raising=False)
    assert sdk_note(run) == "importing the anthropic SDK (first call in this kernel)…"
    monkeypatch.setitem(sys.modules, "anthropic", object())
    assert sdk_note(run) is None
    scripted = agentlab.Run(
        "anthropic:sim-thinker", "q", adapter=ScriptedAdapter([], provider="anthropic", model="sim-thinker")
    )
    monkeypatch.delitem(sys.modules, "anthropic")
    assert sdk_note(scripted) is None
