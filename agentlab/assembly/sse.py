r"""Server-Sent Events framing, once for every adapter (the WHATWG ``text/event-stream`` rules).

Both providers stream SSE; each adapter used to frame lines itself, with different prefix tests.
The rules kept here: a line ``field:value`` (one optional space after the colon), ``data`` lines of
one event joined with ``\n``, a line starting with ``:`` is a comment, a blank line dispatches the
event (nothing is dispatched without a ``data`` line), a line without a colon is a field with an
empty value, unknown fields (``id``, ``retry``, others) are ignored, a trailing ``\r`` (CRLF) is
tolerated. The event name is kept (``event``) but agentlab's assemblers do not need it: each JSON
payload names its own ``type``.

It is a plain object fed the body's chunks rather than an async generator: one more generator level
per event would cost more than the framing itself. The adapters feed the raw ``bytes`` as they
arrive (:meth:`SSEDecoder.chunk_bytes`): the ``data`` comes out as ``bytes`` for the JSON decoder
(:mod:`agentlab.assembly.wire_json`), with no text decoding of the body and no ``str`` per line;
a chunk holding exactly one event (how servers flush, ``\n\n`` or ``\r\n\r\n``) is sliced
without splitting it into lines. Text chunks (``chunk``) and lines (``line``) are read the same
way, as their UTF-8 bytes (nothing in agentlab streams text: only tests and hand-fed assemblers).
"""

from __future__ import annotations

__all__ = ["SSEDecoder"]


class SSEDecoder:
    """Feed the body's chunks with :meth:`chunk_bytes`; it returns the data of each event they complete."""

    __slots__ = ("_bdata", "_btail", "_event", "_name", "_name_end", "_named")

    def __init__(self) -> None:
        self._btail = b""
        self._bdata: bytes | None = None
        self._event: str | None = None
        self._name: str | None = None
        # The last dispatched name, left in its chunk (``_named[7:_name_end]``) until it is asked for:
        # nothing in agentlab reads it per event, so the one-event fast path does not decode it.
        self._named: bytes | None = None
        self._name_end = 0

    @property
    def event(self) -> str | None:
        """The ``event:`` name of the last dispatched event (``None``: the default, ``message``)."""
        if self._named is not None:
            return self._named[7 : self._name_end].decode("utf-8", "replace")
        return self._name

    def _dispatched(self) -> None:
        """An event dispatched by a line: its name is the pending one, which does not carry over."""
        self._name, self._named, self._event = self._event, None, None

    def line(self, line: str) -> str | None:
        """One line (terminator removed); the joined ``data`` when this line (a blank one) ends an event."""
        if line[-1:] == "\r":
            line = line[:-1]
        out = self._byte_lines([_utf8(line)])
        return _text(out[0]) if out else None

    def chunk(self, text: str) -> list[str]:
        r""":meth:`chunk_bytes` for a piece of the body as text: the ``data`` of each event it completes."""
        return [_text(data) for data in self.chunk_bytes(_utf8(text))]

    def chunk_bytes(self, raw: bytes) -> list[bytes]:
        r"""A piece of the body as it arrived (any size): the ``data`` (``bytes``) of each event it completes.

        Lines end with ``\n`` or ``\r\n`` (or a lone ``\r``); a line cut between chunks waits for the
        next one. UTF-8 is never decoded here (SSE is UTF-8; the JSON decoder checks it), so a
        character cut between two chunks needs nothing: lines are only cut at ``\n`` and ``\r``.
        A chunk that is one whole event goes the fast way (:meth:`event_bytes`).
        """
        data = self.event_bytes(raw)
        if data is not None:
            return [data]
        return self._split_bytes(self._btail + raw if self._btail else raw)

    def event_bytes(self, raw: bytes) -> bytes | None:
        r"""The ``data`` of ``raw`` when it is exactly one whole event and nothing is pending, else ``None``.

        The hot path (one call per chunk, no list; the driver asks it first and gives
        :meth:`chunk_bytes` the rest): ``raw`` one event as servers flush it, ``data: X`` + ``\n\n``
        (Chat Completions), ``event: N`` + ``\n`` + ``data: X`` + ``\n\n`` (OpenAI Responses,
        Anthropic) or ``data: X`` + ``\r\n\r\n`` (Gemini). It is told by where the first line breaks
        are (``find`` is a memchr, no copy), so the one slice returned is the only bytes made;
        anything else (two data lines, a comment, a lone ``\r``, a cut event) is ``None``.
        """
        if self._btail or self._bdata is not None:
            return None
        if raw.endswith(b"\n\n"):
            stop = len(raw) - 2
            first = raw.find(b"\n")
            if raw.find(b"\r") < 0:
                if first == stop and raw.startswith(b"data: "):
                    self._name, self._named, self._event = self._event, None, None
                    return raw[6:stop]
                if (
                    raw.startswith(b"event: ")
                    and raw.startswith(b"data: ", first + 1)
                    and raw.find(b"\n", first + 1) == stop
                ):
                    self._named, self._name_end, self._event = raw, first, None
                    return raw[first + 7 : stop]
        elif raw.endswith(b"\r\n\r\n"):
            stop = len(raw) - 4
            if raw.startswith(b"data: ") and raw.find(b"\r") == stop and raw.find(b"\n") == stop + 1:
                self._name, self._named, self._event = self._event, None, None
                return raw[6:stop]
        return None

    def _split_bytes(self, buf: bytes) -> list[bytes]:
        """The general way: ``buf`` (the held tail + the new chunk) cut into lines, the last one held."""
        if b"\r" in buf:
            hold = buf[-1:] == b"\r"  # may be half of a CRLF: kept for the next chunk
            if hold:
                buf = buf[:-1]
            lines = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
            self._btail = lines.pop() + (b"\r" if hold else b"")
        else:
            lines = buf.split(b"\n")
            self._btail = lines.pop()
        return self._byte_lines(lines)

    def _byte_lines(self, lines: list[bytes]) -> list[bytes]:
        out: list[bytes] = []
        for line in lines:
            if line[:6] == b"data: ":
                value = line[6:]
                self._bdata = value if self._bdata is None else self._bdata + b"\n" + value
            elif not line:
                data = self._bdata
                if data is not None:
                    self._bdata = None
                    self._dispatched()
                    out.append(data)
                self._event = None  # a name without data dispatches nothing and does not carry over
            elif line[:1] != b":":  # not a comment: the general rule (``data:x``, ``data``, ``event``)
                name, _, value = line.partition(b":")
                if value[:1] == b" ":
                    value = value[1:]
                if name == b"data":
                    self._bdata = value if self._bdata is None else self._bdata + b"\n" + value
                elif name == b"event":
                    self._event = value.decode("utf-8", "replace")
        return out

    def end_bytes(self) -> bytes | None:
        """The data of a last event the stream did not close with a blank line (``None``: none)."""
        btail, self._btail = self._btail.rstrip(b"\r"), b""
        if btail:
            self._byte_lines([btail])
        bdata, self._bdata = self._bdata, None
        return bdata

    def end(self) -> str | None:
        """:meth:`end_bytes` for a body fed as text."""
        data = self.end_bytes()
        return None if data is None else _text(data)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # any str round-trips, a lone surrogate too


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")
