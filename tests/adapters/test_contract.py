"""The adapter contract (see ``contract.py``), run for every registered adapter on the simulator."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentlab.errors import (
    OverloadedError,
    ProviderAPIError,
    ProviderError,
    ProviderServerError,
    RateLimitError,
    StreamInterruptedError,
)
from agentlab.neutral.events import (
    DiagnosticEvent,
    EventOrigin,
    ModelResponse,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    TextDeltaEvent,
)
from agentlab.neutral.items import (
    AssistantTextItem,
    ProviderReasoningItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import ModelRequest
from tests.adapters.contract import CASES, STATUS_LADDER, WEATHER, AdapterCase, collect, completed, contains

TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny", "Florence, Italy": "21 C, clear"}


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> AdapterCase:
    return CASES[request.param]


def ask(case: AdapterCase, text: str, **kw: Any) -> ModelRequest:
    return ModelRequest(model=case.model, items=(UserItem(text=text),), **kw)


def results_for(resp: ModelResponse) -> list[ToolResultItem]:
    return [
        ToolResultItem(call_id=c.call_id, name=c.name, output=TEMPS[json.loads(c.arguments)["city"]])
        for c in resp.tool_calls
    ]


def next_step(request: ModelRequest, resp: ModelResponse, **kw: Any) -> ModelRequest:
    return request.model_copy(
        update={
            "items": (*request.items, *resp.items, *results_for(resp)),
            "continuation": (*request.continuation, *resp.reasoning),
            **kw,
        }
    )


def payloads(case: AdapterCase, items: tuple[ProviderReasoningItem, ...]) -> list[Any]:
    a, _ = case.adapter()
    return [json.loads(i.unseal(provider=a.provider, api=a.api)) for i in items]


async def test_single_turn_answer(case: AdapterCase) -> None:
    adapter, _ = case.adapter()
    events = await collect(adapter, ask(case, "What is 12 * (3 + 4)?"))
    resp = completed(events)
    assert "84" in resp.text and resp.stop_reason == "end_turn"
    assert (resp.provider, resp.api, resp.model) == (adapter.provider, adapter.api, case.model)
    (item,) = resp.items
    assert isinstance(item, AssistantTextItem) and item.turn_id == resp.response_id and item.index is not None
    assert "".join(e.text for e in events if isinstance(e, TextDeltaEvent)) == resp.text
    await adapter.aclose()


async def test_aclose_leaves_an_injected_client_open(case: AdapterCase) -> None:
    """The client the caller gave stays the caller's: ``aclose`` twice, and the adapter still answers."""
    adapter, _ = case.adapter()
    await adapter.aclose()
    await adapter.aclose()
    resp = completed(await collect(adapter, ask(case, "What is 12 * (3 + 4)?")))
    assert "84" in resp.text
    await adapter.aclose()


async def test_reasoning_deltas_arrive_before_text(case: AdapterCase) -> None:
    adapter, _ = case.adapter()
    events = await collect(adapter, ask(case, "What is 12 * (3 + 4)?"))
    kinds = [type(e) for e in events]
    if not case.reasoning_text:  # opaque reasoning only: kept for continuity, nothing to display
        assert ReasoningDeltaEvent not in kinds and TextDeltaEvent in kinds and completed(events).reasoning
        return
    assert ReasoningDeltaEvent in kinds and TextDeltaEvent in kinds
    assert kinds.index(ReasoningDeltaEvent) < kinds.index(TextDeltaEvent)
    done = events[-1]
    assert isinstance(done, ResponseCompletedEvent) and done.first_reasoning_s is not None
    assert done.first_text_s is not None and done.first_reasoning_s <= done.first_text_s


async def test_usage_is_populated(case: AdapterCase) -> None:
    adapter, _ = case.adapter()
    usage = completed(await collect(adapter, ask(case, "What is 12 * (3 + 4)?"))).usage
    assert usage.input_tokens and usage.input_tokens > 0
    assert usage.output_tokens and usage.output_tokens > 0
    for name in case.unreported_usage:  # what the far side does not report stays unknown, never 0
        got = getattr(usage, name)
        assert got is None, f"{name} is not reported: it must be None (unknown), got {got!r}"
    if "reasoning_tokens" in case.unreported_usage:
        assert usage.reasoning_source == "unknown"
    else:
        assert usage.reasoning_tokens is not None and 0 < usage.reasoning_tokens <= usage.output_tokens
        assert usage.reasoning_source == "reported"
    if "cache_read_tokens" not in case.unreported_usage:
        assert usage.cache_read_tokens is not None


