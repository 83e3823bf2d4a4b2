"""agentlab's Jupyter surface: the IPython extension, reasoning panels, run and compare views, charts.

Importing this package loads nothing heavy: names are resolved on first use (``import agentlab``
never imports it at all; ``tests/test_import.py``). The notebooks pick their models with
:func:`choose_models`, which is what lets them run on the simulated providers by default and on real
ones when keys are set, with no edits.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

# For type checkers only: the names of the lazy table below, so that `from agentlab import tool` is
# typed (PEP 562's __getattr__ alone makes every public name Any to mypy and to editors).
# tests/test_import.py keeps the two in step; `X as X` marks an explicit re-export.
if TYPE_CHECKING:
    # isort: off
    from agentlab.notebook.charts import (
        plot_cost_breakdown as plot_cost_breakdown,
        plot_cost_per_solved as plot_cost_per_solved,
        plot_reasoning_per_step as plot_reasoning_per_step,
    )
    from agentlab.notebook.display import (
        style_usage_frame as style_usage_frame,
    )
    from agentlab.notebook.panel import (
        ReasoningPanel as ReasoningPanel,
        options as options,
    )
    from agentlab.notebook.run_view import (
        CompareView as CompareView,
        RunView as RunView,
    )
    # isort: on

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

# notebook role -> (provider, simulated model), one line per role; the roles are the notebooks' own
# vocabulary (a role's real model comes from AGENTLAB_<ROLE>_MODEL), the provider's key variable
# comes from its registry entry. A new provider joins the notebooks with one line here.
_CHOICES = {
    "openai": ("openai", "sim-reasoner"),
    "anthropic": ("anthropic", "sim-thinker"),
    "openai_small": ("openai", "sim-reasoner-mini"),
    "google": ("google", "sim-gemini"),
    "deepseek": ("deepseek", "sim-deepseek"),
    "openrouter": ("openrouter", "sim-router-claude"),
}


def choose_models(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Model strings for the notebooks, one per role: ``{"openai": ..., "anthropic": ..., ...}``.

    The roles are ``openai``, ``anthropic``, ``openai_small``, ``google``, ``deepseek`` and
    ``openrouter``. A role uses a real model only when *both* its provider's API key and
    ``AGENTLAB_<ROLE>_MODEL`` are set (e.g. ``OPENAI_API_KEY`` + ``AGENTLAB_OPENAI_MODEL=gpt-5.1``,
    ``GEMINI_API_KEY`` + ``AGENTLAB_GOOGLE_MODEL=gemini-3-pro-preview``, ``DEEPSEEK_API_KEY`` +
    ``AGENTLAB_DEEPSEEK_MODEL=deepseek-reasoner``, ``OPENROUTER_API_KEY`` +
    ``AGENTLAB_OPENROUTER_MODEL=google/gemini-3-pro-preview``); otherwise its simulated model
    (``openai:sim-reasoner``, ``anthropic:sim-thinker``, ``openai:sim-reasoner-mini``,
    ``google:sim-gemini``, ``deepseek:sim-deepseek``, ``openrouter:sim-router-claude``). A key alone
    never switches a notebook to a paid model. Local servers have no role: they need a ``base_url``
    (pass ``vllm:<model>`` etc. yourself).
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
