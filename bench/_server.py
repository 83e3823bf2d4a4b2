"""A loopback server that answers every client with the same recorded-shape bytes.

Why not ``python -m agentlab.sim serve``: the simulator computes its reply from the request, and each
client (SDK, agentlab, LiteLLM, pydantic-ai) sends a different body, so the bytes would differ. This
server speaks the same HTTP/1.1 as the simulator's loopback server (keep-alive, ``content-length``)
and replies with the bodies of :mod:`bench.streams`: a request that carries a tool result gets the
short final answer, any other request the big tool-call stream. It runs in its own process, so its
CPU time is not counted against the client being measured.

``python -m bench._server --reasoning 5000 --text 2000`` prints ``port N`` when ready.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from .streams import anthropic_final, anthropic_stream, openai_final, openai_stream

_TOOL_RESULT_MARKERS = (b"function_call_output", b"tool_result", b'"role":"tool"', b'"role": "tool"')


def _reply(body: bytes, request_id: str) -> bytes:
    head = (
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nx-request-id: {request_id}\r\nrequest-id: {request_id}\r\n"
        "cache-control: no-cache\r\n\r\n"
    )
    return head.encode() + body


async def main(n_reasoning: int, n_text: int) -> None:
    replies = {
        ("openai", False): _reply(openai_stream(n_reasoning, n_text).body, "req_bench_1"),
        ("openai", True): _reply(openai_final().body, "req_bench_2"),
        ("anthropic", False): _reply(anthropic_stream(n_reasoning, n_text).body, "req_bench_1"),
        ("anthropic", True): _reply(anthropic_final().body, "req_bench_2"),
    }

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
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
                provider = "anthropic" if "/messages" in target else "openai"
                final = any(m in body for m in _TOOL_RESULT_MARKERS)
                writer.write(replies[(provider, final)])
                await writer.drain()
        except ConnectionError:
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, limit=64 * 1024 * 1024)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--reasoning", type=int, default=5000)
    p.add_argument("--text", type=int, default=2000)
    a = p.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(a.reasoning, a.text))