async def test_tool_loop_returns_the_continuation_verbatim(case: AdapterCase) -> None:
    adapter, transport = case.adapter()
    first = ask(case, "What's the weather in Florence, Italy?", tools=(WEATHER,))
    r1 = completed(await collect(adapter, first))
    assert r1.stop_reason == "tool_use" and len(r1.tool_calls) == 1 and r1.reasoning
    call = r1.tool_calls[0]
    assert isinstance(call, ToolCallItem) and json.loads(call.arguments) == {"city": "Florence, Italy"}
    assert all(r.turn_id == r1.response_id for r in r1.reasoning)

    second = next_step(first, r1)
    events = await collect(adapter, second)
    r2 = completed(events)
    assert not [e for e in events if isinstance(e, DiagnosticEvent)]
    assert r2.stop_reason == "end_turn" and "21 C" in r2.text and r2.reasoning_items_dropped == 0
    sent = transport.last_json
    for payload in payloads(case, r1.reasoning):
        assert contains(sent, payload), "a reasoning item was not sent back unchanged"


async def test_parallel_tool_calls(case: AdapterCase) -> None:
    adapter, _ = case.adapter()
    first = ask(case, "Is it warmer in Paris or Rome?", tools=(WEATHER,))
    r1 = completed(await collect(adapter, first))
    assert [json.loads(c.arguments)["city"] for c in r1.tool_calls] == ["Paris", "Rome"]
    assert len({c.call_id for c in r1.tool_calls}) == 2
    r2 = completed(await collect(adapter, next_step(first, r1)))
    assert r2.stop_reason == "end_turn" and "Rome" in r2.text


async def test_other_providers_opaque_items_are_dropped_with_a_diagnostic(case: AdapterCase) -> None:
    adapter, transport = case.adapter()
    first = ask(case, "What's the weather in Florence, Italy?", tools=(WEATHER,))
    r1 = completed(await collect(adapter, first))
    foreign = ProviderReasoningItem(
        b'{"type":"reasoning","marker":"foreign-item-7f3a"}',
        provider="elsewhere",
        api="other",
        model=case.model,
        block_type="reasoning",
        turn_id=r1.response_id or "",
        index=0,
    )
    other = ProviderReasoningItem(
        b'{"type":"reasoning","marker":"foreign-item-7f3b"}',
        provider="elsewhere",
        api="other",
        model=case.model,
        block_type="reasoning",
        turn_id=r1.response_id or "",
        index=1,
    )
    second = next_step(first, r1)
    second = second.model_copy(update={"continuation": (foreign, other, *second.continuation)})
    events = await collect(adapter, second)
    diags = [e for e in events if isinstance(e, DiagnosticEvent) and e.code == "reasoning_item_dropped"]
    # One policy: aggregated per request (per reason), one payload shape on every adapter.
    assert len(diags) == 1
    assert set(diags[0].data) == {"count", "reason", "provider"}
    assert diags[0].data["count"] == 2 and diags[0].data["provider"] == adapter.provider
    r2 = completed(events)
    assert r2.reasoning_items_dropped == 2 and r2.stop_reason == "end_turn"
    assert b"foreign-item-7f3a" not in transport.bodies[-1]


