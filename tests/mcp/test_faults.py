"""Faults of an MCP server become error results the model reads, never a crashed run.

The fault server (``fault_server.py``) is built with the SDK's server API; it runs in process for
the cheap cases and over stdio for those that need a process (crash, slow start).
"""

from __future__ import annotations

import asyncio
import logging

import pytest

import agentlab as al
from agentlab import mcp
from agentlab.errors import ToolDefinitionError
from agentlab.neutral.events import DiagnosticEvent, ToolResultEvent
from agentlab.testing import ScriptedAdapter, Step

from .support import FAULT_SERVER, fault_module, python

pytest.importorskip("mcp")


@pytest.fixture(scope="module")
def faults():  # type: ignore[no-untyped-def]
    with mcp.in_process(fault_module().build(), name="faults") as server:
        yield server


def _tools(server: mcp.McpServer) -> dict[str, mcp.McpTool]:
    return {t.name: t for t in server.tools()}


def _results(r: al.RunResult) -> list[tuple[bool, str]]:
    return [(e.result.is_error, e.result.output) for e in r.events if isinstance(e, ToolResultEvent)]


def test_malformed_schema_is_left_out_with_a_warning(
    faults: mcp.McpServer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "agentlab.mcp"):
        names = [t.name for t in faults.tools()]
    assert "broken" not in names and "echo" in names
    assert "tool 'broken' left out" in caplog.text
    with pytest.raises(ToolDefinitionError, match="tool 'broken': invalid JSON Schema"):
        faults.tools(allow=["broken"])
    with pytest.raises(ToolDefinitionError, match="has no tool 'nope'"):
        faults.tools(allow=["nope"])


async def test_results_errors_images_and_sizes(faults: mcp.McpServer) -> None:
    t = _tools(faults)
    assert (await t["echo"].run({"text": "hi"})).output == "hi"
    big = await t["huge"].run({"chars": 50_000})
    assert big.truncated and big.output.endswith("[truncated 30000 of 50000 characters]")
    failed = await t["fail"].run({"why": "because"})
    assert failed.is_error and "failed: Error executing tool fail" in failed.output
    pic = await t["picture"].run({})
    assert not pic.is_error and pic.output.startswith("[image image/png, about")
    bad = await t["echo"].run({"nope": 1})
    assert bad.is_error and "text" in bad.output
    not_object = await t["echo"].run("[1, 2]")
    assert not_object.is_error and "must be a JSON object" in not_object.output


async def test_a_hung_call_times_out_and_the_server_keeps_serving(faults: mcp.McpServer) -> None:
    t = _tools(faults)
    out = await t["sleepy"].run({"seconds": 30}, timeout=0.3)
    assert out.timed_out and out.is_error and "timed out" in out.output
    assert (await t["echo"].run({"text": "still here"})).output == "still here"


def test_a_run_sees_errors_as_results_and_completes(faults: mcp.McpServer) -> None:
    steps = [
        Step(tool_calls=[("fail", {"why": "x"}), ("huge", {"chars": 30_000}), ("sleepy", {"seconds": 30})]),
        Step(text="done"),
    ]
    r = al.run("openai:sim-reasoner", "x", tools=[faults], adapter=ScriptedAdapter(steps), tool_timeout=0.3)
    assert r.status == "completed" and r.output == "done"
    (fail, huge, sleepy) = _results(r)
    assert fail[0] and not huge[0] and sleepy[0]
    assert "timed out" in sleepy[1]
    assert any(getattr(e, "code", None) == "tool_timeout" for e in r.events)


