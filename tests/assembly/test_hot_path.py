"""Keep what the streaming hot path won (issue 34): structure, never time.

Per streamed event the adapters' path is: the body's ``bytes`` as the transport hands them over
(``agentlab.assembly.http_body.body_chunks``, guarded in ``test_http_body.py``), framed by
``SSEDecoder.event_bytes`` (a one-event chunk sliced once, never split into lines, no list, its
event name not decoded), one msgspec decode (:mod:`agentlab.assembly.wire_json`) called by the
parser itself, one parser level, and a delta event built without pydantic's validation. These
tests fail when one of them is lost (a text framing path, a per-event name decode or line split,
the stdlib decoder, a validated event per delta) or when the path starts allocating more, or
making more Python calls, per event than the budgets below.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tracemalloc
from array import array
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import pytest
from pydantic import BaseModel

import agentlab.adapters.anthropic_messages._stream as anthropic_stream
import agentlab.adapters.google_gemini._stream as gemini_stream
import agentlab.adapters.openai_chat._stream as chat_stream
import agentlab.adapters.openai_responses._stream as responses_stream
import agentlab.assembly.wire_json as wire_json
from agentlab.adapters.anthropic_messages._stream import MessageAssembler
from agentlab.adapters.google_gemini._stream import GeminiAssembler
from agentlab.adapters.openai_chat._deepseek import DEEPSEEK
from agentlab.adapters.openai_chat._stream import ChatAssembler
from agentlab.adapters.openai_responses._stream import ResponseAssembler
from agentlab.assembly.assembler import Assembler, _built
from agentlab.assembly.sse import SSEDecoder
from agentlab.neutral.events import (
    Event,
    EventOrigin,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
)
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest
from tests.adapters.contract import CASES, AdapterCase, collect

# The parsers that call the fast decoder themselves (one Python level less per event than
# ``wire_json.loads``): every SSE protocol's.
DIRECT_DECODERS = (anthropic_stream, chat_stream, gemini_stream, responses_stream)

# Peak bytes allocated while framing, decoding and mapping one streamed delta (median over a stream),
# above what was allocated before it. Measured (CPython 3.11): 553 Anthropic, 559 Gemini, 824 OpenAI;
# with the stdlib decoder and a validated event per delta: 1,999 / 2,799 / 2,395.
PEAK_BYTES_PER_EVENT = 1_200
# Blocks still allocated per delta once its event is dropped: the text piece the assembler keeps
# (measured 1.03-1.06; OpenAI keeps none for a summary delta).
KEPT_BLOCKS_PER_EVENT = 1.5


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> AdapterCase:
    return CASES[request.param]


class _Counts:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.fast = self.stdlib = self.validated = 0
        fast, stdlib, init = wire_json.FAST, wire_json._stdlib, BaseModel.__init__

        def counted_fast(data: bytes) -> Any:
            self.fast += 1
            return fast(data)

        def counted_stdlib(data: bytes | str) -> Any:
            self.stdlib += 1
            return stdlib(data)

        def counted_init(model: BaseModel, /, **kw: Any) -> None:
            self.validated += 1
            init(model, **kw)

        def no_text(self: SSEDecoder, text: str) -> list[str]:
            raise AssertionError("an adapter fed decoded text to the SSE framer, not the body's bytes")

        monkeypatch.setattr(wire_json, "FAST", counted_fast)
        for module in DIRECT_DECODERS:
            monkeypatch.setattr(module, "_fast", counted_fast)
        monkeypatch.setattr(wire_json, "_stdlib", counted_stdlib)
        monkeypatch.setattr(BaseModel, "__init__", counted_init)
        monkeypatch.setattr(SSEDecoder, "chunk", no_text)


def test_the_fast_decoder_is_msgspecs_untyped_json_decoder() -> None:
    fast: Any = wire_json.FAST
    decoder = fast.__self__
    assert type(decoder) is msgspec.json.Decoder and decoder.type is Any and decoder.strict
    assert fast.__name__ == "decode"
    for module in DIRECT_DECODERS:
        assert module._fast is wire_json.FAST, module.__name__


def test_every_adapter_streams_bytes_through_the_fast_decoder_without_validating_deltas(
    case: AdapterCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter, _ = case.adapter()
    request = ModelRequest(model=case.model, items=(UserItem(text="Tell me about the weather in Paris"),))
    counts = _Counts(monkeypatch)
    events = asyncio.run(collect(adapter, request))
    deltas = sum(isinstance(e, ReasoningDeltaEvent | TextDeltaEvent) for e in events)
    assert deltas >= 2
    assert counts.fast >= deltas  # one fast decode per streamed event
    assert counts.stdlib == 0  # the stdlib only for what the fast decoder refuses
    # Validated models per call: the response and its parts, never one per delta.
    assert counts.validated <= 10, (counts.validated, deltas)
    asyncio.run(adapter.aclose())


@pytest.mark.parametrize(
    "doc",
    [
        b'{"a":1,"a":2}',
        b'"\\ud800"',  # a lone surrogate escape: msgspec refuses it, the stdlib reads it
        b"[NaN, Infinity, -Infinity, 1e400]",
        b"1e400",  # out of a double's range: msgspec refuses it, the stdlib reads inf
        b"123456789012345678901234567890",
        b"-123456789012345678901234567890",
        b"18446744073709551616",
        b"2.5e-324",
        b'\xef\xbb\xbf{"bom":1}',  # a byte order mark: the stdlib skips it
        b'"\\u0000 \\ud83d\\ude00 \\\\ \\/"',
        b" \t\n\r[1, 2.0, true, false, null] ",
        '{"t":"caf\u00e9 \u2014 \U0001f600"}'.encode(),
        b'{"n":-0.0,"f":1.5,"e":[],"o":{}}',
    ],
)
def test_the_decoder_gives_what_json_loads_gives(doc: bytes) -> None:
    assert repr(wire_json.loads(doc)) == repr(json.loads(doc))


@pytest.mark.parametrize("doc", [b"", b"{", b'{"a":1} x', b"\xff", b'{"a":}'])
def test_malformed_json_raises_the_stdlib_error(doc: bytes) -> None:
    with pytest.raises(ValueError) as fast:
        wire_json.loads(doc)
    with pytest.raises(ValueError) as std:
        json.loads(doc)
    assert type(fast.value) is type(std.value) and str(fast.value) == str(std.value)


@pytest.mark.parametrize("origin", [None, EventOrigin(run_id="r1", step=3)])
def test_unvalidated_delta_events_equal_validated_ones(origin: EventOrigin | None) -> None:
    asm = GeminiAssembler(model="m", base_url=None, origin=origin)
    ids: dict[str, Any] = {} if origin is None else {"run_id": origin.run_id, "step": origin.step}
    # The tool delta names run_id and step whatever they are, as its validated construction did.
    rid, step = (None, None) if origin is None else (origin.run_id, origin.step)
    tool = ToolCallDeltaEvent(call_id="c1", name="get_weather", arguments_delta='{"ci', run_id=rid, step=step)
    built_events: list[Event] = [asm.reasoning("thinking", "2"), asm.text("answer")]
    built_events.append(asm.tool_delta("c1", "get_weather", '{"ci'))
    validated_events: list[Event] = [
        ReasoningDeltaEvent(text="thinking", block="2", **ids), TextDeltaEvent(text="answer", **ids), tool,
    ]  # fmt: skip
    for built, validated in zip(built_events, validated_events, strict=True):
        assert type(built) is type(validated) and built == validated
        assert list(built.__dict__.items()) == list(validated.__dict__.items())
        assert list(built.__dict__) == list(type(built).model_fields)  # a new field cannot be skipped
        assert built.model_fields_set == validated.model_fields_set
        assert built.__pydantic_extra__ is None and built.__pydantic_private__ is None
        assert built.model_dump_json() == validated.model_dump_json() and repr(built) == repr(validated)
        copy = built.model_copy(update={"step": 9})  # the fields set is the event's own, not shared
        assert copy.step == 9 and built.model_fields_set == validated.model_fields_set


def test_delta_events_built_from_the_calls_templates_share_nothing() -> None:
    """Each delta gets its own ``__dict__`` and fields set, copied from the call's templates."""
    asm = GeminiAssembler(model="m", base_url=None, origin=EventOrigin(run_id="r1", step=1))
    for make in (lambda t: asm.reasoning(t, "0"), asm.text):
        one, two = make("a"), make("b")
        assert (one.text, two.text) == ("a", "b")
        assert one.__dict__ is not two.__dict__
        assert one.model_fields_set is not two.model_fields_set
        assert one.model_fields_set == two.model_fields_set
    assert asm.reasoning("c", "0").text == "c" and asm.text("d").text == "d"


