"""The canary: reasoning text and opaque payloads with a unique string never reach anything durable.

Durable means the event-log file, log records (DEBUG, SDK loggers included), the memory store, serialized
checkpoints or pickled/JSON results. Positive controls prove the canary really flowed through the run.
"""

from __future__ import annotations

import json
import logging
import pickle
import uuid
from pathlib import Path

import pytest

import agentlab as al
from agentlab.neutral.events import ReasoningDeltaEvent
from agentlab.records.memory import MemoryStore
from agentlab.testing import ScriptedAdapter, Step


@al.tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value-of-{key}"


def everything_in(record: logging.LogRecord) -> str:
    parts = [record.getMessage(), repr(record.args), repr(getattr(record, "agentlab", None)), record.name]
    if record.exc_info:
        parts.append(logging.Formatter().formatException(record.exc_info))
    return " ".join(parts)


def test_canary_never_persists(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    canary = f"CANARY-{uuid.uuid4().hex}"
    caplog.set_level(logging.DEBUG)  # root: agentlab.* and SDK loggers all captured
    steps = [
        Step(
            reasoning=[f"thinking about {canary}", f"more {canary}"],
            opaque=[json.dumps({"type": "reasoning", "encrypted_content": canary}), f"sig:{canary}"],
            tool_calls=[("lookup", {"key": "a"})],
        ),
        Step(
            reasoning=[f"still {canary}"],
            opaque=[f"x{canary}"],
            text="The answer is 42.",
            expect_continuation_from=[0],
        ),
    ]
    adapter = ScriptedAdapter(steps)
    log_path = tmp_path / "events.jsonl"
    shown: list[str] = []

    def display(ev: object) -> None:
        if isinstance(ev, ReasoningDeltaEvent):
            shown.append(ev.text)

    s = al.Session()
    run = s.start(
        "openai:sim-reasoner",
        "What is it?",
        tools=[lookup],
        adapter=adapter,
        event_log=log_path,
        on_event=display,
    )
    result = run.run_sync()
    adapter.assert_done()
    memory = MemoryStore(tmp_path / "memory.jsonl")
    memory.extend(result.history)

    # Hostile logging: someone logs reasoning objects and SDK-style request bodies at DEBUG.
    logging.getLogger("agentlab.user").debug("event %s", ReasoningDeltaEvent(text=canary))
    logging.getLogger("openai._base_client").debug(
        "Request options: %s",
        {
            "json_data": {
                "input": [{"type": "reasoning", "encrypted_content": canary, "summary": [{"text": canary}]}]
            },
            "headers": {"Authorization": "Bearer sk-proj-ABCDEFGHIJKLMNOPQRSTUV"},
        },
    )

    # --- positive controls: the canary did flow through the live run
    assert any(canary in t for t in shown), "reasoning deltas must reach the display hook"
    sent = [i.unseal(provider="openai", api="responses") for i in adapter.requests[1].continuation]
    assert any(canary.encode() in p for p in sent), "opaque items must go back verbatim within the loop"
    assert result.status == "completed" and result.output == "The answer is 42."

    # --- nothing durable holds it
    assert canary not in log_path.read_text()
    assert len(log_path.read_text().splitlines()) == len(result.events) >= 8
    for rec in caplog.records:
        assert canary not in everything_in(rec), rec.name
        assert "sk-proj-ABCDEFGHIJKLMNOPQRSTUV" not in everything_in(rec)
    assert caplog.records, "the run should have logged something at DEBUG"
    assert canary not in (tmp_path / "memory.jsonl").read_text()
    assert all(canary not in repr(i) for i in memory)
    assert canary not in run.checkpoint.to_json()
    assert canary.encode() not in pickle.dumps(run.checkpoint)
    assert canary.encode() not in pickle.dumps(result)
    assert canary not in result.model_dump_json()
    assert canary not in repr(result) and canary not in result._repr_html_()
    assert canary not in result.usage_frame().to_csv()
    assert canary not in repr(s.history) and canary not in repr(run.checkpoint)
    # and the live state is gone after the run
    assert run.checkpoint.provider_continuation is None
    assert all(c.run_id != run.run_id for c in al.live_continuations())


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "24 C", "Rome": "21 C"}.get(city.split(",")[0].strip(), "no data")


@pytest.mark.parametrize("model", ["google:sim-gemini", "google:sim-gemini-legacy"])
def test_gemini_thought_signatures_never_persist(
    model: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Gemini's opaque items (thought signatures) on the real adapter and SDK against the simulator.

    The canaries are the signatures the simulator issued in this run (read off the wire, and
    recognised by the scan that also checks the saved notebooks and the report).
    """
    from agentlab.adapters.google_gemini import GoogleGeminiAdapter
    from agentlab.sim import gemini_client
    from tests.support.opaque import RecordingTransport, gemini_signatures_in, sim_opaque_tokens

    caplog.set_level(logging.DEBUG)
    wire = RecordingTransport()
    adapter = GoogleGeminiAdapter(model.partition(":")[2], client=gemini_client(transport=wire))
    log_path = tmp_path / "events.jsonl"
    shown: list[str] = []
    s = al.Session()
    run = s.start(
        model, "Is it warmer in Paris or Rome?", tools=[get_weather], adapter=adapter, event_log=log_path,
        on_event=lambda ev: shown.append(ev.text) if isinstance(ev, ReasoningDeltaEvent) else None,
    )  # fmt: skip
    result = run.run_sync()
    memory = MemoryStore(tmp_path / "memory.jsonl")
    memory.extend(result.history)

    # --- positive controls: signatures went back within the loop, and the scan recognises them
    assert result.status == "completed" and result.steps >= 2 and "Rome" in (result.output or "")
    sent = [sig for body in wire.bodies[1:] for sig in gemini_signatures_in(json.loads(body))]
    assert sent, "the tool loop's second request must carry the thought signatures back"
    wire_text = b"\n".join(wire.bodies).decode()
    assert set(sent) <= set(sim_opaque_tokens(wire_text))
    assert shown and result.usage.reasoning_tokens, "thought summaries streamed and thinking was billed"
    thought_lines = [ln.strip() for t in shown for ln in t.splitlines() if len(ln.strip()) > 24]
    assert thought_lines

    # --- nothing durable holds a signature (or a thought summary)
    durable = {
        "event log file": log_path.read_text(),
        "memory store": (tmp_path / "memory.jsonl").read_text(),
        "checkpoint json": run.checkpoint.to_json(),
        "result json": result.model_dump_json(),
        "result repr/html": repr(result) + result._repr_html_(),
        "usage frame": result.usage_frame().to_csv(),
        "session history": repr(s.history),
        "log records": "\n".join(everything_in(r) for r in caplog.records),
        "pickled result": pickle.dumps(result).decode("latin-1"),
        "pickled checkpoint": pickle.dumps(run.checkpoint).decode("latin-1"),
    }
    for where, text in durable.items():
        assert sim_opaque_tokens(text) == [], f"a thought signature reached the {where}"
        assert not any(sig in text for sig in sent), where
        assert "thoughtSignature" not in text and "thought_signature" not in text, where
        assert not any(ln in text for ln in thought_lines), f"thought summary text in the {where}"
    assert caplog.records, "the run should have logged something at DEBUG"
    assert run.checkpoint.provider_continuation is None
    assert all(c.run_id != run.run_id for c in al.live_continuations())
