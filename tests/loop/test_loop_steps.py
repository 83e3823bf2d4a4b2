"""The run loop's pure steps on their own: retry classification and applying a completed response."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import agentlab as al
from agentlab.adapters.base import Adapter, parse_model
from agentlab.errors import (
    ProviderAPIError,
    ProviderConnectionError,
    ProviderServerError,
    RateLimitError,
    StreamInterruptedError,
)
from agentlab.loop.result import CallRecord
from agentlab.loop.runner import _sdk_retries
from agentlab.loop.steps import MAX_RETRY_WAIT_S, CallTiming, RetryDecision, apply_response, retry_decision
from agentlab.neutral.events import ModelResponse, ResponseCompletedEvent
from agentlab.neutral.items import AssistantTextItem
from agentlab.testing import ScriptedAdapter, Step


def test_retry_decision_is_a_frozen_value() -> None:
    d = retry_decision(StreamInterruptedError("cut", provider="openai", retryable=True), 0, 2, 0.5, 3)
    assert d == RetryDecision(True, 0.5, "retryable")
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.retry = False  # type: ignore[misc]


def test_backoff_doubles_per_attempt_until_retries_are_used_up() -> None:
    e = ProviderConnectionError("reset", provider="openai")
    assert [retry_decision(e, a, 3, 0.25, 0).delay_s for a in range(3)] == [0.25, 0.5, 1.0]
    assert retry_decision(e, 3, 3, 0.25, 0) == RetryDecision(False, 0.0, "retries used up")
    assert not retry_decision(e, 0, 0, 0.25, 0).retry  # retries=0: never


def test_not_retryable_errors_are_never_retried() -> None:
    d = retry_decision(
        ProviderAPIError("400 bad request", provider="openai"), 0, 5, 0.0, 0
    )  # retryable=False
    assert d == RetryDecision(False, 0.0, "not retryable")


def test_status_errors_are_left_to_the_sdk_when_it_retries() -> None:
    e = ProviderServerError("503", provider="openai")
    assert retry_decision(e, 0, 2, 0.0, 3) == RetryDecision(False, 0.0, "already retried by the SDK")
    assert retry_decision(e, 0, 2, 0.0, 0).retry  # SDK retries off: the run retries it
    # A stream broken mid-way is not an HTTP status error: the SDK cannot retry it, the run does.
    assert retry_decision(
        StreamInterruptedError("cut", provider="openai", retryable=True), 0, 2, 0.0, 3
    ).retry


def test_retry_after_raises_the_delay_and_a_long_one_fails_the_call() -> None:
    assert (
        retry_decision(RateLimitError("429", provider="openai", retry_after=2.0), 0, 2, 0.5, 0).delay_s == 2.0
    )
    assert (
        retry_decision(RateLimitError("429", provider="openai", retry_after=0.1), 1, 2, 0.5, 0).delay_s == 1.0
    )
    d = retry_decision(
        RateLimitError("429", provider="openai", retry_after=MAX_RETRY_WAIT_S + 1), 0, 2, 0.5, 0
    )
    assert d == RetryDecision(False, 0.0, "retry-after too long")


def test_the_adapter_protocol_declares_the_sdk_retry_budget() -> None:
    assert "max_retries" in Adapter.__annotations__
    scripted = ScriptedAdapter([Step(text="hi")])
    assert scripted.max_retries == 0 and _sdk_retries(scripted) == 0
    for name in ("openai:sim-reasoner", "anthropic:sim-thinker"):
        adapter = al.create_adapter(name, max_retries=2)
        assert _sdk_retries(adapter) == 2


def test_an_adapter_without_max_retries_counts_as_not_retrying() -> None:
    class Legacy:  # a third party's adapter written before the protocol declared it
        provider, api, model, base_url = "openai", "responses", "sim-reasoner", None

    assert _sdk_retries(Legacy()) == 0  # type: ignore[arg-type]
    legacy: Any = Legacy()
    legacy.max_retries = "3"  # not an int: ignored the same way
    assert _sdk_retries(legacy) == 0


def _completed(**kw: Any) -> ResponseCompletedEvent:
    resp = ModelResponse(
        provider="openai",
        api="responses",
        model="sim-reasoner",
        response_id="resp_1",
        items=(AssistantTextItem(text="4"),),
        reasoning_items_dropped=kw.pop("adapter_dropped", 0),
    )
    return ResponseCompletedEvent(response=resp, **kw)


def _timing(elapsed: float | None = 1.5) -> CallTiming:
    t = CallTiming(al.ModelRequest(model="sim-reasoner", items=(al.UserItem(text="2+2?"),)), 3)
    t.elapsed = elapsed
    return t


def test_apply_response_builds_the_record_and_the_event_from_the_adapter_timings() -> None:
    ref = parse_model("openai:sim-reasoner")
    c = _completed(first_reasoning_s=0.2, first_text_s=0.7)
    out = apply_response(c, _timing(), ref=ref, run_id="r1", step=3, policy="verbatim", refused=0)
    assert out.diagnostics == ()
    rec, ev = out.record, out.completed
    assert (rec.run_id, rec.step, rec.response_id, rec.provider, rec.model) == (
        "r1",
        3,
        "resp_1",
        "openai",
        "sim-reasoner",
    )
    assert (rec.latency_s, rec.first_reasoning_s, rec.first_text_s) == (1.5, 0.2, 0.7)
    assert (ev.latency_s, ev.first_reasoning_s, ev.first_text_s) == (1.5, 0.2, 0.7)
    assert ev.items == (AssistantTextItem(text="4"),) and ev.step == 3 and ev.run_id == "r1"
    assert rec.reasoning_items_dropped == ev.reasoning_items_dropped == 0


def test_timings_are_the_adapters_the_run_only_stands_in_for_latency() -> None:
    """Timings are taken once, in the adapter's assembler; the run measures no deltas itself."""
    ref = parse_model("openai:sim-reasoner")
    c = _completed(latency_s=9.0, first_reasoning_s=None, first_text_s=8.0)
    rec = apply_response(c, _timing(), ref=ref, run_id="r", step=1, policy="verbatim", refused=0).record
    assert (rec.latency_s, rec.first_reasoning_s, rec.first_text_s) == (9.0, None, 8.0)
    out = apply_response(_completed(), _timing(), ref=ref, run_id="r", step=1, policy="verbatim", refused=0)
    rec = out.record
    assert (rec.latency_s, rec.first_reasoning_s, rec.first_text_s) == (1.5, None, None)