def test_a_value_of_the_wrong_type_still_goes_through_validation() -> None:
    asm = GeminiAssembler(model="m", base_url=None)
    with pytest.raises(ValueError):
        asm.text(7)  # type: ignore[arg-type]
    assert _built(TextDeltaEvent, {"run_id": None, "step": None, "kind": "text_delta", "text": "x"}, {"text"})


# ---------------------------------------------------------------------- allocations per event


def _gemini(n: int) -> Iterator[bytes]:
    for i in range(n):
        part = {"text": f" word{i}", "thought": True} if i < n // 2 else {"text": f" word{i}"}
        chunk = {
            "candidates": [{"content": {"parts": [part], "role": "model"}, "index": 0}],
            "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": i, "totalTokenCount": 9 + i},
            "modelVersion": "gemini-2.5-pro",
            "responseId": "resp-1",
        }
        yield b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"


def _anthropic(n: int) -> Iterator[bytes]:
    start = {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}
    yield b"event: content_block_start\ndata: " + json.dumps(start).encode() + b"\n\n"
    for i in range(n):
        delta = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": f" w{i}"},
        }
        yield b"event: content_block_delta\ndata: " + json.dumps(delta).encode() + b"\n\n"


def _openai(n: int) -> Iterator[bytes]:
    for i in range(n):
        ev = {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_1",
            "output_index": 0,
            "summary_index": 0,
            "delta": f" w{i}",
            "sequence_number": i,
        }
        yield b"data: " + json.dumps(ev).encode() + b"\n\n"


