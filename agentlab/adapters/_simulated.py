"""The one rule for simulated model names: a provider model name starting with ``sim-``.

Such a name routes to the in-process simulator (``agentlab.sim``) behind the real SDK (or, given an
explicit ``base_url``, to the simulator served there over HTTP: :func:`in_process`), is priced by
the simulator's own price rows, and counts as a reasoning model; a real name never does. Options
after a ``+`` (``sim-thinker+fault=429x1``) configure the simulator and are not part of the model.
Every module outside ``agentlab.sim`` asks here (the simulator is a leaf that imports nothing from
agentlab, so it keeps its own copy of the rule).

No adapter imports the simulator: what they need of it is named here and in the providers' specs
(``ProviderSpec.simulator``, ``simulated_models``) as ``"module:attr"`` strings, loaded on first use,
so the simulator's layout is its own business.
"""

from __future__ import annotations

__all__ = [
    "SIM_KEY",
    "SIM_PREFIX",
    "UNPACED",
    "in_process",
    "is_simulated",
    "option_error",
    "simulated_base",
    "simulator_key",
    "untimed_reason",
]

SIM_PREFIX = "sim-"
SIM_KEY = "agentlab.sim:SIM_API_KEY"
"""The simulator's placeholder key (``"module:attr"``)."""
_PARSE_OPTIONS = "agentlab.sim:parse_model_options"
_PACE_ERROR = "agentlab.sim:PaceError"
_PARSE_FAULTS = "agentlab.sim:parse_faults"
_FAULT_ERROR = "agentlab.sim:FaultSpecError"
# The simulator's own parsers of the options after "+" (pacing, faults) and their errors.
UNPACED = "unpaced simulator"
"""Why a simulated call without ``+tps=`` has no tokens-per-second figure (see :func:`untimed_reason`)."""


def is_simulated(model: str) -> bool:
    """Whether a provider's model name (``sim-reasoner``, not ``openai:sim-reasoner``) is simulated."""
    return model.startswith(SIM_PREFIX)


def in_process(model: str, base_url: object) -> bool:
    """Whether an adapter serves ``model`` from the in-process simulator: a ``sim-`` name, no ``base_url``.

    A ``sim-`` name with an explicit ``base_url`` is the simulator served on that URL (``python -m
    agentlab.sim serve``): the adapter talks to it over HTTP like to any host, with the ``api_key``
    given. Ignoring the URL would run a different simulator than the one the caller pointed at.
    """
    return is_simulated(model) and base_url is None


def simulator_key(api_key: str | None) -> str:
    """The key sent to a simulator over HTTP: the caller's, else the simulator's placeholder.

    Never a key from the environment: a real provider key has no business going to a simulator
    (which checks only that some key is present, as the real APIs do).
    """
    from agentlab.adapters.registry import load

    key: str = load(SIM_KEY)
    return api_key or key


def simulated_base(model: str) -> str:
    """The model without its simulator options: ``sim-thinker+fault=429x1`` -> ``sim-thinker``.

    Any other name is returned unchanged (a real model name may contain ``+``).
    """
    return model.partition("+")[0] if is_simulated(model) else model


def untimed_reason(model: str | None) -> str | None:
    """Why tokens per second would mean nothing for ``model``'s calls; ``None``: its timing is real.

    A real provider's stream is timed by the network and the model. An unpaced simulator frames a
    reply as fast as the machine can (millions of "tokens per second"), so that figure says nothing
    and is shown as unavailable; ``+tps=N`` paces it (``agentlab.sim.pacing``) and makes it real.
    ``+ttft=`` alone paces only the first token, not the rate.
    """
    if model is None or not is_simulated(model):
        return None
    options = model.split("+")[1:]
    return None if any(o.startswith("tps=") for o in options) else UNPACED


def option_error(model: str) -> str | None:
    """What is wrong with a ``sim-*`` name's options after ``+`` (fault, tps, ttft); ``None``: nothing.

    Checked by the simulator's own parsers (imported now), so the two never disagree.
    """
    from agentlab.adapters.registry import load

    errors = (load(_PACE_ERROR), load(_FAULT_ERROR))
    try:
        _, fault, _ = load(_PARSE_OPTIONS)(model)
        load(_PARSE_FAULTS)(fault or "")
    except errors as exc:
        return str(exc)
    return None
