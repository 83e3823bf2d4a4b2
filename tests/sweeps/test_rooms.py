"""The multi-run layer in rooms of its own (issue 30): sizes and import arrows of ``agentlab/sweeps``.

Measured with the same AST walk as ``python -m tests.structure``, so the figures the issue quotes
are held by a check rather than by prose.
"""

from __future__ import annotations

import ast

from tests.structure import ROOT, cycles, import_graph

SWEEPS = ROOT / "sweeps"


def test_no_sweeps_module_is_over_500_lines() -> None:
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
             for p in SWEEPS.rglob("*.py")}
    assert {p: n for p, n in sizes.items() if n > 500} == {}


def test_no_import_cycle_among_the_sweeps_modules() -> None:
    assert [c for c in cycles(import_graph()) if any(m.startswith("agentlab.sweeps") for m in c)] == []


def test_render_and_loop_import_nothing_from_sweeps_and_sweeps_names_no_notebook() -> None:
    graph = import_graph(lazy=True)
    upward = sorted(
        (src, dst)
        for src, targets in graph.items()
        for dst in targets
        if (src.startswith(("agentlab.render", "agentlab.loop")) and dst.startswith("agentlab.sweeps"))
        or (src.startswith("agentlab.sweeps") and dst.startswith("agentlab.notebook"))
    )
    assert upward == []


def test_the_batch_driver_and_the_ray_executor_import_only_public_names_of_sweeps() -> None:
    private = []
    for rel in ("batch/driver.py", "ray_executor.py"):
        tree = ast.parse((SWEEPS / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentlab.sweeps"):
                private += [f"{rel}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert private == []
