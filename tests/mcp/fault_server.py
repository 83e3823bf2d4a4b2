"""An MCP server built with the SDK's server API, for the fault cases agentlab must survive.

Run in process (``agentlab.mcp.in_process(build())``), over stdio (``python fault_server.py``), or
over Streamable HTTP (``python fault_server.py --http PORT``). ``--slow-start S`` sleeps before
serving. Tools: ``echo``, ``whoami`` (pid and environment, the server's own view), ``crash``
(exits the process), ``hang`` (blocks its thread for an hour), ``sleepy`` (async sleep),
``huge`` (a long text), ``fail`` (raises), ``picture`` (an image) and ``broken`` (a malformed
input schema).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def build() -> MCPServer:
    server = MCPServer("faults", version="1.2.3")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool()
    def whoami() -> dict[str, object]:
        """The server's pid and environment."""
        return {"pid": os.getpid(), "env": dict(os.environ)}

    @server.tool()
    def crash(code: int = 3) -> str:
        """Exit the process at once."""
        sys.stderr.write("fault server: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(code)

    @server.tool()
    def hang() -> str:
        """Block for an hour."""
        time.sleep(3600)
        return "woke up"

    @server.tool()
    async def sleepy(seconds: float) -> str:
        """Sleep, then answer."""
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool()
    def huge(chars: int) -> str:
        """A long text."""
        return "x" * chars

    @server.tool()
    def fail(why: str) -> str:
        """Always fails."""
        raise RuntimeError(f"failing on purpose: {why}")

    @server.tool()
    def picture() -> Image:
        """A 1x1 PNG."""
        return Image(data=PNG, format="png")

    @server.tool()
    def broken(x: int) -> int:
        """Its schema is made malformed below."""
        return x

    server._tool_manager._tools["broken"].parameters = {"type": "object", "properties": {"x": {"type": 12}}}
    return server


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--slow-start" in args:
        time.sleep(float(args[args.index("--slow-start") + 1]))
    app = build()
    if "--http" in args:
        app.run("streamable-http", host="127.0.0.1", port=int(args[args.index("--http") + 1]))
    else:
        app.run()
