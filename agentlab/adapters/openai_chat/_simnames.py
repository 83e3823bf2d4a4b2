"""The simulator's model names per dialect, for ``ProviderSpec.simulated_models``.

The simulator keeps them in one table (``agentlab.sim.CHAT_MODELS``, dialect -> names); the
spec field names one sequence, so each dialect's is a view read from that table when iterated
(importing the simulator then, as ``check_simulated`` does anyway).
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["DEEPSEEK", "LOCAL", "MOONSHOT", "OPENROUTER", "XAI_CHAT", "ZAI"]

_TABLE = "agentlab.sim:CHAT_MODELS"
"""The simulator's table, loaded on first iteration (adapters import no simulator module)."""


class _Names:
    """The simulator's names for one dialect, read on iteration."""

    __slots__ = ("dialect",)

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect

    def __iter__(self) -> Iterator[str]:
        from agentlab.adapters.registry import load

        table: dict[str, tuple[str, ...]] = load(_TABLE)
        return iter(table.get(self.dialect, ()))

    def __repr__(self) -> str:
        return f"<simulated {self.dialect} chat models>"


DEEPSEEK = _Names("deepseek")
OPENROUTER = _Names("openrouter")
LOCAL = _Names("local")
MOONSHOT = _Names("moonshot")
ZAI = _Names("zai")
XAI_CHAT = _Names("xai_chat")
