"""``import agentlab`` and describing an MCP server load no MCP SDK; the SDK loads when a server starts."""

from __future__ import annotations

import subprocess
import sys

SDK = ("mcp", "mcp_types", "anyio", "jsonschema")


def _loaded(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(','.join(m for m in {SDK!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_describing_a_server_loads_no_sdk() -> None:
    code = "import agentlab\nfrom agentlab import mcp\nmcp.stdio(sys.executable, '-c', 'pass', name='x')"
    assert _loaded(code) == []
