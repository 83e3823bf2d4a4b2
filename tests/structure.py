"""Measures of the package's structure, shared by the checks in ``tests/test_layers.py``.

Run it to print the figures the structure issues quote: ``python -m tests.structure``.
The import graph is of *runtime* imports: statements at top level or inside functions, not under
``if TYPE_CHECKING:``; lazy tables of strings (``_lazy``) are followed too, since they import on
first access.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "agentlab"

#: The data path, lowest first. A package may import its own layer and the layers below it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "render", "frontend", "_lazy", "_version", "data"),
    ("neutral",),
    ("records", "assembly"),
    ("adapters",),
    ("costs",),
    ("loop",),
    ("sweeps",),
    ("evals", "telemetry", "tracking", "mcp"),
    ("notebook",),
    ("__init__", "__main__", "testing"),
)
APART = ("sim",)

MAX_LINES = 80
"""No function in ``agentlab/`` is longer (``tests/test_layers.py`` checks it)."""

ALLOWED_CYCLES: dict[frozenset[str], str] = {}
"""The runtime import cycles that may stay, each with the reason it must (at most two; the check in
``tests/test_layers.py`` wants the cycles found to be exactly these). Empty: every cycle outside
``sim`` and ``sweeps`` was broken (a module of its own for what both sides needed, or a protocol);
a cycle that truly has to stay is added here with its reason, and a comment where it is."""


def modules(root: Path = ROOT) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = ["agentlab", *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                ids.update(id(n) for n in ast.walk(sub))
    return ids


def _base(name: str, path: Path, level: int, mods: dict[str, Path]) -> list[str]:
    parts = name.split(".")
    is_pkg = path.name == "__init__.py"
    base = parts if is_pkg else parts[:-1]
    return base[: len(base) - (level - 1)] if level > 1 else base


def _targets(node: ast.AST, name: str, path: Path, mods: dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            mod = ".".join([*_base(name, path, node.level, mods), *([node.module] if node.module else [])])
        else:
            mod = node.module or ""
        yield mod
        for alias in node.names:
            if f"{mod}.{alias.name}" in mods:
                yield f"{mod}.{alias.name}"
    elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = ast.unparse(node.func)
        value = node.args[0].value
        if func.endswith(("import_module", "__import__")) and isinstance(value, str):
            yield value


def _lazy_strings(tree: ast.Module, mods: dict[str, Path]) -> Iterator[str]:
    """Module names in lazy tables: constants naming an agentlab module (``agentlab.x.y[:attr]``).

    Only exact module names count: a telemetry attribute or an MLflow tag such as
    ``"agentlab.run_id"`` looks like a dotted name but imports nothing.
    """
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Constant) else None
        name = value.split(":")[0] if isinstance(value, str) else ""
        if name.startswith("agentlab.") and name in mods:
            yield name


def import_graph(root: Path = ROOT, *, lazy: bool = False) -> dict[str, set[str]]:
    """Edges between agentlab modules: ``a -> b`` when importing or running ``a`` imports ``b``.

    With ``lazy``, names in lazy tables count as edges too (an upward reach hidden in a string is
    still an arrow against the data path, though it is not a cycle at import time).
    """
    mods = modules(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skip = _type_checking_nodes(tree)
        found: set[str] = set()
        for node in ast.walk(tree):
            if id(node) not in skip:
                found.update(_targets(node, name, path, mods))
        if lazy:
            found.update(_lazy_strings(tree, mods))
        for target in found:
            while target and target not in mods:
                target = target.rpartition(".")[0]
            if target and target != name and target.startswith("agentlab"):
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer(module: str) -> int | None:
    name = room(module)
    for i, names in enumerate(LAYERS):
        if name in names:
            return i
    return None


def arrows_against_path(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Module edges from a lower layer to a higher one, and any edge into or out of ``sim``."""
    out = []
    for src, targets in graph.items():
        for dst in targets:
            a, b = layer(src), layer(dst)
            leaves_sim = room(src) in APART and room(dst) not in APART
            if leaves_sim or (a is not None and b is not None and b > a):
                out.append((src, dst))
    return sorted(out)


def sim_reaches_out(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Edges from a module of ``agentlab.sim`` to an agentlab module outside it (the simulator is a leaf)."""
    return sorted(
        (a, b) for a, targets in graph.items() if room(a) in APART for b in targets if room(b) not in APART
    )


def function_lengths(root: Path = ROOT) -> list[tuple[int, str]]:
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                out.append((length, f"{path.relative_to(root.parent)}:{node.lineno} {node.name}"))
    return sorted(out, reverse=True)


def _report() -> None:
    comps = cycles(import_graph())
    arrows = arrows_against_path(import_graph(lazy=True))
    lengths = function_lengths()
    sweeps = sorted(
        (
            (len(p.read_text().splitlines()), str(p.relative_to(ROOT.parent)))
            for p in (ROOT / "sweeps").rglob("*.py")
        ),
        reverse=True,
    )
    over = sum(1 for n, _ in lengths if n > 80)
    print(f"longest function: {lengths[0][0]} lines ({lengths[0][1]}); over 80: {over}")
    print(f"largest sweeps module: {sweeps[0][0]} lines ({sweeps[0][1]})")
    print(f"runtime import cycles: {len(comps)}")
    for comp in comps:
        print("   ", " <-> ".join(comp))
    packages = sorted({(room(a), room(b)) for a, b in arrows})
    print(f"package arrows against the data path: {len(packages)} ({len(arrows)} module edges)")
    for a, b in arrows:
        print(f"    {a} -> {b}")


if __name__ == "__main__":
    _report()