@pytest.mark.parametrize(
    ("policy", "why"),
    [("drop", "policy_drop"), ("verbatim", "other_origin")],
)
def test_refused_items_are_counted_and_explained(policy: Any, why: str) -> None:
    ref = parse_model("openai:sim-reasoner")
    out = apply_response(
        _completed(adapter_dropped=1),
        _timing(),
        ref=ref,
        run_id="r",
        step=2,
        policy=policy,
        refused=2,
        carried_drop=4,
    )
    assert out.record.reasoning_items_dropped == out.completed.reasoning_items_dropped == 7
    (d,) = out.diagnostics
    assert (d.code, d.step, d.run_id, d.data) == (
        "reasoning_item_dropped",
        2,
        "r",
        {"count": 2, "reason": why, "provider": "openai"},
    )
    assert d.message.startswith("2 opaque reasoning item(s) not sent: not kept: ")


def test_call_timing_restarts_per_attempt_and_keeps_no_payload_in_its_repr() -> None:
    t = _timing()
    t.completed = _completed()
    t.start()
    # mypy keeps t.completed narrowed to the event assigned above; start() resets it
    assert (t.elapsed, t.completed) == (None, None)  # type: ignore[comparison-overlap]
    t.stop()
    assert t.elapsed is not None and t.elapsed >= 0
    assert "2+2" not in repr(t)


def test_the_record_is_the_events_figures_plus_the_api_and_the_priced_cost() -> None:
    ref = parse_model("openai:sim-reasoner")
    out = apply_response(
        _completed(first_text_s=0.7), _timing(), ref=ref, run_id="r", step=2, policy="drop", refused=1
    )
    rec, ev = out.record, out.completed
    shared = set(type(rec).model_fields) & set(type(ev).model_fields)
    assert {k: getattr(rec, k) for k in shared} == {k: getattr(ev, k) for k in shared}
    assert shared >= {"run_id", "step", "usage", "latency_s", "started_s", "reasoning_items_dropped"}
    assert rec.api == ref.api and rec.cost.source == "agentlab simulated"
    assert CallRecord.of(ev, api="responses", cost=rec.cost) == rec.model_copy(update={"api": "responses"})
