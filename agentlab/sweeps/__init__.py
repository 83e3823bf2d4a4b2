"""Sweeps: tasks x models x settings x repeats as independent pinned runs, with durable results.

``sweep``/``asweep`` run and resume (:mod:`.runner`); tasks and the shipped simulator task set live in
:mod:`.tasks`; the results file in :mod:`.store`; frames and summaries in :mod:`.analysis`; charts in
:mod:`.charts`. Names load lazily, so ``import agentlab.sweeps`` imports neither pandas nor an SDK.
"""

from __future__ import annotations

from agentlab._lazy import lazy_exports

_LAZY: dict[str, str] = {
    "AdaptiveLimiter": "agentlab.sweeps.limiter",
    "CITIES": "agentlab.sweeps.tasks",
    "ResultsFile": "agentlab.sweeps.store",
    "Setting": "agentlab.sweeps.runner",
    "SweepProgress": "agentlab.sweeps.progress",
    "SweepReport": "agentlab.sweeps.runner",
    "Task": "agentlab.sweeps.tasks",
    "TextProgress": "agentlab.sweeps.progress",
    "WidgetProgress": "agentlab.notebook.progress",
    "asweep": "agentlab.sweeps.runner",
    "continuity_settings": "agentlab.sweeps.runner",
    "load_results": "agentlab.sweeps.analysis",
    "load_tasks": "agentlab.sweeps.tasks",
    "plot_cost_per_solved": "agentlab.sweeps.charts",
    "plot_metric": "agentlab.sweeps.charts",
    "plot_reasoning_share": "agentlab.sweeps.charts",
    "plot_success_rate": "agentlab.sweeps.charts",
    "read_rows": "agentlab.sweeps.store",
    "sim_tasks": "agentlab.sweeps.tasks",
    "sim_tools": "agentlab.sweeps.tasks",
    "summarize": "agentlab.sweeps.analysis",
    "summarize_sweep": "agentlab.sweeps.analysis",
    "sweep": "agentlab.sweeps.runner",
    "wilson_interval": "agentlab.sweeps.analysis",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_exports("agentlab.sweeps", _LAZY, globals())
