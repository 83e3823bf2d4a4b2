"""SSE framing on the body's bytes (``SSEDecoder.chunk_bytes``) gives what framing its text gives."""

from __future__ import annotations

import pytest

from agentlab.assembly.sse import SSEDecoder

BODIES = [
    ': c\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\ndata: {"u": "\u2028 \u00e9 \U0001f600"}\n\n'
    "data: three\rdata: four\r\rdata: tail",
    'id: 7\r\nretry: 10\r\ndata: {"a": 1}\r\n\r\nfoo: bar\r\ndata: tail',
    ": keep-alive\nevent: a\ndata: one\ndata:two\ndata:  three\n\ndata\n\nevent: b\n\ndata: x\n\n",
    "data: {}\r\n\r\ndata: {}\r\n\r\nevent: e\ndata: {}\n\nevent: f\r\ndata: {}\n\ndata: a\r\n\n",
    "event: e\ndata: x\rdata: y\n\ndata: \n\ndata:\n\ndata: last\n\n",
]


def _text(body: str, size: int) -> tuple[list[str], str | None]:
    d = SSEDecoder()
    out: list[str] = []
    for i in range(0, len(body), size):
        out.extend(d.chunk(body[i : i + size]))
    return out, d.end()


def _bytes(body: bytes, size: int) -> tuple[list[str], str | None]:
    d = SSEDecoder()
    out: list[str] = []
    for i in range(0, len(body), size):
        out.extend(data.decode() for data in d.chunk_bytes(body[i : i + size]))
    last = d.end_bytes()
    return out, None if last is None else last.decode()


@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 13, 10_000])
def test_bytes_frame_as_text_does(body: str, size: int) -> None:
    want = _text(body, 10_000)
    assert _bytes(body.encode(), size) == want
    assert _text(body, size) == want


def test_one_event_per_chunk_as_servers_flush() -> None:
    d = SSEDecoder()
    assert d.chunk_bytes(b'data: {"a":1}\r\n\r\n') == [b'{"a":1}']
    assert d.chunk_bytes(b"event: x\ndata: 2\n\n") == [b"2"] and d.event == "x"
    assert d.chunk_bytes(b"data: 3\n\n") == [b"3"] and d.event is None
    assert d.chunk_bytes(b"data: a\ndata: b\n\n") == [b"a\nb"]  # two data lines: joined, not sliced
    assert d.chunk_bytes(b"data: half") == [] and d.chunk_bytes(b"\n\n") == [b"half"]
    assert d.end_bytes() is None
