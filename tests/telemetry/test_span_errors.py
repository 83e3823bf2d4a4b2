"""Failures in spans: a failing tool, a failed run (error.type), a retry, and tracing that breaks."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from opentelemetry.trace import StatusCode

import agentlab as al
from agentlab import telemetry
from agentlab.testing import ScriptedAdapter, Step
from tests.telemetry.support import TASK, Traced, attrs, broken, get_weather


def test_a_failing_tool_marks_its_span_and_the_run_goes_on(spans: Traced) -> None:
    adapter = ScriptedAdapter(
        [
            Step(tool_calls=[("broken", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]),
            Step(text="Rome."),
        ]
    )
    result = al.run("openai:sim-reasoner", TASK, tools=[broken, get_weather], adapter=adapter)
    assert result.status == "completed"
    by_name = {s.name: s for s in spans.named("execute_tool ")}
    bad, good = by_name["execute_tool broken"], by_name["execute_tool get_weather"]
    assert attrs(bad)["error.type"] == "tool_error" and bad.status.status_code is StatusCode.ERROR
    assert "no station" not in spans.dump()  # the tool's error text is content: off by default
    assert "error.type" not in attrs(good) and good.status.status_code is StatusCode.UNSET
    assert spans.run_span(result.run_id).status.status_code is StatusCode.UNSET


def test_a_failed_run_records_error_type_on_the_run_and_the_open_call(spans: Traced) -> None:
    boom = al.ProviderServerError("the server broke", provider="openai", status=500, request_id="req_x1")
    adapter = ScriptedAdapter([Step(tool_calls=[("get_weather", {"city": "Paris"})]), Step(error=boom)])
    with pytest.raises(al.ProviderServerError):
        al.run("openai:sim-reasoner", TASK, tools=[get_weather], adapter=adapter, retries=0)
    (root,) = spans.named("invoke_agent")
    a = attrs(root)
    assert a["agentlab.status"] == "failed"
    assert a["error.type"] == "ProviderServerError"
    assert a["http.response.status_code"] == 500
    assert root.status.status_code is StatusCode.ERROR
    assert "the server broke" in (root.status.description or "")
    chats = spans.children(root)
    chats = [s for s in chats if s.name.startswith("chat ")]
    assert len(chats) == 2
    assert chats[0].status.status_code is StatusCode.UNSET
    assert attrs(chats[1])["error.type"] == "ProviderServerError"
    assert chats[1].status.status_code is StatusCode.ERROR
    assert "gen_ai.usage.input_tokens" not in attrs(chats[1])  # the failed call has no usage: omitted


def test_retries_show_as_span_events(spans: Traced) -> None:
    flaky = al.RateLimitError("slow down", provider="openai", status=429)
    adapter = ScriptedAdapter([Step(error=flaky), Step(text="Rome.")])
    result = al.run("openai:sim-reasoner", TASK, adapter=adapter, retries=1, retry_delay=0)
    assert result.status == "completed"
    (chat,) = spans.named("chat ")
    events = [(e.name, dict(e.attributes or {})) for e in chat.events]
    assert events == [("agentlab.diagnostic", {"agentlab.diagnostic.code": "retry"})]


def test_unknown_usage_is_omitted_never_zero(spans: Traced) -> None:
    usage = {"input_tokens": 12, "output_tokens": 5}  # no cache or reasoning figure
    adapter = ScriptedAdapter([Step(text="Rome.", usage=usage)])
    al.run("openai:sim-reasoner", TASK, adapter=adapter)
    (chat,) = spans.named("chat ")
    a = attrs(chat)
    assert a["gen_ai.usage.input_tokens"] == 12 and a["gen_ai.usage.output_tokens"] == 5
    for missing in (
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_creation.input_tokens",
        "gen_ai.usage.reasoning.output_tokens",
        "agentlab.usage.reasoning_source",
    ):
        assert missing not in a


class _BrokenTracer:
    def start_span(self, *a: Any, **kw: Any) -> Any:
        raise RuntimeError("exporter down")


class _BrokenProvider:
    def get_tracer(self, *a: Any, **kw: Any) -> Any:
        return _BrokenTracer()


def test_tracing_that_fails_never_changes_the_run(caplog: pytest.LogCaptureFixture) -> None:
    telemetry.instrument(_BrokenProvider())  # type: ignore[arg-type]
    try:
        with caplog.at_level(logging.WARNING, logger="agentlab.telemetry"):
            result = al.run("openai:sim-reasoner", TASK, adapter=ScriptedAdapter([Step(text="Rome.")]))
    finally:
        telemetry.uninstrument()
    assert result.status == "completed" and result.output == "Rome."
    assert any("tracing a RunStartedEvent failed" in r.getMessage() for r in caplog.records)


class _FullDisk(al.EventLog):
    """An event log that takes ``room`` records, then fails as a full disk does."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def append(self, event: Any) -> None:
        if len(self._records) >= self.room:
            raise OSError(28, "No space left on device")
        super().append(event)


def test_spans_end_even_when_the_closing_records_cannot_be_written(spans: Traced) -> None:
    """Spans end with the outcome from ``run.result`` when no subscriber gets the closing records.

    A full disk refuses them (and with them their delivery); the observer's closer ends the spans.
    """
    adapter = ScriptedAdapter([Step(tool_calls=[("get_weather", {"city": "Paris"})]), Step(text="Rome.")])
    log = _FullDisk(room=4)  # run start, call start, call completed, tool call; then nothing
    with pytest.raises(al.StorageError):
        al.run("openai:sim-reasoner", TASK, tools=[get_weather], adapter=adapter, event_log=log)
    (root,) = spans.named("invoke_agent")
    a = attrs(root)
    assert a["agentlab.status"] == "failed" and a["error.type"] == "StorageError"
    assert a["agentlab.steps"] == 1 and a["gen_ai.usage.output_tokens"] > 0  # from run.result
    assert root.status.status_code is StatusCode.ERROR
    (tool,) = spans.named("execute_tool ")
    assert attrs(tool)["error.type"] == "abandoned"  # its result was never recorded
    assert len(spans.named("chat ")) == 1
    assert all(s.end_time is not None for s in spans.finished())
