"""A streamed HTTP answer's body as the driver reads it: the transport's own chunks when nothing is encoded.

``Response.aiter_bytes()`` is one more async generator level per chunk, plus a content decoder (a
generator per chunk even for an unencoded body) and a re-chunker; a server flushing one SSE event
per chunk makes that a fixed cost per event (issue 34: about a tenth of the HTTP stack's). A body
without a content coding has nothing to decode, so the adapters iterate the response's stream
itself, which is what ``aiter_bytes`` reads underneath. A body with one (gzip, br, deflate, zstd)
keeps ``aiter_bytes``, which decodes it; so does any response this cannot read directly (already
read or consumed, a sync stream, an object that is not an ``httpx2.Response``).

The response is marked consumed, as ``aiter_bytes`` marks it, so a second read fails the same way;
closing it stays the caller's (``WireCall.close``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2

__all__ = ["body_chunks"]


def body_chunks(resp: Any) -> AsyncIterator[bytes]:
    """The body of a streamed ``httpx2.Response`` as it arrives: raw when unencoded, else decoded."""
    if (
        isinstance(resp, httpx2.Response)
        and not _encoded(resp.headers)
        and not resp.is_stream_consumed
        and not resp.is_closed
        and not hasattr(resp, "_content")
        and isinstance(resp.stream, httpx2.AsyncByteStream)
    ):
        resp.is_stream_consumed = True
        chunks: AsyncIterator[bytes] = resp.stream.__aiter__()
        return chunks
    decoded: AsyncIterator[bytes] = resp.aiter_bytes()
    return decoded


def _encoded(headers: httpx2.Headers) -> bool:
    """Whether the body carries a content coding other than ``identity`` (what httpx2 would decode)."""
    values = headers.get_list("content-encoding", split_commas=True)
    return any(v.strip().lower() not in ("", "identity") for v in values)
