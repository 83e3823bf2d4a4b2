"""The simulator's model names per dialect, for ``ProviderSpec.simulated_models``.

The simulator keeps them in one table (``agentlab.sim.CHAT_MODELS``, dialect -> names); the
spec field names one sequence, so each dialect's is a view read from that table when iterated
(importing the simulator then, as ``check_simulated`` does anyway).
"""

from __future__ import annotations

from agentlab.adapters._simulated import SimulatedNames

__all__ = ["DEEPSEEK", "LOCAL", "MOONSHOT", "OPENROUTER", "XAI_CHAT", "ZAI"]


def _names(dialect: str) -> SimulatedNames:
    return SimulatedNames("agentlab.sim:CHAT_MODELS", dialect, "chat")


DEEPSEEK = _names("deepseek")
OPENROUTER = _names("openrouter")
LOCAL = _names("local")
MOONSHOT = _names("moonshot")
ZAI = _names("zai")
XAI_CHAT = _names("xai_chat")
