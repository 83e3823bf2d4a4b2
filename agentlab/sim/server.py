"""The loopback HTTP server: the simulator for clients that only know a ``base_url``.

Why stdlib asyncio: no new dependency, incremental SSE (each event is written and drained as it is
produced, ``slow`` faults really pause the socket), and a clean stop. It serves HTTP/1.1 on
127.0.0.1 only: JSON replies carry ``content-length`` and keep the connection alive; SSE replies are
delimited by closing the connection, so a ``cut`` fault is a clean early EOF while a ``reset`` fault
aborts the socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import signal
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass

from agentlab.sim.app import Answer, front_end, handle, internal_error, too_large
from agentlab.sim.core import Simulator
from agentlab.sim.faults import Chunk, Reset, Sleep

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    408: "Request Timeout",
    411: "Length Required",
    413: "Payload Too Large",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Overloaded",
}
MAX_BODY = 32 * 1024 * 1024
"""The largest body served: the Anthropic Messages API's documented request size limit (32 MB)."""

log = logging.getLogger("agentlab.sim.server")


@dataclass(frozen=True)
class Limits:
    """How much, and how slowly, a client may send before the server answers it and closes.

    Why bounds at all: a client that sends nothing, or a byte a second, would otherwise hold its
    connection (and a server task) forever. Real front ends bound both; so does this one:
    ``head_s`` for the request line and headers (counted from when the server starts waiting for
    them, so an idle keep-alive connection is closed too), ``body_s`` for the declared body, each
    well under half a minute. ``max_head`` bounds the request line plus headers (64 KiB; more is a
    431), ``max_body`` the declared body (more is a 413, refused before reading it).
    """

    head_s: float = 10.0
    body_s: float = 10.0
    max_head: int = 64 * 1024
    max_body: int = MAX_BODY


