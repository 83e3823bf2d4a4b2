"""Section 1: CPU per streamed event, in process, both providers, side by side.

Every consumer reads the same recorded-shape body (:mod:`bench.streams`), served in 16 KiB chunks by
an ``httpx2.MockTransport`` behind the official SDK client:

* ``floor``: ``httpx2`` line iteration of the raw response + ``json.loads`` per ``data:`` line;
* ``sdk``: the raw SDK's typed stream (``responses.create(stream=True)`` /
  ``messages.create(stream=True)``), iterated to the end; ``sdk_helper``: Anthropic's
  ``messages.stream()`` helper (information only);
* ``adapter``: agentlab's adapter ``stream(request)`` to its ``ResponseCompletedEvent``;
* ``run_step``: one full ``Run`` step (``max_steps=1``): adapter + reducer + checkpoint + in-memory
  event log + the tool call it asks for.

Each figure is the median over rounds of process CPU time divided by the stream's event count.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2

from ._util import Section, Target, cpu_rounds, median
from .streams import Stream, anthropic_stream, openai_stream

CHUNK = 16 * 1024
OPENAI_MODEL = "gpt-5"
ANTHROPIC_MODEL = "claude-sonnet-4-5"


def _transport(body: bytes) -> httpx2.MockTransport:
    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(body), CHUNK):
            yield body[i : i + CHUNK]

    def handler(request: httpx2.Request) -> httpx2.Response:
        headers = {
            "content-type": "text/event-stream",
            "x-request-id": "req_bench",
            "request-id": "req_bench",
        }
        return httpx2.Response(200, headers=headers, content=chunks())

    return httpx2.MockTransport(handler)


def _tool() -> Any:
    import agentlab as al

    def get_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: City name.
        """
        return "18 C, rain"

    return al.tool(get_weather)


async def _floor(http: httpx2.AsyncClient, url: str) -> int:
    n = 0
    loads = json.loads
    async with http.stream("POST", url, content=b"{}") as resp:
        async for line in resp.aiter_lines():
            if line.startswith("data: "):
                loads(line[6:])
                n += 1
    return n


def openai_runners(stream: Stream) -> dict[str, Callable[[], Awaitable[Any]]]:
    import openai

    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
    from agentlab.eventlog import EventLog
    from agentlab.items import UserItem
    from agentlab.request import ModelRequest
    from agentlab.runner import Run

    http = httpx2.AsyncClient(transport=_transport(stream.body))
    client = openai.AsyncOpenAI(api_key="sk-bench", http_client=http, max_retries=0)
    tool = _tool()
    request = ModelRequest(model=OPENAI_MODEL, items=(UserItem(text="hi"),), tools=(tool.spec,))

    async def floor() -> None:
        await _floor(http, "https://api.openai.com/v1/responses")

    async def sdk() -> None:
        s = await client.responses.create(model=OPENAI_MODEL, input="hi", stream=True)
        async for _ in s:
            pass

    async def adapter() -> None:
        a = OpenAIResponsesAdapter(OPENAI_MODEL, client=client, max_retries=0)
        async for _ in a.stream(request):
            pass

    async def run_step() -> None:
        a = OpenAIResponsesAdapter(OPENAI_MODEL, client=client, max_retries=0)
        r = Run(f"openai:{OPENAI_MODEL}", "hi", tools=[tool], adapter=a, max_steps=1, event_log=EventLog())
        res = await r.arun()
        assert res.steps == 1 and res.calls[0].usage.reasoning_tokens, res

    return {"floor": floor, "sdk": sdk, "adapter": adapter, "run_step": run_step}


def anthropic_runners(stream: Stream) -> dict[str, Callable[[], Awaitable[Any]]]:
    import anthropic

    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
    from agentlab.eventlog import EventLog
    from agentlab.items import UserItem
    from agentlab.request import ModelRequest
    from agentlab.runner import Run

    http = httpx2.AsyncClient(transport=_transport(stream.body))
    client = anthropic.AsyncAnthropic(api_key="sk-ant-bench", http_client=http, max_retries=0)
    tool = _tool()
    request = ModelRequest(model=ANTHROPIC_MODEL, items=(UserItem(text="hi"),), tools=(tool.spec,))
    kw: dict[str, Any] = {
        "model": ANTHROPIC_MODEL,
        "max_tokens": 16000,
        "messages": [{"role": "user", "content": "hi"}],
        "thinking": {"type": "enabled", "budget_tokens": 8000},
    }

    async def floor() -> None:
        await _floor(http, "https://api.anthropic.com/v1/messages")

    async def sdk() -> None:
        s = await client.messages.create(**kw, stream=True)
        async for _ in s:
            pass

    async def sdk_helper() -> None:
        async with client.messages.stream(**kw) as s:
            async for _ in s:
                pass

    async def adapter() -> None:
        a = AnthropicMessagesAdapter(ANTHROPIC_MODEL, client=client, max_retries=0)
        async for _ in a.stream(request):
            pass

    async def run_step() -> None:
        a = AnthropicMessagesAdapter(ANTHROPIC_MODEL, client=client, max_retries=0)
        r = Run(
            f"anthropic:{ANTHROPIC_MODEL}", "hi", tools=[tool], adapter=a, max_steps=1, event_log=EventLog()
        )
        res = await r.arun()
        assert res.steps == 1 and res.calls[0].usage.output_tokens, res

    return {"floor": floor, "sdk": sdk, "sdk_helper": sdk_helper, "adapter": adapter, "run_step": run_step}


