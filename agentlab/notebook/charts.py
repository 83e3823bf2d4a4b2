"""The charts under their notebook name.

They live in :mod:`agentlab.render.charts`, below the notebook layer.

``Comparison.plot_costs`` and the sweep charts draw with them from core, which must not import the
notebook layer; this module keeps ``agentlab.notebook.plot_*`` where the notebooks find them.
"""

from __future__ import annotations

from agentlab.render.charts import (
    SEGMENTS,
    cost_breakdown,
    plot_cost_breakdown,
    plot_cost_per_solved,
    plot_metric,
    plot_reasoning_per_step,
    plot_reasoning_share,
    plot_success_rate,
)
from agentlab.render.timeline_chart import plot_timeline

__all__ = [
    "SEGMENTS",
    "cost_breakdown",
    "plot_cost_breakdown",
    "plot_cost_per_solved",
    "plot_metric",
    "plot_reasoning_per_step",
    "plot_reasoning_share",
    "plot_success_rate",
    "plot_timeline",
]
