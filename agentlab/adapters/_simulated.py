"""The one rule for simulated model names: a provider model name starting with ``sim-``.

Such a name routes to the in-process simulator (``agentlab.sim``) behind the real SDK, is priced by
the simulator's own price rows, and counts as a reasoning model; a real name never does. Options
after a ``+`` (``sim-thinker+fault=429x1``) configure the simulator and are not part of the model.
Every module outside ``agentlab.sim`` asks here (the simulator is a leaf that imports nothing from
agentlab, so it keeps its own copy of the rule).
"""

from __future__ import annotations

__all__ = ["SIM_PREFIX", "is_simulated", "simulated_base"]

SIM_PREFIX = "sim-"


def is_simulated(model: str) -> bool:
    """Whether a provider's model name (``sim-reasoner``, not ``openai:sim-reasoner``) is simulated."""
    return model.startswith(SIM_PREFIX)


def simulated_base(model: str) -> str:
    """The model without its simulator options: ``sim-thinker+fault=429x1`` -> ``sim-thinker``.

    Any other name is returned unchanged (a real model name may contain ``+``).
    """
    return model.partition("+")[0] if is_simulated(model) else model
