"""What a model call cost: real models priced by ``genai-prices``, simulated ones from local data.

Prices are USD per million tokens, per ``provider:model``: ``input`` (uncached prompt),
``cache_read``, ``cache_write_5m``, ``cache_write_1h`` and ``output`` (reasoning included), with the
``source`` and ``as_of`` date they come from, and optional long-context ``tiers`` (rates for calls
whose inclusive input is above a threshold, applied to the whole call, the providers' cliff rule).

Where a price comes from, first match wins:

1. scoped overrides (``with prices_override({...}):``), then process-wide ones (``set_price``):
   ``source`` is what the user gave (default ``"user override"``);
2. simulated models, from ``agentlab/data/prices.json`` (fictional prices, ``"agentlab simulated"``);
3. real models, from the ``genai-prices`` library (:mod:`agentlab.costs.library`), imported on the
   first real-model lookup: ``source`` ``"genai-prices <version>"``, ``as_of`` its release date.

A dated snapshot in an override or the local table (``my-model-2026-01-01``) falls back to its
family there; the library matches snapshots and aliases by its own rules. Nothing else is guessed.

Cost follows the token convention of :mod:`agentlab.neutral.usage` (inclusive ``input_tokens``)::

    input       = (input - cache_read - cache_write) x input price
    cache_read  = cache_read x cache-read price
    cache_write = (writes - 1h writes) x 5m price + 1h writes x 1h price
    output      = output x output price          (reasoning is inside it)
    reasoning   = reasoning x output price       (a *part* of output, never added to total)
    total       = input + cache_read + cache_write + output

with every rate taken from the tier the call's ``input_tokens`` falls in. Unknown is NaN, never 0:
an unpriced model gives NaN everywhere (and one ``UnpricedModelWarning`` per model and process);
the simulated local servers (``vllm:sim-local`` ...) are listed as having no price (a local server
bills nothing per token but its hardware is not free, so 0 would be a fake figure): NaN with
``source`` saying so and no warning; ``set_price`` gives them (or a real local model) a price;
unknown reasoning tokens give a NaN ``reasoning`` part but a known total. Each call's ``Cost``
carries the ``source`` and ``updated`` date of its price (the usage frame's ``price_source`` and
``price_updated`` columns).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import threading
import warnings
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from importlib import resources
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainSerializer

from agentlab.adapters._simulated import simulated_base
from agentlab.costs.library import library_price
from agentlab.costs.price import Price, PriceTier
from agentlab.errors import ConfigError
from agentlab.neutral.usage import CallUsage

__all__ = [
    "Cost",
    "Price",
    "PriceTier",
    "UnpricedModelWarning",
    "get_price",
    "price_call",
    "prices",
    "prices_override",
    "set_price",
]

_NAN = float("nan")


class UnpricedModelWarning(UserWarning):
    """A call to a model with no price: its cost is NaN (``set_price`` fixes it)."""


def _null_is_unknown(v: Any) -> Any:
    return _NAN if v is None else v


def _unknown_is_null(v: float) -> float | None:
    return None if math.isnan(v) else v


Usd = Annotated[
    float,
    BeforeValidator(_null_is_unknown),
    PlainSerializer(_unknown_is_null, return_type=float | None, when_used="json"),
]
"""USD, NaN when unknown. NaN in memory (arithmetic propagates it, as documented) and ``null`` in
JSON: a bare ``NaN`` is not JSON, and strict parsers (``JSON.parse``, ``jq``) reject the file."""


class Cost(BaseModel):
    """USD of one call or a sum of calls.

    NaN means unknown (``null`` in JSON); ``reasoning`` is a part of ``output``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: Usd = 0.0
    cache_read: Usd = 0.0
    cache_write: Usd = 0.0
    output: Usd = 0.0
    reasoning: Usd = 0.0
    total: Usd = 0.0
    source: str | None = None
    """Where the price came from (``Price.source``); None when unpriced; ``"; "``-joined in sums."""
    updated: str | None = None
    """The date of that price (``Price.as_of``), when known; ``"; "``-joined in sums."""

    @classmethod
    def unknown(cls) -> Cost:
        """A cost no price could be found for: NaN in every bucket, so sums that include it stay unknown."""
        return cls(input=_NAN, cache_read=_NAN, cache_write=_NAN, output=_NAN, reasoning=_NAN, total=_NAN)

    @property
    def known(self) -> bool:
        """False when any summed call was unpriced (a NaN total is unknown, not free)."""
        return not math.isnan(self.total)

    def __add__(self, other: Cost) -> Cost:
        if not isinstance(other, Cost):
            return NotImplemented
        return Cost(
            input=self.input + other.input,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            output=self.output + other.output,
            reasoning=self.reasoning + other.reasoning,
            total=self.total + other.total,
            source=_join(self.source, other.source),
            updated=_join(self.updated, other.updated),
        )


