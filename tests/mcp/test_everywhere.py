"""An MCP server's tools wherever tools go: a Session, an async run, a batch sweep's rounds.

(``run`` and ``compare`` on the five simulated families: ``test_published_servers.py``; a sweep
with concurrency and the results file: ``test_records.py``; Ray workers get the server pickled as
its description, each connecting on its own: ``test_lifecycle.py::test_pickles_as_its_description``.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import agentlab as al
from agentlab import mcp
from agentlab.adapters.base import Adapter, ModelRef, create_adapter
from agentlab.neutral.events import ToolResultEvent
from agentlab.sim import anthropic_client, openai_client
from agentlab.sweeps import load_results, sweep
from tests.support.opaque import RecordingTransport

from .support import fault_module

pytest.importorskip("mcp")


@pytest.fixture(scope="module")
def faults():  # type: ignore[no-untyped-def]
    with mcp.in_process(fault_module().build(), name="faults") as server:
        yield server


def _echoed(r: al.RunResult) -> list[str]:
    return [e.result.output for e in r.events if isinstance(e, ToolResultEvent) and not e.result.is_error]


def test_session_runs_use_the_server(faults: mcp.McpServer) -> None:
    s = al.Session()
    first = s.run("anthropic:sim-thinker", "Echo Hello", tools=faults.tools(allow=["echo"]))
    second = s.run("anthropic:sim-thinker", "Echo World", tools=faults.tools(allow=["echo"]))
    assert "Hello" in _echoed(first)[0] and "World" in _echoed(second)[0]


async def test_async_run(faults: mcp.McpServer) -> None:
    r = await al.arun("google:sim-gemini", "Echo Hello", tools=[faults])
    assert r.status == "completed" and "Hello" in _echoed(r)[0]


def _factory(transport: RecordingTransport) -> Callable[[ModelRef], Adapter]:
    transport.simulator.batches.seconds = 0.05

    def make(ref: ModelRef) -> Adapter:
        if ref.provider == "openai":
            return create_adapter(ref, client=openai_client(transport=transport))
        return create_adapter(ref, client=anthropic_client(transport=transport))

    return make


def test_batch_sweep_rounds_call_the_server(faults: mcp.McpServer, tmp_path: Path) -> None:
    out = tmp_path / "batch.jsonl"
    sweep(
        ["Echo Hello", "Echo Paris and Rome"],
        ["openai:sim-reasoner", "anthropic:sim-thinker"],
        results=out,
        tools=faults.tools(allow=["echo"]),
        progress=None,
        adapter_factory=_factory(RecordingTransport()),
        backend="batch",
        batch={"poll_s": 0.02, "poll_max_s": 0.1},
    )
    rows = load_results(out)
    assert set(rows["status"]) == {"completed"}
    assert (rows["tool_calls"] >= 1).all()
    assert set(rows["tool_servers"]) == {"faults=faults 1.2.3"}
