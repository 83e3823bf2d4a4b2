"""Direction of imports: core never imports the notebook layer, IPython or widget libraries.

The rule, precisely:

- *Core* is every module under ``agentlab/`` except the edge: the package ``agentlab/notebook/``
  (views, the IPython extension, the Jupyter hook-up ``agentlab/notebook/hookup.py``), the facade
  ``agentlab/__init__.py`` (IPython's ``%load_ext agentlab`` calls its ``load_ipython_extension``;
  it also declares, as a string, that the hook-up is installed once IPython is loaded) and the CLI
  ``agentlab/__main__.py`` (it runs the notebook report). Those three sit above core and may import
  anything.
- A core module may not import, at top level or inside a function, ``agentlab.notebook`` (absolute
  or relative), ``IPython``, ``ipykernel``, ``ipywidgets``, ``anywidget``, ``traitlets``,
  ``nbformat``, ``nbclient`` or ``nbconvert``, nor name them in an ``importlib.import_module`` /
  ``__import__`` call.
- ``matplotlib`` only in the chart modules ``agentlab/render/charts.py`` and ``agentlab/sweeps/charts.py``;
  elsewhere only under ``if TYPE_CHECKING:`` (types of the methods that delegate to the charts).
- Package facades map public names to modules in lazy tables (strings, resolved on first access);
  those are not imports at import time, but they are arrows: none may point up the data path (no
  core facade names ``agentlab.notebook``).

Core reaches the Jupyter edge only through ``agentlab.frontend`` and ``Run.subscribe``.

The structure checks at the end hold the figures ``python -m tests.structure`` prints at their
targets, instead of a sentence in the docs: no function over 80 lines; the runtime import cycles
exactly ``structure.ALLOWED_CYCLES`` (at most two, each with its reason); no package importing
against the data path (``structure.LAYERS``, lazy tables included); the simulator a leaf.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import agentlab
from tests import structure

ROOT = Path(agentlab.__file__).resolve().parent
EDGE = {"__init__.py", "__main__.py"}
CHARTS = {"render/charts.py", "sweeps/charts.py", "render/timeline_chart.py"}
NEVER: tuple[str, ...] = (
    "agentlab.notebook",
    "IPython",
    "ipykernel",
    "ipywidgets",
    "anywidget",
    "traitlets",
    "nbformat",
)
NEVER += ("nbclient", "nbconvert")


def _core_modules() -> list[Path]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in EDGE or rel.startswith("notebook/"):
            continue
        out.append(path)
    return out


def _package(path: Path) -> list[str]:
    """The package a relative import in ``path`` starts from (for ``pkg/__init__.py``: ``pkg``)."""
    return ["agentlab", *path.relative_to(ROOT).with_suffix("").parts][:-1]


def _absolute(node: ast.ImportFrom, path: Path) -> str:
    if node.level == 0:
        return node.module or ""
    base = _package(path)
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def _imported(tree: ast.Module, path: Path) -> list[tuple[int, str]]:
    """Every module name this file imports (statements anywhere, and literal dynamic imports)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mod = _absolute(node, path)
            found.append((node.lineno, mod))
            found += [(node.lineno, f"{mod}.{a.name}") for a in node.names]  # from . import notebook
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = ast.unparse(node.func)
            if name.endswith(("import_module", "__import__")) and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


def _hits(name: str, roots: tuple[str, ...]) -> bool:
    return any(name == r or name.startswith(r + ".") for r in roots)


def layer_violations(root: Path = ROOT) -> list[str]:
    out = []
    for path in _core_modules():
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        typing_only = _type_checking_lines(tree)
        for line, name in _imported(tree, path):
            if _hits(name, NEVER):
                out.append(f"agentlab/{rel}:{line} imports {name}")
            elif _hits(name, ("matplotlib",)) and rel not in CHARTS and line not in typing_only:
                out.append(f"agentlab/{rel}:{line} imports {name} (charts only)")
    return out


def test_core_modules_never_import_the_notebook_layer_or_ipython() -> None:
    assert _core_modules(), ROOT
    assert layer_violations() == []