async def test_non_streaming_matches_streaming(case: AdapterCase) -> None:
    a1, _ = case.adapter()
    a2, _ = case.adapter()
    streamed = completed(await collect(a1, ask(case, "What is 12 * (3 + 4)?")))
    plain_events = await collect(a2, ask(case, "What is 12 * (3 + 4)?", stream=False))
    plain = completed(plain_events)
    assert plain.text == streamed.text and plain.usage == streamed.usage
    assert [type(i) for i in plain.items] == [type(i) for i in streamed.items]
    assert len(plain.reasoning) == len(streamed.reasoning)


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("429", RateLimitError),
        ("500", ProviderServerError),
        ("529", OverloadedError),
        ("cut", StreamInterruptedError),
        ("reset", StreamInterruptedError),
        ("malformed", StreamInterruptedError),
    ],
)
async def test_errors_map_to_typed_errors(case: AdapterCase, fault: str, error: type[Exception]) -> None:
    adapter, _ = case.adapter(default_fault=fault)
    seen: list[Any] = []
    with pytest.raises(error) as info:
        async for ev in adapter.stream(ask(case, "What is 12 * (3 + 4)?")):
            seen.append(ev)
    assert not any(isinstance(e, ResponseCompletedEvent) for e in seen)
    err = info.value
    assert getattr(err, "provider", None) == adapter.provider
    if isinstance(err, RateLimitError):
        assert err.retry_after is not None and err.status == 429
    if isinstance(err, ProviderAPIError):
        assert err.request_id or err.status


@pytest.mark.parametrize("status", sorted(STATUS_LADDER))
async def test_same_status_same_error_type_on_every_adapter(case: AdapterCase, status: int) -> None:
    adapter, transport = case.answering(status)
    with pytest.raises(ProviderError) as info:
        await collect(adapter, ask(case, "hi"))
    err = info.value
    assert type(err).__name__ == STATUS_LADDER[status], (case.name, status, type(err).__name__)
    assert err.status == status and err.provider == adapter.provider and err.error_type == "some_error"
    assert err.retry_after == 2.0 and err.request_id == "req_c" and len(transport.bodies) == 1


async def test_a_multi_line_provider_message_is_one_line(case: AdapterCase) -> None:
    """Errors are one line (a log line, ``RunResult.error``, an event-log record), whatever the API sent.

    OpenRouter relays an upstream's pretty-printed JSON error; folded once where every provider error
    is built (``agentlab.errors.one_line``), not by each adapter.
    """
    message = 'Upstream error: {\n  "error": {\r\n    "code": 400\n  }\n}\u2028done'
    adapter, _ = case.answering(400, message=message)
    with pytest.raises(ProviderError) as info:
        await collect(adapter, ask(case, "hi"))
    err = info.value
    assert err.status == 400
    for text in (str(err), err.message):
        assert len(text.splitlines()) == 1, (case.name, text)
        assert 'Upstream error: { "error": { "code": 400 } } done' in text, (case.name, text)


async def test_an_overloaded_error_type_is_overloaded_whatever_the_status(case: AdapterCase) -> None:
    adapter, _ = case.answering(400, "overloaded_error")
    with pytest.raises(OverloadedError):
        await collect(adapter, ask(case, "hi"))


async def test_bounded_retries_recover_from_a_transient_fault(case: AdapterCase) -> None:
    adapter, transport = case.adapter(max_retries=2, default_fault="429x1", retry_after_ms=1)
    resp = completed(await collect(adapter, ask(case, "What is 12 * (3 + 4)?")))
    assert "84" in resp.text and len(transport.bodies) == 2


async def test_unknown_model_is_a_provider_api_error(case: AdapterCase) -> None:
    adapter, _ = case.adapter(model="sim-no-such-model")
    with pytest.raises(ProviderAPIError) as info:
        await collect(adapter, ModelRequest(model="sim-no-such-model", items=(UserItem(text="hi"),)))
    assert info.value.status in (400, 404) and info.value.provider == adapter.provider
    assert "sim-no-such-model" in info.value.message


async def test_unknown_event_types_are_tolerated(case: AdapterCase) -> None:
    adapter, _ = case.adapter(default_fault="unknown_event")
    events = await collect(adapter, ask(case, "What is 12 * (3 + 4)?"))
    resp = completed(events)
    assert "84" in resp.text
    # One policy: ignored, and said once per kind per call, naming the wire type only.
    (note,) = [e for e in events if isinstance(e, DiagnosticEvent)]
    assert note.code == "unsupported_content" and note.data["where"] == "event"
    assert note.data["provider"] == adapter.provider and case.unknown_event_type in note.data["type"]


