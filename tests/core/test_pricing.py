"""Usage convention and cost: worked examples from real bills, cross-provider parity, unknowns."""

from __future__ import annotations

import math

import pytest

import agentlab as al
from agentlab import usage_from_anthropic, usage_from_openai
from agentlab.costs.pricing import (
    Cost,
    UnpricedModelWarning,
    get_price,
    price_call,
    prices,
    prices_override,
    set_price,
)
from agentlab.errors import ConfigError
from agentlab.neutral.usage import CallUsage

GPT5 = get_price("openai", "gpt-5")

OPENAI_USAGE = {
    "input_tokens": 2746,
    "input_tokens_details": {"cached_tokens": 2208},
    "output_tokens": 482,
    "output_tokens_details": {"reasoning_tokens": 448},
    "total_tokens": 3228,
}


def per_m(n: int, price: float) -> float:
    return n * price / 1_000_000


def test_openai_worked_example_input_and_cache() -> None:
    assert GPT5 is not None
    u = usage_from_openai(OPENAI_USAGE)
    c = price_call(u, "openai", "gpt-5")
    assert c.input == pytest.approx(per_m(538, GPT5.input))
    assert c.cache_read == pytest.approx(per_m(2208, GPT5.cache_read))
    assert c.cache_write == 0


def test_openai_worked_example_reasoning_inside_output() -> None:
    assert GPT5 is not None
    u = usage_from_openai(OPENAI_USAGE)
    c = price_call(u, "openai", "gpt-5")
    assert c.output == pytest.approx(per_m(482, GPT5.output))  # 482 x output, not (482 + 448) x output
    assert c.reasoning == pytest.approx(per_m(448, GPT5.output))
    expected_total = per_m(538, GPT5.input) + per_m(2208, GPT5.cache_read) + per_m(482, GPT5.output)
    assert c.total == pytest.approx(expected_total)
    # concrete dollars at the shipped gpt-5 price (1.25 / 0.125 / 10 per M)
    assert c.total == pytest.approx((538 * 1.25 + 2208 * 0.125 + 482 * 10) / 1e6)


def test_same_traffic_same_totals_openai_vs_anthropic_normalization() -> None:
    anth = {
        "input_tokens": 538,  # Anthropic excludes cache reads/writes here
        "cache_read_input_tokens": 2208,
        "cache_creation_input_tokens": 0,
        "output_tokens": 482,
        "output_tokens_details": {"thinking_tokens": 448},
    }
    uo, ua = usage_from_openai(OPENAI_USAGE), usage_from_anthropic(anth)
    assert uo == ua
    same = {"input": 2.0, "cache_read": 0.2, "cache_write": 2.5, "output": 8.0}
    with prices_override({"openai:x": same, "anthropic:y": same}):
        co, ca = price_call(uo, "openai", "x"), price_call(ua, "anthropic", "y")
    assert co == ca


def test_anthropic_cache_writes_by_ttl() -> None:
    u = usage_from_anthropic(
        {
            "input_tokens": 100,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 500,
            "cache_creation": {"ephemeral_5m_input_tokens": 300, "ephemeral_1h_input_tokens": 200},
            "output_tokens": 50,
        }
    )
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens) == (
        1600,
        1000,
        500,
        200,
    )
    assert u.reasoning_tokens is None and u.reasoning_source == "unknown"  # older response: unknown, not 0
    c = price_call(u, "anthropic", "claude-sonnet-4-5")
    assert c.input == pytest.approx(per_m(100, 3.0))
    assert c.cache_read == pytest.approx(per_m(1000, 0.3))
    assert c.cache_write == pytest.approx(per_m(300, 3.75) + per_m(200, 6.0))
    assert c.output == pytest.approx(per_m(50, 15.0))
    assert math.isnan(c.reasoning)  # unknown reasoning -> NaN part ...
    assert not math.isnan(c.total)  # ... but the bill is still known


def test_unknown_model_is_nan_with_warning() -> None:
    u = CallUsage(
        input_tokens=10, cache_read_tokens=0, cache_write_tokens=0, output_tokens=5, reasoning_tokens=0
    )
    with pytest.warns(UnpricedModelWarning, match="no price for openai:mystery"):
        c = price_call(u, "openai", "mystery")
    assert math.isnan(c.total) and math.isnan(c.input) and not c.known


def test_dated_snapshot_falls_back_to_family() -> None:
    assert get_price("anthropic", "claude-sonnet-4-5-20250929") == get_price("anthropic", "claude-sonnet-4-5")
    assert get_price("openai", "gpt-5-2025-08-07") == get_price("openai", "gpt-5")
    assert get_price("openai", "gpt-5-mini") != get_price("openai", "gpt-5")
    assert get_price("openai", "o3-pro") is None  # a different (pricier) model, never priced as o3
    assert get_price("anthropic", "claude-sonnet-4-5-latest") == get_price("anthropic", "claude-sonnet-4-5")


def test_table_has_sim_and_real_models_with_provenance() -> None:
    table = prices()
    for k in (
        "openai:sim-reasoner",
        "openai:sim-reasoner-mini",
        "anthropic:sim-thinker",
        "anthropic:sim-thinker-legacy",
    ):
        assert table[k].simulated, k
    for k in (
        "openai:gpt-5",
        "openai:gpt-5.1",
        "openai:gpt-5-mini",
        "openai:o3",
        "openai:o4-mini",
        "anthropic:claude-sonnet-4-5",
        "anthropic:claude-opus-4-6",
        "anthropic:claude-haiku-4-5",
    ):
        p = table[k]
        assert not p.simulated and p.source.startswith("https://") and p.as_of, k
        assert p.cache_read < p.input < p.output, k


def test_set_price_overrides_and_validates() -> None:
    try:
        set_price("openai", "my-finetune", {"input": 1, "cache_read": 0.5, "cache_write": 1, "output": 4})
        c = price_call(
            CallUsage(input_tokens=1_000_000, cache_read_tokens=0, cache_write_tokens=0, output_tokens=0),
            "openai",
            "my-finetune",
        )
        assert c.total == pytest.approx(1.0)
    finally:
        set_price("openai", "my-finetune", None)
    assert get_price("openai", "my-finetune") is None
    with pytest.raises(ConfigError):
        set_price("openai", "x", {"input": -1})


def test_cost_sum_and_run_usage() -> None:
    a = Cost(input=1, output=2, total=3)
    assert (a + a).total == 6
    assert math.isnan((a + Cost.unknown()).total)


def test_unknown_tokens_stay_unknown_in_sums() -> None:
    known = CallUsage(
        input_tokens=1,
        cache_read_tokens=0,
        cache_write_tokens=0,
        output_tokens=2,
        reasoning_tokens=1,
        reasoning_source="reported",
    )
    unknown = known.model_copy(update={"reasoning_tokens": None, "reasoning_source": "unknown"})
    s = known + unknown
    assert s.reasoning_tokens is None and s.output_tokens == 4 and s.reasoning_source == "unknown"
    assert al.CallUsage is CallUsage


def test_simulator_model_options_do_not_unprice_the_model() -> None:
    from agentlab.costs.pricing import get_price

    assert get_price("anthropic", "sim-thinker+fault=429x1") == get_price("anthropic", "sim-thinker")
    assert get_price("openai", "sim-reasoner+fault=slow:5") is not None
    assert get_price("openai", "gpt-5+anything") is None  # real names are never rewritten
