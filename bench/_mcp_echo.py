"""The MCP server the ``mcp`` bench section calls: one ``echo`` tool, the same as its Python twin.

``python -m bench._mcp_echo`` serves over stdio; ``--http PORT`` over Streamable HTTP on loopback.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer


def build() -> MCPServer:
    server = MCPServer("bench-echo", version="1", log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    return server


if __name__ == "__main__":
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        build().run("streamable-http", host="127.0.0.1", port=port)
    else:
        build().run()
