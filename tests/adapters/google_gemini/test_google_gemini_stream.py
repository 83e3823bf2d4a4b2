"""Gemini stream assembly (CRLF-framed SSE, usage, opaque items) and error translation."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from agentlab.adapters.google_gemini import GeminiAssembler
from agentlab.adapters.google_gemini._usage import usage_from_gemini
from agentlab.assembly.sse import SSEDecoder
from agentlab.errors import (
    OverloadedError,
    ProviderAPIError,
    ProviderServerError,
    RateLimitError,
    StreamInterruptedError,
)
from agentlab.neutral.events import DiagnosticEvent, ResponseCompletedEvent
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest
from tests.adapters.google_gemini.gemini_support import FAKE_KEY, SSE, Replay, Served, adapter_on, sse
from tests.support.cassettes import fixture_files, fixtures_dir, load_cassette

MODEL = "gemini-3-flash-preview"


def _stream(body: bytes, status: int = 200, ctype: str = SSE, stream: bool = True) -> list[Any]:
    adapter = adapter_on(Replay([Served(status, body, ctype)]), MODEL)
    request = ModelRequest(model=MODEL, items=(UserItem(text="q"),), stream=stream)

    async def go() -> list[Any]:
        return [e async for e in adapter.stream(request)]

    return asyncio.run(go())


def _chunk(parts: list[dict[str, Any]], finish: str | None = None, **usage: int) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand], "usageMetadata": usage, "responseId": "r1", "modelVersion": MODEL}


def test_crlf_framed_events_split_anywhere_decode_the_same() -> None:
    body = sse([_chunk([{"text": "a"}]), _chunk([{"text": "b"}], "STOP")]).decode()
    rng = random.Random(7)
    for _ in range(50):
        cuts = sorted(rng.sample(range(1, len(body)), 6))
        pieces = [body[i:j] for i, j in zip([0, *cuts], [*cuts, len(body)], strict=True)]
        dec = SSEDecoder()
        out = [d for p in pieces for d in dec.chunk(p)]
        assert dec.end() is None
        assert [json.loads(d)["candidates"][0]["content"]["parts"][0]["text"] for d in out] == ["a", "b"]


def test_usage_counts_thoughts_as_output_and_cached_content_as_cache_reads() -> None:
    u = usage_from_gemini(
        {"promptTokenCount": 100, "cachedContentTokenCount": 60, "candidatesTokenCount": 20,
         "thoughtsTokenCount": 30, "toolUsePromptTokenCount": 5, "totalTokenCount": 155}
    )  # fmt: skip
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens) == (105, 60, 0)
    assert (u.output_tokens, u.reasoning_tokens, u.reasoning_source) == (50, 30, "reported")
    assert u.total_tokens == 155  # the frame adds up as Gemini's own total does
    assert usage_from_gemini({}).input_tokens is None
    assert usage_from_gemini({}).reasoning_source == "unknown"
    none = usage_from_gemini({"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5})
    assert (none.output_tokens, none.reasoning_tokens) == (2, 0)  # zero counts omitted; the total proves it


def test_thought_summaries_are_display_only_with_their_block_index() -> None:
    body = sse(
        [
            _chunk([{"text": "plan ", "thought": True}]),
            _chunk([{"text": "more", "thought": True}]),
            _chunk(
                [{"text": "answer"}], "STOP", promptTokenCount=4, candidatesTokenCount=1, thoughtsTokenCount=9
            ),
        ]
    )
    events = _stream(body)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["ReasoningDeltaEvent", "ReasoningDeltaEvent", "TextDeltaEvent", "ResponseCompletedEvent"]
    assert [e.block for e in events[:2]] == ["0", "0"]
    resp = events[-1].response
    assert [i.kind for i in resp.items] == ["assistant_text"] and resp.items[0].index == 1
    assert resp.reasoning == () and resp.usage.reasoning_tokens == 9 and resp.usage.output_tokens == 10


def test_non_streaming_body_gives_the_same_response_as_the_stream() -> None:
    parts: list[dict[str, Any]] = [
        {"text": "plan", "thought": True},
        {"functionCall": {"name": "f", "args": {"x": 1}, "id": "i1"}, "thoughtSignature": "U0k="},
    ]
    whole = json.dumps(_chunk(parts, "STOP", promptTokenCount=3, candidatesTokenCount=2)).encode()
    streamed = sse([_chunk(parts[:1]), _chunk(parts[1:], "STOP", promptTokenCount=3, candidatesTokenCount=2)])
    a = _stream(whole, ctype="application/json", stream=False)[-1].response
    b = _stream(streamed)[-1].response
    assert a.items == b.items and a.reasoning == b.reasoning and a.usage == b.usage
    assert a.stop_reason == b.stop_reason == "tool_use"
    (sig,) = a.reasoning
    assert sig.unseal(provider="google", api="generate_content") == b'"U0k="'
    assert "U0k" not in repr(sig) and "U0k" not in repr(a)


def test_a_stream_without_finish_reason_is_interrupted() -> None:
    with pytest.raises(StreamInterruptedError, match="finishReason"):
        _stream(sse([_chunk([{"text": "a"}])]))


def test_an_error_chunk_inside_a_200_stream_is_typed() -> None:
    err = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    with pytest.raises(StreamInterruptedError, match="overloaded") as info:
        _stream(sse([_chunk([{"text": "a"}]), err]))
    assert info.value.error_type == "UNAVAILABLE" and info.value.retryable


def test_a_malformed_chunk_is_interrupted_without_quoting_it() -> None:
    with pytest.raises(StreamInterruptedError) as info:
        _stream(b'data: {"candidates": [{"content": {"parts": [{"text": 5}]}}]}\r\n\r\n')
    assert "5" not in str(info.value).replace("Gemini", "")
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_unknown_part_kinds_are_ignored_once_with_a_diagnostic() -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}
    events = _stream(sse([_chunk([code]), _chunk([code]), _chunk([{"text": "x"}], "STOP")]))
    notes = [e for e in events if isinstance(e, DiagnosticEvent)]
    assert [(n.code, n.data["type"]) for n in notes] == [("unsupported_content", "executable_code")]
    assert isinstance(events[-1], ResponseCompletedEvent)


def test_assembler_repr_shows_no_content() -> None:
    asm = GeminiAssembler(model=MODEL, base_url=None)
    asm.feed(json.dumps(_chunk([{"text": "secret answer", "thoughtSignature": "U0VDUkVU"}])))
    assert "secret" not in repr(asm) and "U0VDUkVU" not in repr(asm)


# ---------------------------------------------------------------------- errors


def _error(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> ProviderAPIError:
    served = Served(status, json.dumps(body).encode(), "application/json", headers or {})
    adapter = adapter_on(Replay([served]), MODEL)
    request = ModelRequest(model=MODEL, items=(UserItem(text="q"),))

    async def go() -> None:
        async for _ in adapter.stream(request):
            pass

    with pytest.raises(ProviderAPIError) as info:
        asyncio.run(go())
    exc = info.value
    assert exc.__cause__ is None and exc.__context__ is None, "the SDK exception must not be chained"
    assert FAKE_KEY not in str(exc) and FAKE_KEY not in repr(exc)
    return exc


def test_429_resource_exhausted_with_retry_info_is_a_rate_limit_with_retry_after() -> None:
    body = {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "31s"},
            ],
        }
    }
    exc = _error(429, body)
    assert isinstance(exc, RateLimitError)
    assert (exc.status, exc.error_type, exc.retry_after) == (429, "RESOURCE_EXHAUSTED", 31.0)


@pytest.mark.parametrize(
    ("status", "name", "cls"),
    [
        (500, "INTERNAL", ProviderServerError),
        (503, "UNAVAILABLE", OverloadedError),
        (504, "DEADLINE_EXCEEDED", ProviderServerError),
    ],
)
def test_server_errors_follow_the_shared_ladder(status: int, name: str, cls: type) -> None:
    exc = _error(status, {"error": {"code": status, "message": "try again", "status": name}})
    assert type(exc) is cls and exc.error_type == name and exc.retryable


def test_invalid_argument_names_the_field() -> None:
    body = {
        "error": {
            "code": 400,
            "message": "Invalid value at 'generation_config.temperature' (TYPE_FLOAT), \"hot\"",
            "status": "INVALID_ARGUMENT",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [
                        {"field": "generation_config.temperature", "description": "Invalid value"}
                    ],
                }
            ],
        }
    }
    exc = _error(400, body)
    assert type(exc) is ProviderAPIError
    assert (exc.error_type, exc.code) == ("INVALID_ARGUMENT", "generation_config.temperature")


def _issue_body(name: str) -> dict[str, Any]:
    path = Path(fixtures_dir()) / "errors" / name
    if not path.exists():
        pytest.skip(f"../shared/fixtures/errors/{name} is absent")
    body: dict[str, Any] = json.loads(path.read_text())
    return body


def test_the_recorded_missing_thought_signature_400_is_an_api_error_with_the_api_text() -> None:
    body = _issue_body("issue__gemini_400_missing_thought_signature.json")
    exc = _error(400, body)
    assert type(exc) is ProviderAPIError and exc.error_type == "INVALID_ARGUMENT"
    assert "missing a thought_signature" in str(exc)


def test_the_quoted_signature_not_valid_400_is_an_api_error() -> None:
    outer = _issue_body("issue__openrouter_400_gemini_thought_signature_not_valid.json")
    inner = json.loads(outer["error"]["metadata"]["raw"])  # the Gemini body OpenRouter passed through
    exc = _error(400, inner)
    assert type(exc) is ProviderAPIError and "Thought signature is not valid" in str(exc)


def test_recorded_gemini_bodies_are_all_covered() -> None:
    if not fixture_files("gemini"):
        pytest.skip("../shared/fixtures/gemini is absent")
    for path in fixture_files("gemini"):
        for ex in load_cassette(path):
            assert ex.status == 200
