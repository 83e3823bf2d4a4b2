"""``agentlab.sim`` is a leaf: no module in it imports anything from agentlab outside ``agentlab.sim``.

Why: the simulator stands apart from the toolkit's layers (``tests/structure.py`` keeps it out of the
data path) so that it can be served alone (``python -m agentlab.sim serve``), used by outside
clients, and tested against the real SDKs without the toolkit under test taking part in its
answers. An import of ``agentlab.records`` (or any other room) from inside it, even lazily inside a
function, breaks that. The walk covers every runtime import: top level, inside functions, relative
imports resolved, ``importlib.import_module("...")`` with a literal name; only imports under
``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

SIM = Path(__file__).resolve().parents[2] / "agentlab" / "sim"


def _module(path: Path) -> list[str]:
    parts = ["agentlab", *path.relative_to(SIM.parent).with_suffix("").parts]
    return parts[:-1] if parts[-1] == "__init__" else parts


def _typing_only(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                ids.update(id(n) for n in ast.walk(sub))
    return ids


def imported(source: str, module: list[str], is_package: bool) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of each runtime import in ``source`` (the module named ``module``)."""
    tree = ast.parse(source)
    skip = _typing_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module if is_package else module[:-1]
                base = base[: len(base) - (node.level - 1)]
                yield node.lineno, ".".join([*base, *([node.module] if node.module else [])])
            else:
                yield node.lineno, node.module or ""
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and ast.unparse(node.func).endswith(("import_module", "__import__"))
        ):
            yield node.lineno, str(node.args[0].value)


def outside_reaches(source: str, module: list[str], is_package: bool = False) -> list[tuple[int, str]]:
    return [
        (line, name)
        for line, name in imported(source, module, is_package)
        if (name == "agentlab" or name.startswith("agentlab."))
        and name != "agentlab.sim"
        and not name.startswith("agentlab.sim.")
    ]


@pytest.mark.parametrize(
    ("snippet", "reaches"),
    [
        ("from agentlab.records.atomic_file import write_atomic", True),
        ("def f():\n    from agentlab.errors import StorageError", True),
        ("import agentlab", True),
        ("import agentlab.neutral.request as r", True),
        ("from agentlab import errors", True),
        ("importlib.import_module('agentlab.records')", True),
        ("from ... import errors", True),  # agentlab.sim.chat.x -> agentlab
        ("from agentlab.sim.core import Simulator", False),
        ("import agentlab.sim.errors as E", False),
        ("from .. import errors", False),  # agentlab.sim.chat.x -> agentlab.sim
        ("import agentlabx", False),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agentlab.loop import Run", False),
    ],
)
def test_the_walk_finds_each_way_of_importing(snippet: str, reaches: bool) -> None:
    assert bool(outside_reaches(snippet, ["agentlab", "sim", "chat", "x"])) is reaches


def test_the_simulator_imports_nothing_from_agentlab_outside_it() -> None:
    found = []
    sources = sorted(SIM.rglob("*.py"))
    assert len(sources) > 30  # the walk really covers the simulator, subpackages included
    for path in sources:
        source = path.read_text(encoding="utf-8")
        for line, name in outside_reaches(source, _module(path), path.name == "__init__.py"):
            found.append(f"{path.relative_to(SIM.parents[1])}:{line}: imports {name}")
    assert not found, "agentlab.sim must stay a leaf:\n" + "\n".join(found)


def test_the_snapshot_writer_leaves_the_old_file_whole_when_a_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentlab.sim import atomic_file

    target = tmp_path / "request_schemas.json"
    target.write_text("old", encoding="utf-8")
    atomic_file.write_text_atomic(target, "new text")
    assert target.read_text(encoding="utf-8") == "new text"

    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError, match="No space left"):
        atomic_file.write_text_atomic(target, "newer text")
    assert target.read_text(encoding="utf-8") == "new text"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["request_schemas.json"]  # no temporary file left


def test_no_import_cycle_inside_the_simulator_and_no_module_imports_its_facade() -> None:
    """Submodules import each other directly; ``agentlab/sim/__init__.py`` only gathers the surface.

    A submodule that imports the facade (``from agentlab.sim import errors``) makes every module
    the facade imports part of one cycle; the facade registers the built-in protocols, so such a
    cycle decides which half-initialised module another one sees.
    """
    from tests.structure import cycles, import_graph

    graph = import_graph()
    inside = {
        m: {t for t in ts if t.startswith("agentlab.sim")}
        for m, ts in graph.items()
        if m.startswith("agentlab.sim")
    }
    to_facade = sorted(m for m, ts in inside.items() if "agentlab.sim" in ts)
    assert not to_facade, f"import the submodule directly, not the facade: {to_facade}"
    assert cycles(inside) == []
