"""One version: ``agentlab/_version.py``, re-exported by the facade, equal to ``pyproject.toml``'s."""

from __future__ import annotations

import tomllib
from pathlib import Path

import agentlab
from agentlab._version import __version__


def test_the_facade_re_exports_the_version_module_and_pyproject_agrees() -> None:
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    assert agentlab.__version__ is __version__
    assert project["version"] == __version__
