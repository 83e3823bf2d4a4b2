"""MCP tools in the views and records: tool table, timeline, results file, tracker tags, HTML escaping."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

import agentlab as al
from agentlab import mcp
from agentlab.evals.run_tables import timeline_frame, tool_frame
from agentlab.tracking.rows import tracked_run

from .support import fault_module

pytest.importorskip("mcp")

LABEL = "faults=faults 1.2.3"


@pytest.fixture(scope="module")
def faults():  # type: ignore[no-untyped-def]
    with mcp.in_process(fault_module().build(), name="faults") as server:
        yield server


def test_tool_table_and_timeline_name_the_server(faults: mcp.McpServer) -> None:
    @al.tool
    def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()

    r = al.run("openai:sim-reasoner", "Echo Hello", tools=[*faults.tools(allow=["echo"]), shout])
    assert r.tool_sources["echo"].server == "faults" and "shout" not in r.tool_sources
    frame = tool_frame(r)
    row = frame[frame["tool"] == "echo"].iloc[0]
    assert row["server"] == "faults" and row["server_version"] == "1.2.3"
    tl = timeline_frame(r)
    assert "faults:echo" in set(tl[tl["kind"] == "tool"]["name"])


def test_results_file_and_tracker_record_server_and_version(faults: mcp.McpServer, tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    al.sweep(
        ["Echo Hello"],
        ["openai:sim-reasoner", "anthropic:sim-thinker"],
        results=results,
        tools=faults.tools(allow=["echo"]),
        concurrency=2,
        progress=None,
    )
    frame = al.load_results(results).sort_values("model")
    assert list(frame["tool_servers"]) == [LABEL, LABEL]
    assert LABEL in results.read_text()
    tracked = tracked_run(frame.iloc[0].to_dict())
    assert tracked.tags["agentlab.tool_servers"] == LABEL


def test_compare_runs_frame_has_the_server(faults: mcp.McpServer) -> None:
    cmp = al.compare("Echo Hello", models=["openai:sim-reasoner", "google:sim-gemini"], tools=[faults])
    assert set(cmp.runs_frame()["tool_servers"]) == {LABEL}


def test_server_text_is_escaped_in_views() -> None:
    evil = "<script>alert(1)</script>"
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("evil", version=evil)

    @server.tool(description=f"Echo {evil}")
    def echo(text: str) -> str:
        return f"{evil} {text}"

    with mcp.in_process(server, name="evil") as s:
        (tool,) = s.tools()
        assert evil not in tool._repr_html_() and html.escape(evil) in tool._repr_html_()
        r = al.run("openai:sim-reasoner", "Echo Hello", tools=[tool])
        shown = (
            r._repr_html_()
            + al.compare("Echo Hello", models=["openai:sim-reasoner"], tools=[tool])._repr_html_()
        )
        assert "<script>" not in shown
