"""The simulator's model names per Responses dialect, for ``ProviderSpec.simulated_models``.

The simulator keeps them in one table (``agentlab.sim.RESPONSES_MODELS``, provider -> names); each
dialect's spec names a view read from that table when iterated (adapters import no simulator module).
"""

from __future__ import annotations

from agentlab.adapters._simulated import SimulatedNames

__all__ = [
    "AZURE",
    "DEEPSEEK_RESPONSES",
    "LMSTUDIO_RESPONSES",
    "MANTLE",
    "OLLAMA_RESPONSES",
    "VLLM_RESPONSES",
    "XAI",
]


def _names(dialect: str) -> SimulatedNames:
    return SimulatedNames("agentlab.sim:RESPONSES_MODELS", dialect, "Responses")


XAI = _names("xai")
DEEPSEEK_RESPONSES = _names("deepseek_responses")
AZURE = _names("azure")
MANTLE = _names("mantle")
VLLM_RESPONSES = _names("vllm_responses")
OLLAMA_RESPONSES = _names("ollama_responses")
LMSTUDIO_RESPONSES = _names("lmstudio_responses")
