"""The simulator's model names per Responses dialect, for ``ProviderSpec.simulated_models``.

The simulator keeps them in one table (``agentlab.sim.RESPONSES_MODELS``, provider -> names); each
dialect's spec names a view read from that table when iterated (adapters import no simulator module).
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = [
    "AZURE",
    "DEEPSEEK_RESPONSES",
    "LMSTUDIO_RESPONSES",
    "MANTLE",
    "OLLAMA_RESPONSES",
    "VLLM_RESPONSES",
    "XAI",
]

_TABLE = "agentlab.sim:RESPONSES_MODELS"


class _Names:
    """The simulator's names for one Responses dialect, read on iteration."""

    __slots__ = ("dialect",)

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect

    def __iter__(self) -> Iterator[str]:
        from agentlab.adapters.registry import load

        table: dict[str, tuple[str, ...]] = load(_TABLE)
        return iter(table.get(self.dialect, ()))

    def __repr__(self) -> str:
        return f"<simulated {self.dialect} Responses models>"


XAI = _Names("xai")
DEEPSEEK_RESPONSES = _Names("deepseek_responses")
AZURE = _Names("azure")
MANTLE = _Names("mantle")
VLLM_RESPONSES = _Names("vllm_responses")
OLLAMA_RESPONSES = _Names("ollama_responses")
LMSTUDIO_RESPONSES = _Names("lmstudio_responses")
