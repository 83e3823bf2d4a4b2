"""An MCP server's tool is traced like any tool, and its ``execute_tool`` span names the server."""

from __future__ import annotations

import pytest

import agentlab as al
from tests.mcp.support import fault_module
from tests.telemetry.support import Traced, attrs

mcp = pytest.importorskip("agentlab.mcp")
pytest.importorskip("mcp")


def test_execute_tool_span_names_the_server(spans: Traced) -> None:
    with mcp.in_process(fault_module().build(), name="faults") as server:
        r = al.run("openai:sim-reasoner", "Echo Hello", tools=server.tools(allow=["echo"]))
    assert r.status == "completed"
    (span,) = spans.named("execute_tool")
    a = attrs(span)
    assert span.name == "execute_tool echo"
    assert a["agentlab.tool.source"] == "mcp"
    assert a["agentlab.tool.server"] == "faults"
    assert a["agentlab.tool.server.name"] == "faults"
    assert a["agentlab.tool.server.version"] == "1.2.3"
    assert a["agentlab.tool.remote_name"] == "echo"