@pytest.mark.parametrize("arguments", ['{"city": "Par', "[1, 2]", '"Paris"'])
def test_malformed_tool_arguments_are_kept_with_one_diagnostic(case: AdapterCase, arguments: str) -> None:
    """Arguments that are not a JSON object: kept as received, one diagnostic, never a failed call."""
    assert case.assembler is not None and case.tool_call_wire is not None
    asm = case.assembler()
    events = [ev for data in case.tool_call_wire(arguments) if (ev := asm.feed(data)) is not None]
    events.extend(asm.finish())
    resp = completed(events)
    (call,) = resp.tool_calls
    call_id = case.notes.get("call_id", "call_1")  # Mantle scopes a reused id by its response
    assert (call.call_id, call.name, call.arguments) == (call_id, "get_weather", arguments)
    notes = [e for e in events if isinstance(e, DiagnosticEvent)]
    assert [(n.code, n.data) for n in notes] == [
        ("invalid_tool_arguments", {"call_id": call_id, "name": "get_weather"})
    ]
    assert "Par" not in notes[0].message


def test_well_formed_tool_arguments_give_no_diagnostic(case: AdapterCase) -> None:
    assert case.assembler is not None and case.tool_call_wire is not None
    asm = case.assembler()
    events = [ev for data in case.tool_call_wire('{"city": "Paris"}') if (ev := asm.feed(data)) is not None]
    events.extend(asm.finish())
    assert not [e for e in events if isinstance(e, DiagnosticEvent)]
    assert completed(events).stop_reason == "tool_use"


async def test_events_are_born_carrying_the_requests_origin(case: AdapterCase) -> None:
    adapter, _ = case.adapter()
    request = ask(case, "What is 12 * (3 + 4)?").model_copy(
        update={"origin": EventOrigin(run_id="run_x", step=4)}
    )
    events = await collect(adapter, request)
    assert events and all((e.run_id, e.step) == ("run_x", 4) for e in events)


def test_the_registry_entry_describes_this_adapter(case: AdapterCase) -> None:
    """Routing ``provider:model`` through the registry reaches this adapter's class and API."""
    from agentlab.adapters.base import parse_model
    from agentlab.adapters.registry import get_provider
    from agentlab.neutral.usage import CallUsage

    spec = get_provider(case.provider or case.name)
    adapter, _ = case.adapter()
    assert (adapter.provider, adapter.api) == (spec.name, spec.api)
    assert isinstance(adapter, spec.adapter_class())
    ref = parse_model(f"{spec.name}:{case.model}")
    assert (ref.provider, ref.api, ref.model) == (spec.name, spec.api, case.model)
    assert isinstance(spec.normalize_usage({}), CallUsage)
    assert spec.normalize_usage({}).reasoning_tokens is None  # unknown stays unknown, never 0


@pytest.mark.parametrize("figure", ["reasoning_tokens", "cache_read_tokens"])
async def test_the_usage_scenario_fails_an_adapter_that_reports_0_for_an_unreported_figure(
    monkeypatch: pytest.MonkeyPatch, figure: str
) -> None:
    """The suite's guard on "unknown, never 0": an adapter reporting 0 for a missing figure fails.

    A local dialect whose usage mapping turned a missing figure into 0 (the classic bug) must fail
    the shared usage scenario, not slip through it.
    """
    from dataclasses import replace

    from agentlab.adapters.openai_chat import VLLMAdapter

    honest = VLLMAdapter.dialect.usage

    def zero_for_missing(usage: Any) -> Any:
        u = honest(usage)
        if figure == "reasoning_tokens":
            return u.model_copy(update={"reasoning_tokens": 0, "reasoning_source": "reported"})
        return u.model_copy(update={figure: 0})

    case = CASES["vllm"]
    assert figure in case.unreported_usage
    await test_usage_is_populated(case)  # the honest mapping passes
    monkeypatch.setattr(VLLMAdapter, "dialect", replace(VLLMAdapter.dialect, usage=zero_for_missing))
    with pytest.raises(AssertionError, match=figure):
        await test_usage_is_populated(case)
