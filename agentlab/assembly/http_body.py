"""A streamed HTTP answer's body as the driver reads it: the transport's own chunks when nothing is encoded.

``Response.aiter_bytes()`` is one more async generator level per chunk, plus a content decoder (a
generator per chunk even for an unencoded body) and a re-chunker; a server flushing one SSE event
per chunk makes that a fixed cost per event (issue 34: about a tenth of the HTTP stack's). A body
without a content coding has nothing to decode, so the adapters iterate the response's stream
itself, which is what ``aiter_bytes`` reads underneath. A body with one (gzip, br, deflate, zstd)
keeps ``aiter_bytes``, which decodes it; so does any response this cannot read directly (already
read or consumed, a sync stream, an object that is not an ``httpx2.Response``).

On a real connection that stream is two more async generators of httpx2's, each a level per chunk
between the socket and the driver: ``BoundAsyncStream`` (closes the one below when it ends) and
``AsyncResponseStream`` (turns httpcore2's exceptions into httpx2's). When both are exactly those,
the body is read from the connection's own stream below them (:func:`_below_httpx`); closing stays
the response's (``WireCall.close`` closes all three), and an httpcore2 exception raised while
reading is turned into the httpx2 one ``AsyncResponseStream`` would have raised by the driver
(:func:`httpx_error`, on the error path only), so the adapters see the same errors as before. Any
other stream (a mock transport's, another httpx2 version's) is read as it is.

The response is marked consumed, as ``aiter_bytes`` marks it, so a second read fails the same way;
closing it stays the caller's (``WireCall.close``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2
from httpx2._client import BoundAsyncStream
from httpx2._transports.default import AsyncResponseStream, map_httpcore_exceptions

__all__ = ["body_chunks", "httpx_error"]


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
        return _below_httpx(resp.stream)
    decoded: AsyncIterator[bytes] = resp.aiter_bytes()
    return decoded


def _encoded(headers: httpx2.Headers) -> bool:
    """Whether the body carries a content coding other than ``identity`` (what httpx2 would decode)."""
    values = headers.get_list("content-encoding", split_commas=True)
    return any(v.strip().lower() not in ("", "identity") for v in values)


def _below_httpx(stream: httpx2.AsyncByteStream) -> AsyncIterator[bytes]:
    """The connection's chunks under httpx2's two wrappers when they are exactly those, else ``stream``'s."""
    if type(stream) is BoundAsyncStream:
        inner = stream._stream
        if type(inner) is AsyncResponseStream:
            core: AsyncIterator[bytes] = inner._httpcore_stream.__aiter__()
            return core
    chunks: AsyncIterator[bytes] = stream.__aiter__()
    return chunks


def httpx_error(exc: Exception) -> Exception | None:
    """The httpx2 exception httpx2 raises for an httpcore2 one, from httpx2's own mapping (``None``: not one).

    What ``AsyncResponseStream`` would have raised had the body been read through it; the httpcore2
    exception is its ``__cause__``, as there.
    """
    try:
        with map_httpcore_exceptions():
            raise exc
    except httpx2.HTTPError as mapped:
        if mapped is not exc:
            return mapped
    except Exception:
        pass  # not an httpcore2 error: the caller raises it as it is
    return None
