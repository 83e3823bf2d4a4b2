"""CPU per streamed event of the Bedrock Converse adapter, against raw botocore ConverseStream parsing.

The same body for both consumers: a ConverseStream answer (AWS binary event stream, valid CRCs, a
random-length ``p`` padding field in every payload, as recorded) of N ``reasoningContent.text``
deltas, its ``signature``, M ``text`` deltas, a ``toolUse`` block in two input pieces,
``messageStop`` and ``metadata``. A server in its own process (its CPU is not counted) answers every
request over a loopback socket with ``Transfer-Encoding: chunked``, one event-stream message per
HTTP chunk, each written on its own (``TCP_NODELAY``), as the service flushes. Consumers, on one
boto3 ``bedrock-runtime`` client (SigV4 with placeholder keys), interleaved per round:

* ``floor``: the botocore-decoding floor (issue 34): a bare sync ``http.client`` POST on the same
  socket (keep-alive), the body's bytes fed to botocore's own ``EventStreamBuffer`` (prelude and
  message CRCs checked, headers decoded) and one ``json.loads`` per event payload, building nothing;
* ``sdk``: ``client.converse_stream(...)`` and its ``EventStream`` iterated to the end (botocore
  decodes each frame and parses its payload against the service model into a dict);
* ``adapter``: ``BedrockConverseAdapter.stream(request)`` to its ``ResponseCompletedEvent`` (the
  call in a worker thread, frames cut and CRC-checked by :mod:`agentlab.adapters.bedrock_converse.
  _framing`, reasoning kept as an opaque item, the tool call assembled, usage normalized).

Figures: median (and min) over rounds of process CPU time (every thread of the process) divided
by the event count. Run: ``python -m bench --only bedrock`` (``--quick`` for the smoke sizes); the
stored figure is merged with ``--merge``.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client as httpclient
import json
import socket
import subprocess
import sys
import warnings
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._util import Section, Target, cpu_rounds, median

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
_PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def converse_frames(n_reasoning: int, n_text: int) -> list[bytes]:
    """The event-stream messages of one ConverseStream answer."""
    from agentlab.sim.aws.eventstream import encode_event

    n = 0

    def ev(kind: str, payload: dict[str, Any]) -> bytes:
        nonlocal n
        n += 1
        body = {**payload, "p": _PAD[: 2 + (n * 7) % 60]}
        return encode_event(kind, json.dumps(body, separators=(",", ":")).encode())

    def delta(k: int, d: dict[str, Any]) -> bytes:
        return ev("contentBlockDelta", {"contentBlockIndex": k, "delta": d})

    frames = [ev("messageStart", {"role": "assistant"})]
    thought = [{"reasoningContent": {"text": f"step {i} of the plan, "}} for i in range(n_reasoning)]
    frames += [delta(0, d) for d in thought]
    frames += [delta(0, {"reasoningContent": {"signature": "EqQBCkgIBhABGAIiQ" + "A" * 300}})]
    frames.append(ev("contentBlockStop", {"contentBlockIndex": 0}))
    frames += [delta(1, {"text": f"word{i} "}) for i in range(n_text)]
    frames.append(ev("contentBlockStop", {"contentBlockIndex": 1}))
    start = {"toolUse": {"toolUseId": "tooluse_bench0000000000001", "name": "get_weather"}}
    frames.append(ev("contentBlockStart", {"contentBlockIndex": 2, "start": start}))
    frames += [delta(2, {"toolUse": {"input": piece}}) for piece in ('{"city":', '"Paris"}')]
    frames.append(ev("contentBlockStop", {"contentBlockIndex": 2}))
    frames.append(ev("messageStop", {"stopReason": "tool_use"}))
    out = n_reasoning + n_text
    usage = {"inputTokens": 50, "outputTokens": out, "totalTokens": 50 + out}
    frames.append(ev("metadata", {"usage": usage, "metrics": {"latencyMs": 1}}))
    return frames


def _reply(frames: list[bytes]) -> list[bytes]:
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/vnd.amazon.eventstream\r\n"
        b"transfer-encoding: chunked\r\nx-amzn-requestid: 5c0ffee0-0000-4000-8000-000000000001\r\n\r\n"
    )
    chunks = [b"%x\r\n%s\r\n" % (len(f), f) for f in frames]
    return [head + chunks[0], *chunks[1:], b"0\r\n\r\n"]


async def _serve(n_reasoning: int, n_text: int, lifetime: float) -> None:
    parts = _reply(converse_frames(n_reasoning, n_text))

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode("latin-1").split("\r\n")[1:]:
                    k, _, v = line.partition(":")
                    if k.strip().lower() == "content-length":
                        length = int(v.strip() or 0)
                if length:
                    await reader.readexactly(length)
                for part in parts:
                    writer.write(part)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    server = await asyncio.start_server(one, "127.0.0.1", 0)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await asyncio.sleep(lifetime)


@contextlib.contextmanager
def serving(n_reasoning: int, n_text: int) -> Iterator[int]:
    """The server in its own process; its port."""
    cmd = [sys.executable, "-m", "bench.bedrock", "--serve", str(n_reasoning), str(n_text)]
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        yield int(line.split()[1])
    finally:
        proc.kill()
        proc.wait()


def _floor(conn: httpclient.HTTPConnection) -> int:
    """The floor: botocore's event-stream decoder + ``json.loads`` per event; the event count."""
    from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]

    path = f"/model/{MODEL}/converse-stream"
    conn.request("POST", path, body=b"{}", headers={"content-type": "application/json"})
    buf = EventStreamBuffer()
    n = 0
    loads = json.loads
    with conn.getresponse() as resp:
        while data := resp.read1(65536):
            buf.add_data(data)
            for message in buf:
                loads(message.payload)
                n += 1
    return n


