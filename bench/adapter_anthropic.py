"""CPU per streamed event: the Anthropic Messages adapter vs the raw SDK typed stream vs the floor.

Why: the adapter reads the raw SSE itself (one ``json.loads`` and a dict dispatch per event) instead
of the SDK's typed event union; this shows what that costs and buys. Every consumer reads the same
synthetic stream shaped like the recorded Anthropic streams (``--thinking`` thinking deltas, one
signature delta, ``--text`` text deltas, one ``tool_use`` with input_json deltas; message_start,
ping, block start/stop, message_delta, message_stop), served in 16 KiB chunks by an
``httpx2.MockTransport``, side by side in one process, in rotating order. Each figure is the median
over ``--rounds`` of process CPU time divided by the number of SSE events.

* floor: ``httpx2`` line iteration of the raw response + ``json.loads`` per ``data:`` line;
* sdk: ``client.messages.create(stream=True)`` iterating the SDK's typed events;
* sdk-helper: ``client.messages.stream()`` (the SDK's accumulating helper), for reference;
* adapter: ``AnthropicMessagesAdapter.stream(request)`` to its ``ResponseCompletedEvent``.

Run: ``.venv/bin/python bench/adapter_anthropic.py`` (add ``--rounds 9`` for steadier medians).
Targets (issue #5): adapter <= sdk, and <= 2.5x floor.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anthropic
import httpx2

from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.events import ResponseCompletedEvent
from agentlab.items import UserItem
from agentlab.request import ModelRequest, ReasoningSettings, ToolSpec

MODEL = "claude-sonnet-4-0"
CHUNK = 16 * 1024
WORDS = [
    " The",
    " user",
    " asks",
    " about",
    " the",
    " weather",
    " in",
    " Paris",
    " and",
    " Rome",
    ".",
    " Let",
    " me",
]
SIGNATURE = "EqQBCkYIBxgCKkBh" + "x" * 400


def build_stream(thinking: int, text: int) -> tuple[bytes, int]:
    """The SSE body and its event count."""
    evs: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_01Bench",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 400,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 4,
                },
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {"type": "ping"},
    ]
    evs += [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": WORDS[i % 13]},
        }
        for i in range(thinking)
    ]
    evs += [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": SIGNATURE},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    ]
    evs += [
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": WORDS[i % 13]}}
        for i in range(text)
    ]
    evs += [
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_01Bench", "name": "get_weather", "input": {}},
        },
    ]
    evs += [
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": p}}
        for p in ["", '{"city"', ': "Par', 'is"}']
    ]
    evs += [
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {
                "output_tokens": thinking + text + 20,
                "output_tokens_details": {"thinking_tokens": thinking},
            },
        },
        {"type": "message_stop"},
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n" for e in evs)
    return body.encode(), len(evs)


class _Chunks(httpx2.AsyncByteStream):
    def __init__(self, body: bytes) -> None:
        self.body = body

    async def __aiter__(self) -> Any:
        for i in range(0, len(self.body), CHUNK):
            yield self.body[i : i + CHUNK]


def _http(body: bytes) -> httpx2.AsyncClient:
    def handler(request: httpx2.Request) -> httpx2.Response:
        headers = {"content-type": "text/event-stream; charset=utf-8", "request-id": "req_bench"}
        return httpx2.Response(200, headers=headers, stream=_Chunks(body))

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


def _client(body: bytes) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key="bench-not-a-key",
        base_url="https://api.anthropic.com",
        max_retries=0,
        http_client=_http(body),
    )


PARAMS: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 16000,
    "messages": [{"role": "user", "content": "Is it warmer in Paris or Rome?"}],
    "thinking": {"type": "enabled", "budget_tokens": 8192},
}
REQUEST = ModelRequest(
    model=MODEL,
    items=(UserItem(text="Is it warmer in Paris or Rome?"),),
    tools=(
        ToolSpec(
            name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}}
        ),
    ),
    reasoning=ReasoningSettings(budget_tokens=8192),
    cache=None,
)


async def floor(body: bytes) -> int:
    n = 0
    async with _http(body) as http, http.stream("POST", "https://api.anthropic.com/v1/messages") as resp:
        async for line in resp.aiter_lines():
            if line.startswith("data:"):
                json.loads(line[6:])
                n += 1
    return n


async def sdk(body: bytes) -> int:
    n = 0
    client = _client(body)
    stream = await client.messages.create(stream=True, **PARAMS)
    async for _ev in stream:
        n += 1
    await client.close()
    return n


async def sdk_helper(body: bytes) -> int:
    n = 0
    client = _client(body)
    async with client.messages.stream(**PARAMS) as stream:
        async for _ev in stream:
            n += 1
        await stream.get_final_message()
    await client.close()
    return n


async def adapter(body: bytes) -> int:
    n = 0
    a = AnthropicMessagesAdapter(MODEL, client=_client(body))
    async for ev in a.stream(REQUEST):
        n += 1
        if isinstance(ev, ResponseCompletedEvent):
            assert ev.response.tool_calls and len(ev.response.reasoning) == 1
    await a._client.close()
    return n


CONSUMERS: dict[str, Callable[[bytes], Awaitable[int]]] = {
    "floor": floor,
    "sdk": sdk,
    "sdk-helper": sdk_helper,
    "adapter": adapter,
}


def measure(thinking: int, text: int, rounds: int) -> dict[str, float]:
    body, events = build_stream(thinking, text)
    loop = asyncio.new_event_loop()
    samples: dict[str, list[float]] = {k: [] for k in CONSUMERS}
    names = list(CONSUMERS)
    for name in names:  # warm-up: imports, caches, lazy SDK resources
        loop.run_until_complete(CONSUMERS[name](body))
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            gc.collect()
            gc.disable()
            t0 = time.process_time()
            loop.run_until_complete(CONSUMERS[name](body))
            samples[name].append((time.process_time() - t0) / events * 1e6)
            gc.enable()
    loop.close()
    return {k: statistics.median(v) for k, v in samples.items()} | {"events": float(events)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--thinking", type=int, default=5000)
    ap.add_argument("--text", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    res = measure(args.thinking, args.text, args.rounds)
    events = int(res.pop("events"))
    print(
        f"{events} SSE events ({args.thinking} thinking + {args.text} text deltas + 1 tool_use), "
        f"median of {args.rounds} rounds, CPU µs per event:"
    )
    for name, us in res.items():
        print(f"  {name:<11} {us:7.1f} µs/event   ({us / res['floor']:.2f}x floor)")
    print(
        f"adapter vs sdk typed stream: {res['adapter'] / res['sdk']:.2f}x "
        f"(target <= 1.0); vs floor: {res['adapter'] / res['floor']:.2f}x (target <= 2.5)"
    )


if __name__ == "__main__":
    main()