def _join(a: str | None, b: str | None) -> str | None:
    """Provenance of a sum: each distinct part once, in a stable order (None adds nothing)."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    return "; ".join(sorted(set(a.split("; ")) | set(b.split("; "))))


_lock = threading.Lock()
_table: dict[str, Price] | None = None
_no_price: dict[str, Cost] = {}
"""Shipped entries that say "this model has no price" (simulated local servers): unknown, no warning."""
_user: dict[str, Price] = {}
_warned: set[str] = set()
_scoped: ContextVar[Mapping[str, Price] | None] = ContextVar("agentlab_prices", default=None)


def _load() -> dict[str, Price]:
    global _table
    with _lock:
        if _table is None:
            raw = json.loads(resources.files("agentlab").joinpath("data/prices.json").read_text("utf-8"))
            models = raw["models"]
            _no_price.update(
                {
                    k: Cost.unknown().model_copy(update={"source": v["source"], "updated": v.get("as_of")})
                    for k, v in models.items()
                    if v.get("unpriced")
                }
            )
            _table = {
                k: Price.model_validate({f: x for f, x in v.items() if f != "about"})
                for k, v in models.items()
                if not v.get("unpriced")
            }
        return _table


def _key(provider: str, model: str) -> str:
    return f"{provider}:{model}"


def _coerce(price: Price | Mapping[str, Any]) -> Price:
    if isinstance(price, Price):
        return price
    data = dict(price)
    if "cache_write" in data:  # one figure for both ttls
        w = data.pop("cache_write")
        data.setdefault("cache_write_5m", w)
        data.setdefault("cache_write_1h", w)
    try:
        return Price.model_validate(data)
    except Exception as e:
        raise ConfigError(
            f"invalid price {price!r}: give input, cache_read, cache_write_5m, cache_write_1h, output "
            f"(USD per million tokens): {e}"
        ) from e


def set_price(provider: str, model: str, price: Price | Mapping[str, Any] | None) -> None:
    """Set (or with ``None`` remove) a process-wide price override for ``provider:model``."""
    key = _key(provider, model)
    with _lock:
        if price is None:
            _user.pop(key, None)
        else:
            _user[key] = _coerce(price)


@contextlib.contextmanager
def prices_override(overrides: Mapping[str, Price | Mapping[str, Any]]) -> Iterator[None]:
    """Scoped overrides keyed ``"provider:model"`` (context-local: safe with concurrent runs)."""
    merged = dict(_scoped.get() or {})
    merged.update({k: _coerce(v) for k, v in overrides.items()})
    token = _scoped.set(merged)
    try:
        yield
    finally:
        _scoped.reset(token)


def prices() -> dict[str, Price]:
    """The local table: shipped simulated prices, then ``set_price`` overrides, then scoped ones.

    Real models priced by the library are not listed (it knows thousands); ``get_price`` finds them.
    """
    out = dict(_load())
    out.update(_user)
    out.update(_scoped.get() or {})
    return out


_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


def get_price(provider: str, model: str) -> Price | None:
    """The price of a model (overrides, then simulated, then the library), or None when unpriced.

    In the local table a dated snapshot (``...-2025-08-07``, ``...-20250929``, ``...-latest``) falls
    back to its family; the library applies its own id and alias rules. Nothing else is guessed:
    ``o3-pro`` is not ``o3``, ``gpt-5+anything`` is nobody.
    """
    table = prices()
    model = simulated_base(model)  # simulator options (``sim-thinker+fault=429x1``) cost nothing
    key = _key(provider, model)
    if key in table:
        return table[key]
    base = _SNAPSHOT.sub("", model)
    if base != model and _key(provider, base) in table:
        return table[_key(provider, base)]
    return library_price(provider, model)


def _warn_unpriced(provider: str, model: str) -> None:
    """One ``UnpricedModelWarning`` per model and process: a sweep of 1,000 calls warns once."""
    key = _key(provider, model)
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(
        f"no price for {provider}:{model}; its cost is NaN. "
        f"Add one with agentlab.set_price({provider!r}, {model!r}, {{...}}).",
        UnpricedModelWarning,
        stacklevel=4,
    )


def _m(tokens: int | None, per_million: float) -> float:
    return _NAN if tokens is None else tokens * per_million / 1_000_000


def price_call(usage: CallUsage, provider: str, model: str, *, tier: str = "standard") -> Cost:
    """The cost of one call (see the module docstring for the formula). Unpriced -> NaN + warning.

    ``tier="batch"``: answered through the provider's batch API, every rate times the provider's
    ``batch_price_factor`` (50% at OpenAI, Anthropic and Google); ``source`` says so.
    """
    cost = _price_call(usage, provider, model)
    if tier == "standard":
        return cost
    if tier != "batch":
        raise ConfigError(f"pricing tier must be 'standard' or 'batch', got {tier!r}")
    from agentlab.adapters.registry import get_provider

    f = get_provider(provider).batch_price_factor
    return Cost(
        input=cost.input * f,
        cache_read=cost.cache_read * f,
        cache_write=cost.cache_write * f,
        output=cost.output * f,
        reasoning=cost.reasoning * f,
        total=cost.total * f,
        source=None if cost.source is None else f"{cost.source} (batch: {f:.0%})",
        updated=cost.updated,
    )


def _price_call(usage: CallUsage, provider: str, model: str) -> Cost:
    price = get_price(provider, model)
    if price is None:
        _load()
        known_unpriced = _no_price.get(_key(provider, simulated_base(model)))
        if known_unpriced is not None:  # a simulated local server: no price by design, said once here
            return known_unpriced
        _warn_unpriced(provider, model)
        return Cost.unknown()
    p = price.rates_for(usage.input_tokens)
    if p is None:  # tiered price, unknown input size: which rates apply is unknown
        return Cost.unknown().model_copy(update={"source": price.source, "updated": price.as_of})
    writes = usage.cache_write_tokens
    w1h = usage.cache_write_1h_tokens or 0
    input_c = _m(usage.uncached_input_tokens, p.input)
    read_c = _m(usage.cache_read_tokens if usage.cache_read_tokens is not None else 0, p.cache_read)
    write_c = _NAN if writes is None else _m(writes - w1h, p.cache_write_5m) + _m(w1h, p.cache_write_1h)
    out_c = _m(usage.output_tokens, p.output)
    return Cost(
        source=price.source,
        updated=price.as_of,
        input=input_c,
        cache_read=read_c,
        cache_write=write_c,
        output=out_c,
        reasoning=_m(usage.reasoning_tokens, p.output),
        total=input_c + read_c + write_c + out_c,
    )
