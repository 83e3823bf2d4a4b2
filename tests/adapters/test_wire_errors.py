"""``agentlab.neutral.error_text``: what an error text about bad wire input may say.

Also the adapter paths that use it beyond streaming (non-streaming bodies, in-stream error envelopes, the
SDK-exception fallback).
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pydantic
import pytest

from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.adapters.anthropic_messages import _errors as a_errors
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.adapters.openai_responses import _errors as o_errors
from agentlab.adapters.openai_responses._stream import assemble_body
from agentlab.errors import AgentlabError, ProviderError, StreamInterruptedError
from agentlab.neutral.error_text import WireFieldError, durable_error_text, safe_name, wire_error_text
from agentlab.neutral.events import ReasoningDeltaEvent
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest
from tests.adapters.anthropic_messages.anthropic_support import Replay, Served, adapter_for
from tests.reliability.test_error_texts import assert_error_text_clean, chain

CANARY = "secret thought CANARY-91b2"


def test_validation_error_names_field_and_types_never_the_input() -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        ReasoningDeltaEvent(text={"t": CANARY}, block=[CANARY])  # type: ignore[arg-type]
    assert CANARY in str(info.value)  # pydantic's own text quotes the input: the reason for the helper
    text = wire_error_text(info.value)
    assert CANARY not in text
    assert "field text: string_type (got dict)" in text and "field block: string_type (got list)" in text


def test_json_error_gives_the_position_not_the_document() -> None:
    with pytest.raises(json.JSONDecodeError) as info:
        json.loads('{"thinking": "' + CANARY)
    text = wire_error_text(info.value)
    assert CANARY not in text and "invalid JSON (Unterminated string" in text and "char 13" in text


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (KeyError("partial_json"), "missing field partial_json"),
        (KeyError(CANARY), "missing field <string of 26 chars>"),
        (KeyError(7), "missing field <int>"),
        (TypeError(f"unsupported {CANARY}"), "wrong type or shape (TypeError)"),
        (
            ValueError(f"invalid literal for int() with base 10: {CANARY!r}"),
            "wrong type or shape (ValueError)",
        ),
        (
            WireFieldError("delta.signature", "string", [CANARY]),
            "field delta.signature: expected string, got list",
        ),
    ],
)
def test_other_exceptions_are_described_by_shape(exc: BaseException, expected: str) -> None:
    assert wire_error_text(exc) == expected


def test_unicode_errors_give_the_position() -> None:
    with pytest.raises(UnicodeDecodeError) as info:
        (CANARY.encode() + b"\xff").decode("utf-8")
    assert wire_error_text(info.value) == "cannot decode (utf-8) at position 26"


def test_safe_name_shows_protocol_names_only() -> None:
    assert safe_name("content_block_delta") == "content_block_delta"
    assert safe_name("response.output_text.delta") == "response.output_text.delta"
    assert safe_name(CANARY) == "<string of 26 chars>"
    assert safe_name({"x": CANARY}) == "<dict>" and safe_name(None) == "<null>"


def test_durable_text_keeps_agentlab_texts_and_drops_foreign_ones() -> None:
    own = StreamInterruptedError("malformed stream event (x)", provider="anthropic")
    assert durable_error_text(own) == str(own)
    foreign = RuntimeError(f"callback failed on {CANARY}")
    text = durable_error_text(foreign)
    assert CANARY not in text and text.startswith("RuntimeError")
    assert durable_error_text(KeyError("usage")) == "KeyError: missing field usage"


# ---------------------------------------------------------------- non-streaming bodies


def _a_request() -> ModelRequest:
    return ModelRequest(model="sim-thinker", items=(UserItem(text="hi"),), stream=False, cache=None)


def _a_body(content: list[Any]) -> bytes:
    msg = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "sim-thinker",
        "content": content,
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    return json.dumps(msg).encode()


async def _a_collect(body: bytes) -> BaseException:
    adapter: AnthropicMessagesAdapter = adapter_for(
        "sim-thinker", Replay([Served(200, body, "application/json")])
    )
    with pytest.raises(AgentlabError) as info:
        async for _ in adapter.stream(_a_request()):
            pass
    return info.value


@pytest.mark.parametrize(
    "body",
    [
        _a_body([{"type": "thinking", "thinking": {"t": CANARY}, "signature": "s"}]),
        _a_body([{"type": "text", "text": [CANARY]}]),
        _a_body([{"type": "tool_use", "id": {"x": CANARY}, "name": "f", "input": {}}]),
        _a_body([CANARY]),
        _a_body([{"type": "thinking", "thinking": CANARY, "signature": "s"}])[:-20],  # cut short
    ],
    ids=["thinking_dict", "text_list", "tool_id_dict", "block_is_string", "cut"],
)
async def test_anthropic_non_streaming_body_of_the_wrong_shape(body: bytes) -> None:
    err = await _a_collect(body)
    assert isinstance(err, StreamInterruptedError), type(err)
    assert_error_text_clean(err, CANARY)


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(
            {
                "id": "r",
                "status": "completed",
                "output": [{"type": "message", "content": [{"type": "output_text", "text": {"t": CANARY}}]}],
            }
        ),
        json.dumps(
            {
                "id": "r",
                "status": "completed",
                "output": [{"type": "reasoning", "summary": [{"text": [CANARY]}]}],
            }
        ),
        json.dumps({"id": "r", "status": [CANARY], "output": []}),
        json.dumps({"id": "r", "status": "failed", "error": [CANARY], "output": []}),
        json.dumps([CANARY]),
        '{"id": "r", "output": [{"type": "reasoning", "encrypted_content": "' + CANARY,
    ],
    ids=["text_dict", "summary_list", "status_list", "error_list", "not_object", "cut"],
)
def test_openai_non_streaming_body_of_the_wrong_shape(text: str) -> None:
    with pytest.raises(AgentlabError) as info:
        assemble_body(text, model="sim-reasoner", base_url=None, request_id="req_1")
    assert isinstance(info.value, StreamInterruptedError), type(info.value)
    assert_error_text_clean(info.value, CANARY)


async def test_openai_non_streaming_body_not_utf8_keeps_no_body_in_the_chain() -> None:
    body = (
        json.dumps({"id": "r", "output": [{"type": "reasoning", "encrypted_content": CANARY}]}).encode()
        + b"\xff"
    )
    client = openai.AsyncOpenAI(
        api_key="sk-test-not-a-key",
        http_client=httpx2.AsyncClient(
            transport=httpx2.MockTransport(
                lambda r: httpx2.Response(200, headers={"content-type": "application/json"}, content=body)
            )
        ),
    )
    adapter = OpenAIResponsesAdapter("sim-reasoner", client=client, max_retries=0)
    request = ModelRequest(model="sim-reasoner", items=(UserItem(text="hi"),), stream=False)
    with pytest.raises(StreamInterruptedError, match="not UTF-8") as info:
        async for _ in adapter.stream(request):
            pass
    assert_error_text_clean(info.value, CANARY)
    assert all(not isinstance(e, UnicodeError) for e in chain(info.value))


# ---------------------------------------------------------------- envelopes and fallbacks


def test_in_stream_error_envelopes_of_the_wrong_shape_stay_typed() -> None:
    err = o_errors.in_stream_error([CANARY], request_id="r", failed=True)  # type: ignore[arg-type]
    assert isinstance(err, StreamInterruptedError) and CANARY not in str(err)
    err = o_errors.in_stream_error(
        {"type": {"x": CANARY}, "code": 5, "message": None}, request_id="r", failed=False
    )
    assert err.error_type is None and err.code is None and CANARY not in str(err)
    err = a_errors.in_stream_error(
        {"type": "error", "error": {"type": [CANARY], "message": 7}}, request_id="r"
    )
    assert err.error_type is None and CANARY not in str(err)


def test_provider_messages_are_kept_with_keys_redacted() -> None:
    key = "sk-ant-api03-" + "A" * 40
    err = a_errors.in_stream_error(
        {"type": "error", "error": {"type": "api_error", "message": f"bad key {key}"}}, request_id=None
    )
    assert "bad key" in str(err) and key not in str(err)
    err = o_errors.in_stream_error(
        {"type": "server_error", "message": f"bad key sk-proj-{'B' * 40}"}, request_id=None, failed=True
    )
    assert "bad key" in str(err) and "B" * 40 not in str(err)


@pytest.mark.parametrize("translate", [a_errors.translate, o_errors.translate], ids=["anthropic", "openai"])
def test_translate_fallback_describes_foreign_exceptions_without_their_text(translate: Any) -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        ReasoningDeltaEvent(text={"t": CANARY}, block="0")  # type: ignore[arg-type]
    err = translate(info.value)
    assert isinstance(err, ProviderError) and "ValidationError" in str(err) and CANARY not in str(err)


# ---------------------------------------------------------------- Anthropic block order


def _a_events(*middle: dict[str, Any]) -> bytes:
    from tests.support.cassettes import to_sse

    start: dict[str, Any] = {
        "type": "message_start",
        "message": {"id": "msg_1", "usage": {"input_tokens": 1}},
    }
    end: list[dict[str, Any]] = [
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ]
    return to_sse([start, *middle, *end])


def _start(index: int, kind: str) -> dict[str, Any]:
    block: dict[str, Any] = (
        {"type": kind, "thinking": "", "signature": ""} if kind == "thinking" else {"type": kind, "text": ""}
    )
    return {"type": "content_block_start", "index": index, "content_block": block}


def _d(index: int, **delta: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


@pytest.mark.parametrize(
    ("events", "field"),
    [
        # reasoning into a text block would make it durable assistant text
        ((_start(0, "text"), _d(0, type="thinking_delta", thinking=CANARY)), "delta.thinking"),
        ((_start(0, "thinking"), _d(0, type="text_delta", text=CANARY)), "delta.text"),
        ((_start(0, "text"), _d(0, type="signature_delta", signature=CANARY)), "delta.signature"),
        ((_start(0, "thinking"), _stop(0), _d(0, type="thinking_delta", thinking=CANARY)), "delta.thinking"),
        ((_d(0, type="thinking_delta", thinking=CANARY),), "field index"),
        ((_start(0, "text"), _start(0, "thinking")), "field index"),
        (({"type": "content_block_start", "index": "0", "content_block": {"type": "text"}},), "field index"),
    ],
    ids=[
        "thinking_in_text",
        "text_in_thinking",
        "signature_in_text",
        "after_stop",
        "never_started",
        "started_twice",
        "index_str",
    ],
)
async def test_anthropic_deltas_out_of_order_are_malformed(
    events: tuple[dict[str, Any], ...], field: str
) -> None:
    adapter: AnthropicMessagesAdapter = adapter_for(
        "sim-thinker", Replay([Served(200, _a_events(*events), "text/event-stream")])
    )
    request = ModelRequest(model="sim-thinker", items=(UserItem(text="hi"),), cache=None)
    seen: list[Any] = []
    with pytest.raises(StreamInterruptedError, match="malformed stream event") as info:
        async for ev in adapter.stream(request):
            seen.append(ev)
    assert field in str(info.value)
    assert_error_text_clean(info.value, CANARY)
