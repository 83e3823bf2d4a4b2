"""agentlab's benchmarks: its cost over the raw SDKs and over peer frameworks, and the notebook's load.

One entry point, ``python -m bench`` (``make bench``): every section runs in its own fresh
interpreter, prints a markdown table and writes the figures as JSON (``bench/results.json`` or
``--out PATH``). ``--quick`` is the CI smoke mode (small streams, one or two rounds; seconds, and its
figures are not meaningful). Every figure is measured in the run that prints it; nothing is
hard-coded. Sections:

1. ``adapters``: CPU per streamed event over a loopback socket (one HTTP chunk per SSE event, as real
   servers flush) and in process (16 KiB chunks): floor, raw SDK typed stream, adapter, run step;
   OpenAI, xAI's Responses dialect (same bytes as OpenAI), Anthropic and Gemini side by side.
2. ``peers``: the same bytes over loopback on four protocols (Responses, Messages, Gemini, DeepSeek Chat):
   raw SDK, agentlab, LiteLLM, pydantic-ai (``bench`` extra).
3. ``startup``: ``import agentlab`` and first panel render vs ``import pydantic`` and the SDKs.
4. ``notebook``: comm messages, bytes and delta-to-display latency of a 5,000-delta panel stream.
5. ``compare``: ``compare`` wall time over 3 and 10 models vs slowest single run and sum.
6. ``analysis``: ``usage_frame()`` and cost charts over 100,000 records: time, peak memory.
7. ``memory``: 1,000 tool-loop steps: RSS, continuations and reasoning items freed.
8. ``adapter_chat``: the Chat Completions adapter vs the raw ``openai`` chat stream (loopback).
9. ``warm_start``: first cell in a fresh kernel, execute to first request, cold vs warmed SDKs.
10. ``sweep_ray``: one simulated sweep on the asyncio and on the Ray executor (``ray`` extra): runs/s,
    driver and worker memory, outcomes compared run by run.
11. ``eval_scale``: ``evaluate`` on 1,000 tasks beside Inspect AI's ``eval()`` with ``mockllm`` on the
    same samples (wall, CPU per sample, peak memory), and 1,000 tasks x 3 models x 3 repeats with
    the memory held after 1k / 3k / 9k finished runs.
12. ``live_view``: in a real kernel, a 15-run compare with and without the live view: wall time and
    a 10 ms tool's recorded median, side by side.
13. ``first_cell``: the first model-call cell of a fresh kernel under Run All and at reading pace,
    with and without the SDK warm-up.
14. ``mcp`` (``bench/mcp_tools.py``): an MCP tool's per-call cost against the same tool as a Python
    function, median and p99, over stdio and Streamable HTTP (``mcp`` extra).
15. ``bedrock``: CPU per ConverseStream event, the Bedrock adapter vs raw botocore and vs the
    botocore-decoding floor (``EventStreamBuffer`` + ``json.loads`` per event; loopback, one
    event-stream message per HTTP chunk).
"""

SECTIONS = (
    "adapters",
    "peers",
    "startup",
    "notebook",
    "compare",
    "analysis",
    "memory",
    "adapter_chat",
    "warm_start",
    "sweep_ray",
    "eval_scale",
    "live_view",
    "first_cell",
    "mcp",
    "bedrock",
)

MODULES = {"mcp": "mcp_tools"}
"""A section whose module is named otherwise (``bench.mcp`` would read as the SDK's package)."""
