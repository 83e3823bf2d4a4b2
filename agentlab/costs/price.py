"""A model's price: USD per million tokens in agentlab's five buckets, with long-context tiers.

Why a module of its own: both the price table (:mod:`agentlab.costs.pricing`) and the reader of the
``genai-prices`` library (:mod:`agentlab.costs.library`) build these values; holding them here lets
the table import the library reader without the reader importing the table back.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Price", "PriceTier", "Rates"]


class Rates(BaseModel):
    """USD per million tokens in the five buckets a call is billed in (a price, or one of its tiers)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    cache_read: float = Field(ge=0)
    cache_write_5m: float = Field(ge=0)
    cache_write_1h: float = Field(ge=0)
    output: float = Field(ge=0)


class PriceTier(Rates):
    """Rates for a call whose inclusive input is above ``above_input_tokens`` (USD per million)."""

    above_input_tokens: int = Field(ge=0)


class Price(Rates):
    """USD per million tokens for one model, with its long-context tiers (ascending thresholds)."""

    tiers: tuple[PriceTier, ...] = ()
    simulated: bool = False
    source: str = "user override"
    as_of: str | None = None

    def rates_for(self, input_tokens: int | None) -> Rates | None:
        """The rates that apply to a call with ``input_tokens`` (None: unknown, when tiers exist).

        Why a whole-call switch: the providers bill every token of a call above the threshold at
        the higher rate, not only the part above it.
        """
        if not self.tiers:
            return self
        if input_tokens is None:
            return None
        chosen: Rates = self
        for tier in sorted(self.tiers, key=lambda t: t.above_input_tokens):
            if input_tokens > tier.above_input_tokens:
                chosen = tier
        return chosen
