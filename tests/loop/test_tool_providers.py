"""``tools=[...]`` takes tool providers (``__agentlab_tools__``); cell-end callbacks run once.

The seams ``agentlab.mcp`` plugs into without core knowing about MCP.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

import agentlab as al
from agentlab import frontend
from agentlab.errors import ToolDefinitionError
from agentlab.loop.tools import Tool, ToolProvider, as_tools


@al.tool
def ping(x: str) -> str:
    """Ping."""
    return x


class _Provider:
    def __init__(self) -> None:
        self.seen: list[frozenset[str]] = []

    def __agentlab_tools__(self, taken: frozenset[str]) -> Iterable[Tool]:
        self.seen.append(taken)

        def pong(x: str) -> str:
            """Pong."""
            return x

        name = "p_ping" if "ping" in taken else "ping"
        return [al.tool(pong), al.tool(name=name)(pong)]


def test_a_provider_stands_for_its_tools_and_sees_the_names_taken() -> None:
    p = _Provider()
    assert isinstance(p, ToolProvider)
    tools = as_tools([ping, p])
    assert list(tools) == ["ping", "pong", "p_ping"]
    assert p.seen == [frozenset({"ping"})]
    assert tools["ping"].source is None
    with pytest.raises(ToolDefinitionError, match="two tools are named 'pong'"):
        as_tools([p, p])


def test_cell_end_callbacks_run_once_and_a_failing_one_does_not_stop_the_rest() -> None:
    calls: list[str] = []

    def boom() -> None:
        calls.append("boom")
        raise RuntimeError("x")

    frontend.at_cell_end(boom)
    frontend.at_cell_end(lambda: calls.append("b"))
    frontend.at_cell_end(boom)  # registered once
    frontend.cell_ended()
    frontend.cell_ended()
    assert calls == ["boom", "b"]
