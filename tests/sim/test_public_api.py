"""Code outside ``agentlab/sim`` reaches the simulator only through the names its facade exports.

Why: the simulator's modules are laid out by protocol and may move again; a caller that imports
``agentlab.sim.reasoner`` or ``agentlab.sim.faults`` breaks on the next move, and a shipped sweep tool
that borrows simulator internals makes the simulator a dependency of runs on real providers. The
facade (``agentlab.sim.__all__``) is the contract; this test walks ``agentlab/`` for every other reach.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentlab.sim as sim

PACKAGE = Path(__file__).resolve().parents[2] / "agentlab"

#: Reaches past the facade allowed outside the simulator: none (the adapters reach it through their
#: provider specs' "agentlab.sim:<name>" strings, which the walk below checks too). Never grow it.
KNOWN: dict[str, set[str]] = {}


def _reaches(source: str) -> set[str]:
    """Modules under ``agentlab.sim`` (not the facade) that ``source`` imports, at any depth."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
            if node.module == "agentlab.sim":
                names += [f"agentlab.sim.{a.name}" for a in node.names if a.name not in sim.__all__]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and ":" in node.value:
            module, _, attr = node.value.partition(":")  # a spec string: "agentlab.sim:openai_client"
            names = [module] + (
                [f"agentlab.sim.{attr}"] if module == "agentlab.sim" and attr not in sim.__all__ else []
            )
        out |= {n for n in names if n.startswith("agentlab.sim.")}
    return out


def test_nothing_outside_the_simulator_reaches_past_its_facade() -> None:
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("sim/"):
            continue
        extra = _reaches(path.read_text(encoding="utf-8")) - KNOWN.get(rel, set())
        if extra:
            found[rel] = extra
    assert not found, f"use the names agentlab.sim exports (add one there if needed): {found}"


def test_every_exported_name_exists_and_the_surface_is_documented() -> None:
    assert sim.__doc__ is not None and "Public surface" in sim.__doc__
    missing = [n for n in sim.__all__ if not hasattr(sim, n)]
    assert not missing
    for name in (
        "openai_client",
        "anthropic_client",
        "gemini_client",
        "chat_client",
        "SIM_API_KEY",
        "CHAT_MODELS",
    ):
        assert name in sim.__all__


def test_the_model_option_parsers_are_public_and_refuse_with_their_own_errors() -> None:
    name, fault, pace = sim.parse_model_options("sim-reasoner+fault=429x2+tps=50")
    assert (name, fault, pace.tps) == ("sim-reasoner", "429x2", 50)
    assert len(sim.parse_faults("429x2,cut")) == 2
    with pytest.raises(sim.PaceError):
        sim.parse_model_options("sim-reasoner+tps=-1")
    with pytest.raises(sim.FaultSpecError):
        sim.parse_faults("teapot")
    assert issubclass(sim.PaceError, ValueError) and issubclass(sim.FaultSpecError, ValueError)
