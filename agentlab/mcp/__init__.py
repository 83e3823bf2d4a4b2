"""Tools from MCP servers in every tool loop: ``tools=[agentlab.mcp.stdio("mcp-server-time")]``.

A server is a stdio command (:func:`stdio`), a Streamable HTTP URL (:func:`http`) or an SDK server
object in this process (:func:`in_process`); its tools become agentlab tools, usable wherever
``@tool`` functions are (``run``, ``Session``, ``compare``, sweeps, evaluations). Needs the ``mcp``
extra (the official MCP Python SDK), imported only when a server starts: ``import agentlab`` and
``import agentlab.mcp`` load none of it. See ``docs/how-to/mcp-tools.md``.
"""

from __future__ import annotations

from agentlab.mcp._env import SAFE_ENV
from agentlab.mcp.server import McpServer, McpServerError, ServerInfo, http, in_process, stdio
from agentlab.mcp.tools import McpTool

__all__ = ["SAFE_ENV", "McpServer", "McpServerError", "McpTool", "ServerInfo", "http", "in_process", "stdio"]
