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
    # o3-pro is a different (pricier) model: never priced as o3. The old local table had no row for
    # it (None); the library prices it as itself.
    o3, o3_pro = get_price("openai", "o3"), get_price("openai", "o3-pro")
    assert o3 is not None and o3_pro is not None and (o3_pro.input, o3_pro.output) == (20.0, 80.0)
    assert (o3.input, o3.output) == (2.0, 8.0)
    assert get_price("openai", "o3-preview") is None  # a name nobody lists stays unpriced
    assert get_price("anthropic", "claude-sonnet-4-5-latest") == get_price("anthropic", "claude-sonnet-4-5")


def test_table_has_sim_models_and_real_models_come_from_the_library() -> None:
    table = prices()
    sims = ("openai:sim-reasoner", "openai:sim-reasoner-mini", "anthropic:sim-thinker")
    for k in (*sims, "anthropic:sim-thinker-legacy"):
        assert table[k].simulated and table[k].source == "agentlab simulated" and table[k].as_of, k
    # the local table holds simulated models only; real ones are the library's (it used to list 13)
    assert all(p.simulated for p in table.values())
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
        p = get_price(*k.split(":"))
        assert p is not None and not p.simulated and p.source.startswith("genai-prices "), k
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


# --- real models from the genai-prices library ------------------------------------------------------

CURRENT = (
    # the current lineups the installed SDKs list (openai ChatModel / ResponsesModel, anthropic ModelParam)
    "openai:gpt-6.1-sol",
    "openai:gpt-6.1-terra",
    "openai:gpt-6-sol",
    "openai:gpt-6-luna",
    "openai:gpt-6-astra",
    "openai:gpt-5.6-sol",
    "openai:gpt-5.6-terra",
    "openai:gpt-5.6-luna",
    "openai:gpt-5.5",
    "openai:gpt-5.5-pro",
    "openai:gpt-5.4",
    "openai:gpt-5.4-mini",
    "openai:gpt-5.2",
    "anthropic:claude-fable-5-2",
    "anthropic:claude-mythos-5-2",
    "anthropic:claude-haiku-5-5",
    "anthropic:claude-sonnet-5-5",
    "anthropic:claude-opus-5-5",
    "anthropic:claude-sonnet-5",
    "anthropic:claude-opus-5",
    "anthropic:claude-opus-4-8",
    "anthropic:claude-sonnet-4-6",
)


@pytest.mark.parametrize("ref", CURRENT)
def test_current_lineups_are_priced_by_the_library(ref: str) -> None:
    p = get_price(*ref.split(":"))
    assert p is not None, ref
    assert p.source.startswith("genai-prices ") and not p.simulated
    assert 0 < p.cache_read <= p.input < p.output


def _usage(
    inp: int, read: int = 0, w5: int = 0, w1h: int = 0, out: int = 100, reasoning: int = 40
) -> CallUsage:
    return CallUsage(
        input_tokens=inp,
        cache_read_tokens=read,
        cache_write_tokens=w5 + w1h,
        cache_write_1h_tokens=w1h,
        output_tokens=out,
        reasoning_tokens=reasoning,
        reasoning_source="reported",
    )


@pytest.mark.parametrize(
    "ref",
    ["openai:gpt-5", "openai:gpt-5.5", "openai:gpt-6-sol", "openai:o3-pro", "anthropic:claude-sonnet-4-5",
     "anthropic:claude-opus-4-6", "anthropic:claude-haiku-5-5", "anthropic:claude-sonnet-5-5"],
)
@pytest.mark.parametrize(
    "usage",
    [_usage(1000), _usage(50_000, read=30_000, w5=5_000, w1h=2_000), _usage(150_000, read=100_000),
     _usage(250_000, read=10_000, w5=20_000), _usage(400_000, read=300_000, w1h=50_000, out=5_000)],
)
def test_our_buckets_add_up_to_the_library_total(ref: str, usage: CallUsage) -> None:
    """The conversion to our five buckets bills exactly what the library itself computes."""
    from genai_prices import Usage, calc_price

    provider, model = ref.split(":")
    w1h = usage.cache_write_1h_tokens or 0
    assert usage.cache_write_tokens is not None and usage.cache_read_tokens is not None
    theirs = calc_price(
        Usage(
            input_tokens=usage.input_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            cache_write_5m_tokens=usage.cache_write_tokens - w1h,
            cache_write_1h_tokens=w1h,
            output_tokens=usage.output_tokens,
        ),
        model,
        provider_id=provider,
    )
    ours = price_call(usage, provider, model)
    assert ours.total == pytest.approx(float(theirs.total_price), rel=1e-9)
    ours_input = ours.input + ours.cache_read + ours.cache_write
    assert ours_input == pytest.approx(float(theirs.input_price), rel=1e-9)
    assert ours.output == pytest.approx(float(theirs.output_price), rel=1e-9)


