"""agentlab's version, in a module of its own.

Why not in the facade: the telemetry tracer, MLflow tags and the CLI read it, and a module below the
facade that imported ``agentlab`` for it would point against the data path. ``pyproject.toml``
holds the same string (``tests/test_version.py`` checks they agree).
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
