"""`import agentlab` stays light, and the lazy facade is complete."""

from __future__ import annotations

import subprocess
import sys

import agentlab

HEAVY = ("openai", "anthropic", "pandas", "matplotlib", "ipywidgets", "IPython", "httpx2", "httpx")


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


def test_readme_names_every_public_name() -> None:
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    missing = [n for n in agentlab.__all__ if not re.search(rf"\b{re.escape(n)}\b", readme)]
    assert not missing, f"README does not document: {missing}"
