"""``mcp``: what a tool call costs when the tool is served over MCP rather than called as a function.

The same ``echo(text)`` tool three ways, each called through ``Tool.run`` exactly as a run's loop
calls it (argument check, time-out, output bound): a Python ``@tool`` (runs in a thread), an MCP
server over stdio (``python -m bench._mcp_echo`` under agentlab's launcher) and the same server over
Streamable HTTP on loopback; plus the SDK's in-process transport for reference. Wall time per call,
rounds interleaved so machine drift hits all alike; median and p99, and the median overhead over
the Python tool.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ._util import Section, Target, median, percentile

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"the MCP HTTP server did not listen on {port} within {timeout:g} s")


async def _calls(tool: Any, n: int) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        res = await tool.run({"text": f"hello {i}"})
        out.append(time.perf_counter() - t0)
        assert not res.is_error, res.output
    return out


def _measure(tools: dict[str, Any], rounds: int, per_round: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {k: [] for k in tools}

    async def go() -> None:
        for t in tools.values():  # warm-up: connections open, code paths hot
            await _calls(t, 5)
        for _ in range(rounds):
            for name, t in tools.items():
                samples[name] += await _calls(t, per_round)

    asyncio.run(go())
    return samples


def run(quick: bool) -> Section:
    import agentlab as al
    from agentlab import mcp
    from bench._mcp_echo import build

    sec = Section("mcp", "MCP tools: per-call cost against the same tool as a Python function")
    rounds, per_round = (2, 10) if quick else (10, 100)

    @al.tool
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    port = _free_port()
    http_proc = subprocess.Popen(
        [sys.executable, "-m", "bench._mcp_echo", "--http", str(port)], cwd=ROOT, stderr=subprocess.DEVNULL
    )
    stdio = mcp.stdio(sys.executable, "-m", "bench._mcp_echo", cwd=ROOT, name="echo-stdio")
    inproc = mcp.in_process(build(), name="echo-inproc")
    try:
        _wait_port(port)
        http = mcp.http(f"http://127.0.0.1:{port}/mcp", name="echo-http")
        with stdio, http, inproc:
            tools = {
                "python": echo,
                "mcp stdio": stdio.tools()[0],
                "mcp http": http.tools()[0],
                "mcp in process": inproc.tools()[0],
            }
            samples = _measure(tools, rounds, per_round)
    finally:
        http_proc.terminate()
        http_proc.wait(10)
    base = median(samples["python"])
    for name, xs in samples.items():
        med, p99 = median(xs) * 1e3, percentile(xs, 99) * 1e3
        sec.figures[name] = {"median_ms": med, "p99_ms": p99, "calls": len(xs)}
        over = "" if name == "python" else f" (+{(median(xs) - base) * 1e3:.2f} ms over the Python tool)"
        sec.row(f"{name}: median / p99 per call", f"{med:.3f} ms / {p99:.3f} ms{over}")
    for name, limit in (("mcp stdio", 5.0), ("mcp http", 10.0)):
        sec.targets.append(Target(f"{name} call median", sec.figures[name]["median_ms"], limit, "ms"))
    sec.notes.append(
        f"{rounds} interleaved rounds of {per_round} sequential calls per kind; wall time through "
        "Tool.run (what a run's loop awaits), after 5 warm-up calls each."
    )
    return sec
