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


class _Unstamped:
    """An adapter that never reads the request's origin: its events come without run_id/step."""

    def __init__(self, inner: ScriptedAdapter) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def stream(self, request: Any) -> Any:
        return self.inner.stream(request.model_copy(update={"origin": None}))


def _counting_stamps(monkeypatch: pytest.MonkeyPatch) -> list[type]:
    import agentlab.loop.runner as runner
    from agentlab.assembly.assembler import stamped as inner

    copied: list[type] = []

    def counted(ev: Any, origin: Any) -> Any:
        out = inner(ev, origin)
        if out is not ev:
            copied.append(type(ev))
        return out

    monkeypatch.setattr(runner, "stamped", counted)
    return copied


async def test_a_delta_nobody_reads_is_not_copied_to_stamp_it(monkeypatch: pytest.MonkeyPatch) -> None:
    copied = _counting_stamps(monkeypatch)
    res = await Run("openai:sim-reasoner", "hi", adapter=_Unstamped(_script())).arun()
    assert res.status == "completed"
    assert TextDeltaEvent not in copied and ReasoningDeltaEvent not in copied
    assert len(copied) < 5  # the completed response (and any diagnostic): they are kept


async def test_a_delivered_delta_is_stamped(monkeypatch: pytest.MonkeyPatch) -> None:
    copied = _counting_stamps(monkeypatch)
    got: list[Any] = []
    r = Run("openai:sim-reasoner", "hi", adapter=_Unstamped(_script()))
    r.on_event = got.append  # set after construction: the listeners follow
    await r.arun()
    deltas = [e for e in got if isinstance(e, TextDeltaEvent)]
    assert len(deltas) == N and {(e.run_id, e.step) for e in deltas} == {(r.run_id, 1)}
    assert copied.count(TextDeltaEvent) == N


def test_on_event_set_later_is_checked_like_the_keyword() -> None:
    r = Run("openai:sim-reasoner", "hi", adapter=_script())
    with pytest.raises(al.ConfigError, match="on_event must be a function"):
        r.on_event = 5  # type: ignore[assignment]
