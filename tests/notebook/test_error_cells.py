"""In a notebook cell, an agentlab error shows as its one line, not a 90-line traceback.

Run through a real ``IPython`` ``InteractiveShell`` in a fresh interpreter (a shell instance is a
process-wide singleton that agentlab's hooks would otherwise see in every later test).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_SHELL = """
import sys
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
ip.run_cell("import agentlab as al\\nfrom agentlab.adapters.base import create_adapter")
print("<<<CELL>>>", flush=True)
ip.run_cell(sys.argv[1])
print("<<<END>>>", flush=True)
"""

CELLS = {
    "retries": (
        "m = 'anthropic:sim-thinker+fault=529x10'\n"
        "al.run(m, 'hi', adapter=create_adapter(m, max_retries=0), retries=2, retry_delay=0)",
        "OverloadedError: [anthropic 529 overloaded_error] gave up after 2 retries; last answer: ",
    ),
    "bad fault": (
        "al.run('openai:sim-reasoner+fault=bogus', 'hi')",
        "InvalidSettingsError: openai:sim-reasoner+fault=bogus: Unknown x-sim-fault 'bogus'",
    ),
    "missing key": (
        "al.run('anthropic:claude-sonnet-4-5', 'hi')",
        "MissingApiKeyError: No API key for anthropic",
    ),
}


@pytest.mark.parametrize("case", list(CELLS))
def test_an_agentlab_error_in_a_cell_is_one_line(case: str) -> None:
    code, start = CELLS[case]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PYTHONPATH=str(ROOT), AGENTLAB_WARMUP="0")
    out = subprocess.run(
        [sys.executable, "-c", _SHELL, code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    shown = out.stdout.split("<<<CELL>>>", 1)[1].split("<<<END>>>", 1)[0]
    lines = [ln for ln in shown.splitlines() if ln.strip()]
    assert len(lines) == 1, shown
    assert lines[0].startswith(start), lines[0]