def _chat(n: int) -> Iterator[bytes]:
    for i in range(n):
        delta = {"content": None, "reasoning_content": f" w{i}"} if i < n // 2 else {"content": f" w{i}"}
        chunk = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "deepseek-chat",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        }
        yield b"data: " + json.dumps(chunk).encode() + b"\n\n"


STREAMS: dict[str, tuple[Callable[[int], Iterator[bytes]], Callable[[], Assembler]]] = {
    "gemini": (_gemini, lambda: GeminiAssembler(model="m", base_url=None)),
    "chat": (_chat, lambda: ChatAssembler(dialect=DEEPSEEK, model="m", base_url=None)),
    "anthropic": (_anthropic, lambda: MessageAssembler(model="m", base_url=None)),
    "openai": (_openai, lambda: ResponseAssembler(model="m", base_url=None)),
}


@pytest.mark.parametrize("protocol", sorted(STREAMS))
def test_allocations_per_event_stay_within_budget(protocol: str) -> None:
    make_chunks, make_asm = STREAMS[protocol]
    chunks = list(make_chunks(400))
    asm, frame = make_asm(), SSEDecoder()
    for raw in chunks[:50]:  # warm up: first-use caches, the first part of each kind
        for data in frame.chunk_bytes(raw):
            asm.feed(data)
    peaks = array("q", bytes(8 * (len(chunks) - 50)))  # no int object per measure
    tracemalloc.start()
    try:
        kept_before = tracemalloc.take_snapshot()
        for i, raw in enumerate(chunks[50:]):
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            for data in frame.chunk_bytes(raw):
                ev = asm.feed(data)
                assert ev is not None
            peaks[i] = tracemalloc.get_traced_memory()[1] - before
        del ev
        kept_after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    kept = sum(s.count_diff for s in kept_after.compare_to(kept_before, "filename"))
    assert statistics.median(peaks) <= PEAK_BYTES_PER_EVENT, statistics.median(peaks)
    assert kept / len(peaks) <= KEPT_BLOCKS_PER_EVENT, kept / len(peaks)


ONE_EVENT_CHUNKS = {
    "event + data, LF (OpenAI Responses, Anthropic)": b'event: content_block_delta\ndata: {"d":" w%d"}\n\n',
    "data, CRLF (Gemini)": b'data: {"d":" w%d"}\r\n\r\n',
    "data, LF (Chat Completions)": b'data: {"d":" w%d"}\n\n',
}


