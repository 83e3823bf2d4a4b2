"""`import agentlab` stays light, and the lazy facade is complete."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import agentlab

HEAVY = (
    "openai", "anthropic", "pandas", "matplotlib", "ipywidgets", "IPython", "httpx2", "httpx", "mlflow",
    "opentelemetry",  # tracing loads only when the user imports OpenTelemetry (agentlab/telemetry)
    "ray",  # only sweep(..., executor="ray") imports it
    "scipy", "numpy",  # only the paired statistics (agentlab.evals.stats) import them, when called
)  # fmt: skip


def test_import_loads_no_heavy_module() -> None:
    code = (
        f"import sys, agentlab\nheavy = [m for m in {HEAVY!r} if m in sys.modules]\nprint(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import agentlab pulled in: {out.stdout.strip()}"


def test_all_is_sorted_and_resolvable() -> None:
    assert agentlab.__all__ == sorted(agentlab.__all__)
    for name in agentlab.__all__:
        assert getattr(agentlab, name) is not None, name


def test_unknown_attribute_raises() -> None:
    try:
        agentlab.does_not_exist  # noqa: B018
    except AttributeError as e:
        assert "does_not_exist" in str(e)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


def test_the_written_docs_name_every_public_name() -> None:
    """Every public name is explained in prose somewhere on the site, not only in a generated table."""
    import re
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1] / "docs"
    prose = "\n".join(p.read_text(encoding="utf-8") for p in docs.rglob("*.md"))
    missing = [n for n in agentlab.__all__ if not re.search(rf"\b{re.escape(n)}\b", prose)]
    assert not missing, f"no page of docs/ documents: {missing}"


def _type_checking_exports(module: ModuleType) -> dict[str, str]:
    """Name -> module of the ``X as X`` imports under the facade's ``if TYPE_CHECKING:``."""
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module, ast.unparse(stmt)
                for alias in stmt.names:
                    assert alias.asname == alias.name, f"{alias.name}: not an explicit re-export"
                    out[alias.name] = stmt.module
    return out


@pytest.mark.parametrize(
    ("facade", "table", "not_typed"),
    [
        ("agentlab", "_EXPORTS", set()),
        ("agentlab.sweeps", "_LAZY", set()),
        ("agentlab.notebook", "_LAZY", set()),
        ("agentlab.tracking", "_LAZY", set()),
    ],
)
def test_type_checkers_see_the_lazy_names(facade: str, table: str, not_typed: set[str]) -> None:
    """Every lazy public name is also imported for type checkers, from the module it loads from.

    Without it a type checker resolves ``from agentlab import tool`` through ``__getattr__`` as Any:
    users' code and this repo's tests are then not type-checked against agentlab at all.
    """
    module = importlib.import_module(facade)
    lazy: dict[str, str] = getattr(module, table)
    expected = {name: mod for name, mod in lazy.items() if name not in not_typed}
    assert _type_checking_exports(module) == expected