def test_long_context_tier_applies_to_the_whole_call_from_its_input_tokens() -> None:
    # gpt-5.5: above 272k input every token costs the higher rate (input 5 -> 10, output 30 -> 45)
    at, above = _usage(272_000, out=1000), _usage(272_001, out=1000)
    c_at, c_above = price_call(at, "openai", "gpt-5.5"), price_call(above, "openai", "gpt-5.5")
    assert c_at.input == pytest.approx(per_m(272_000, 5.0))
    assert c_at.output == pytest.approx(per_m(1000, 30.0))
    assert c_above.input == pytest.approx(per_m(272_001, 10.0))
    assert c_above.output == pytest.approx(per_m(1000, 45.0))
    assert c_above.reasoning == pytest.approx(per_m(40, 45.0))  # reasoning is output, at the tier's rate
    # Claude Sonnet 4.5 above 200k (cache reads count toward the threshold: inclusive input)
    c = price_call(_usage(210_000, read=200_000, w1h=5_000), "anthropic", "claude-sonnet-4-5")
    assert c.input == pytest.approx(per_m(5_000, 6.0)) and c.cache_read == pytest.approx(per_m(200_000, 0.6))
    assert c.cache_write == pytest.approx(per_m(5_000, 12.0))
    small = price_call(_usage(200_000, read=100_000), "anthropic", "claude-sonnet-4-5")
    assert small.input == pytest.approx(per_m(100_000, 3.0))


def test_anthropic_cache_write_ttls_and_reads_from_the_library() -> None:
    p = get_price("anthropic", "claude-opus-4-6")
    assert p is not None
    rates = (p.input, p.cache_read, p.cache_write_5m, p.cache_write_1h, p.output)
    assert rates == (5.0, 0.5, 6.25, 10.0, 25.0)
    c = price_call(_usage(10_000, read=4_000, w5=1_000, w1h=2_000), "anthropic", "claude-opus-4-6")
    assert c.cache_write == pytest.approx(per_m(1_000, 6.25) + per_m(2_000, 10.0))


def test_openai_without_a_write_price_bills_writes_as_input() -> None:
    p = get_price("openai", "gpt-5")
    assert p is not None and p.cache_write_5m == p.cache_write_1h == p.input


def test_tiered_price_with_unknown_input_is_unknown_not_base() -> None:
    u = CallUsage(input_tokens=None, cache_read_tokens=0, cache_write_tokens=0, output_tokens=10)
    c = price_call(u, "openai", "gpt-5.5")
    assert not c.known and c.source is not None and c.source.startswith("genai-prices")


def test_overrides_win_over_library_and_simulated_and_say_so() -> None:
    flat = {"input": 1, "cache_read": 0.5, "cache_write": 1, "output": 4}
    u = _usage(1_000_000, out=0, reasoning=0)
    with prices_override({"openai:gpt-5.5": flat, "openai:sim-reasoner": flat}):
        for model in ("gpt-5.5", "sim-reasoner"):
            c = price_call(u, "openai", model)
            assert c.total == pytest.approx(1.0) and c.source == "user override" and c.updated is None
    try:
        set_price("anthropic", "claude-opus-5", {**flat, "source": "my contract", "as_of": "2026-12-01"})
        c = price_call(u, "anthropic", "claude-opus-5")
        assert c.total == pytest.approx(1.0) and (c.source, c.updated) == ("my contract", "2026-12-01")
    finally:
        set_price("anthropic", "claude-opus-5", None)
    assert price_call(u, "anthropic", "claude-opus-5").source.startswith("genai-prices")  # type: ignore[union-attr]


def test_price_source_and_date_per_call_and_in_sums() -> None:
    from agentlab.costs.library import RELEASE_DATES, library_source

    sim = price_call(_usage(100), "openai", "sim-reasoner")
    assert (sim.source, sim.updated) == ("agentlab simulated", "2026-11-30")
    real = price_call(_usage(100), "openai", "gpt-5")
    source, updated = library_source()
    assert (real.source, real.updated) == (source, updated)
    version = source.split()[1]
    assert updated == RELEASE_DATES.get(version)
    both = sim + real + Cost()
    assert both.source == f"agentlab simulated; {source}"
    assert (sim + sim).source == "agentlab simulated"


def test_unknown_model_warns_once_per_model() -> None:
    import warnings

    u = _usage(10)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(3):
            assert not price_call(u, "openai", "mystery-once-a").known
        assert not price_call(u, "anthropic", "mystery-once-b").known
    msgs = [str(w.message) for w in seen if issubclass(w.category, UnpricedModelWarning)]
    assert len(msgs) == 2 and "openai:mystery-once-a" in msgs[0] and "anthropic:mystery-once-b" in msgs[1]


def test_user_providers_are_never_matched_to_a_library_provider() -> None:
    assert get_price("toy", "gpt-5") is None  # a provider agentlab does not map is not "openai"
    assert get_price("my-openai-proxy", "gpt-5") is None


def test_the_batch_tier_is_the_providers_batch_share_of_every_rate() -> None:
    from agentlab.costs.pricing import price_call as pc
    from agentlab.errors import ConfigError as CE
    from agentlab.neutral.usage import CallUsage as CU

    u = CU(input_tokens=1_000, cache_read_tokens=200, cache_write_tokens=100, output_tokens=500,
           reasoning_tokens=300, reasoning_source="reported")
    sims = (("openai", "sim-reasoner"), ("anthropic", "sim-thinker"), ("google", "sim-gemini"))
    for provider, model in sims:
        std, batch = pc(u, provider, model), pc(u, provider, model, tier="batch")
        assert std.total > 0
        for part in ("input", "cache_read", "cache_write", "output", "reasoning", "total"):
            assert getattr(batch, part) == pytest.approx(getattr(std, part) * 0.5)
        assert batch.source == f"{std.source} (batch: 50%)" and batch.updated == std.updated
    with pytest.raises(CE, match="pricing tier"):
        pc(u, "openai", "sim-reasoner", tier="flex")
