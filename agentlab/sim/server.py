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
import signal
import socket
import struct
from collections.abc import Callable

from agentlab.sim.app import handle
from agentlab.sim.core import Simulator
from agentlab.sim.faults import Chunk, Reset, Sleep

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Overloaded",
}
MAX_BODY = 32 * 1024 * 1024


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (SO_LINGER 0), so the client sees 'connection reset', not a clean EOF."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


Request = tuple[str, str, dict[str, str], bytes]


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    """(method, target, lower-cased headers, body) of the next request; None ends the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, _version = lines[0].split(" ", 2)
    except ValueError:
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    length = int(headers.get("content-length") or 0)
    if length > MAX_BODY:
        return None
    body = await reader.readexactly(length) if length else b""
    return method, target, headers, body


def _head(status: int, rh: dict[str, str], chunks: list[Chunk]) -> tuple[bytes, bool]:
    """The status line and headers, and whether the reply is a stream (delimited by closing)."""
    is_stream = rh.get("content-type", "").startswith("text/event-stream")
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


async def _serve_connection(
    sim: Simulator, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Serve requests on one connection until the client or a streamed reply closes it."""
    try:
        while True:
            request = await _read_request(reader)
            if request is None:
                return
            method, target, headers, body = request
            status, rh, chunks = handle(sim, method, target, headers, body)
            head, is_stream = _head(status, rh, chunks)
            writer.write(head)
            if not await _write_body(writer, chunks, is_stream):
                return
            if is_stream or headers.get("connection", "").lower() == "close":
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
) -> None:
    """Serve until ``stop`` is set (or SIGINT/SIGTERM when run from the command line)."""
    simulator = sim or Simulator()
    server = await asyncio.start_server(lambda r, w: _serve_connection(simulator, r, w), host, port)
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
