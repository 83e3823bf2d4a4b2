"""A loopback server that answers every client with the same recorded-shape bytes.

Why not ``python -m agentlab.sim serve``: the simulator computes its reply from the request, and each
client (SDK, agentlab, LiteLLM, pydantic-ai) sends a different body, so the bytes would differ. This
server speaks the same HTTP/1.1 as the simulator's loopback server (keep-alive, ``content-length``)
and replies with the bodies of :mod:`bench.streams`: a request that carries a tool result gets the
short final answer, any other request the big tool-call stream. The path picks the protocol:
``/messages`` Anthropic, ``generateContent`` Gemini, ``/chat/completions`` Chat Completions (the
DeepSeek-shaped body), anything else OpenAI Responses. It runs in its own process, so its
CPU time is not counted against the client being measured.

``--per-event`` delivers as real API servers do: ``Transfer-Encoding: chunked`` with one HTTP chunk
per SSE event, each written to the socket on its own (``TCP_NODELAY``), so a client pays the
per-event read costs (one ``recv`` and one chunk header per event) it pays against a real API; the
default is one ``content-length`` body in as few segments as the socket takes. ``--max-requests``
and ``--lifetime`` bound the server, so a client that dies never leaves it running.

``python -m bench._server --reasoning 5000 --text 2000`` prints ``port N`` when ready.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from .streams import (
    anthropic_final,
    anthropic_stream,
    chat_final,
    chat_stream,
    gemini_final,
    gemini_stream,
    openai_final,
    openai_stream,
)

_TOOL_RESULT_MARKERS = (
    b"function_call_output",
    b"tool_result",
    b'"role":"tool"',
    b'"role": "tool"',
    b"functionResponse",
    b"function_response",
)


def _head(request_id: str, framing: str) -> bytes:
    return (
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
        f"{framing}\r\nx-request-id: {request_id}\r\nrequest-id: {request_id}\r\n"
        "cache-control: no-cache\r\n\r\n"
    ).encode()


def _reply(body: bytes, request_id: str, per_event: bool) -> list[bytes]:
    """The response as the list of writes the server makes: one, or head + one chunk per event + end."""
    if not per_event:
        return [_head(request_id, f"content-length: {len(body)}") + body]
    # Gemini ends its events with a CRLF blank line, OpenAI and Anthropic with LF LF.
    end = b"\r\n\r\n" if body.endswith(b"\r\n\r\n") else b"\n\n"
    events = [e + end for e in body.split(end) if e]
    assert b"".join(events) == body, "an SSE body ends every event with a blank line"
    chunks = [b"%x\r\n%s\r\n" % (len(e), e) for e in events]
    return [_head(request_id, "transfer-encoding: chunked") + chunks[0], *chunks[1:], b"0\r\n\r\n"]


def _provider(target: str) -> str:
    """Which provider's stream a request path asks for."""
    if "/messages" in target:
        return "anthropic"
    if "/chat/completions" in target:
        return "chat"
    if "generatecontent" in target.lower():  # :streamGenerateContent?alt=sse, also :generateContent
        return "gemini"
    return "openai"


async def main(
    n_reasoning: int, n_text: int, *, per_event: bool = False, max_requests: int = 0, lifetime: float = 0
) -> None:
    """Serve until killed, or until ``max_requests`` replies or ``lifetime`` seconds (when > 0)."""
    replies = {
        ("openai", False): _reply(openai_stream(n_reasoning, n_text).body, "req_bench_1", per_event),
        ("openai", True): _reply(openai_final().body, "req_bench_2", per_event),
        ("anthropic", False): _reply(anthropic_stream(n_reasoning, n_text).body, "req_bench_1", per_event),
        ("anthropic", True): _reply(anthropic_final().body, "req_bench_2", per_event),
        ("gemini", False): _reply(gemini_stream(n_reasoning, n_text).body, "req_bench_1", per_event),
        ("gemini", True): _reply(gemini_final().body, "req_bench_2", per_event),
        ("chat", False): _reply(chat_stream(n_reasoning, n_text).body, "req_bench_1", per_event),
        ("chat", True): _reply(chat_final().body, "req_bench_2", per_event),
    }
    served = 0
    done = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                target = lines[0].split(" ")[1] if " " in lines[0] else "/"
                length = 0
                for line in lines[1:]:
                    k, _, v = line.partition(":")
                    if k.strip().lower() == "content-length":
                        length = int(v.strip() or 0)
                body = await reader.readexactly(length) if length else b""
                provider = _provider(target)
                final = any(m in body for m in _TOOL_RESULT_MARKERS)
                for part in replies[(provider, final)]:
                    writer.write(part)  # one send per event: asyncio writes at once when nothing is queued
                    await writer.drain()
                served += 1
                if max_requests and served >= max_requests:
                    done.set()
        except ConnectionError:
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, limit=64 * 1024 * 1024)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    deadline = time.monotonic() + lifetime if lifetime else None
    async with server:
        while not done.is_set():
            timeout = None if deadline is None else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), timeout)


@contextlib.contextmanager
def serving(
    n_reasoning: int, n_text: int, *, per_event: bool, max_requests: int = 0, lifetime: float = 0
) -> Iterator[int]:
    """Run this server in its own process (its CPU is not the client's); yield its port; stop it."""
    cmd = [sys.executable, "-m", "bench._server", "--reasoning", str(n_reasoning), "--text", str(n_text)]
    cmd += ["--max-requests", str(max_requests), "--lifetime", str(lifetime)]
    if per_event:
        cmd.append("--per-event")
    proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("port "):
            raise RuntimeError(f"bench server did not start: {line!r}")
        yield int(line.split()[1])
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--reasoning", type=int, default=5000)
    p.add_argument("--text", type=int, default=2000)
    p.add_argument("--per-event", action="store_true", help="chunked, one HTTP chunk per SSE event")
    p.add_argument("--max-requests", type=int, default=0, help="exit after this many replies (0: no bound)")
    p.add_argument("--lifetime", type=float, default=0, help="exit after this many seconds (0: no bound)")
    a = p.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(
            main(a.reasoning, a.text, per_event=a.per_event, max_requests=a.max_requests, lifetime=a.lifetime)
        )
