"""No adapter module imports the simulator: what adapters need of it is named by ``"module:attr"``.

The simulator (``agentlab.sim``) is laid out by its own engineers; an adapter that imports one of its
modules (at top level or inside a function) breaks when that layout changes. The providers' specs name
how to get a simulator client (``ProviderSpec.simulator``) and its model names; those strings name
top-level names of ``agentlab.sim`` only.
"""

from __future__ import annotations

import ast
from pathlib import Path

import agentlab.adapters
from agentlab.adapters.registry import get_provider, provider_names

ADAPTERS = Path(agentlab.adapters.__file__).parent


def _simulator_imports(source: str, where: str) -> list[str]:
    """``where:line module`` for every import of ``agentlab.sim`` in ``source`` (functions included)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        if any(n == "agentlab.sim" or n.startswith("agentlab.sim.") for n in names):
            found.append(f"{where}:{node.lineno} {names[0]}")
    return found


def test_no_module_under_adapters_imports_the_simulator() -> None:
    found = [
        hit
        for path in sorted(ADAPTERS.rglob("*.py"))
        for hit in _simulator_imports(path.read_text(encoding="utf-8"), str(path.relative_to(ADAPTERS)))
    ]
    assert found == [], "adapters import the simulator; name it in the provider's spec:\n" + "\n".join(found)


def test_the_walk_sees_imports_inside_functions() -> None:
    source = (
        "import agentlab.simple\n"
        "def f():\n    from agentlab.sim import openai_client\n"
        "    import agentlab.sim.faults\n    from agentlab import sim\n"
    )
    assert _simulator_imports(source, "m") == ["m:3 agentlab.sim", "m:4 agentlab.sim.faults", "m:5 agentlab"]


def test_every_builtin_simulator_is_named_at_the_top_level_of_agentlab_sim() -> None:
    for name in provider_names():
        spec = get_provider(name)
        if spec.simulated_models is not None:
            assert spec.simulator is not None and spec.simulator.startswith("agentlab.sim:"), name
            assert callable(spec.simulator_client()), name
