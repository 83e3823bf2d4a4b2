"""The run step's cost per delta and per run, kept by structure, not by time (issue 34).

``arun`` drains the event stream and drops what it gets, so a delta must not travel up the loop's
generator levels to be dropped there: it is delivered (``on_event``, subscribers) and that is all.
``events()`` still yields every delta. A tool's JSON schema is generated once per tool, not once
per run that lists it.
"""

from __future__ import annotations

from typing import Any

import pytest

import agentlab as al
from agentlab.loop.runner import Run
from agentlab.neutral.events import ReasoningDeltaEvent, TextDeltaEvent
from agentlab.testing import ScriptedAdapter, Step

N = 400


def _script() -> ScriptedAdapter:
    return ScriptedAdapter([Step(reasoning=["r"] * N, text=["t"] * N)])


def _counting_events(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every event the loop's outer generator hands to its consumer."""
    seen: list[Any] = []
    inner = Run._events

    async def counted(self: Run) -> Any:
        async for ev in inner(self):
            seen.append(type(ev))
            yield ev

    monkeypatch.setattr(Run, "_events", counted)
    return seen


async def test_arun_delivers_deltas_without_yielding_them_up(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _counting_events(monkeypatch)
    got: list[Any] = []
    r = Run("openai:sim-reasoner", "hi", adapter=_script(), on_event=got.append)
    res = await r.arun()
    assert res.status == "completed"
    deltas = [e for e in got if isinstance(e, ReasoningDeltaEvent | TextDeltaEvent)]
    assert len(deltas) == 2 * N  # on_event still gets every delta, in order
    assert "".join(e.text for e in deltas if isinstance(e, TextDeltaEvent)) == "t" * N
    assert ReasoningDeltaEvent not in seen and TextDeltaEvent not in seen
    assert len(seen) < 20  # the durable records only: start, call started/completed, end


async def test_arun_delivers_deltas_to_subscribers() -> None:
    got: list[Any] = []
    r = Run("openai:sim-reasoner", "hi", adapter=_script())
    r.subscribe(got.append)
    await r.arun()
    assert sum(isinstance(e, TextDeltaEvent) for e in got) == N


async def test_events_still_yields_every_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _counting_events(monkeypatch)
    r = Run("openai:sim-reasoner", "hi", adapter=_script())
    out = [ev async for ev in r.events()]
    assert sum(isinstance(e, ReasoningDeltaEvent | TextDeltaEvent) for e in out) == 2 * N
    assert seen.count(TextDeltaEvent) == N


def test_a_tool_schema_is_generated_once_per_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    def get_weather(city: str) -> str:
        """Current weather.

        Args:
            city: City name.
        """
        return "rain"

    t = al.tool(get_weather)
    calls: list[int] = []
    real = t._args_model.model_json_schema  # bound to the model class

    def counted(*a: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(t._args_model, "model_json_schema", counted)
    first = t.spec
    first.parameters["properties"]["city"]["description"] = "changed by a caller"
    for _ in range(3):
        Run("openai:sim-reasoner", "hi", tools=[t], adapter=_script())
    assert len(calls) <= 1
    # every caller gets a schema of its own: a change to one does not reach the next
    assert t.spec.parameters["properties"]["city"]["description"] == "City name."
