"""One rule for simulated model names (``agentlab.adapters._simulated``).

It is asked everywhere outside the simulator.
"""

from __future__ import annotations

import re
from pathlib import Path

import agentlab
from agentlab.adapters._simulated import SIM_PREFIX, is_simulated, simulated_base

ROOT = Path(agentlab.__file__).parent


def test_the_rule() -> None:
    assert is_simulated("sim-reasoner") and is_simulated("sim-thinker+fault=429x1")
    assert not is_simulated("gpt-5.1") and not is_simulated("claude-sim-x")
    assert simulated_base("sim-thinker+fault=429x1") == "sim-thinker"
    assert simulated_base("gpt-5+x") == "gpt-5+x"


def test_no_module_outside_the_simulator_re_derives_the_prefix() -> None:
    """``startswith("sim-")`` (or a ``"sim-"`` literal used as the rule) lives in one module only."""
    rule = re.compile(r"""startswith\(\s*["']sim-["']|==\s*["']sim-["']|["']sim-["']\s*\)""")
    owners = {ROOT / "_simulated.py"}
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sorted(ROOT.rglob("*.py"))
        if p not in owners and (ROOT / "sim") not in p.parents
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if rule.search(line)
    ]
    assert found == [], f"derive simulated names with agentlab.adapters._simulated.is_simulated: {found}"
    assert SIM_PREFIX == "sim-"
