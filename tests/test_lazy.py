"""Using the core (Run, tool, Session, pricing, event log) loads no SDK, pandas or widgets.

Only a usage frame loads pandas, only a real adapter loads its SDK.
"""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("openai", "anthropic", "pandas", "matplotlib", "ipywidgets", "IPython", "httpx2", "httpx", "scipy")


def loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_scripted_run_loads_nothing_heavy() -> None:
    code = (
        "import agentlab as al\n"
        "from agentlab.testing import ScriptedAdapter, Step\n"
        "def echo(x: int) -> int:\n    return x\n"
        "steps = [Step(tool_calls=[('echo', {'x': 1})]), Step(text='a')]\n"
        "r = al.run('openai:sim-reasoner', 'x', tools=[al.tool(echo)], adapter=ScriptedAdapter(steps))\n"
        "assert r.output == 'a'\n"
        "al.EventLog(); al.MemoryStore(); al.Session(); al.price_call; al.Checkpoint\n"
    )
    assert loaded_after(code) == []


def test_usage_frame_loads_pandas_only() -> None:
    code = (
        "import agentlab as al\n"
        "from agentlab.testing import ScriptedAdapter, Step\n"
        "al.run('openai:sim-reasoner', 'x', adapter=ScriptedAdapter([Step(text='a')])).usage_frame()\n"
    )
    assert loaded_after(code) == ["pandas"]


def test_an_export_table_names_each_module_once_and_refuses_a_name_under_two() -> None:
    import pytest

    from agentlab._lazy import by_module

    table = by_module({"agentlab.errors": "ConfigError UserError", "agentlab.loop.tools": "tool"})
    assert table == {
        "ConfigError": "agentlab.errors",
        "UserError": "agentlab.errors",
        "tool": "agentlab.loop.tools",
    }
    with pytest.raises(ValueError, match="'tool' is exported from both"):
        by_module({"agentlab.loop.tools": "tool", "agentlab.mcp": "tool"})
