"""Lazy re-exports for package facades: a name is imported from its module on first access.

Why: ``import agentlab`` (and ``agentlab.sweeps``) must stay fast and load no SDK, pandas or widget
library; each facade maps its public names to modules and resolves them through PEP 562 hooks.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for a package whose public names are ``exports`` (name -> module)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups skip this hook
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__


def by_module(table: Mapping[str, str]) -> dict[str, str]:
    """Name -> module from module -> its public names (space-separated): each module is named once.

    A name given under two modules is refused: one of the two would be silently unreachable.
    """
    out: dict[str, str] = {}
    for module, names in table.items():
        for name in names.split():
            if out.setdefault(name, module) != module:
                raise ValueError(f"{name!r} is exported from both {out[name]!r} and {module!r}")
    return out
