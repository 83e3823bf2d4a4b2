"""Sweeps: tasks x models x settings x repeats as independent pinned runs, with durable results.

``sweep``/``asweep`` run and resume (:mod:`.runner`); tasks and the shipped simulator task set live in
:mod:`.tasks`; the results file in :mod:`.store`; frames and summaries in :mod:`.analysis`; charts in
:mod:`.charts`; ``executor="ray"`` in :mod:`.ray_executor` (imported only when chosen, as is Ray).
Names load lazily, so ``import agentlab.sweeps`` imports neither pandas nor an SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentlab._lazy import by_module, lazy_exports

# For type checkers only: the names of the lazy table below, so that `from agentlab import tool` is
# typed (PEP 562's __getattr__ alone makes every public name Any to mypy and to editors).
# tests/test_import.py keeps the two in step; `X as X` marks an explicit re-export.
if TYPE_CHECKING:
    # isort: off
    from agentlab.sweeps.analysis import (
        load_results as load_results,
        mean_interval as mean_interval,
        spread as spread,
        summarize as summarize,
        summarize_sweep as summarize_sweep,
        wilson_interval as wilson_interval,
    )
    from agentlab.sweeps.charts import (
        plot_cost_per_solved as plot_cost_per_solved,
        plot_metric as plot_metric,
        plot_reasoning_share as plot_reasoning_share,
        plot_success_rate as plot_success_rate,
    )
    from agentlab.sweeps.execution import (
        ExecutionOptions as ExecutionOptions,
    )
    from agentlab.sweeps.limiter import (
        AdaptiveLimiter as AdaptiveLimiter,
    )
    from agentlab.sweeps.progress import (
        SweepProgress as SweepProgress,
        TextProgress as TextProgress,
    )
    from agentlab.sweeps.report import SweepReport as SweepReport
    from agentlab.sweeps.runner import asweep as asweep, sweep as sweep
    from agentlab.sweeps.settings import Setting as Setting, continuity_settings as continuity_settings
    from agentlab.sweeps.store import (
        ResultsFile as ResultsFile,
        read_rows as read_rows,
    )
    from agentlab.sweeps.tasks import (
        CITIES as CITIES,
        Task as Task,
        load_tasks as load_tasks,
        sim_tasks as sim_tasks,
        sim_tools as sim_tools,
    )
    # isort: on

_MODULES = {
    "agentlab.sweeps.analysis": "load_results mean_interval spread summarize summarize_sweep wilson_interval",
    "agentlab.sweeps.charts": "plot_cost_per_solved plot_metric plot_reasoning_share plot_success_rate",
    "agentlab.sweeps.execution": "ExecutionOptions",
    "agentlab.sweeps.limiter": "AdaptiveLimiter",
    "agentlab.sweeps.progress": "SweepProgress TextProgress",
    "agentlab.sweeps.report": "SweepReport",
    "agentlab.sweeps.runner": "asweep sweep",
    "agentlab.sweeps.settings": "Setting continuity_settings",
    "agentlab.sweeps.store": "ResultsFile read_rows",
    "agentlab.sweeps.tasks": "CITIES Task load_tasks sim_tasks sim_tools",
}
"""Module -> its public names, each module named once (``by_module`` turns it into ``_LAZY``)."""
_LAZY = by_module(_MODULES)

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_exports("agentlab.sweeps", _LAZY, globals())
