"""Real-model prices from the maintained ``genai-prices`` library, as agentlab :class:`Price` rows.

Why a library: real prices change every few weeks and new lineups appear faster than a table copied
into this repo could follow; ``genai-prices`` (pydantic) is released every few days, covers both
providers' current lineups with long-context tiers, cache reads/writes (Anthropic's 1 h writes) and
batch/service-tier variants, and is light (pure Python; pydantic and httpx2, which agentlab has).

It is imported on the first real-model lookup only (``import agentlab`` stays light). Its matching
rules are its own (exact ids, dated snapshots, and the aliases its maintainers list, e.g. Anthropic
ids by prefix); a name it does not know is unpriced here, never guessed.

Conversion to agentlab's buckets follows the library's own arithmetic: a token class it does not
price separately is billed with its parent class (no cache-read price: reads cost input; no 1 h write
price: 1 h writes cost the 5 m write price; no write price: writes cost input), and reasoning is
billed as output. A model whose text prices need a bucket agentlab does not have (e.g. a separate
reasoning-token price) or that has no input/output token price is reported as unpriced.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from importlib import metadata
from typing import Any

from agentlab.adapters.registry import find_provider
from agentlab.costs.price import Price, PriceTier

__all__ = ["RELEASE_DATES", "library_price", "library_source"]

RELEASE_DATES: dict[str, str] = {"0.2.3": "2026-11-10"}
"""Upload date of each genai-prices release agentlab was checked against (the bundled data carries
no date of its own). A newer release shows its version with an unknown (``<NA>``) date."""

_OURS = {
    "input_mtok": "input",
    "cache_read_mtok": "cache_read",
    "cache_write_mtok": "cache_write_5m",
    "cache_write_5m_mtok": "cache_write_5m",
    "cache_write_1h_mtok": "cache_write_1h",
    "output_mtok": "output",
}
# Price keys that bill things agentlab's usage does not count (media tokens, searches, requests):
# ignored, as the old table ignored them. Any other text-token key makes the model unpriced.
_IGNORED_MARKERS = ("audio", "image", "video", "searches", "requests", "mchars", "hours", "kcount")


def _version() -> str:
    try:
        return metadata.version("genai-prices")
    except metadata.PackageNotFoundError:  # pragma: no cover - a core dependency
        return "unknown"


def library_source() -> tuple[str, str | None]:
    """``(source, updated)`` for prices from the library: its version, and the data's date.

    With the library's auto-update running (``genai_prices.UpdatePrices``) the date is that of the
    last fetch; otherwise the release date of the installed version, when agentlab knows it.
    """
    snap = _snapshot()
    version = _version()
    if snap.from_auto_update:
        return f"genai-prices {version} (auto-updated)", snap.timestamp.date().isoformat()
    return f"genai-prices {version}", RELEASE_DATES.get(version)


def _rate_at(value: Any, input_tokens: int) -> Decimal:
    """The per-million rate of one price key for a call of ``input_tokens`` (library's cliff rule)."""
    from genai_prices.types import TieredPrices

    if not isinstance(value, TieredPrices):
        return Decimal(value)
    rate = value.base
    for tier in reversed(value.tiers):
        if input_tokens > tier.start:
            return tier.price
    return rate


def _rates(keyed: dict[str, Any], input_tokens: int) -> dict[str, float]:
    """Our five buckets at one input size, with the library's parent-class fallbacks."""
    r = {ours: float(_rate_at(keyed[k], input_tokens)) for k, ours in _OURS.items() if k in keyed}
    r.setdefault("cache_read", r["input"])
    r.setdefault("cache_write_5m", r["input"])
    r.setdefault("cache_write_1h", r["cache_write_5m"])
    return r


def _to_price(model_price: Any, source: str, updated: str | None) -> Price | None:
    from genai_prices.types import TieredPrices

    keyed = {k: v for k, v in vars(model_price).items() if v is not None and not k.startswith("_")}
    if "input_mtok" not in keyed or "output_mtok" not in keyed:
        return None
    if any(k not in _OURS and not any(m in k for m in _IGNORED_MARKERS) for k in keyed):
        return None  # e.g. output_reasoning_mtok: a bucket our formula cannot bill apart
    keyed = {k: v for k, v in keyed.items() if k in _OURS}
    starts = sorted({t.start for v in keyed.values() if isinstance(v, TieredPrices) for t in v.tiers})
    tiers = tuple(PriceTier.model_validate({"above_input_tokens": s, **_rates(keyed, s + 1)}) for s in starts)
    return Price.model_validate({**_rates(keyed, 0), "tiers": tiers, "source": source, "as_of": updated})


@functools.lru_cache(maxsize=2048)
def _cached(provider_id: str, model: str, snapshot: tuple[int, datetime], day: int) -> Price | None:
    snap = _snapshot()
    try:
        _, info = snap.find_provider_model(model, None, provider_id, None)
    except LookupError:
        return None
    source, updated = library_source()
    return _to_price(info.get_prices(datetime.now(tz=UTC)), source, updated)


@functools.cache
def _snapshot_getter() -> Callable[[], Any]:
    """``genai_prices.data_snapshot.get_snapshot``, imported once, on the first real-model lookup."""
    from genai_prices import data_snapshot

    return data_snapshot.get_snapshot


def _snapshot() -> Any:
    return _snapshot_getter()()


def library_price(provider: str, model: str) -> Price | None:
    """The library's current price of ``provider:model`` as a :class:`Price`, or None when unknown.

    The library provider is the one the provider's ``ProviderSpec.price_provider`` names. Cached
    per (snapshot, UTC day): an auto-update or a dated price change is picked up.
    """
    spec = find_provider(provider)
    provider_id = None if spec is None else spec.price_provider
    if provider_id is None:  # the provider's spec names no library provider
        return None
    snap = _snapshot()
    return _cached(provider_id, model, (id(snap), snap.timestamp), int(time.time() // 86_400))
