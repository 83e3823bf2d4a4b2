"""A streamed body is read from the transport's chunks when unencoded, and still decoded when encoded.

Issue 34: ``Response.aiter_bytes`` costs a generator level and a decoder per chunk (one SSE event
per chunk on a real socket), so the adapters read an unencoded body from the response's stream
(:func:`agentlab.assembly.http_body.body_chunks`). A gzip or deflate body must still be decoded:
every SSE adapter of the contract suite streams the same answer from a gzip-encoded body.
"""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest

from agentlab.assembly.http_body import body_chunks
from agentlab.neutral.events import AdapterEvent, ReasoningDeltaEvent, TextDeltaEvent
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest
from tests.adapters.contract import CASES, AdapterCase, RecordingTransport, collect, completed

# The contract cases served by the simulator's HTTP transport (Bedrock's binary stream goes through
# botocore, Gemini's far side may be the SDK's own): the ones whose body an httpx2 response carries.
HTTP_CASES = sorted(name for name, case in CASES.items() if case.serve is RecordingTransport)

ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
}


class EncodingTransport(RecordingTransport):
    """The simulator, its streamed answer sent with a content coding, in small chunks."""

    def __init__(self, encoding: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.encoding = encoding

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await super().handle_async_request(request)
        body = ENCODERS[self.encoding](await response.aread())

        async def chunks() -> AsyncIterator[bytes]:
            for i in range(0, len(body), 7):  # a coded body cut anywhere: the decoder keeps state
                yield body[i : i + 7]

        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        headers["content-encoding"] = self.encoding
        return httpx2.Response(response.status_code, headers=headers, content=chunks())


def _request(case: AdapterCase) -> ModelRequest:
    return ModelRequest(model=case.model, items=(UserItem(text="Tell me about the weather in Paris"),))


def _shown(events: list[AdapterEvent]) -> list[tuple[str, str]]:
    return [(type(e).__name__, e.text) for e in events if isinstance(e, ReasoningDeltaEvent | TextDeltaEvent)]


@pytest.mark.parametrize("encoding", sorted(ENCODERS))
@pytest.mark.parametrize("name", HTTP_CASES)
def test_an_encoded_stream_gives_what_the_plain_one_gives(name: str, encoding: str) -> None:
    case = CASES[name]
    plain, _ = case.adapter()
    coded = case.build(EncodingTransport(encoding), 0, case.model)
    want = asyncio.run(collect(plain, _request(case)))
    got = asyncio.run(collect(coded, _request(case)))
    assert _shown(got) == _shown(want) and _shown(want)
    assert completed(got).items == completed(want).items
    assert completed(got).usage == completed(want).usage


@pytest.mark.parametrize("name", HTTP_CASES)
def test_an_unencoded_stream_is_read_without_aiter_bytes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_decoding(self: httpx2.Response, chunk_size: int | None = None) -> Any:
        raise AssertionError("an unencoded streamed body went through Response.aiter_bytes")

    monkeypatch.setattr(httpx2.Response, "aiter_bytes", no_decoding)
    case = CASES[name]
    adapter, _ = case.adapter()
    assert _shown(asyncio.run(collect(adapter, _request(case))))


def _streamed(headers: dict[str, str], parts: list[bytes]) -> httpx2.Response:
    async def chunks() -> AsyncIterator[bytes]:
        for p in parts:
            yield p

    return httpx2.Response(200, headers=headers, content=chunks())


async def _read(chunks: AsyncIterator[bytes]) -> list[bytes]:
    return [c async for c in chunks]


def test_body_chunks_are_the_transport_chunks_and_the_response_is_consumed() -> None:
    parts = [b"data: 1\n\n", b"", b"data: 2\n\n"]
    resp = _streamed({"content-type": "text/event-stream", "content-encoding": "identity"}, parts)
    assert asyncio.run(_read(body_chunks(resp))) == parts  # not re-chunked, an empty chunk passed on
    assert resp.is_stream_consumed
    with pytest.raises(httpx2.StreamConsumed):
        asyncio.run(_read(resp.aiter_bytes()))


@pytest.mark.parametrize("coding", ["gzip", "identity, gzip", "GZIP"])
def test_body_chunks_decode_a_coded_body(coding: str) -> None:
    body = b"data: {}\n\n" * 50
    coded = gzip.compress(body)
    resp = _streamed({"content-encoding": coding}, [coded[:10], coded[10:]])
    assert b"".join(asyncio.run(_read(body_chunks(resp)))) == body


def test_a_response_already_read_is_served_from_its_content() -> None:
    resp = httpx2.Response(200, content=b"data: 1\n\n")
    assert asyncio.run(_read(body_chunks(resp))) == [b"data: 1\n\n"]
