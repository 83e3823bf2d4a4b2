"""Stream mapping edge cases and error translation, on hand-made SSE and on the recorded error answers.

Hand-made streams use the exact event grammar of the recordings (``tests.support.cassettes.to_sse``),
served through the real SDK by an ``httpx2.MockTransport``.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from agentlab.errors import (
    OverloadedError,
    ProviderAPIError,
    ProviderConnectionError,
    RateLimitError,
    StreamInterruptedError,
)
from agentlab.neutral.events import (
    DiagnosticEvent,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    TextDeltaEvent,
)
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest
from tests.adapters.anthropic_messages.anthropic_support import SSE, Replay, Served, adapter_for, served
from tests.support.cassettes import fixtures_dir, load_cassette, to_sse

MODEL = "claude-sonnet-4-0"


def _request(stream: bool = True) -> ModelRequest:
    return ModelRequest(model=MODEL, items=(UserItem(text="hi"),), stream=stream, cache=None)


def _start(usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "usage": usage or {"input_tokens": 10, "output_tokens": 1},
        },
    }


def _block(index: int, block: dict[str, Any], *deltas: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": block},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def _end(stop: str = "end_turn", usage: dict[str, Any] | None = None, **delta: Any) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None, **delta},
            "usage": usage or {"output_tokens": 20},
        },
        {"type": "message_stop"},
    ]


def _think(index: int, *texts: str, sig: str = "SIG") -> list[dict[str, Any]]:
    deltas = [{"type": "thinking_delta", "thinking": t} for t in texts]
    return _block(
        index,
        {"type": "thinking", "thinking": "", "signature": ""},
        *deltas,
        {"type": "signature_delta", "signature": sig},
    )


def _text(index: int, *texts: str) -> list[dict[str, Any]]:
    return _block(index, {"type": "text", "text": ""}, *({"type": "text_delta", "text": t} for t in texts))


def _serve(body: bytes, status: int = 200, ctype: str = SSE, **headers: str) -> Replay:
    return Replay([Served(status, body, ctype, headers)])


async def _collect(replay: Replay, stream: bool = True, **kw: Any) -> list[Any]:
    adapter = adapter_for(MODEL, replay, **kw)
    return [e async for e in adapter.stream(_request(stream))]


async def test_think_text_think_stays_three_blocks_in_order() -> None:
    events = [
        _start(),
        {"type": "ping"},
        *_think(0, "first ", "thought"),
        *_text(1, "Hello", " world"),
        *_think(2, "second", sig="SIG2"),
        *_end(usage={"output_tokens": 55, "output_tokens_details": {"thinking_tokens": 30}}),
    ]
    out = await _collect(_serve(to_sse(events)))
    reasoning = [e for e in out if isinstance(e, ReasoningDeltaEvent)]
    assert [(e.block, e.text) for e in reasoning] == [("0", "first "), ("0", "thought"), ("2", "second")]
    assert "".join(e.text for e in out if isinstance(e, TextDeltaEvent)) == "Hello world"
    resp = out[-1].response
    assert [(i.index, i.turn_id) for i in resp.items] == [(1, "msg_1")]
    got = [json.loads(i.unseal(provider="anthropic", api="messages")) for i in resp.reasoning]
    assert got == [
        {"type": "thinking", "thinking": "first thought", "signature": "SIG"},
        {"type": "thinking", "thinking": "second", "signature": "SIG2"},
    ]
    assert [i.index for i in resp.reasoning] == [0, 2]
    assert resp.usage.output_tokens == 55 and resp.usage.reasoning_tokens == 30
    assert resp.usage.reasoning_source == "reported" and resp.usage.non_reasoning_output_tokens == 25


async def test_omitted_display_keeps_continuation_and_shows_nothing() -> None:
    events = [_start(), *_think(0), *_text(1, "ok"), *_end()]
    out = await _collect(_serve(to_sse(events)))
    # Nothing to show, but not nothing: one marker says the block's text was not displayed.
    (marker,) = [e for e in out if isinstance(e, ReasoningDeltaEvent)]
    assert marker.omitted and marker.text == "" and marker.block == "0"
    (item,) = out[-1].response.reasoning
    assert json.loads(item.unseal(provider="anthropic", api="messages")) == {
        "type": "thinking",
        "thinking": "",
        "signature": "SIG",
    }
    assert out[-1].response.usage.reasoning_tokens is None  # never guessed
    assert out[-1].response.usage.reasoning_source == "unknown"


async def test_tool_input_is_assembled_and_validated() -> None:
    tool = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    parts = ["", '{"a"', ": [1, ", "2]}"]
    events = [
        _start(),
        *_block(0, tool, *({"type": "input_json_delta", "partial_json": p} for p in parts)),
        *_end("tool_use"),
    ]
    out = await _collect(_serve(to_sse(events)))
    (call,) = out[-1].response.tool_calls
    assert json.loads(call.arguments) == {"a": [1, 2]} and call.provider_item_id == "toolu_1"
    assert out[-1].response.stop_reason == "tool_use"
    cut = [
        _start(),
        *_block(0, tool, {"type": "input_json_delta", "partial_json": '{"a": [1'}),
        *_end("max_tokens"),
    ]
    # The policy of every adapter: kept as received, one diagnostic, the run answers with an error.
    out = await _collect(_serve(to_sse(cut)))
    (call,) = out[-1].response.tool_calls
    assert call.arguments == '{"a": [1' and out[-1].response.stop_reason == "max_tokens"
    notes = [e for e in out if isinstance(e, DiagnosticEvent)]
    assert [n.code for n in notes] == ["invalid_tool_arguments"]
    assert notes[0].data == {"call_id": "toolu_1", "name": "f"}


@pytest.mark.parametrize(
    ("stop", "expected", "detail"),
    [
        ("refusal", "refusal", "refusal"),
        ("pause_turn", "pause_turn", "pause_turn"),
        ("max_tokens", "max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence", "###"),
        ("some_future_reason", "incomplete", "some_future_reason"),
    ],
)
async def test_stop_reasons(stop: str, expected: str, detail: str) -> None:
    events = [_start(), *_text(0, "x"), *_end(stop)]
    if stop == "stop_sequence":
        events[-2]["delta"]["stop_sequence"] = "###"
    resp = (await _collect(_serve(to_sse(events))))[-1].response
    assert (resp.stop_reason, resp.stop_detail) == (expected, detail)


async def test_unknown_events_and_blocks_are_tolerated_visibly() -> None:
    events = [
        _start(),
        {"type": "some_future_event", "payload": 1},
        *_block(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
        *_text(1, "answer"),
        {"type": "content_block_delta", "index": 1, "delta": {"type": "citations_delta", "citation": {}}},
        *_end(),
    ]
    out = await _collect(_serve(to_sse(events)))
    diags = [e for e in out if isinstance(e, DiagnosticEvent)]
    # One policy: ignored, one ``unsupported_content`` per kind per call, naming the wire type only.
    assert [(d.code, d.data["where"], d.data["type"]) for d in diags] == [
        ("unsupported_content", "event", "some_future_event"),
        ("unsupported_content", "block", "server_tool_use"),
        ("unsupported_content", "delta", "citations_delta"),
    ]
    assert all(d.data["provider"] == "anthropic" for d in diags)
    assert out[-1].response.text == "answer"


async def test_multiline_data_and_crlf_are_parsed() -> None:
    body = "event: message_start\r\ndata: " + json.dumps(_start()) + "\r\n\r\n"
    body += "".join(
        f"event: {e['type']}\ndata: " + json.dumps(e, indent=1).replace("\n", "\ndata: ") + "\n\n"
        for e in [*_text(0, "multi"), *_end()]
    )
    out = await _collect(_serve(body.encode()))
    assert out[-1].response.text == "multi"


async def test_stream_without_message_stop_is_interrupted_and_yields_no_completion() -> None:
    events = [_start(), *_text(0, "partial")]
    seen: list[Any] = []
    with pytest.raises(StreamInterruptedError, match="message_stop"):
        async for e in adapter_for(MODEL, _serve(to_sse(events))).stream(_request()):
            seen.append(e)
    assert [e.text for e in seen if isinstance(e, TextDeltaEvent)] == ["partial"]
    assert not [e for e in seen if isinstance(e, ResponseCompletedEvent)]


async def test_in_stream_error_event_is_typed() -> None:
    err = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(StreamInterruptedError) as info:
        await _collect(_serve(to_sse([_start(), *_text(0, "a"), err]), 200, SSE, **{"request-id": "req_9"}))
    e = info.value
    assert (e.error_type, e.retryable, e.request_id, e.provider) == (
        "overloaded_error",
        True,
        "req_9",
        "anthropic",
    )


async def test_malformed_event_is_interrupted() -> None:
    body = to_sse([_start()]) + b"event: content_block_start\ndata: {not json\n\n"
    with pytest.raises(StreamInterruptedError, match="malformed"):
        await _collect(_serve(body))


async def test_connection_broken_mid_stream_is_not_retried() -> None:
    calls = 0

    class Broken(httpx2.AsyncByteStream):
        def __init__(self, request: httpx2.Request) -> None:
            self.request = request

        async def __aiter__(self) -> Any:
            yield to_sse([_start(), *_text(0, "half")])
            raise httpx2.ReadError("reset", request=self.request)

    def handler(request: httpx2.Request) -> httpx2.Response:
        nonlocal calls
        calls += 1
        return httpx2.Response(200, headers={"content-type": SSE}, stream=Broken(request))

    seen: list[Any] = []
    with pytest.raises(StreamInterruptedError, match="broke mid-stream") as info:
        async for e in adapter_for(MODEL, handler, max_retries=3).stream(_request()):
            seen.append(e)
    assert calls == 1 and any(isinstance(e, TextDeltaEvent) for e in seen)
    assert info.value.retryable  # a new call may succeed; the run decides, visibly


# ---------------------------------------------------------------- HTTP errors and retries


def _err(status: int, etype: str, **headers: str) -> Served:
    body = json.dumps({"type": "error", "error": {"type": etype, "message": f"{etype} happened"}})
    return Served(status, body.encode(), "application/json", headers)


def _ok() -> Served:
    return Served(200, to_sse([_start(), *_text(0, "fine"), *_end()]), SSE)


async def test_429_is_retried_honouring_retry_after_then_succeeds() -> None:
    replay = Replay([_err(429, "rate_limit_error", **{"retry-after-ms": "1"}), _ok()])
    out = await _collect(replay, max_retries=2)
    assert out[-1].response.text == "fine" and len(replay.requests) == 2
    assert replay.headers[1]["x-stainless-retry-count"] == "1"


async def test_retries_are_bounded() -> None:
    replay = Replay([_err(529, "overloaded_error", **{"retry-after-ms": "1"})] * 5)
    with pytest.raises(OverloadedError) as info:
        await _collect(replay, max_retries=2)
    assert len(replay.requests) == 3 and info.value.status == 529 and info.value.retryable


async def test_rate_limit_error_carries_retry_after() -> None:
    replay = Replay([_err(429, "rate_limit_error", **{"retry-after": "7", "request-id": "req_1"})])
    with pytest.raises(RateLimitError) as info:
        await _collect(replay)
    assert (info.value.retry_after, info.value.request_id, info.value.error_type) == (
        7.0,
        "req_1",
        "rate_limit_error",
    )


async def test_connection_refused_is_a_connection_error() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    with pytest.raises(ProviderConnectionError):
        await _collect(handler)  # type: ignore[arg-type]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "nonstream"])
@pytest.mark.parametrize(
    ("name", "status", "etype", "request_id"),
    [
        (
            "mirascope__anthropic_401_invalid_api_key.yaml",
            401,
            "authentication_error",
            "req_011CWdMEehrhsdujMyQ9pChP",
        ),
        (
            "mirascope__anthropic_404_model_not_found_stream.yaml",
            404,
            "not_found_error",
            "req_011CWbziqGSV3t3Ax2Wza1WH",
        ),
        (
            "pydantic-ai__anthropic_400_effort_unsupported.yaml",
            400,
            "invalid_request_error",
            "req_011Ca7jT9AHpgXgdv8igm4z9",
        ),
    ],
)
async def test_recorded_error_answers_are_typed(
    name: str, status: int, etype: str, request_id: str, stream: bool
) -> None:
    ex = load_cassette(fixtures_dir() / "errors" / name)[0]
    replay = Replay([served(ex)])
    with pytest.raises(ProviderAPIError) as info:
        await _collect(replay, stream=stream)
    e = info.value
    assert (e.status, e.error_type, e.request_id, e.provider) == (status, etype, request_id, "anthropic")
    assert e.message == ex.response_payload["error"]["message"]
    assert "sk-ant-test-not-a-key" not in str(e) and "sk-ant-test-not-a-key" not in repr(e)
    assert type(e) is ProviderAPIError


async def test_non_streaming_body_that_is_not_json_is_a_clear_error() -> None:
    with pytest.raises(StreamInterruptedError, match="not JSON"):
        await _collect(_serve(b"{cut", ctype="application/json"), stream=False)


async def test_cache_usage_by_ttl_is_normalized() -> None:
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 500,
        "cache_creation": {"ephemeral_5m_input_tokens": 200, "ephemeral_1h_input_tokens": 300},
        "output_tokens": 1,
    }
    events = [_start(usage), *_text(0, "x"), *_end(usage={"output_tokens": 391})]
    u = (await _collect(_serve(to_sse(events))))[-1].response.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens) == (
        1503,
        1000,
        500,
        300,
    )
    assert u.output_tokens == 391 and u.reasoning_tokens is None


async def test_non_streaming_error_envelope_with_status_200_is_typed() -> None:
    body = json.dumps(
        {"type": "error", "error": {"type": "api_error", "message": "odd"}, "request_id": "req_2"}
    )
    with pytest.raises(StreamInterruptedError) as info:
        await _collect(_serve(body.encode(), ctype="application/json"), stream=False)
    assert (info.value.error_type, info.value.request_id) == ("api_error", "req_2")


async def test_non_streaming_blocks_are_kept_as_received() -> None:
    msg: dict[str, Any] = {
        "id": "msg_9",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [
            {"type": "text", "text": "Let me think."},
            {"type": "thinking", "thinking": "hmm \u00e9", "signature": "S1", "extra_key": [1]},
            {"type": "redacted_thinking", "data": "R1"},
            {"type": "tool_use", "id": "toolu_9", "name": "f", "input": {"x": 1}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "output_tokens": 7},
    }
    out = await _collect(_serve(json.dumps(msg).encode(), ctype="application/json"), stream=False)
    resp = out[-1].response
    assert [json.loads(i.unseal(provider="anthropic", api="messages")) for i in resp.reasoning] == msg[
        "content"
    ][1:3]
    assert [(i.kind, i.index) for i in resp.items] == [("assistant_text", 0), ("tool_call", 3)]
    assert [e.text for e in out if isinstance(e, ReasoningDeltaEvent)] == ["hmm \u00e9"]
    assert resp.usage.reasoning_source == "unknown"


async def test_stream_cut_mid_event_is_an_interruption_not_a_malformed_event() -> None:
    body = to_sse([_start(), *_text(0, "half")]) + b'event: content_block_delta\ndata: {"type":"content_blo'
    with pytest.raises(StreamInterruptedError, match="message_stop") as info:
        await _collect(_serve(body))
    assert not info.value.retryable  # the server ended the answer; only broken connections are retryable


async def test_long_non_streaming_call_is_refused_before_sending() -> None:
    from agentlab.errors import InvalidSettingsError

    replay = Replay([])
    req = ModelRequest(
        model=MODEL, items=(UserItem(text="hi"),), stream=False, max_output_tokens=30000, reasoning=None
    )
    with pytest.raises(InvalidSettingsError, match="non-streaming"):
        [e async for e in adapter_for(MODEL, replay).stream(req)]
    assert replay.requests == []


async def test_tool_arguments_are_the_same_streamed_or_not() -> None:
    """The real API streams ``partial_json`` spaced as it likes; the JSON body has the object.

    Both become the same ``ToolCallItem.arguments`` (so a ``stream=False`` run records what the
    streamed run does).
    """
    tool = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    spaced = ['{"city": ', '"Paris", "n": [1, 2]}']
    events = [
        _start(),
        *_block(0, tool, *({"type": "input_json_delta", "partial_json": p} for p in spaced)),
        *_end("tool_use"),
    ]
    streamed = await _collect(_serve(to_sse(events)))
    message = {
        **_start()["message"],
        "content": [{**tool, "input": {"city": "Paris", "n": [1, 2]}}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 20},
    }
    whole = await _collect(_serve(json.dumps(message).encode(), ctype="application/json"), stream=False)
    (a,) = streamed[-1].response.tool_calls
    (b,) = whole[-1].response.tool_calls
    assert a.arguments == b.arguments == '{"city":"Paris","n":[1,2]}'
