"""agentlab's Jupyter surface: the IPython extension, reasoning panels, run and compare views, charts.

Importing this package loads nothing heavy: names are resolved on first use (``import agentlab``
never imports it at all; ``tests/test_import.py``). The notebooks pick their models with
:func:`choose_models`, which is what lets them run on the simulated providers by default and on real
ones when keys are set, with no edits.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

__all__ = [
    "CompareView",
    "ReasoningPanel",
    "RunView",
    "choose_models",
    "options",
    "plot_cost_breakdown",
    "plot_cost_per_solved",
    "plot_reasoning_per_step",
    "style_usage_frame",
]

_LAZY = {
    "CompareView": "agentlab.notebook.run_view",
    "RunView": "agentlab.notebook.run_view",
    "ReasoningPanel": "agentlab.notebook.panel",
    "options": "agentlab.notebook.panel",
    "plot_cost_breakdown": "agentlab.notebook.charts",
    "plot_cost_per_solved": "agentlab.notebook.charts",
    "plot_reasoning_per_step": "agentlab.notebook.charts",
    "style_usage_frame": "agentlab.notebook.display",
}

# notebook role -> (provider, simulated model); the roles are the notebooks' own vocabulary, the
# provider's key variable comes from its registry entry.
_CHOICES = {
    "openai": ("openai", "sim-reasoner"),
    "anthropic": ("anthropic", "sim-thinker"),
    "openai_small": ("openai", "sim-reasoner-mini"),
}


def choose_models(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Model strings for the notebooks: ``{"openai": ..., "anthropic": ..., "openai_small": ...}``.

    A provider uses a real model only when *both* its API key and ``AGENTLAB_<PROVIDER>_MODEL`` are
    set (e.g. ``OPENAI_API_KEY`` + ``AGENTLAB_OPENAI_MODEL=gpt-5.1``); otherwise its simulated model
    (``openai:sim-reasoner``, ``anthropic:sim-thinker``, ``openai:sim-reasoner-mini``). A key alone
    never switches a notebook to a paid model.
    """
    from agentlab.adapters.registry import get_provider

    env = os.environ if environ is None else environ
    out = {}
    for role, (provider, sim) in _CHOICES.items():
        key_var = get_provider(provider).api_key_env
        real = env.get(f"AGENTLAB_{role.upper()}_MODEL", "").strip()
        out[role] = f"{provider}:{real}" if real and key_var and env.get(key_var) else f"{provider}:{sim}"
    return out


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentlab.notebook' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