def test_the_rule_sees_relative_lazy_and_dynamic_imports(tmp_path: Path) -> None:
    """The checker itself: a relative import inside a function and a literal import_module are caught."""
    src = (
        "import importlib\n"
        "def f():\n    from .notebook.display import table_html\n"
        "def g():\n    from . import notebook\n"
        "def h():\n    importlib.import_module('IPython.display')\n"
        "def k():\n    import matplotlib.pyplot\n"
    )
    tree = ast.parse(src)
    names = {n for _, n in _imported(tree, ROOT / "usage.py")}
    assert {"agentlab.notebook.display", "agentlab.notebook", "IPython.display", "matplotlib.pyplot"} <= names


def test_importing_every_core_module_loads_no_notebook_or_ipython() -> None:
    """At run time too: import all of core in a fresh interpreter; nothing of the edge is loaded."""
    mods = []
    for path in _core_modules():
        parts = ["agentlab", *path.relative_to(ROOT).with_suffix("").parts]
        mods.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}:\n    importlib.import_module(m)\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {NEVER!r} "
        "or m.startswith('agentlab.notebook') or m.split('.')[0] == 'matplotlib')\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


# Checks, not claims: the structure figures of ``tests/structure.py`` held at their targets.


def test_no_function_is_over_80_lines() -> None:
    over = [f"{where} ({n} lines)" for n, where in structure.function_lengths() if n > structure.MAX_LINES]
    assert over == []


def test_the_runtime_import_cycles_are_the_allowed_ones_each_with_a_reason() -> None:
    assert len(structure.ALLOWED_CYCLES) <= 2
    assert all(reason.strip() for reason in structure.ALLOWED_CYCLES.values())
    found = {frozenset(c) for c in structure.cycles(structure.import_graph())}
    assert sorted(sorted(c) for c in found - set(structure.ALLOWED_CYCLES)) == [], "new cycles"
    assert sorted(sorted(c) for c in set(structure.ALLOWED_CYCLES) - found) == [], "allowed but gone"


def test_no_package_imports_against_the_data_path() -> None:
    """Lazy tables count: an upward reach hidden in a string is still one."""
    arrows = structure.arrows_against_path(structure.import_graph(lazy=True))
    assert [f"{a} -> {b}" for a, b in arrows] == []


def test_the_simulator_imports_nothing_of_agentlab_outside_itself() -> None:
    assert structure.sim_reaches_out(structure.import_graph(lazy=True)) == []


def test_the_structure_checker_sees_relative_function_level_and_lazy_imports_not_type_checking(
    tmp_path: Path,
) -> None:
    """The graph the checks read: what counts as an import, and what does not.

    A relative import inside a function and a lazy-table string are edges (and so arrows, when
    they point up); an import under ``TYPE_CHECKING`` and a dotted tag name are not.
    """
    pkg = tmp_path / "agentlab"
    for rel in ("__init__.py", "neutral/__init__.py", "loop/__init__.py", "notebook/__init__.py"):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text("")
    (pkg / "loop/runner.py").write_text("")
    (pkg / "notebook/view.py").write_text("")
    (pkg / "neutral/request.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from agentlab.notebook.view import View\n"
        "def f():\n    from ..loop import runner\n"
    )
    (pkg / "neutral/table.py").write_text(
        "_LAZY = {'View': 'agentlab.notebook.view', 'tag': 'agentlab.run_id'}\n"
    )
    graph = structure.import_graph(pkg, lazy=True)
    assert graph["agentlab.neutral.request"] == {"agentlab.loop", "agentlab.loop.runner"}
    assert graph["agentlab.neutral.table"] == {"agentlab.notebook.view"}
    assert structure.arrows_against_path(graph) == [
        ("agentlab.neutral.request", "agentlab.loop"),
        ("agentlab.neutral.request", "agentlab.loop.runner"),
        ("agentlab.neutral.table", "agentlab.notebook.view"),
    ]
    assert structure.import_graph(pkg)["agentlab.neutral.table"] == set()  # a string imports at first use
