"""Event log: durable records only (by type), JSONL one complete line per record, torn tails handled."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import get_args

import pytest

import agentlab as al
from agentlab.neutral import events
from agentlab.neutral.events import (
    DURABLE_TYPES,
    DiagnosticEvent,
    ErrorEvent,
    ModelCallCompletedEvent,
    ModelCallStartedEvent,
    ModelResponse,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    RunCompletedEvent,
    RunStartedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentlab.neutral.items import ProviderReasoningItem, ToolCallItem, ToolResultItem, UserItem
from agentlab.neutral.usage import CallUsage
from agentlab.records import eventlog
from agentlab.records.eventlog import EventLog, TornLineWarning
from agentlab.testing import ScriptedAdapter, Step


def opaque() -> ProviderReasoningItem:
    return ProviderReasoningItem(
        b"x", provider="openai", api="responses", model="m", block_type="reasoning", turn_id="t", index=0
    )


@pytest.mark.parametrize(
    "bad",
    [
        ReasoningDeltaEvent(text="secret thought"),
        TextDeltaEvent(text="t"),
        ToolCallDeltaEvent(call_id="c", name="n", arguments_delta="{"),
        ResponseCompletedEvent(response=ModelResponse(provider="openai", api="responses", model="m")),
        UserItem(text="not an event"),
        {"kind": "run_started"},
    ],
    ids=lambda v: type(v).__name__,
)
def test_refuses_transient_and_non_events(tmp_path: Path, bad: object) -> None:
    log = EventLog(tmp_path / "log.jsonl")
    with pytest.raises(al.PrivacyError):
        log.append(bad)
    assert len(log) == 0 and not (tmp_path / "log.jsonl").exists()


def test_refuses_opaque_item(tmp_path: Path) -> None:
    with pytest.raises(al.PrivacyError):
        EventLog(tmp_path / "l.jsonl").append(opaque())


def test_refuses_durable_subclass_by_exact_type() -> None:
    class Sneaky(DiagnosticEvent):
        pass

    with pytest.raises(al.PrivacyError):
        EventLog().append(Sneaky(code="c", message="m"))


def test_jsonl_round_trip_and_one_line_per_record(tmp_path: Path) -> None:
    p = tmp_path / "sub" / "log.jsonl"
    ad = ScriptedAdapter([Step(reasoning=["r"], text="hi")])
    r = al.run("openai:sim-reasoner", "x", adapter=ad, event_log=p)
    lines = p.read_text().splitlines()
    assert len(lines) == len(r.events) and p.read_text().endswith("\n")
    back = EventLog.read(p)
    assert [e.kind for e in back] == [e.kind for e in r.events]
    assert back == list(r.events)
    # appending a second run keeps the file valid
    al.run("openai:sim-reasoner", "y", adapter=ScriptedAdapter([Step(text="again")]), event_log=EventLog(p))
    assert len(EventLog.read(p)) == 2 * len(r.events)


def test_torn_tail_is_repaired_and_skipped(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    log = EventLog(p)
    log.append(RunStartedEvent(provider="openai", model="m"))
    with p.open("ab") as f:
        f.write(b'{"kind":"run_sta')  # a crash mid-write
    with pytest.warns(TornLineWarning):
        assert len(EventLog.read(p)) == 1
    with pytest.warns(TornLineWarning):
        log2 = EventLog(p)
    log2.append(RunStartedEvent(provider="openai", model="m2"))
    assert [e.model for e in EventLog.read(p)] == ["m", "m2"]


def test_error_messages_are_redacted(tmp_path: Path) -> None:
    p = tmp_path / "l.jsonl"
    EventLog(p).append(ErrorEvent(error_type="X", message="bad key sk-ant-api03-abcdefghijklmnop used"))
    text = p.read_text()
    assert "sk-ant-api03" not in text and "[REDACTED]" in text


def test_in_memory_log_and_result_pickles() -> None:
    log = EventLog()
    r = al.run(
        "openai:sim-reasoner", "x", adapter=ScriptedAdapter([Step(opaque=["o"], text="a")]), event_log=log
    )
    assert len(log) == len(r.events) and log.records == list(r.events)
    assert pickle.loads(pickle.dumps(r)) == r
    assert "memory" in repr(log)


def test_diagnostic_data_cannot_carry_opaque_state(tmp_path: Path) -> None:
    """Refused by construction: no durable record can be built around opaque provider state."""
    import pydantic

    from agentlab.neutral.events import DiagnosticEvent
    from agentlab.neutral.items import ProviderReasoningItem

    item = ProviderReasoningItem(
        b'{"type":"thinking"}',
        provider="anthropic",
        api="messages",
        model="m",
        block_type="thinking",
        turn_id="t",
        index=0,
    )
    bad: list[dict[str, object]] = [
        {"signature": "SECRETXYZ"},
        {"raw": '{"type":"reasoning","encrypted_content":"gAAAA"}'},
        {"nested": [{"item": item}]},
        {"blob": b"abc"},
        {"obj": object()},
    ]
    for data in bad:
        with pytest.raises(pydantic.ValidationError):
            DiagnosticEvent(code="x", message="m", data=data)
    log = EventLog(tmp_path / "log.jsonl")
    log.append(DiagnosticEvent(code="ok", message="m", data={"count": 2, "reason": "other_provider"}))
    assert len(EventLog.read(tmp_path / "log.jsonl")) == 1


def _one_of_each_event() -> dict[type, object]:
    """A minimal instance of every event type defined in ``agentlab.neutral.events``."""
    call = ToolCallItem(call_id="c", name="n")
    samples: list[object] = [
        ReasoningDeltaEvent(text="t"),
        TextDeltaEvent(text="t"),
        ToolCallDeltaEvent(call_id="c", name="n", arguments_delta="{"),
        ResponseCompletedEvent(response=ModelResponse(provider="openai", api="responses", model="m")),
        DiagnosticEvent(code="c", message="m"),
        RunStartedEvent(provider="openai", model="m"),
        ModelCallStartedEvent(provider="openai", model="m"),
        ModelCallCompletedEvent(provider="openai", model="m", stop_reason="end_turn", usage=CallUsage()),
        ToolCallEvent(call=call),
        ToolResultEvent(result=ToolResultItem(call_id="c", output="o")),
        ErrorEvent(error_type="E", message="m"),
        RunCompletedEvent(status="completed"),
    ]
    return {type(s): s for s in samples}


def _event_types() -> set[type]:
    found: set[type] = set()
    todo = [events.Event]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__ == events.__name__:
                found.add(sub)
            todo.append(sub)
    return found


def test_every_event_type_is_classified_once_and_the_log_takes_exactly_the_durable_ones() -> None:
    """One list of durable types (the ``DurableEvent`` union); each type's ``durable`` flag agrees."""
    samples = _one_of_each_event()
    assert set(samples) == _event_types(), "a new event type needs a sample here"
    durable = {t for t in samples if t.durable}  # type: ignore[attr-defined]
    assert all(isinstance(t.durable, bool) for t in samples)  # type: ignore[attr-defined]
    assert set(DURABLE_TYPES) == durable and len(DURABLE_TYPES) == len(durable)
    assert set(get_args(events.AdapterEvent)) - {DiagnosticEvent} == set(samples) - durable
    assert eventlog.DURABLE_TYPES is DURABLE_TYPES  # the log's list is the union's, not a copy
    log = EventLog()
    for t, ev in samples.items():
        if t in durable:
            log.append(ev)
        else:
            with pytest.raises(al.PrivacyError, match="transient"):
                log.append(ev)
    assert [type(e) for e in log] == [t for t in samples if t in durable]
