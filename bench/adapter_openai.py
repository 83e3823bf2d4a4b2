"""CPU per streamed event: the OpenAI Responses adapter vs the raw SDK typed stream vs the floor.

Why: the adapter reads the raw SSE itself (one ``json.loads`` per event) instead of the SDK's typed
event union, and this shows what that buys. All three consumers read the same synthetic stream
(``--reasoning`` summary deltas, ``--text`` answer deltas and one tool call, shaped like recorded
OpenAI events, served in 16 KiB chunks by an ``httpx2.MockTransport``) side by side in one process;
each figure is the median over ``--rounds`` rounds of process CPU time divided by the event count.

* floor: ``httpx2`` line iteration of the raw response + ``json.loads`` per ``data:`` line;
* sdk: ``client.responses.create(stream=True)`` iterating the SDK's typed events;
* adapter: ``OpenAIResponsesAdapter.stream(request)`` to its ``ResponseCompletedEvent``.

Run: ``.venv/bin/python -m bench.adapter_openai`` (or ``python bench/adapter_openai.py``).
Targets (issue #4): adapter <= 1/2 of sdk, and <= 2.5x floor.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx2
import openai

from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.events import ResponseCompletedEvent
from agentlab.items import UserItem
from agentlab.request import ModelRequest, ToolSpec

RID = "resp_0bench0000000000000000000000000000000000000000"
RS = "rs_0bench0000000000000000000000000000000000000000"
MSG = "msg_0bench000000000000000000000000000000000000000"
FC = "fc_0bench0000000000000000000000000000000000000000"
CHUNK = 16 * 1024
WORDS = [
    "The",
    " user",
    " asks",
    " about",
    " weather",
    " in",
    " Paris",
    ";",
    " I",
    " should",
    " call",
    " the",
    " tool",
]


def build_stream(n_reasoning: int, n_text: int) -> tuple[bytes, int]:
    """An SSE body shaped like a recorded gpt-5 stream; returns (bytes, number of events)."""
    seq = 0
    out: list[str] = []

    def emit(obj: dict[str, Any]) -> None:
        nonlocal seq
        obj = {"type": obj["type"], "sequence_number": seq, **{k: v for k, v in obj.items() if k != "type"}}
        seq += 1
        out.append(f"event: {obj['type']}\ndata: {json.dumps(obj, separators=(',', ':'))}\n\n")

    base = {
        "id": RID,
        "object": "response",
        "status": "in_progress",
        "model": "gpt-5-2025-08-07",
        "output": [],
    }
    emit({"type": "response.created", "response": base})
    emit({"type": "response.in_progress", "response": base})
    enc = "gAAAAAB" + "x7Yq" * 600
    summary = "".join(WORDS[i % len(WORDS)] for i in range(n_reasoning))
    rs_done = {
        "id": RS,
        "type": "reasoning",
        "encrypted_content": enc,
        "summary": [{"type": "summary_text", "text": summary}],
    }
    emit(
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"id": RS, "type": "reasoning", "encrypted_content": enc[:100], "summary": []},
        }
    )
    emit(
        {
            "type": "response.reasoning_summary_part.added",
            "item_id": RS,
            "output_index": 0,
            "summary_index": 0,
            "part": {"type": "summary_text", "text": ""},
        }
    )
    for i in range(n_reasoning):
        emit(
            {
                "type": "response.reasoning_summary_text.delta",
                "item_id": RS,
                "output_index": 0,
                "summary_index": 0,
                "delta": WORDS[i % len(WORDS)],
                "obfuscation": "aB3dE9fGh1",
            }
        )
    emit(
        {
            "type": "response.reasoning_summary_text.done",
            "item_id": RS,
            "output_index": 0,
            "summary_index": 0,
            "text": summary,
        }
    )
    emit(
        {
            "type": "response.reasoning_summary_part.done",
            "item_id": RS,
            "output_index": 0,
            "summary_index": 0,
            "part": {"type": "summary_text", "text": summary},
        }
    )
    emit({"type": "response.output_item.done", "output_index": 0, "item": rs_done})
    text = "".join(WORDS[i % len(WORDS)] for i in range(n_text))
    msg_done = {
        "id": MSG,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}],
    }
    emit(
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {**msg_done, "status": "in_progress", "content": []},
        }
    )
    emit(
        {
            "type": "response.content_part.added",
            "item_id": MSG,
            "output_index": 1,
            "content_index": 0,
            "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
        }
    )
    for i in range(n_text):
        emit(
            {
                "type": "response.output_text.delta",
                "item_id": MSG,
                "output_index": 1,
                "content_index": 0,
                "delta": WORDS[i % len(WORDS)],
                "logprobs": [],
                "obfuscation": "Zx9",
            }
        )
    emit(
        {
            "type": "response.output_text.done",
            "item_id": MSG,
            "output_index": 1,
            "content_index": 0,
            "text": text,
            "logprobs": [],
        }
    )
    emit(
        {
            "type": "response.content_part.done",
            "item_id": MSG,
            "output_index": 1,
            "content_index": 0,
            "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": text},
        }
    )
    emit({"type": "response.output_item.done", "output_index": 1, "item": msg_done})
    args = '{"city":"Paris"}'
    fc_done = {
        "id": FC,
        "type": "function_call",
        "status": "completed",
        "arguments": args,
        "call_id": "call_bench",
        "name": "get_weather",
    }
    emit(
        {
            "type": "response.output_item.added",
            "output_index": 2,
            "item": {**fc_done, "arguments": "", "status": "in_progress"},
        }
    )
    for piece in ('{"', "city", '":"', "Paris", '"}'):
        emit(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": FC,
                "output_index": 2,
                "delta": piece,
                "obfuscation": "q1",
            }
        )
    emit(
        {"type": "response.function_call_arguments.done", "item_id": FC, "output_index": 2, "arguments": args}
    )
    emit({"type": "response.output_item.done", "output_index": 2, "item": fc_done})
    final = {
        **base,
        "status": "completed",
        "output": [rs_done, msg_done, fc_done],
        "usage": {
            "input_tokens": 120,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": n_reasoning + n_text + 10,
            "output_tokens_details": {"reasoning_tokens": n_reasoning},
            "total_tokens": 0,
        },
    }
    emit({"type": "response.completed", "response": final})
    return "".join(out).encode("utf-8"), seq


def make_client(body: bytes) -> openai.AsyncOpenAI:
    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(body), CHUNK):
            yield body[i : i + CHUNK]

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream", "x-request-id": "req_bench"}, content=chunks()
        )

    return openai.AsyncOpenAI(
        api_key="sk-bench",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
        max_retries=0,
    )


async def floor(client: openai.AsyncOpenAI) -> int:
    n = 0
    http = client._client  # the httpx2.AsyncClient the SDK was given
    async with http.stream("POST", "https://api.openai.com/v1/responses", content=b"{}") as resp:
        async for line in resp.aiter_lines():
            if line.startswith("data: "):
                json.loads(line[6:])
                n += 1
    return n


async def sdk(client: openai.AsyncOpenAI) -> int:
    n = 0
    stream = await client.responses.create(model="gpt-5", input="hi", stream=True)
    async for _ in stream:
        n += 1
    return n


def adapter_runner() -> Callable[[openai.AsyncOpenAI], Awaitable[int]]:
    tool = ToolSpec(
        name="get_weather",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    )
    request = ModelRequest(model="gpt-5", items=(UserItem(text="hi"),), tools=(tool,))

    async def run(client: openai.AsyncOpenAI) -> int:
        adapter = OpenAIResponsesAdapter("gpt-5", client=client, max_retries=0)
        n = 0
        async for ev in adapter.stream(request):
            n += 1
            if isinstance(ev, ResponseCompletedEvent):
                assert ev.response.usage.reasoning_tokens is not None and ev.response.tool_calls
        return n

    return run


async def measure(rounds: int, n_reasoning: int, n_text: int) -> dict[str, float]:
    body, n_events = build_stream(n_reasoning, n_text)
    client = make_client(body)
    runners: dict[str, Callable[[openai.AsyncOpenAI], Awaitable[int]]] = {
        "floor": floor,
        "sdk": sdk,
        "adapter": adapter_runner(),
    }
    samples: dict[str, list[float]] = {k: [] for k in runners}
    for fn in runners.values():  # warm-up (imports, caches)
        await fn(client)
    for _ in range(rounds):
        for name, fn in runners.items():  # interleaved, so drift hits all three alike
            gc.collect()
            t0 = time.process_time()
            await fn(client)
            samples[name].append((time.process_time() - t0) / n_events * 1e6)
    await client.close()
    print(
        f"stream: {n_events} events ({n_reasoning} reasoning deltas, {n_text} text deltas, 1 tool call), "
        f"{len(body) / 1e6:.1f} MB; {rounds} rounds; CPU us/event (median [min-max]):"
    )
    med = {k: statistics.median(v) for k, v in samples.items()}
    for k, v in samples.items():
        print(f"  {k:8s} {med[k]:7.2f}  [{min(v):.2f}-{max(v):.2f}]")
    print(f"  adapter / sdk   = {med['adapter'] / med['sdk']:.2f}  (target <= 0.50)")
    print(f"  adapter / floor = {med['adapter'] / med['floor']:.2f}  (target <= 2.50)")
    return med


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--reasoning", type=int, default=5000)
    p.add_argument("--text", type=int, default=2000)
    a = p.parse_args(argv)
    med = asyncio.run(measure(a.rounds, a.reasoning, a.text))
    ok = med["adapter"] <= 0.5 * med["sdk"] and med["adapter"] <= 2.5 * med["floor"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
