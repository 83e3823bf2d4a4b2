r"""CPU per streamed event for the Gemini adapter alone, against the raw google-genai typed stream.

The same body for every consumer: a ``streamGenerateContent?alt=sse`` answer of N thought-summary
chunks, M answer-text chunks and a final chunk holding a ``functionCall`` with its
``thoughtSignature`` (each event a full ``GenerateContentResponse`` chunk with ``usageMetadata``,
separated by ``\r\n\r\n``, as the API sends them), handed over in process by an
``httpx2.MockTransport`` behind a ``google.genai.Client`` (16 KiB reads). The consumers:

* ``floor``: ``httpx2`` line iteration + one ``json.loads`` per ``data:`` line, nothing else;
* ``sdk``: ``client.aio.models.generate_content_stream`` (the SDK's typed chunks), iterated to the end;
* ``adapter``: ``GoogleGeminiAdapter.stream(request)`` to its ``ResponseCompletedEvent``.

Figures: median (and min) over rounds of process CPU time divided by the event count.
Run: ``.venv/bin/python bench/adapter_gemini.py [--rounds 7] [--thoughts 3000] [--text 1000]``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx2

from bench._util import cpu_rounds, median
from bench.adapters import _transport

MODEL = "gemini-3-flash-preview"


def gemini_stream(n_thoughts: int, n_text: int) -> tuple[bytes, int]:
    """The SSE body and its event count."""
    usage = {"promptTokenCount": 40, "candidatesTokenCount": n_text, "thoughtsTokenCount": n_thoughts}

    def chunk(parts: list[dict[str, Any]], finish: bool = False) -> bytes:
        cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            cand["finishReason"] = "STOP"
        obj = {"candidates": [cand], "usageMetadata": usage, "modelVersion": MODEL, "responseId": "bench_1"}
        return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\r\n\r\n"

    pieces = [chunk([{"text": f"thinking step {i} ", "thought": True}]) for i in range(n_thoughts)]
    pieces += [chunk([{"text": f"word{i} "}]) for i in range(n_text)]
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}}
    pieces.append(chunk([{**call, "thoughtSignature": "U0lH" * 64}], finish=True))
    return b"".join(pieces), len(pieces)


def runners(body: bytes) -> dict[str, Any]:
    from google import genai
    from google.genai import types

    from agentlab.adapters.google_gemini import GoogleGeminiAdapter
    from agentlab.neutral.items import UserItem
    from agentlab.neutral.request import ModelRequest, ToolSpec

    http = httpx2.AsyncClient(transport=_transport(body))
    client = genai.Client(api_key="bench-key", http_options=types.HttpOptions(httpx_async_client=http))
    adapter = GoogleGeminiAdapter(MODEL, client=client, max_retries=0)
    request = ModelRequest(model=MODEL, items=(UserItem(text="hi"),), tools=(ToolSpec(name="get_weather"),))
    url = f"https://generativelanguage.googleapis.com/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"

    async def floor() -> None:
        async with http.stream("POST", url, content=b"{}") as resp:
            async for line in resp.aiter_lines():
                if line.startswith("data: "):
                    json.loads(line[6:])

    async def sdk() -> None:
        async for _ in await client.aio.models.generate_content_stream(model=MODEL, contents="hi"):
            pass

    async def run_adapter() -> None:
        async for _ in adapter.stream(request):
            pass

    return {"floor": floor, "sdk": sdk, "adapter": run_adapter}


async def measure(n_thoughts: int, n_text: int, rounds: int) -> dict[str, Any]:
    body, events = gemini_stream(n_thoughts, n_text)
    samples = await cpu_rounds(runners(body), rounds)
    per_event = {k: [x / events * 1e6 for x in v] for k, v in samples.items()}
    return {
        "events": events,
        "bytes": len(body),
        "us_per_event": {k: median(v) for k, v in per_event.items()},
        "min_us_per_event": {k: min(v) for k, v in per_event.items()},
    }


def main(argv: list[str] | None = None) -> int:
    import argparse

    warnings.simplefilter("ignore", DeprecationWarning)
    p = argparse.ArgumentParser(description="CPU per streamed event, Gemini: floor, raw SDK, adapter")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--thoughts", type=int, default=3000)
    p.add_argument("--text", type=int, default=1000)
    a = p.parse_args(argv)
    m = asyncio.run(measure(a.thoughts, a.text, a.rounds))
    size = f"{m['events']:,} events, {m['bytes'] / 1e6:.1f} MB"
    print(f"gemini [in process]: {size}; {a.rounds} rounds; CPU µs/event:")
    for k, v in m["us_per_event"].items():
        print(f"  {k:8s} {v:7.2f}  (min {m['min_us_per_event'][k]:.2f})")
    ratio = m["us_per_event"]["adapter"] / m["us_per_event"]["sdk"]
    print(f"  adapter / sdk = {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
