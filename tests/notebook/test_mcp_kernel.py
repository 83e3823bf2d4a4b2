"""A real kernel: an MCP server started in a cell leaves no process after Kernel › Interrupt or restart.

The server is the fault server of ``tests/mcp`` over stdio, stuck in a tool call (``hang``) when
the interrupt or the restart comes, so only agentlab's stop (cell end) or its launcher (parent
death) can end it: closing its stdin would not.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.support import FAULT_SERVER, alive, wait_gone
from tests.notebook.test_kernel import Kernel

pytestmark = pytest.mark.kernel
pytest.importorskip("mcp")
pytest.importorskip("jupyter_client")

ROOT = Path(__file__).resolve().parents[2]

START = f"""
import sys, json
from agentlab import mcp
srv = mcp.stdio(sys.executable, {str(FAULT_SERVER)!r}, name="faults")
tools = {{t.name: t for t in srv.tools()}}
print("PID", json.dumps(tools["whoami"]()["pid"]), flush=True)
"""


def _pid(stdout: str) -> int:
    line = next(x for x in stdout.splitlines() if x.startswith("PID "))
    return int(json.loads(line[4:]))


@pytest.fixture
def kernel() -> Iterator[Kernel]:
    k = Kernel()
    try:
        k.ok("%load_ext agentlab")
        yield k
    finally:
        k.close()


def test_interrupt_mid_tool_call_stops_the_server_at_cell_end(kernel: Kernel) -> None:
    code = START + (
        "from agentlab.testing import ScriptedAdapter, Step\n"
        "import agentlab as al\n"
        "al.run('openai:sim-reasoner', 'x', tools=[srv], tool_timeout=600,\n"
        "       adapter=ScriptedAdapter([Step(tool_calls=[('hang', {})]), Step(text='never')]))\n"
    )
    seen: dict[str, int] = {}

    def interrupt_once_started(msg: dict[str, object]) -> bool:
        content = msg["content"]
        text = content.get("text", "") if isinstance(content, dict) else ""
        if isinstance(text, str) and "PID " in text:
            seen["pid"] = _pid(text)
            time.sleep(1.0)  # the run's tool call is now in the server
            return True
        return False

    cell = kernel.run(code, timeout=120, on_iopub=interrupt_once_started)
    assert cell.error is not None and cell.error["ename"] == "KeyboardInterrupt"
    assert wait_gone(seen["pid"], 15), "the MCP server outlived the interrupted cell"
    # the kernel is fine, and the server starts again on demand
    again = kernel.ok(START + "print(srv.running)")
    pid = _pid(again.stdout)
    assert wait_gone(pid, 15)  # that cell ended too: stopped at its end


@pytest.mark.parametrize("now", [True, False], ids=["restart-kill", "restart-graceful"])
def test_no_orphan_after_a_kernel_restart(kernel: Kernel, now: bool) -> None:
    cell = kernel.ok(
        START + "srv.__enter__()  # kept across cells, as a with block spanning them would\n"
        "import threading\n"
        "threading.Thread(target=lambda: tools['hang'](), daemon=True).start()\n"
    )
    pid = _pid(cell.stdout)
    time.sleep(0.5)
    assert alive(pid)
    kernel.km.restart_kernel(now=now)
    assert wait_gone(pid, 15), f"MCP server {pid} outlived the kernel restart (now={now})"