def test_crash_mid_loop_is_an_error_result_a_warning_and_a_restart(caplog: pytest.LogCaptureFixture) -> None:
    server = mcp.stdio(python(), str(FAULT_SERVER), name="crashy", restarts=1)
    with server, caplog.at_level(logging.WARNING, "agentlab.mcp"):
        steps = [
            Step(tool_calls=[("crash", {})]),
            Step(tool_calls=[("echo", {"text": "again"})]),
            Step(text="ok"),
        ]
        r = al.run("openai:sim-reasoner", "x", tools=[server], adapter=ScriptedAdapter(steps))
        assert r.status == "completed"
        (crash, echo) = _results(r)
        assert crash[0] and "stopped during the call" in crash[1]
        assert echo == (False, "again")
        assert server.starts == 2
        assert "crashing on purpose" in caplog.text  # the server's stderr, for the user
        (note,) = [e for e in r.events if isinstance(e, DiagnosticEvent) and e.code == "tool_server_failed"]
        assert note.data == {"tool": "crash", "call_id": note.data["call_id"]}
        assert "the next call starts it again" in note.message and "crashing on purpose" in note.message
        # restarts=1 is spent: the next crash leaves the server down, and says so
        steps = [
            Step(tool_calls=[("crash", {})]),
            Step(tool_calls=[("echo", {"text": "x"})]),
            Step(text="ok"),
        ]
        r = al.run("openai:sim-reasoner", "x", tools=[server], adapter=ScriptedAdapter(steps))
        (crash, echo) = _results(r)
        assert crash[0] and echo[0] and "crashed 2 times; not restarted again" in echo[1]


def test_slow_start_within_and_past_start_timeout() -> None:
    slow = mcp.stdio(python(), str(FAULT_SERVER), "--slow-start", "1", name="slow", start_timeout=30)
    with slow:
        assert "echo" in [t.name for t in slow.tools()]
    too_slow = mcp.stdio(python(), str(FAULT_SERVER), "--slow-start", "5", name="slow", start_timeout=0.5)
    with pytest.raises(mcp.McpServerError, match=r"did not answer within start_timeout=0\.5 s"):
        too_slow.tools()
    assert not too_slow.running


def test_bad_options_fail_where_they_are_written() -> None:
    with pytest.raises(al.ConfigError, match="command 'no-such-mcp-server' not found"):
        mcp.stdio("no-such-mcp-server")
    bad: list[dict[str, object]] = [
        {"timeout": 0},
        {"start_timeout": -1},
        {"max_output_chars": 0},
        {"max_concurrency": 0},
        {"restarts": -1},
        {"allow": "echo"},
    ]
    for options in bad:
        with pytest.raises(al.ConfigError):
            mcp.stdio(python(), str(FAULT_SERVER), **options)  # type: ignore[arg-type]
    with pytest.raises(al.ConfigError, match="needs an http"):
        mcp.http("localhost:8000")


def test_names_rename_prefix_and_clashes(faults: mcp.McpServer) -> None:
    @al.tool
    def echo(text: str) -> str:
        """A Python echo."""
        return text

    run = al.Run("openai:sim-reasoner", "x", tools=[echo, faults])
    assert "echo" in run.tools and "faults_echo" in run.tools  # the server's clashing name is prefixed
    assert run.tools["echo"].source is None and run.tools["faults_echo"].source is not None
    renamed = faults.tools(allow=["echo"], rename={"echo": "say"})
    assert [t.name for t in renamed] == ["say"] and renamed[0].remote_name == "echo"
    assert [t.name for t in faults.tools(allow=["echo"], prefix="f")] == ["f_echo"]
    with pytest.raises(ToolDefinitionError, match="two tools are named 'echo'"):
        al.Run("openai:sim-reasoner", "x", tools=[faults, echo])
    with pytest.raises(ToolDefinitionError, match="tools must be a list"):
        al.Run("openai:sim-reasoner", "x", tools=faults)  # type: ignore[arg-type]


def test_concurrency_limit_is_shared_by_runs() -> None:
    server = mcp.in_process(fault_module().build(), name="limited", max_concurrency=1)
    with server:
        (sleepy,) = server.tools(allow=["sleepy"])

        async def two() -> list[float]:
            outs = await asyncio.gather(*(sleepy.run({"seconds": 0.3}) for _ in range(2)))
            return sorted(o.started or 0 for o in outs)

        a, b = asyncio.run(two())
        assert b - a >= 0.25  # the second waited for the first