class _Framing(Exception):
    """A request the front end refuses before any protocol sees it: answered, then the connection closes."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status
        self.why = why


_DIGITS = re.compile(r"[0-9]{1,16}")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VERSION = re.compile(r"HTTP/1\.[01]")


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (SO_LINGER 0), so the client sees 'connection reset', not a clean EOF."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


Request = tuple[str, str, dict[str, str], bytes]


async def _read_head(reader: asyncio.StreamReader, limits: Limits) -> bytes | None:
    """The request line and headers; None when the client closed (or stayed idle) before sending any.

    A head that starts but does not end in ``head_s`` is a 408; one longer than ``max_head`` a 431.
    An empty line before the request line is skipped, as RFC 9112 (2.2) asks of servers.
    """
    first = b""
    try:
        async with asyncio.timeout(limits.head_s):
            first = await reader.read(1)
            if not first:
                return None
            # "\n\r\n", not "\r\n\r\n": the end may straddle the byte already read.
            head = first + await reader.readuntil(b"\n\r\n")
    except TimeoutError:
        if not first:
            return None
        raise _Framing(408, "the request line and headers did not arrive in time") from None
    except asyncio.LimitOverrunError:
        raise _Framing(431, f"the request line and headers exceed {limits.max_head} bytes") from None
    except asyncio.IncompleteReadError:
        raise _Framing(400, "the connection closed in the middle of the request headers") from None
    if not head.endswith(b"\r\n\r\n"):
        raise _Framing(400, "the request headers do not end with CRLF CRLF")
    if head.startswith(b"\r\n") and head != b"\r\n\r\n":
        head = head[2:]
    return head


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    """(method, target, lower-cased headers); a malformed line is a 400, never a guess."""
    lines = head.decode("latin-1").split("\r\n")[:-2]
    parts = lines[0].split(" ") if lines else []
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or not parts[1] or not _VERSION.fullmatch(parts[2]):
        raise _Framing(400, "malformed request line")
    headers: dict[str, str] = {}
    lengths: set[str] = set()
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not _TOKEN.fullmatch(name):
            raise _Framing(400, "malformed header line")
        key, value = name.lower(), value.strip()
        if key == "content-length":
            lengths.update(v.strip() for v in value.split(","))
        headers[key] = value
    if len(lengths) > 1:
        raise _Framing(400, "conflicting content-length values")
    if lengths and not _DIGITS.fullmatch(next(iter(lengths))):
        raise _Framing(400, "content-length is not a number of bytes")
    return parts[0], parts[1], headers


async def _read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, limits: Limits
) -> Request | None:
    """(method, target, lower-cased headers, body) of the next request; None ends the connection.

    Framing the front end refuses raises ``_Framing`` (answered, then closed); a body too large
    raises ``_TooLarge`` before a byte of it is read. A client that asks ``Expect: 100-continue``
    (curl does for larger bodies) is told to go on, as real hosts do, instead of waiting.
    """
    head = await _read_head(reader, limits)
    if head is None:
        return None
    method, target, headers = _parse_head(head)
    if headers.get("transfer-encoding", "identity").lower() != "identity":
        raise _Framing(411, "a chunked request body is not supported here; send content-length")
    length = int(headers.get("content-length") or 0)
    if length > limits.max_body:
        raise _TooLarge(method, target, headers)
    if length and headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    try:
        async with asyncio.timeout(limits.body_s):
            body = await reader.readexactly(length) if length else b""
    except TimeoutError:
        raise _Framing(408, "the request body did not arrive in time") from None
    except asyncio.IncompleteReadError:
        return None
    return method, target, headers, body


class _TooLarge(Exception):
    """A declared body over ``max_body``: the protocol it is addressed to refuses it (a 413)."""

    def __init__(self, method: str, target: str, headers: dict[str, str]) -> None:
        super().__init__(target)
        self.method, self.target, self.headers = method, target, headers


#: Content types delivered event by event (delimited by closing): SSE, and AWS's binary event stream.
_STREAM_TYPES = ("text/event-stream", "application/vnd.amazon.eventstream")


def _head(status: int, rh: dict[str, str], chunks: list[Chunk]) -> tuple[bytes, bool]:
    """The status line and headers, and whether the reply is a stream (delimited by closing)."""
    is_stream = rh.get("content-type", "").startswith(_STREAM_TYPES)
    out_headers = dict(rh)
    if is_stream:
        out_headers["connection"] = "close"
        out_headers["cache-control"] = "no-cache"
    else:
        delivered = sum(len(c) for c in chunks if isinstance(c, bytes))
        # A reset promises more bytes than it sends, so the client sees a broken body.
        broken = any(isinstance(c, Reset) for c in chunks)
        out_headers["content-length"] = str(delivered * 2 + 1 if broken else delivered)
    status_line = f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}\r\n"
    head = status_line + "".join(f"{k}: {v}\r\n" for k, v in out_headers.items()) + "\r\n"
    return head.encode(), is_stream


async def _write_body(writer: asyncio.StreamWriter, chunks: list[Chunk], is_stream: bool) -> bool:
    """Deliver the chunks (draining after each SSE event); False when a reset aborted the socket."""
    for c in chunks:
        if isinstance(c, Sleep):
            await writer.drain()
            await asyncio.sleep(c.seconds)
        elif isinstance(c, Reset):
            await writer.drain()
            _reset(writer)
            return False
        else:
            writer.write(c)
            if is_stream:
                await writer.drain()
    await writer.drain()
    return True


async def _answer(writer: asyncio.StreamWriter, answer: Answer, close: bool) -> bool:
    """Write one answer; False when the connection must end (a reset, a stream, or ``close``)."""
    status, rh, chunks = answer
    if close:
        rh = {**rh, "connection": "close"}
    head, is_stream = _head(status, rh, chunks)
    writer.write(head)
    return await _write_body(writer, chunks, is_stream) and not is_stream and not close


async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seconds: float = 1.0) -> None:
    """After refusing a request, half-close and drop what the client still sends, for a bounded time.

    Closing at once with unread bytes in the socket makes the kernel send a reset, which can
    destroy the answer before the client reads it (RFC 9112 9.6, "lingering close").
    """
    with contextlib.suppress(Exception):
        await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
        async with asyncio.timeout(seconds):
            while await reader.read(65536):
                pass


def _refusal(exc: _Framing | _TooLarge, limits: Limits) -> Answer:
    if isinstance(exc, _TooLarge):
        return too_large(exc.target, exc.headers, limits.max_body)
    return front_end(exc.status, exc.why)


async def _serve_connection(
    sim: Simulator, limits: Limits, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Serve requests on one connection until the client, a streamed reply or a refusal closes it.

    Every request read gets an HTTP answer: malformed framing the front end's 400/408/411/413/431,
    a handler that fails a 500 in its protocol's shape (``app.handle``; a failure outside it too).
    """
    try:
        while True:
            try:
                request = await _read_request(reader, writer, limits)
            except (_Framing, _TooLarge) as refused:
                await _answer(writer, _refusal(refused, limits), close=True)
                await _linger(reader, writer)
                return
            if request is None:
                return
            method, target, headers, body = request
            try:
                answer = handle(sim, method, target, headers, body)
            except Exception:  # app.handle answers its own failures; this is the last resort
                log.exception("the simulator failed on %s %s", method, target.partition("?")[0])
                answer = internal_error(target, headers)
            if not await _answer(writer, answer, close=headers.get("connection", "").lower() == "close"):
                return
    except ConnectionError:
        return
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def serve(
    port: int = 0,
    *,
    sim: Simulator | None = None,
    host: str = "127.0.0.1",
    on_ready: Callable[[int], None] | None = None,
    stop: asyncio.Event | None = None,
    limits: Limits | None = None,
) -> None:
    """Serve until ``stop`` is set (or SIGINT/SIGTERM when run from the command line).

    ``limits`` bounds what and how slowly a client may send (:class:`Limits`; the defaults suit
    any SDK).
    """
    simulator = sim or Simulator()
    bounds = limits or Limits()
    server = await asyncio.start_server(
        lambda r, w: _serve_connection(simulator, bounds, r, w), host, port, limit=bounds.max_head
    )
    bound = server.sockets[0].getsockname()[1]
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    if on_ready is not None:
        on_ready(bound)
    async with server:
        await stop.wait()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(sig)
