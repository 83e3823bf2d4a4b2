"""AWS's binary event stream, cut into events for the shared driver (the ``framing`` of a ``WireCall``).

Why not botocore's ``EventStream``: it parses every event against the service model's shapes, which
costs several times the mapping itself (``bench/``'s ``bedrock`` section measures both); here each
message's CRCs are checked (``zlib.crc32``, in C) and its payload handed on as JSON bytes keyed by the
event type, ``{"contentBlockDelta": {...}}``, the form botocore's parsed events take too. An
exception message (``:message-type`` ``exception``, an error inside a 200 stream) becomes
``{"__exception__": {"type": <:exception-type>, ...payload}}``; an ``error`` message likewise, from its
``:error-code``/``:error-message`` headers. A frame whose CRC does not match raises
:class:`FramingError` (botocore raises ``ChecksumMismatch`` for the same bytes).
"""

from __future__ import annotations

import json
from struct import unpack_from
from zlib import crc32

__all__ = ["EventStreamFraming", "FramingError"]

_MAX_MESSAGE = 24 * 1024 * 1024 + 128 * 1024
_PLAIN = frozenset({":event-type", ":content-type", ":message-type"})
_PREFIXES: dict[bytes, bytes] = {}
"""An event's header block -> its ``{"<event type>":`` prefix. A stream repeats a handful of header
blocks (one per event type), so each is parsed once per process instead of once per event; only
blocks of plain events with the three standard headers are kept, at most ``_MAX_PREFIXES``."""
_MAX_PREFIXES = 64


class FramingError(Exception):
    """A message that is not valid event-stream framing (bad CRC or length): the stream is corrupt."""


def _headers(raw: bytes) -> dict[str, str]:
    out: dict[str, str] = {}
    i, n = 0, len(raw)
    while i < n:
        size = raw[i]
        name = raw[i + 1 : i + 1 + size].decode()
        i += 1 + size
        kind = raw[i]
        if kind != 7:  # only string headers carry what is read here; others are skipped by length
            width = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}.get(kind)
            if width is None:  # byte array (6): 2-byte length
                (length,) = unpack_from(">H", raw, i + 1)
                width = 2 + length
            i += 1 + width
            continue
        (length,) = unpack_from(">H", raw, i + 1)
        out[name] = raw[i + 3 : i + 3 + length].decode()
        i += 3 + length
    return out


class EventStreamFraming:
    """Feed body chunks; get one JSON ``bytes`` per complete message (see the module docstring)."""

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = b""

    def event_bytes(self, raw: bytes) -> bytes | None:
        """No fast case: every chunk goes through :meth:`chunk_bytes` (a binary frame is checked whole)."""
        return None

    def chunk_bytes(self, data: bytes) -> list[bytes]:
        buf = self._buf + data if self._buf else data
        out: list[bytes] = []
        pos, size = 0, len(buf)
        while size - pos >= 12:
            total, hlen, pcrc = unpack_from(">III", buf, pos)
            if total > _MAX_MESSAGE or total < 16 + hlen or crc32(buf[pos : pos + 8]) != pcrc:
                raise FramingError("event-stream prelude checksum or length mismatch")
            if size - pos < total:
                break
            end = pos + total
            (mcrc,) = unpack_from(">I", buf, end - 4)
            if crc32(buf[pos : end - 4]) != mcrc:
                raise FramingError("event-stream message checksum mismatch")
            out.append(self._event(buf[pos + 12 : pos + 12 + hlen], buf[pos + 12 + hlen : end - 4]))
            pos = end
        self._buf = buf[pos:]
        return out

    @staticmethod
    def _event(raw_headers: bytes, payload: bytes) -> bytes:
        prefix = _PREFIXES.get(raw_headers)
        if prefix is not None:
            return prefix + (payload or b"{}") + b"}"
        h = _headers(raw_headers)
        kind = h.get(":message-type", "event")
        if kind == "event":
            prefix = b'{"' + h.get(":event-type", "").encode() + b'":'
            if len(_PREFIXES) < _MAX_PREFIXES and h.keys() <= _PLAIN:
                _PREFIXES[raw_headers] = prefix
            return prefix + (payload or b"{}") + b"}"
        if kind == "exception":
            inner = json.loads(payload or b"{}")
            body = {**(inner if isinstance(inner, dict) else {}), "type": h.get(":exception-type", "")}
        else:
            body = {"type": h.get(":error-code", ""), "message": h.get(":error-message", "")}
        return json.dumps({"__exception__": body}).encode()

    def chunk(self, text: str) -> list[bytes]:
        return self.chunk_bytes(text.encode())

    def end_bytes(self) -> bytes | None:
        """A message cut short by the end of the body (the driver reports it as a cut stream)."""
        return self._buf or None

    def end(self) -> None:
        return None
