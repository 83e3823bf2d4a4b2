"""The event-stream framing's header cache: a repeated header block is parsed once, never wrongly reused.

Issue 34: parsing every message's headers cost more than the rest of the framing, and a stream repeats
a handful of header blocks (one per event type); ``_framing._PREFIXES`` keeps each plain event's
``{"<type>":`` prefix. These check that what comes out is what parsing gives, that only plain events
with the standard headers are kept, and that the cache stays bounded.
"""

from __future__ import annotations

import json

import pytest

from agentlab.adapters.bedrock_converse import _framing
from agentlab.adapters.bedrock_converse._framing import EventStreamFraming
from agentlab.sim.aws.eventstream import encode_event, encode_exception, encode_message


@pytest.fixture(autouse=True)
def _empty_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_framing, "_PREFIXES", {})


def _frame(*messages: bytes) -> list[object]:
    return [json.loads(x) for x in EventStreamFraming().chunk_bytes(b"".join(messages))]


def test_a_repeated_header_block_is_parsed_once_and_gives_the_same_events() -> None:
    delta = [encode_event("contentBlockDelta", json.dumps({"i": i}).encode()) for i in range(3)]
    stop = encode_event("messageStop", b'{"stopReason":"end_turn"}')
    assert _frame(*delta, stop) == [{"contentBlockDelta": {"i": i}} for i in range(3)] + [
        {"messageStop": {"stopReason": "end_turn"}}
    ]
    assert sorted(_framing._PREFIXES.values()) == [b'{"contentBlockDelta":', b'{"messageStop":']
    assert _frame(*delta) == [{"contentBlockDelta": {"i": i}} for i in range(3)]  # from the cache


def test_exceptions_and_unusual_header_blocks_are_never_cached() -> None:
    odd = encode_message(
        [(":event-type", "contentBlockDelta"), (":message-type", "event"), ("x-custom", "v")], b'{"a":1}'
    )
    boom = encode_exception("throttlingException", b'{"message":"slow down"}')
    assert _frame(odd, odd) == [{"contentBlockDelta": {"a": 1}}] * 2
    out = _frame(boom, boom)
    want = {"__exception__": {"message": "slow down", "type": "throttlingException"}}
    assert out == [want, want]
    assert _framing._PREFIXES == {}


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_framing, "_MAX_PREFIXES", 2)
    names = [f"kind{i}" for i in range(5)]
    assert _frame(*(encode_event(n, b"{}") for n in names)) == [{n: {}} for n in names]
    assert len(_framing._PREFIXES) == 2
