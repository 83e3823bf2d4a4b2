"""Tool loops on every simulated provider family using published MCP servers' tools, end to end.

``mcp-server-time`` (PyPI, the reference time server, in the dev extra) over stdio, and the npm
reference ``server-everything`` run with ``npx`` (skips without Node, fails under CI=true).
"""

from __future__ import annotations

import json

import pytest

import agentlab as al
from agentlab import mcp
from agentlab.neutral.events import ToolResultEvent

from .support import EVERYTHING, SIM_MODELS, need_npx

pytest.importorskip("mcp")


@pytest.fixture(scope="module")
def time_server():  # type: ignore[no-untyped-def]
    with mcp.stdio("mcp-server-time", "--local-timezone", "UTC", name="time") as server:
        yield server


@pytest.mark.parametrize("model", SIM_MODELS)
def test_every_sim_family_calls_the_time_server(time_server: mcp.McpServer, model: str) -> None:
    r = al.run(model, "What is the current time in UTC?", tools=[time_server])
    assert r.status == "completed", r.error
    results = [e.result for e in r.events if isinstance(e, ToolResultEvent)]
    assert results and results[0].name == "get_current_time"
    assert not results[0].is_error, results[0].output
    assert json.loads(results[0].output)["timezone"] == "UTC"
    assert '"timezone": "UTC"' in (r.output or "")


def test_time_server_tools_schemas_and_info(time_server: mcp.McpServer) -> None:
    tools = time_server.tools()
    assert [t.name for t in tools] == ["get_current_time", "convert_time"]
    t = tools[0]
    assert t.parameters["required"] == ["timezone"]
    assert t.parameters["additionalProperties"] is False
    assert "title" not in t.parameters
    assert t.spec.strict is None  # qualifies: each adapter may send it strict
    assert time_server.info is not None and time_server.info.server_name == "mcp-time"
    assert t.source is not None and t.source.server_version == time_server.info.version
    assert repr(t).startswith("<McpTool time:get_current_time(timezone: string)")


def test_compare_gives_every_provider_the_same_server(time_server: mcp.McpServer) -> None:
    starts = time_server.starts
    cmp = al.compare("What is the current time in UTC?", models=list(SIM_MODELS[:3]), tools=[time_server])
    for run in cmp.results.values():
        assert run.status == "completed"
    assert time_server.starts == starts  # one shared connection, not one per column


def test_npx_everything_server_echo() -> None:
    npx = need_npx()
    server = mcp.stdio(npx, "-y", EVERYTHING, name="everything", start_timeout=180)
    with server:
        (echo,) = server.tools(allow=["echo"])
        r = al.run("openai:sim-reasoner", "Echo Hello", tools=[echo])
        assert r.status == "completed", r.error
        (res,) = [e.result for e in r.events if isinstance(e, ToolResultEvent)]
        assert not res.is_error and "Hello" in res.output
        assert server.info is not None and server.info.version
    assert not server.running