def runners(port: int) -> dict[str, Callable[[], Awaitable[Any]]]:
    import boto3  # type: ignore[import-untyped]
    from botocore.config import Config  # type: ignore[import-untyped]

    from agentlab.adapters.bedrock_converse import BedrockConverseAdapter
    from agentlab.neutral.items import UserItem
    from agentlab.neutral.request import ModelRequest, ReasoningSettings, ToolSpec

    config = Config(signature_version="v4", retries={"total_max_attempts": 1, "mode": "standard"})
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", endpoint_url=f"http://127.0.0.1:{port}", config=config,
        aws_access_key_id="AKIABENCH00000000000", aws_secret_access_key="bench-secret",
    )  # fmt: skip
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    tool = ToolSpec(name="get_weather", parameters=schema)
    thinking = ReasoningSettings(budget_tokens=2048)
    request = ModelRequest(
        model=MODEL, items=(UserItem(text="hi"),), tools=(tool,), reasoning=thinking, cache=None
    )
    adapter = BedrockConverseAdapter(MODEL, client=client)
    kwargs = adapter.build(request).body

    conn = httpclient.HTTPConnection("127.0.0.1", port)

    async def floor() -> int:
        return _floor(conn)

    async def sdk() -> int:
        answer = client.converse_stream(**kwargs)
        return sum(1 for _ in answer["stream"])

    async def adapted() -> int:
        return len([e async for e in adapter.stream(request)])

    return {"floor": floor, "sdk": sdk, "adapter": adapted}


def measure(n_reasoning: int, n_text: int, rounds: int) -> dict[str, Any]:
    events = len(converse_frames(n_reasoning, n_text))
    with serving(n_reasoning, n_text) as port:
        samples = asyncio.run(cpu_rounds(runners(port), rounds))
    us = {k: median(v) / events * 1e6 for k, v in samples.items()}
    best = {k: min(v) / events * 1e6 for k, v in samples.items()}
    return {"events": events, "rounds": rounds, "us_per_event": us, "us_per_event_min": best}


def run(quick: bool) -> Section:
    """``python -m bench`` section ``bedrock``: raw botocore ConverseStream vs the adapter, per event."""
    warnings.simplefilter("ignore", DeprecationWarning)
    n_r, n_t, rounds = (300, 100, 1) if quick else (5000, 2000, 7)
    figures = measure(n_r, n_t, rounds)
    sec = Section("bedrock", "14. Bedrock Converse adapter (CPU µs per event, loopback, one frame per chunk)")
    sec.figures = {"stream": {"reasoning_deltas": n_r, "text_deltas": n_t, "tool_calls": 1}, **figures}
    us = figures["us_per_event"]
    floor_label = "floor: botocore EventStreamBuffer + json.loads (sync http.client)"
    sec.row(floor_label, f"{us['floor']:.1f} µs/event")
    sec.row("raw botocore ConverseStream (EventStream parsed)", f"{us['sdk']:.1f} µs/event")
    sec.row("BedrockConverseAdapter.stream", f"{us['adapter']:.1f} µs/event")
    ratio = us["adapter"] / us["sdk"] if us["sdk"] else float("nan")
    floor_ratio = us["adapter"] / us["floor"] if us["floor"] else float("nan")
    sec.row("adapter / raw botocore; adapter / botocore-decoding floor", f"{ratio:.2f}x; {floor_ratio:.2f}x")
    sec.targets.append(Target("bedrock adapter CPU per event vs raw botocore", ratio, 1.0, "x"))
    # Issue 34's bar on Bedrock's binary stream: the adapter at or below the botocore-decoding floor.
    sec.targets.append(Target("bedrock: adapter / botocore-decoding floor", floor_ratio, 1.0, "x"))
    sec.notes.append(
        f"{figures['events']} events per answer, median of {rounds} rounds; process CPU (all threads: the "
        "adapter's worker thread included)"
    )
    return sec


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--serve":
        asyncio.run(_serve(int(sys.argv[2]), int(sys.argv[3]), lifetime=600))
    else:
        print(json.dumps(run("--quick" in sys.argv).as_json(), indent=1))
