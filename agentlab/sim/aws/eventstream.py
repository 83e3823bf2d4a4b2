"""AWS's binary event-stream framing (``application/vnd.amazon.eventstream``), encoder side.

Why a hand-written encoder: botocore ships only the decoder (``botocore.eventstream``), and the
simulator must not depend on botocore anyway (it is a leaf that outside clients use). The format
is small and fixed, so the encoder is too; tests check it against botocore's own
``EventStreamBuffer`` and check that a corrupted frame fails there the way it does on real traffic.

One message (all integers big-endian)::

    [total length: uint32][headers length: uint32][prelude CRC32: uint32]
    [headers: name length uint8, name utf-8, value type uint8 (7 = string),
              value length uint16, value utf-8 ...]
    [payload]
    [message CRC32: uint32, over everything before it, prelude CRC included]

Headers are written in a fixed order (``:event-type`` or ``:exception-type``, ``:content-type``,
``:message-type``), as AWS services send them; only the string type is needed for these headers.
The API is deliberately tiny (two functions) so that other simulated AWS protocols can reuse it.
"""

from __future__ import annotations

import struct
from binascii import crc32

__all__ = ["encode_event", "encode_exception", "encode_message"]

_STRING = 7
_PRELUDE = 12
_CRC = 4


def _header(name: str, value: str) -> bytes:
    raw_name = name.encode("utf-8")
    raw_value = value.encode("utf-8")
    return (
        struct.pack(">B", len(raw_name)) + raw_name + struct.pack(">BH", _STRING, len(raw_value)) + raw_value
    )


def encode_message(headers: list[tuple[str, str]], payload: bytes) -> bytes:
    """One framed message with string ``headers`` (in the order given) and ``payload``."""
    raw_headers = b"".join(_header(name, value) for name, value in headers)
    total = _PRELUDE + len(raw_headers) + len(payload) + _CRC
    prelude = struct.pack(">II", total, len(raw_headers))
    prelude += struct.pack(">I", crc32(prelude) & 0xFFFFFFFF)
    body = prelude + raw_headers + payload
    return body + struct.pack(">I", crc32(body) & 0xFFFFFFFF)


def encode_event(
    event_type: str,
    payload: bytes,
    *,
    message_type: str = "event",
    content_type: str = "application/json",
) -> bytes:
    """An event message (``:event-type`` ``event_type``), e.g. ``contentBlockDelta``."""
    headers = [
        (":event-type", event_type),
        (":content-type", content_type),
        (":message-type", message_type),
    ]
    return encode_message(headers, payload)


def encode_exception(exception_type: str, payload: bytes, *, content_type: str = "application/json") -> bytes:
    """A modeled error inside a 200 stream (``:message-type`` ``exception``).

    botocore raises it as ``EventStreamError`` with ``exception_type`` as the error code and the
    payload's ``message`` as the text, after the events sent before it were delivered.
    """
    headers = [
        (":exception-type", exception_type),
        (":content-type", content_type),
        (":message-type", "exception"),
    ]
    return encode_message(headers, payload)
