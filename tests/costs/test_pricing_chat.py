"""Pricing of the Chat Completions dialects: computed beside reported, local servers unpriced (not 0)."""

from __future__ import annotations

import math
import warnings

import pytest

import agentlab as al
from agentlab.costs.pricing import UnpricedModelWarning, price_call, prices_override
from agentlab.loop.result import CallRecord, RunUsage
from agentlab.neutral.usage import CallUsage

USAGE = CallUsage(
    input_tokens=1000, cache_read_tokens=0, cache_write_tokens=0, output_tokens=200, reasoning_tokens=150
)


@pytest.mark.parametrize("model", ["sim-local", "sim-local-reasoning", "sim-local+fault=429x1"])
@pytest.mark.parametrize("provider", ["vllm", "llamacpp", "ollama", "chat"])
def test_simulated_local_servers_have_no_price_and_say_so(provider: str, model: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnpricedModelWarning)  # by design: no warning
        cost = price_call(USAGE, provider, model)
    assert not cost.known and math.isnan(cost.total) and math.isnan(cost.output)
    assert cost.source is not None and "no price" in cost.source


def test_a_user_price_wins_for_a_local_server() -> None:
    rate = {"input": 0.1, "cache_read": 0.1, "cache_write": 0.1, "output": 0.2, "source": "my GPU"}
    with prices_override({"vllm:sim-local": rate}):
        cost = price_call(USAGE, "vllm", "sim-local")
    assert cost.known and cost.total == pytest.approx((1000 * 0.1 + 200 * 0.2) / 1e6)
    assert cost.source == "my GPU"


def test_a_real_local_model_is_unpriced_with_one_warning() -> None:
    with pytest.warns(UnpricedModelWarning):
        cost = price_call(USAGE, "vllm", "Qwen/Qwen3-8B-cint-test")
    assert not cost.known and cost.source is None


def test_hosted_dialects_are_priced() -> None:
    for provider, model in (("deepseek", "sim-deepseek"), ("openrouter", "sim-router-gemini")):
        cost = price_call(USAGE, provider, model)
        assert cost.known and cost.total > 0 and cost.reasoning > 0, provider


def _record(step: int, reported: float | None) -> CallRecord:
    return CallRecord(
        run_id="run_x",
        step=step,
        provider="openrouter",
        model="sim-router-claude",
        usage=USAGE,
        cost=price_call(USAGE, "openrouter", "sim-router-claude"),
        provider_cost_usd=reported,
    )


def test_run_reported_cost_only_when_every_call_reported_one() -> None:
    both = RunUsage.from_records([_record(1, 0.001), _record(2, 0.002)])
    assert both.provider_cost_usd == pytest.approx(0.003)
    assert RunUsage.from_records([_record(1, 0.001), _record(2, None)]).provider_cost_usd is None
    assert RunUsage.from_records([]).provider_cost_usd is None
    assert "provider_cost_usd" not in RunUsage.from_records([_record(1, None)]).model_dump()
    frame = al.usage_frame([_record(1, 0.001), _record(2, None)])
    assert frame["provider_cost_usd"].iloc[0] == pytest.approx(0.001)
    assert math.isnan(frame["provider_cost_usd"].iloc[1])
    assert str(frame["provider_cost_usd"].dtype) == "float64"
