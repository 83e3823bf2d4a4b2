"""SSE framing, written once (``agentlab.assembly.sse``), against the WHATWG event-stream rules."""

from __future__ import annotations

from agentlab.assembly.sse import SSEDecoder


def _frame(text: str) -> tuple[list[str], list[str | None], str | None]:
    d = SSEDecoder()
    out: list[str] = []
    names: list[str | None] = []
    for line in text.split("\n"):
        data = d.line(line)
        if data is not None:
            out.append(data)
            names.append(d.event)
    return out, names, d.end()


def test_optional_space_multiline_comments_and_names() -> None:
    text = ": keep-alive\nevent: a\ndata: one\ndata:two\ndata:  three\n\ndata\n\nevent: b\n\ndata: x\n\n"
    out, names, rest = _frame(text)
    assert out == ["one\ntwo\n three", "", "x"]
    assert names == ["a", None, None]  # an event name without data dispatches nothing
    assert rest is None


def test_crlf_unknown_fields_and_a_last_event_without_its_blank_line() -> None:
    text = 'id: 7\r\nretry: 10\r\ndata: {"a": 1}\r\n\r\nfoo: bar\r\ndata: tail'
    out, _, rest = _frame(text)
    assert out == ['{"a": 1}'] and rest == "tail"


def test_a_colon_in_the_value_is_kept() -> None:
    out, _, _ = _frame('data: {"url": "http://x"}\n\n')
    assert out == ['{"url": "http://x"}']


def _chunked(text: str, size: int) -> tuple[list[str], str | None]:
    d = SSEDecoder()
    out: list[str] = []
    for i in range(0, len(text), size):
        out.extend(d.chunk(text[i : i + size]))
    return out, d.end()


def test_chunks_of_any_size_frame_as_lines_do() -> None:
    text = (
        ': c\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\ndata: {"u": "\u2028"}\n\n'
        "data: three\rdata: four\r\rdata: tail"
    )
    want = ["one\ntwo", '{"u": "\u2028"}', "three\nfour"]
    for size in (1, 2, 3, 7, 1000):
        assert _chunked(text, size) == (want, "tail"), size
