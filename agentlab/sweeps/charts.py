"""Sweep charts: grouped bars per model (x) and setting (colour), from ``summarize()``.

The charts live in :mod:`agentlab.render.charts` (one home for every chart); these are the same functions
under the sweep names. Each takes ``ax=None`` (a new figure) or an Axes, returns the Axes and never
calls ``plt.show()``.
"""

from __future__ import annotations

from agentlab.render.charts import plot_cost_per_solved, plot_metric, plot_reasoning_share, plot_success_rate

__all__ = ["plot_cost_per_solved", "plot_metric", "plot_reasoning_share", "plot_success_rate"]
