"""Stream edge cases and error mapping for the OpenAI Responses adapter, on hand-built wire bytes.

The recorded traffic (test_openai_responses.py) covers the happy paths; these cover what the
recordings do not hold: cut streams, malformed events, incomplete responses, refusals, unknown event
types, retries and transport failures. Each response is served through the real SDK.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import openai
import pytest

from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.errors import (
    InvalidSettingsError,
    MissingApiKeyError,
    OverloadedError,
    ProviderAPIError,
    ProviderConnectionError,
    ProviderServerError,
    RateLimitError,
    StreamInterruptedError,
)
from agentlab.neutral.events import (
    DiagnosticEvent,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
)
from agentlab.neutral.items import ProviderReasoningItem, UserItem
from agentlab.neutral.request import ModelRequest
from tests.support.cassettes import to_sse

RID = "resp_1"


def ev(type_: str, **kw: Any) -> dict[str, Any]:
    return {"type": type_, **kw}


def response_obj(status: str = "completed", output: list[Any] | None = None, **kw: Any) -> dict[str, Any]:
    return {
        "id": RID,
        "object": "response",
        "status": status,
        "model": "gpt-5",
        "output": output or [],
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 7,
            "output_tokens_details": {"reasoning_tokens": 4},
            "total_tokens": 17,
        },
        **kw,
    }


MSG = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
}


def stream_events(*middle: dict[str, Any], final: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [
        ev("response.created", response=response_obj("in_progress")),
        *middle,
        final if final is not None else ev("response.completed", response=response_obj(output=[MSG])),
    ]


def text_events() -> list[dict[str, Any]]:
    return [
        ev(
            "response.output_item.added", output_index=0, item={**MSG, "content": [], "status": "in_progress"}
        ),
        ev("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta="H"),
        ev("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta="i"),
        ev("response.output_item.done", output_index=0, item=MSG),
    ]


class Server:
    def __init__(self, *responses: httpx2.Response | Callable[[httpx2.Request], httpx2.Response]) -> None:
        self.responses = list(responses)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        r = self.responses.pop(0)
        return r(request) if callable(r) else r


def sse(events: list[dict[str, Any]], **headers: str) -> httpx2.Response:
    return httpx2.Response(
        200,
        headers={"content-type": "text/event-stream", "x-request-id": "req_s", **headers},
        content=to_sse(events),
    )


def adapter(server: Server, model: str = "gpt-5", **kw: Any) -> OpenAIResponsesAdapter:
    kw.setdefault("max_retries", 0)
    client = openai.AsyncOpenAI(
        api_key="sk-secret-test-key", http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    )
    return OpenAIResponsesAdapter(model, client=client, **kw)


REQ = ModelRequest(model="gpt-5", items=(UserItem(text="hi"),))


async def run(a: OpenAIResponsesAdapter, request: ModelRequest = REQ) -> list[Any]:
    return [e async for e in a.stream(request)]


async def run_until_error(
    a: OpenAIResponsesAdapter, request: ModelRequest = REQ
) -> tuple[list[Any], Exception]:
    seen: list[Any] = []
    try:
        async for e in a.stream(request):
            seen.append(e)
    except Exception as exc:
        return seen, exc
    raise AssertionError("expected an error")


# ---------------------------------------------------------------- mapping


async def test_text_stream_maps_to_deltas_and_one_completed_event() -> None:
    events = await run(adapter(Server(sse(stream_events(*text_events())))))
    assert [type(e).__name__ for e in events] == [
        "TextDeltaEvent",
        "TextDeltaEvent",
        "ResponseCompletedEvent",
    ]
    resp = events[-1].response
    assert resp.text == "Hi" and resp.stop_reason == "end_turn" and resp.request_id == "req_s"
    assert resp.items[0].provider_item_id == "msg_1" and resp.items[0].turn_id == RID
    assert resp.usage.reasoning_tokens == 4 and resp.usage.output_tokens == 7
    assert events[-1].first_text_s is not None and events[-1].latency_s is not None


async def test_reasoning_text_and_summary_deltas_are_display_blocks() -> None:
    rs_item = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAA"}
    evs = stream_events(
        ev("response.output_item.added", output_index=0, item={**rs_item, "encrypted_content": "gA"}),
        ev("response.reasoning_text.delta", item_id="rs_1", output_index=0, content_index=0, delta="think"),
        ev(
            "response.reasoning_summary_text.delta",
            item_id="rs_1",
            output_index=0,
            summary_index=1,
            delta="sum",
        ),
        ev("response.output_item.done", output_index=0, item=rs_item),
        final=ev("response.completed", response=response_obj(output=[rs_item])),
    )
    events = await run(adapter(Server(sse(evs))))
    deltas = [(e.block, e.text) for e in events if isinstance(e, ReasoningDeltaEvent)]
    assert deltas == [("rs_1:c0", "think"), ("rs_1:1", "sum")]
    (item,) = events[-1].response.reasoning
    # The complete copy from output_item.done, not the partial one from output_item.added.
    assert json.loads(item.unseal(provider="openai", api="responses"))["encrypted_content"] == "gAAA"


async def test_function_call_arguments_stream_and_validate() -> None:
    fc = {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city":"Paris"}',
        "status": "completed",
    }
    bad = {**fc, "id": "fc_2", "call_id": "call_2", "arguments": '{"city":'}
    evs = stream_events(
        ev("response.output_item.added", output_index=0, item={**fc, "arguments": ""}),
        ev("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='{"city":'),
        ev("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='"Paris"}'),
        ev(
            "response.function_call_arguments.done", item_id="fc_1", output_index=0, arguments=fc["arguments"]
        ),
        ev("response.output_item.done", output_index=0, item=fc),
        ev("response.output_item.added", output_index=1, item={**bad, "arguments": ""}),
        ev("response.output_item.done", output_index=1, item=bad),
        final=ev("response.completed", response=response_obj(output=[fc, bad])),
    )
    events = await run(adapter(Server(sse(evs))))
    deltas = [e for e in events if isinstance(e, ToolCallDeltaEvent)]
    assert [(d.call_id, d.name) for d in deltas] == [("call_1", "get_weather")] * 2
    (diag,) = [e for e in events if isinstance(e, DiagnosticEvent)]
    assert diag.code == "invalid_tool_arguments" and diag.data["call_id"] == "call_2"
    resp = events[-1].response
    assert resp.stop_reason == "tool_use"
    assert [(c.call_id, c.arguments, c.provider_item_id, c.index) for c in resp.tool_calls] == [
        ("call_1", '{"city":"Paris"}', "fc_1", 0),
        ("call_2", '{"city":', "fc_2", 1),
    ]


@pytest.mark.parametrize(
    ("reason", "stop"),
    [("max_output_tokens", "max_tokens"), ("content_filter", "content_filter"), ("x", "incomplete")],
)
async def test_incomplete_response_has_a_clear_stop_reason(reason: str, stop: str) -> None:
    final = ev(
        "response.incomplete",
        response=response_obj("incomplete", [MSG], incomplete_details={"reason": reason}),
    )
    events = await run(adapter(Server(sse(stream_events(*text_events(), final=final)))))
    resp = events[-1].response
    assert (resp.stop_reason, resp.stop_detail, resp.text) == (stop, reason, "Hi")


async def test_refusal() -> None:
    refusal = {**MSG, "content": [{"type": "refusal", "refusal": "I can't help with that."}]}
    evs = stream_events(
        ev(
            "response.refusal.delta",
            item_id="msg_1",
            output_index=0,
            content_index=0,
            delta="I can't help with that.",
        ),
        ev("response.output_item.done", output_index=0, item=refusal),
        final=ev("response.completed", response=response_obj(output=[refusal])),
    )
    events = await run(adapter(Server(sse(evs))))
    resp = events[-1].response
    assert resp.stop_reason == "refusal" and resp.stop_detail == "I can't help with that."
    assert [e.text for e in events if isinstance(e, TextDeltaEvent)] == ["I can't help with that."]


async def test_unknown_event_types_are_tolerated() -> None:
    evs = stream_events(ev("response.brand_new.delta", delta="?"), ev("keepalive"), *text_events())
    events = await run(adapter(Server(sse(evs))))
    assert events[-1].response.text == "Hi"


async def test_missing_output_item_done_is_backfilled_from_the_completed_response() -> None:
    evs = stream_events(
        ev("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta="Hi")
    )
    events = await run(adapter(Server(sse(evs))))
    assert events[-1].response.text == "Hi" and events[-1].response.items[0].provider_item_id == "msg_1"


async def test_non_streaming_goes_through_the_same_mapping() -> None:
    body = response_obj(
        output=[
            {
                "id": "rs_1",
                "type": "reasoning",
                "encrypted_content": "gAAA",
                "summary": [{"type": "summary_text", "text": "plan"}],
            },
            {**MSG},
        ]
    )
    server = Server(httpx2.Response(200, json=body, headers={"x-request-id": "req_n"}))
    foreign = ProviderReasoningItem(
        b"{}", provider="anthropic", api="messages", model="x", block_type="thinking", turn_id="t", index=0
    )
    events = await run(adapter(server), REQ.model_copy(update={"stream": False, "continuation": (foreign,)}))
    assert events[-1].response.reasoning_items_dropped == 1 and isinstance(events.pop(0), DiagnosticEvent)
    assert json.loads(server.requests[0].content)["stream"] is False
    assert [type(e).__name__ for e in events] == [
        "ReasoningDeltaEvent",
        "TextDeltaEvent",
        "ResponseCompletedEvent",
    ]
    resp = events[-1].response
    assert resp.text == "Hi" and resp.request_id == "req_n" and len(resp.reasoning) == 1
    assert resp.reasoning[0].index == 0 and resp.items[0].index == 1


# ---------------------------------------------------------------- broken streams


async def test_stream_ending_without_completed_raises_and_yields_no_completed_event() -> None:
    evs = stream_events(*text_events())[:-1]
    seen, err = await run_until_error(adapter(Server(sse(evs))))
    assert isinstance(err, StreamInterruptedError) and err.request_id == "req_s"
    assert [type(e).__name__ for e in seen] == ["TextDeltaEvent", "TextDeltaEvent"]


async def test_cut_in_the_middle_of_an_event() -> None:
    raw = to_sse(stream_events(*text_events()))
    cut = raw[: raw.index(b"response.completed") + 40]
    server = Server(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=cut))
    seen, err = await run_until_error(adapter(server))
    assert isinstance(err, StreamInterruptedError)
    assert not any(isinstance(e, ResponseCompletedEvent) for e in seen)


async def test_malformed_event() -> None:
    raw = b"event: response.created\ndata: {not json\n\n"
    server = Server(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=raw))
    _, err = await run_until_error(adapter(server))
    assert isinstance(err, StreamInterruptedError) and "malformed" in str(err)


async def test_known_event_missing_a_field_is_a_typed_error() -> None:
    evs = stream_events(ev("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0))
    _, err = await run_until_error(adapter(Server(sse(evs))))
    assert isinstance(err, StreamInterruptedError) and "response.output_text.delta" in str(err)


async def test_connection_reset_mid_stream_is_interrupted_and_not_retried() -> None:
    head = to_sse(stream_events(*text_events())[:3])

    async def body() -> AsyncIterator[bytes]:
        yield head
        raise httpx2.ReadError("connection reset by peer")

    server = Server(
        httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body()),
        sse(stream_events(*text_events())),
    )
    seen, err = await run_until_error(adapter(server, max_retries=3))
    assert isinstance(err, StreamInterruptedError) and "ReadError" in str(err)
    assert [e.text for e in seen if isinstance(e, TextDeltaEvent)] == ["H"]
    assert len(server.requests) == 1  # never re-sent after events were yielded


async def test_in_stream_failure_without_error_event() -> None:
    failed = ev(
        "response.failed", response=response_obj("failed", error={"code": "server_error", "message": "boom"})
    )
    _, err = await run_until_error(adapter(Server(sse(stream_events(final=failed)))))
    assert (
        isinstance(err, StreamInterruptedError) and err.error_type == "server_error" and err.message == "boom"
    )
    assert err.retryable


# ---------------------------------------------------------------- HTTP errors and retries


def error(status: int, etype: str, message: str, code: str | None = None, **headers: str) -> httpx2.Response:
    body = {"error": {"message": message, "type": etype, "param": None, "code": code}}
    return httpx2.Response(status, json=body, headers={"x-request-id": "req_e", **headers})


@pytest.mark.parametrize(
    ("status", "cls"),
    [(429, RateLimitError), (500, ProviderServerError), (503, OverloadedError), (400, ProviderAPIError)],
)
async def test_status_errors_are_typed(status: int, cls: type[Exception]) -> None:
    server = Server(error(status, "some_error", "went wrong", "c1", **{"retry-after": "7"}))
    _, err = await run_until_error(adapter(server))
    assert type(err) is cls
    assert isinstance(err, ProviderAPIError)
    assert (err.provider, err.status, err.error_type, err.request_id) == (
        "openai",
        status,
        "some_error",
        "req_e",
    )
    assert err.code == "c1" and err.message == "went wrong"
    if isinstance(err, RateLimitError):
        assert err.retry_after == 7.0
    assert "sk-secret-test-key" not in str(err) + repr(err)


async def test_bounded_retry_honours_retry_after_then_succeeds() -> None:
    server = Server(
        error(429, "rate_limit_exceeded", "slow down", **{"retry-after-ms": "5"}),
        sse(stream_events(*text_events())),
    )
    events = await run(adapter(server, max_retries=1))
    assert events[-1].response.text == "Hi" and len(server.requests) == 2
    assert server.requests[1].headers["x-stainless-retry-count"] == "1"


async def test_retries_are_bounded() -> None:
    server = Server(*(error(500, "server_error", "boom", **{"retry-after-ms": "1"}) for _ in range(3)))
    _, err = await run_until_error(adapter(server, max_retries=2))
    assert isinstance(err, ProviderServerError) and len(server.requests) == 3


async def test_connection_error_before_any_event() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused")

    _, err = await run_until_error(adapter(Server(refuse)))
    assert isinstance(err, ProviderConnectionError) and err.retryable


# ---------------------------------------------------------------- construction


def test_real_model_without_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingApiKeyError) as info:
        OpenAIResponsesAdapter("gpt-5.1")
    assert info.value.env_var == "OPENAI_API_KEY" and info.value.provider == "openai"


def test_key_never_in_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret")
    a = OpenAIResponsesAdapter("gpt-5.1")
    assert "sk-very-secret" not in repr(a) and a.base_url == "https://api.openai.com/v1"
    assert a.provider == "openai" and a.api == "responses" and a.model == "gpt-5.1"


def test_bad_construction() -> None:
    with pytest.raises(InvalidSettingsError, match="AsyncOpenAI"):
        OpenAIResponsesAdapter("gpt-5", client=openai.OpenAI(api_key="x"))  # type: ignore[arg-type]
    with pytest.raises(InvalidSettingsError):
        OpenAIResponsesAdapter("", client=openai.AsyncOpenAI(api_key="x"))
    with pytest.raises(InvalidSettingsError):
        OpenAIResponsesAdapter("gpt-5", client=openai.AsyncOpenAI(api_key="x"), max_retries=-1)


async def test_request_for_another_model_is_refused_before_sending() -> None:
    server = Server()
    _, err = await run_until_error(adapter(server), REQ.model_copy(update={"model": "gpt-5.1"}))
    assert isinstance(err, InvalidSettingsError) and not server.requests


async def test_extra_headers_and_timeout_reach_the_wire() -> None:
    server = Server(sse(stream_events(*text_events())))
    await run(adapter(server, extra_headers={"x-team": "lab"}, timeout=12.0))
    assert server.requests[0].headers["x-team"] == "lab"
    assert server.requests[0].headers["authorization"] == "Bearer sk-secret-test-key"
