"""When MCP servers start and stop: lazily, on context exit, at cell end, and with their parent.

The orphan test kills the parent with a real SIGKILL while a tool call hangs in the server (a
server that never reads its stdin again, so closing the pipe would not stop it).
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import pytest

import agentlab as al
from agentlab import frontend, mcp

from .support import FAULT_SERVER, alive, python, wait_gone

pytest.importorskip("mcp")


def _server_pid(server: mcp.McpServer) -> int:
    (whoami,) = server.tools(allow=["whoami"])
    return int(whoami()["pid"])


def test_lazy_start_and_stop_on_context_exit() -> None:
    server = mcp.stdio(python(), str(FAULT_SERVER), name="faults")
    assert not server.running and server.info is None  # describing a server starts nothing
    with server:
        pid = _server_pid(server)
        assert server.running and alive(pid)
    assert not server.running
    assert wait_gone(pid)
    # a stopped server starts again on its next call
    with server:
        pid2 = _server_pid(server)
        assert pid2 != pid and server.starts == 2
    assert wait_gone(pid2)


async def test_async_context_exit_stops() -> None:
    server = mcp.stdio(python(), str(FAULT_SERVER), name="faults")
    async with server:
        assert await server.astart() is server and server.running
        (echo,) = server.tools(allow=["echo"])
        assert (await echo.run({"text": "a"})).output == "a"
    assert not server.running


class _CellFrontend:
    """Just enough of a frontend for ``frontend.current()`` to say "in a notebook"."""

    def run_created(self, run: object) -> None: ...


@pytest.fixture
def in_notebook() -> Iterator[None]:
    old = frontend.set_frontend(_CellFrontend())  # type: ignore[arg-type]
    try:
        yield
    finally:
        frontend.set_frontend(old)
        frontend.cell_ended()


def test_stopped_at_cell_end_outside_a_with_block(in_notebook: None) -> None:
    server = mcp.stdio(python(), str(FAULT_SERVER), name="faults")
    pid = _server_pid(server)
    assert server.running
    frontend.cell_ended()  # what the notebook extension's post_run_cell does
    assert not server.running and wait_gone(pid)


def test_not_stopped_at_cell_end_inside_a_with_block(in_notebook: None) -> None:
    server = mcp.stdio(python(), str(FAULT_SERVER), name="faults")
    with server:
        _server_pid(server)
        frontend.cell_ended()
        assert server.running
    assert not server.running


_PARENT = """
import json, sys, threading
from agentlab import mcp
server = mcp.stdio(sys.executable, {fault!r}, name="faults")
tools = {{t.name: t for t in server.tools()}}
print(json.dumps({{"pid": tools["whoami"]()["pid"]}}), flush=True)
threading.Thread(target=lambda: tools["hang"](), daemon=True).start()  # the server stops reading
threading.Event().wait()
"""


def test_no_orphan_after_sigkill_of_the_parent() -> None:
    code = textwrap.dedent(_PARENT.format(fault=str(FAULT_SERVER)))
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        pid = json.loads(line)["pid"]
        assert alive(pid)
        time.sleep(0.5)  # the hanging call is in the server
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        assert wait_gone(pid, 10), f"MCP server {pid} outlived its parent's SIGKILL"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)
        if parent.stdout is not None:
            parent.stdout.close()


def test_pickles_as_its_description() -> None:
    server = mcp.stdio(python(), str(FAULT_SERVER), name="faults", max_concurrency=3)
    with server:
        tools = server.tools(allow=["echo"])
        copy = pickle.loads(pickle.dumps(tools))
        assert copy[0].name == "echo" and copy[0].server is not server
        assert not copy[0].server.running and copy[0].server.max_concurrency == 3
        assert copy[0](text="in a fresh connection") == "in a fresh connection"
        copy[0].server.stop()
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(mcp.in_process(object(), name="x"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(FAULT_SERVER), "--http", str(port)], stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def test_streamable_http_server(http_url: str) -> None:
    server = mcp.http(http_url, name="faults-http")
    with server:
        r = al.run("openai:sim-reasoner", "Echo Hello", tools=server.tools(allow=["echo"]))
        assert r.status == "completed" and "Hello" in (r.output or "")
        assert server.info is not None and server.info.transport == "http"
        assert server.info.version == "1.2.3"
    assert not server.running
