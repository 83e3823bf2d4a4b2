"""CPU per streamed event for the Chat Completions adapter, against the raw ``openai`` chat stream.

The same body for every consumer: a DeepSeek-shaped ``chat.completion.chunk`` stream of N
``reasoning_content`` deltas, M ``content`` deltas and a tool call in two pieces, then the usage
chunk and ``[DONE]``, served over a loopback socket by a server in its own process (its CPU is not
counted) with one HTTP chunk per SSE event, as real servers flush (``bench._server``'s framing).
It is measured exactly as section 1 (:mod:`bench.adapters`) measures the other adapters, with its
consumers and helpers: over that loopback socket and in process (an ``httpx2.MockTransport``
handing the body over in 16 KiB chunks), side by side in one run, the consumers interleaved per round:

* ``floor``: on the socket a bare sync ``http.client`` line loop + one ``json.loads`` per ``data:``
  line; in process the ``httpx2`` line loop; ``floor_httpx_sync`` (socket): the sync ``httpx2``
  ``iter_lines`` floor of section 1's issue-34 target; ``floor_httpx`` (socket, information only);
* ``sdk``: ``client.chat.completions.create(stream=True, stream_options={"include_usage": True})``
  (the SDK's typed chunks), iterated to the end;
* ``adapter``: ``DeepSeekAdapter.stream(request)`` to its ``ResponseCompletedEvent`` (reasoning kept
  as an opaque item, the tool call assembled, usage normalized);
* ``run_step``: one full ``Run`` step (adapter + reducer + checkpoint + event log + the tool call).

Figures: median (and min) over rounds of process CPU time divided by the event count; targets are
section 1's OpenAI limits. Run: ``.venv/bin/python bench/adapter_chat.py [--rounds 7] [--reasoning
5000] [--text 2000]`` (exit status 0 when the targets are met); ``python -m bench --only adapter_chat``
runs it as a section (``--quick`` for the smoke sizes).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import socket
import subprocess
import sys
import warnings
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._server import _reply
from bench._util import Section, Target, cpu_rounds, median
from bench.adapters import (
    DELIVERIES,
    LABEL,
    PASSES,
    TOGETHER,
    _adapter_runners,
    _clients,
    _floors,
    _row,
    _tool,
    paired_ratios,
    row_targets,
)
from bench.streams import CHAT_MODEL, Stream, chat_stream

MODEL = CHAT_MODEL
PROVIDER = "deepseek"
__all__ = ["chat_stream", "measure", "run"]


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


def runners(stream: Stream, port: int | None = None) -> dict[str, Callable[[], Awaitable[Any]]]:
    """The consumers of section 1 (:mod:`bench.adapters`) on the chat stream, sharing one SDK client."""
    import openai

    from agentlab.adapters.openai_chat import DeepSeekAdapter
    from agentlab.neutral.items import UserItem
    from agentlab.neutral.request import ModelRequest

    http, base, _ = _clients(port, stream.body)
    client = openai.AsyncOpenAI(api_key="bench-key", base_url=base, http_client=http, max_retries=0)
    tool = _tool()
    request = ModelRequest(model=MODEL, items=(UserItem(text="hi"),), tools=(tool.spec,))

    async def sdk() -> None:
        s = await client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for _ in s:
            pass

    steps = _adapter_runners(
        lambda: DeepSeekAdapter(MODEL, client=client, max_retries=0),
        f"deepseek:{MODEL}", request, tool, "reasoning_tokens",
    )  # fmt: skip

    floors = _floors(port, http, base + "/chat/completions", "/v1/chat/completions")
    return {**floors, "sdk": sdk, **steps}


async def _measure(stream: Stream, rounds: int, port: int | None) -> dict[str, Any]:
    samples = await cpu_rounds(runners(stream, port), rounds, together=TOGETHER, passes=PASSES)
    per_event = {k: [x / stream.events * 1e6 for x in v] for k, v in samples.items()}
    return {
        "delivery": "in_process" if port is None else "socket",
        "events": stream.events,
        "bytes": len(stream.body),
        "us_per_event": {k: median(v) for k, v in per_event.items()},
        "min_us_per_event": {k: min(v) for k, v in per_event.items()},
        "samples_us_per_event": per_event,
        "paired_ratios": paired_ratios(per_event),
    }


def measure(n_reasoning: int, n_text: int, rounds: int) -> dict[str, dict[str, Any]]:
    """``{delivery: figures}``, socket first, then in process, from one process (as section 1)."""
    stream = chat_stream(n_reasoning, n_text)
    with serving(n_reasoning, n_text) as port:
        sock = asyncio.run(_measure(stream, rounds, port))
    return {"socket": sock, "in_process": asyncio.run(_measure(stream, rounds, None))}


# The OpenAI Responses adapter's limits (bench.adapters.LIMITS), not loosened: the same SDK, the same
# per-chunk costs, a simpler event grammar.
LIMITS = {"sdk": 0.5, "floor": 2.5, "run_sdk": 1.5}


def targets(delivery: str, m: dict[str, Any]) -> list[Target]:
    return row_targets(f"{PROVIDER} ({LABEL[delivery]})", LIMITS, m)


def run(quick: bool) -> Section:
    """``python -m bench`` section: floor, raw SDK chat stream, adapter, run step; socket and in process."""
    warnings.simplefilter("ignore", DeprecationWarning)
    n_r, n_t, rounds = (300, 100, 1) if quick else (5000, 2000, 15)
    load = _loadavg()
    both = measure(n_r, n_t, rounds)
    title = "8. Chat Completions adapter (DeepSeek dialect; CPU µs per event: socket and in-process)"
    sec = Section("adapter_chat", title)
    sec.figures = {
        "stream": {"reasoning_deltas": n_r, "text_deltas": n_t, "tool_calls": 1, "rounds": rounds},
        "deliveries": both,
    }
    for delivery in DELIVERIES:
        sec.row(*_row(delivery, PROVIDER, both[delivery]))
        sec.targets += targets(delivery, both[delivery])
    stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    sec.notes.append(
        f"measured {stamp}, load average before/after {load} / {_loadavg()}; the same consumers and"
        " deliveries as section 1 on a DeepSeek-shaped chat.completion.chunk stream (reasoning_content"
        " deltas, content deltas, one tool call in two pieces, the usage chunk, [DONE]); raw SDK ="
        " chat.completions.create(stream=True, stream_options.include_usage)."
    )
    return sec


def _loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def main(argv: list[str] | None = None) -> int:
    """Both deliveries' figures and targets; exit status 0 when the adapter's targets are met."""
    import argparse

    p = argparse.ArgumentParser(
        description="CPU per streamed event, Chat Completions: floor, raw SDK, adapter, run step"
        " (socket and in-process)"
    )
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--reasoning", type=int, default=5000)
    p.add_argument("--text", type=int, default=2000)
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.serve:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(chat_stream(a.reasoning, a.text).body))
        return 0
    warnings.simplefilter("ignore", DeprecationWarning)
    ok = True
    for delivery, m in measure(a.reasoning, a.text, a.rounds).items():
        print(
            f"chat [{LABEL[delivery]}]: {m['events']:,} events, {m['bytes'] / 1e6:.1f} MB; {a.rounds} rounds;"
            " CPU µs/event (median [min-max]):"
        )
        for k, v in m["samples_us_per_event"].items():
            print(f"  {k:11s} {m['us_per_event'][k]:7.2f}  [{min(v):.2f}-{max(v):.2f}]")
        for t in targets(delivery, m):
            print(f"  {t.name.split(': ', 1)[1]:38s} = {t.value:.2f}  (target <= {t.limit:.2f})")
            ok = ok and (bool(t.met) or "run step" in t.name)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
