"""The event-stream encoder against botocore's own decoder: what it writes, botocore reads back."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentlab.sim.aws.eventstream import encode_event, encode_exception

eventstream = pytest.importorskip("botocore.eventstream")


def _decode(data: bytes, chunk: int | None = None) -> list[Any]:
    buffer = eventstream.EventStreamBuffer()
    step = chunk or len(data)
    messages = []
    for start in range(0, len(data), step):
        buffer.add_data(data[start : start + step])
        messages.extend(buffer)
    return messages


def test_event_decodes_with_botocore_headers_and_payload() -> None:
    payload = json.dumps({"contentBlockIndex": 0, "delta": {"text": "hé"}, "p": "abc"}).encode()
    frame = encode_event("contentBlockDelta", payload)
    (message,) = _decode(frame)
    assert message.headers == {
        ":event-type": "contentBlockDelta",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    assert message.payload == payload
    assert message.to_response_dict()["status_code"] == 200


def test_frames_split_across_chunks_decode_in_order() -> None:
    frames = b"".join(encode_event(f"e{i}", b'{"i":%d}' % i) for i in range(5))
    messages = _decode(frames, chunk=7)
    assert [m.headers[":event-type"] for m in messages] == [f"e{i}" for i in range(5)]


def test_exception_frame_is_an_error_for_botocore() -> None:
    frame = encode_exception("modelStreamErrorException", b'{"message":"boom"}')
    (message,) = _decode(frame)
    assert message.headers[":message-type"] == "exception"
    assert message.headers[":exception-type"] == "modelStreamErrorException"
    assert message.to_response_dict()["status_code"] == 400


@pytest.mark.parametrize("where", ["prelude", "payload"])
def test_corrupted_frame_fails_like_botocore_on_real_traffic(where: str) -> None:
    frame = bytearray(encode_event("messageStop", b'{"stopReason":"end_turn"}'))
    frame[9 if where == "prelude" else len(frame) - 6] ^= 0xFF
    with pytest.raises(eventstream.ChecksumMismatch):
        _decode(bytes(frame))


def test_empty_payload_is_a_valid_frame() -> None:
    (message,) = _decode(encode_event("ping", b""))
    assert message.payload == b""
