"""Experiment tracking: sweeps and comparisons logged to MLflow (the ``mlflow`` extra).

``log_sweep`` / ``log_comparison`` (:mod:`.mlflow_log`) hand agentlab's portable results rows to
MLflow's own client; what a row may send is decided in :mod:`.rows`. Names load lazily, so
``import agentlab.tracking`` imports neither MLflow nor pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentlab._lazy import by_module, lazy_exports

if TYPE_CHECKING:
    # isort: off
    from agentlab.tracking.mlflow_log import (
        LoggedRuns as LoggedRuns,
        log_comparison as log_comparison,
        log_sweep as log_sweep,
    )
    # isort: on

_MODULES = {
    "agentlab.tracking.mlflow_log": "LoggedRuns log_comparison log_sweep",
}
"""Module -> its public names, each module named once (``by_module`` turns it into ``_LAZY``)."""
_LAZY = by_module(_MODULES)

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_exports("agentlab.tracking", _LAZY, globals())
