"""Claude's stream on Bedrock: AWS's binary event stream, cut into the Messages events it carries.

Why botocore's decoder: it is AWS's own (prelude and message CRCs, header parsing) and the one the
anthropic SDK's Bedrock client uses; a corrupted frame fails here exactly as it fails there
(``botocore.eventstream.ParserError``: ``ChecksumMismatch``, ``InvalidHeadersLength``...), and the
adapter turns that into a ``StreamInterruptedError``. botocore is imported on the first Bedrock
stream only.

Each ``chunk`` event's payload is ``{"bytes": base64(JSON of one Messages SSE event), "p": ...}``
(``p`` is Bedrock's random-length padding, ignored); the JSON inside goes to the Messages
assembler unchanged. An ``exception`` (or ``error``) message inside the 200 stream becomes the
Messages ``error`` event ``{"type": "error", "error": {"type": <AWS exception name>, "message"}}``, so
the assembler types it like Anthropic's own in-stream errors (``throttlingException`` and the other
transient names are retryable). What is left of a frame when the body ends is returned by
:meth:`EventStreamFraming.end_bytes`: not JSON, so the assembler reports a stream cut mid-event.
"""

from __future__ import annotations

import base64
import importlib
import json
from typing import Any

__all__ = ["EventStreamFraming", "stream_errors"]


def _eventstream() -> Any:
    """``botocore.eventstream``, imported on first use (botocore ships no type information)."""
    return importlib.import_module("botocore.eventstream")


def stream_errors() -> tuple[type[BaseException], ...]:
    """What decoding may raise on a corrupted stream (botocore's ``ParserError`` family)."""
    error: type[BaseException] = _eventstream().ParserError
    return (error,)


class EventStreamFraming:
    """The :class:`agentlab.assembly.assembler.Framing` of an ``application/vnd.amazon.eventstream`` body."""

    __slots__ = ("_buffer", "_pending")

    def __init__(self) -> None:
        self._buffer = _eventstream().EventStreamBuffer()
        self._pending = 0  # bytes of a frame received but not complete yet

    def event_bytes(self, raw: bytes) -> bytes | None:
        """No fast case: every chunk goes through :meth:`chunk_bytes` (a binary frame is checked whole)."""
        return None

    def chunk_bytes(self, raw: bytes) -> list[bytes]:
        """The Messages event JSON of every frame ``raw`` completes."""
        self._buffer.add_data(raw)
        self._pending += len(raw)
        out: list[bytes] = []
        for message in self._buffer:
            self._pending -= message.prelude.total_length
            data = _event(message.headers, message.payload)
            if data is not None:
                out.append(data)
        return out

    def chunk(self, text: str) -> list[str]:
        """A binary framing has no text form: the body is always read as bytes."""
        raise TypeError("an AWS event stream is read as bytes")

    def end_bytes(self) -> bytes | None:
        """A marker for a frame cut short (not JSON: the assembler reports a cut stream)."""
        return b"<cut event-stream frame>" if self._pending > 0 else None

    def end(self) -> str | None:
        """Never a text tail (see :meth:`chunk`)."""
        return None


def _event(headers: dict[str, Any], payload: bytes) -> bytes | None:
    """One frame's Messages event JSON; ``None`` for a frame that carries none (an unknown event)."""
    kind = headers.get(":message-type")
    if kind == "event":
        if headers.get(":event-type") != "chunk":
            return json.dumps({"type": str(headers.get(":event-type"))}).encode()
        return base64.b64decode(json.loads(payload)["bytes"])
    if kind == "exception":
        error_type = str(headers.get(":exception-type"))
        message = _message(payload)
    else:  # "error": the code and message are headers
        error_type = str(headers.get(":error-code"))
        message = str(headers.get(":error-message") or "")
    return json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()


def _message(payload: bytes) -> str:
    try:
        body = json.loads(payload)
    except ValueError:
        return ""
    return str(body.get("message") or body.get("Message") or "") if isinstance(body, dict) else ""
