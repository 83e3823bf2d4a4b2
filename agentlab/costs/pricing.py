"""What a model call cost, from a pricing table kept as data (``agentlab/data/prices.json``).

Prices are USD per million tokens, per ``provider:model``: ``input`` (uncached prompt),
``cache_read``, ``cache_write_5m``, ``cache_write_1h`` and ``output`` (reasoning included), with the
``source`` and ``as_of`` date they were copied from. Simulated models are in the table too, marked
``simulated`` (their prices are fictional).

Cost follows the token convention of :mod:`agentlab.neutral.usage` (inclusive ``input_tokens``)::

    input       = (input - cache_read - cache_write) x input price
    cache_read  = cache_read x cache-read price
    cache_write = (writes - 1h writes) x 5m price + 1h writes x 1h price
    output      = output x output price          (reasoning is inside it)
    reasoning   = reasoning x output price       (a *part* of output, never added to total)
    total       = input + cache_read + cache_write + output

Unknown is NaN, never 0: an unpriced model gives NaN everywhere (and an ``UnpricedModelWarning``);
unknown reasoning tokens give a NaN ``reasoning`` part but a known total. Override prices with
``set_price(...)`` (process-wide) or ``with prices_override({...}):`` (scoped, e.g. a notebook cell).
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

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from agentlab.adapters._simulated import simulated_base
from agentlab.errors import ConfigError
from agentlab.neutral.usage import CallUsage

__all__ = [
    "Cost",
    "Price",
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


class Price(BaseModel):
    """USD per million tokens for one model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    cache_read: float = Field(ge=0)
    cache_write_5m: float = Field(ge=0)
    cache_write_1h: float = Field(ge=0)
    output: float = Field(ge=0)
    simulated: bool = False
    source: str = "user"
    as_of: str | None = None


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
        )


_lock = threading.Lock()
_table: dict[str, Price] | None = None
_user: dict[str, Price] = {}
_scoped: ContextVar[Mapping[str, Price] | None] = ContextVar("agentlab_prices", default=None)


def _load() -> dict[str, Price]:
    global _table
    with _lock:
        if _table is None:
            raw = json.loads(resources.files("agentlab").joinpath("data/prices.json").read_text("utf-8"))
            _table = {k: Price.model_validate(v) for k, v in raw["models"].items()}
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
    """The effective table: shipped data, then ``set_price`` overrides, then scoped overrides."""
    out = dict(_load())
    out.update(_user)
    out.update(_scoped.get() or {})
    return out


_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


def get_price(provider: str, model: str) -> Price | None:
    """The price of a model, or None when it is not priced.

    A dated snapshot (``gpt-5-2025-08-07``, ``claude-sonnet-4-5-20250929``, ``...-latest``) falls back
    to its family. Nothing else is guessed: ``o3-pro`` is not ``o3``.
    """
    table = prices()
    model = simulated_base(model)  # simulator options (``sim-thinker+fault=429x1``) cost nothing
    key = _key(provider, model)
    if key in table:
        return table[key]
    base = _SNAPSHOT.sub("", model)
    return table.get(_key(provider, base)) if base != model else None


def _m(tokens: int | None, per_million: float) -> float:
    return _NAN if tokens is None else tokens * per_million / 1_000_000


def price_call(usage: CallUsage, provider: str, model: str) -> Cost:
    """The cost of one call (see the module docstring for the formula). Unpriced -> NaN + warning."""
    p = get_price(provider, model)
    if p is None:
        warnings.warn(
            f"no price for {provider}:{model}; its cost is NaN. "
            f"Add one with agentlab.set_price({provider!r}, {model!r}, {{...}}).",
            UnpricedModelWarning,
            stacklevel=2,
        )
        return Cost.unknown()
    writes = usage.cache_write_tokens
    w1h = usage.cache_write_1h_tokens or 0
    input_c = _m(usage.uncached_input_tokens, p.input)
    read_c = _m(usage.cache_read_tokens if usage.cache_read_tokens is not None else 0, p.cache_read)
    write_c = _NAN if writes is None else _m(writes - w1h, p.cache_write_5m) + _m(w1h, p.cache_write_1h)
    out_c = _m(usage.output_tokens, p.output)
    return Cost(
        input=input_c,
        cache_read=read_c,
        cache_write=write_c,
        output=out_c,
        reasoning=_m(usage.reasoning_tokens, p.output),
        total=input_c + read_c + write_c + out_c,
    )