async def measure(provider: str, n_reasoning: int, n_text: int, rounds: int) -> dict[str, Any]:
    stream = (
        openai_stream(n_reasoning, n_text) if provider == "openai" else anthropic_stream(n_reasoning, n_text)
    )
    runners = openai_runners(stream) if provider == "openai" else anthropic_runners(stream)
    samples = await cpu_rounds(runners, rounds)
    us = {k: median(v) / stream.events * 1e6 for k, v in samples.items()}
    return {
        "events": stream.events,
        "bytes": len(stream.body),
        "us_per_event": us,
        "samples_us_per_event": {k: [x / stream.events * 1e6 for x in v] for k, v in samples.items()},
    }


def run(quick: bool) -> Section:
    sec = Section("adapter_overhead", "1. Adapter overhead (in-process transport, CPU µs per event)")
    n_r, n_t, rounds = (500, 200, 3) if quick else (5000, 2000, 7)
    sec.figures["stream"] = {"reasoning_deltas": n_r, "text_deltas": n_t, "tool_calls": 1, "rounds": rounds}
    for provider in ("openai", "anthropic"):
        m = asyncio.run(measure(provider, n_r, n_t, rounds))
        sec.figures[provider] = m
        us = m["us_per_event"]
        helper = f", SDK `messages.stream()` helper {us['sdk_helper']:.1f}" if "sdk_helper" in us else ""
        sec.row(
            f"{provider}: floor / raw SDK typed / adapter / run step ({m['events']:,} events)",
            f"{us['floor']:.1f} / {us['sdk']:.1f} / {us['adapter']:.1f} / {us['run_step']:.1f} µs{helper}",
        )
        limit = 0.5 if provider == "openai" else 1.0
        sec.targets += [
            Target(f"{provider}: adapter / raw SDK typed stream", us["adapter"] / us["sdk"], limit, "x"),
            Target(f"{provider}: adapter / floor", us["adapter"] / us["floor"], 2.5, "x"),
            Target(f"{provider}: run step / raw SDK typed stream", us["run_step"] / us["sdk"], 1.5, "x"),
        ]
    return sec


def cli(provider: str, argv: list[str] | None = None, *, reasoning_flag: str = "--reasoning") -> int:
    """One provider's section-1 figures from the command line (``bench/adapter_<provider>.py``).

    Exit status 0 when the adapter meets its targets (OpenAI: <= 1/2 of the raw SDK typed stream;
    Anthropic: <= the raw SDK typed stream; both: <= 2.5x the floor), 1 otherwise.
    """
    import argparse

    p = argparse.ArgumentParser(
        description=f"CPU per streamed event, {provider}: floor, raw SDK, adapter, run step"
    )
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument(reasoning_flag, dest="reasoning", type=int, default=5000)
    p.add_argument("--text", type=int, default=2000)
    a = p.parse_args(argv)
    m = asyncio.run(measure(provider, a.reasoning, a.text, a.rounds))
    print(
        f"{provider}: {m['events']:,} events ({a.reasoning} reasoning deltas, {a.text} text deltas, "
        f"1 tool call), {m['bytes'] / 1e6:.1f} MB; {a.rounds} rounds; CPU µs/event (median [min-max]):"
    )
    for k, v in m["samples_us_per_event"].items():
        print(f"  {k:10s} {m['us_per_event'][k]:7.2f}  [{min(v):.2f}-{max(v):.2f}]")
    us = m["us_per_event"]
    limit = 0.5 if provider == "openai" else 1.0
    print(f"  adapter / sdk   = {us['adapter'] / us['sdk']:.2f}  (target <= {limit:.2f})")
    print(f"  adapter / floor = {us['adapter'] / us['floor']:.2f}  (target <= 2.50)")
    print(f"  run step / sdk  = {us['run_step'] / us['sdk']:.2f}  (target <= 1.50)")
    ok = us["adapter"] <= limit * us["sdk"] and us["adapter"] <= 2.5 * us["floor"]
    return 0 if ok else 1
