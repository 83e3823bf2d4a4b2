"""CPU per streamed event for the Chat Completions adapter, against the raw ``openai`` chat stream.

The same body for every consumer: a DeepSeek-shaped ``chat.completion.chunk`` stream of N
``reasoning_content`` deltas, M ``content`` deltas and a tool call in two pieces, then the usage
chunk and ``[DONE]``, served over a loopback socket by a server in its own process (its CPU is not
counted) with one HTTP chunk per SSE event, as real servers flush (``bench._server``'s framing).
The consumers, over one keep-alive ``httpx2`` client each:

* ``floor``: ``httpx2`` line iteration + one ``json.loads`` per ``data:`` line, nothing else;
* ``sdk``: ``client.chat.completions.create(stream=True)`` (the SDK's typed chunks), iterated to the end;
* ``adapter``: ``DeepSeekAdapter.stream(request)`` to its ``ResponseCompletedEvent`` (reasoning kept
  as an opaque item, the tool call assembled, usage normalized).

Figures: median (and min) over rounds of process CPU time divided by the event count. Run:
``.venv/bin/python bench/adapter_chat.py [--rounds 7] [--reasoning 3000] [--text 1000]``; ``python -m
bench --only adapter_chat`` runs it as a section.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._server import _reply
from bench._util import Section, cpu_rounds, median

MODEL = "deepseek-chat"


def chat_stream(n_reasoning: int, n_text: int) -> tuple[bytes, int]:
    """The SSE body (each event ending with a blank line) and its event count."""
    base = {"id": "bench-1", "object": "chat.completion.chunk", "created": 1, "model": MODEL}

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        obj = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"

    pieces = [chunk({"role": "assistant", "content": None, "reasoning_content": ""})]
    pieces += [chunk({"content": None, "reasoning_content": f"step {i} "}) for i in range(n_reasoning)]
    pieces += [chunk({"content": f"word{i} "}) for i in range(n_text)]
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    pieces.append(chunk({"tool_calls": [call]}))
    pieces.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Paris"}'}}]}))
    usage = {
        "prompt_tokens": 40, "completion_tokens": n_reasoning + n_text + 8, "prompt_cache_hit_tokens": 0,
        "completion_tokens_details": {"reasoning_tokens": n_reasoning},
    }  # fmt: skip
    pieces.append(chunk({}, "tool_calls", usage=usage))
    pieces.append(b"data: [DONE]\n\n")
    return b"".join(pieces), len(pieces)


async def _serve(body: bytes) -> None:
    writes = _reply(body, "req_bench_chat", True)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode("latin-1").split("\r\n"):
                    if line.lower().startswith("content-length:"):
                        length = int(line.split(":", 1)[1])
                await reader.readexactly(length)
                for w in writes:
                    writer.write(w)
                    await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, limit=64 * 1024 * 1024)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await asyncio.sleep(600)  # bounded: a client that dies never leaves it running


@contextlib.contextmanager
def serving(n_reasoning: int, n_text: int) -> Iterator[int]:
    """This module's server in its own process; yields its port; stops it."""
    cmd = [
        sys.executable,
        "-m",
        "bench.adapter_chat",
        "--serve",
        "--reasoning",
        str(n_reasoning),
        "--text",
        str(n_text),
    ]
    proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("port "):
            raise RuntimeError(f"bench chat server did not start: {line!r}")
        yield int(line.split()[1])
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def runners(port: int) -> dict[str, Any]:
    import httpx2
    import openai

    from agentlab.adapters.openai_chat import DeepSeekAdapter
    from agentlab.neutral.items import UserItem
    from agentlab.neutral.request import ModelRequest, ToolSpec

    base = f"http://127.0.0.1:{port}/v1"
    raw = httpx2.AsyncClient()
    sdk_client = openai.AsyncOpenAI(
        api_key="bench-key", base_url=base, http_client=httpx2.AsyncClient(), max_retries=0
    )
    own = openai.AsyncOpenAI(api_key="bench-key", base_url=base, http_client=httpx2.AsyncClient())
    adapter = DeepSeekAdapter(MODEL, client=own, max_retries=0)
    request = ModelRequest(model=MODEL, items=(UserItem(text="hi"),), tools=(ToolSpec(name="get_weather"),))

    async def floor() -> None:
        async with raw.stream("POST", f"{base}/chat/completions", content=b"{}") as resp:
            async for line in resp.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    json.loads(line[6:])

    async def sdk() -> None:
        stream = await sdk_client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True
        )
        async for _ in stream:
            pass

    async def run_adapter() -> None:
        async for _ in adapter.stream(request):
            pass

    return {"floor": floor, "sdk": sdk, "adapter": run_adapter}


async def _measure(port: int, events: int, rounds: int) -> dict[str, Any]:
    samples = await cpu_rounds(runners(port), rounds)
    per_event = {k: [x / events * 1e6 for x in v] for k, v in samples.items()}
    return {
        "events": events,
        "us_per_event": {k: median(v) for k, v in per_event.items()},
        "min_us_per_event": {k: min(v) for k, v in per_event.items()},
    }


def measure(n_reasoning: int, n_text: int, rounds: int) -> dict[str, Any]:
    body, events = chat_stream(n_reasoning, n_text)
    with serving(n_reasoning, n_text) as port:
        m = asyncio.run(_measure(port, events, rounds))
    m["bytes"] = len(body)
    return m


def run(quick: bool) -> Section:
    """``python -m bench`` section: the adapter beside the raw SDK stream and the floor, in one run."""
    warnings.simplefilter("ignore", DeprecationWarning)
    n_r, n_t, rounds = (200, 100, 1) if quick else (3000, 1000, 7)
    m = measure(n_r, n_t, rounds)
    sec = Section("adapter_chat", "Chat Completions adapter: CPU per event vs the raw openai chat stream")
    sec.figures = m
    us = m["us_per_event"]
    sec.row("loopback, one chunk per event", f"{m['events']:,} events, {rounds} rounds")
    for k in ("floor", "sdk", "adapter"):
        sec.row(f"  {k} µs/event", f"{us[k]:.2f}")
    sec.row("  adapter / sdk", f"{us['adapter'] / us['sdk']:.2f}")
    return sec


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(
        description="CPU per streamed event, Chat Completions: floor, raw SDK, adapter"
    )
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--reasoning", type=int, default=3000)
    p.add_argument("--text", type=int, default=1000)
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.serve:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(chat_stream(a.reasoning, a.text)[0]))
        return 0
    warnings.simplefilter("ignore", DeprecationWarning)
    m = measure(a.reasoning, a.text, a.rounds)
    size = f"{m['events']:,} events, {m['bytes'] / 1e6:.1f} MB"
    print(f"chat [loopback, one chunk per event]: {size}; {a.rounds} rounds; CPU µs/event:")
    for k, v in m["us_per_event"].items():
        print(f"  {k:8s} {v:7.2f}  (min {m['min_us_per_event'][k]:.2f})")
    print(f"  adapter / sdk = {m['us_per_event']['adapter'] / m['us_per_event']['sdk']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