@pytest.mark.parametrize("form", sorted(ONE_EVENT_CHUNKS))
def test_a_one_event_chunk_is_framed_without_allocating_beyond_its_data(form: str) -> None:
    """The chunk is sliced once: no line split, no tail slices, no event name decoded per event.

    The name stays in its chunk until ``SSEDecoder.event`` is read (nothing on the hot path reads it).
    """
    chunks = [ONE_EVENT_CHUNKS[form] % i for i in range(300)]
    frame = SSEDecoder()
    for raw in chunks[:20]:
        frame.chunk_bytes(raw)
    extra = array("q", bytes(8 * (len(chunks) - 20)))
    tracemalloc.start()
    try:
        for i, raw in enumerate(chunks[20:]):
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            out = frame.chunk_bytes(raw)
            extra[i] = tracemalloc.get_traced_memory()[1] - before - sys.getsizeof(out[0])
            assert out == [raw[raw.index(b"data: ") + 6 :].rstrip()]
            del out
    finally:
        tracemalloc.stop()
    # The returned list (its items array) is all that may come on top of the data slice.
    assert statistics.median(extra) <= 64, statistics.median(extra)
    assert frame.event == ("content_block_delta" if form.startswith("event") else None)


# Python calls (frames) per streamed delta, from the chunk's bytes to its event, as the driver makes
# them: the framer (``event_bytes``), ``feed`` (which calls the decoder itself), the parser's levels,
# the event's builder. Each level is a fixed cost per event (issue 34). Measured: Gemini 4 (feed maps
# a streamed piece inline; 8 when it went feed -> _chunk_events -> _apply -> _part -> _piece), Chat 5
# (feed, _choice, _delta; 6 through wire_json.loads, 8 through _decoded and _reasoning), Anthropic 4
# (feed, _delta applying the piece; 6 through wire_json.loads and _piece), OpenAI Responses 3 (feed
# maps the two hot deltas itself; 5 through wire_json.loads and _dispatch).
CALLS_PER_EVENT = {"gemini": 4, "chat": 5, "anthropic": 4, "openai": 3}


@pytest.mark.parametrize("protocol", sorted(STREAMS))
def test_python_calls_per_event_stay_within_budget(protocol: str) -> None:
    make_chunks, make_asm = STREAMS[protocol]
    chunks = list(make_chunks(80))
    asm, frame = make_asm(), SSEDecoder()
    for raw in chunks[:20]:
        for data in frame.chunk_bytes(raw):
            asm.feed(data)
    calls = array("q", bytes(8 * (len(chunks) - 20)))
    i = 0

    def count(_frame: Any, event: str, _arg: Any) -> None:
        if event == "call":
            calls[i] += 1

    for i, raw in enumerate(chunks[20:]):  # noqa: B007 - ``count`` reads the index
        sys.setprofile(count)
        try:
            one = frame.event_bytes(raw)
            ev = None if one is None else asm.feed(one)
        finally:
            sys.setprofile(None)
        assert one is not None and ev is not None
    # The median: a delta opening a part or a block makes it (one per block, not per delta).
    assert statistics.median(calls) <= CALLS_PER_EVENT[protocol], sorted(calls)


@pytest.mark.parametrize("protocol", sorted(STREAMS))
def test_a_parser_calling_the_decoder_itself_reads_text_and_what_it_refuses_as_before(protocol: str) -> None:
    """``feed`` calls the fast decoder directly; text, ``[DONE]`` and a lone surrogate read as before."""
    make_chunks, make_asm = STREAMS[protocol]
    datas = [d for raw in make_chunks(6) for d in SSEDecoder().chunk_bytes(raw)]
    last = " word5" if protocol == "gemini" else " w5"
    # A lone surrogate escape: msgspec refuses it, the stdlib reads it (as the text "\ud800").
    datas.append(datas[-1].replace(f'{last}"'.encode(), b' \\ud800"'))
    as_bytes, as_text = make_asm(), make_asm()
    got_bytes = [as_bytes.feed(d) for d in datas]
    got_text = [as_text.feed(d.decode()) for d in datas]
    assert got_bytes == got_text
    assert [getattr(e, "text", None) for e in got_bytes][-2:] == [last, " \ud800"]
    if isinstance(as_bytes, ChatAssembler) and isinstance(as_text, ChatAssembler):
        assert as_bytes.feed(b"[DONE]") is None and as_text.feed("[DONE]") is None
        assert as_bytes.done and as_text.done
