"""``bedrock:`` models everywhere: runs, compare, sweeps, served simulator, traces, prices."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentlab as al
from agentlab.errors import ConfigError, InvalidSettingsError

pytest.importorskip("boto3")

TASK = "Is it warmer in Paris or Rome?"


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
    """
    return {"paris": "18 C, rain", "rome": "24 C, sun"}.get(city.lower(), "no data")


@pytest.mark.parametrize("model", ["sim-bedrock-claude", "sim-bedrock-openai", "sim-bedrock-kimi"])
def test_a_tool_loop_with_thinking_runs_end_to_end_through_boto3(model: str) -> None:
    r = al.run(f"bedrock:{model}", TASK, tools=[get_weather], reasoning={"budget_tokens": 2048})
    assert r.status == "completed" and r.output == "Rome is warmer (24 vs Paris 18)."
    assert r.steps == 2 and r.usage.reasoning_items_dropped == 0
    assert r.usage.tokens.reasoning_tokens is None and r.usage.tokens.reasoning_source == "unknown"
    assert r.usage.cost.total > 0 and math.isnan(r.usage.cost.reasoning)  # simulated prices


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    from tests.support.loopback import serving

    with serving() as url:
        yield url


def test_the_served_simulator_answers_boto3_and_the_adapter_over_a_socket(served: str) -> None:
    import boto3  # type: ignore[import-untyped]

    from agentlab.adapters.base import create_adapter

    adapter = create_adapter("bedrock:sim-bedrock-claude", base_url=served)
    r = al.run("bedrock:sim-bedrock-claude", TASK, tools=[get_weather], adapter=adapter)
    assert r.status == "completed" and "Rome" in (r.output or "")
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", endpoint_url=served,
        aws_access_key_id="AKIAEXAMPLE000000000", aws_secret_access_key="example",
    )  # fmt: skip
    answer = client.converse_stream(
        modelId="sim-bedrock-kimi", messages=[{"role": "user", "content": [{"text": "hi"}]}]
    )
    kinds = [next(iter(e)) for e in answer["stream"]]
    assert kinds[0] == "messageStart" and kinds[-1] == "metadata"


def test_compare_runs_bedrock_beside_another_provider() -> None:
    cmp = al.compare(
        TASK, models=["bedrock:sim-bedrock-claude", "anthropic:sim-thinker"], tools=[get_weather]
    )
    assert set(cmp.answers.values()) == {"Rome is warmer (24 vs Paris 18)."}


def test_drop_is_refused_with_thinking_on_claude_only() -> None:
    with pytest.raises(InvalidSettingsError, match="unmodified"):
        al.Run("bedrock:sim-bedrock-claude", TASK, continuation_policy="drop")
    r = al.run("bedrock:sim-bedrock-openai", TASK, tools=[get_weather], continuation_policy="drop")
    assert r.status == "completed" and r.usage.reasoning_items_dropped > 0


def test_an_asyncio_sweep_runs_bedrock_models(tmp_path: Path) -> None:
    report = al.sweep(
        [TASK, "What is 12 * (3 + 4)?"], ["bedrock:sim-bedrock-claude", "bedrock:sim-bedrock-kimi"],
        results=tmp_path / "r.jsonl", tools=[get_weather], progress=None,
    )  # fmt: skip
    assert (report.ran, report.failed) == (4, 0) and report.cost_usd > 0


def test_a_batch_sweep_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no batch API for provider"):
        al.sweep([TASK], ["bedrock:sim-bedrock-claude"], results=tmp_path / "r.jsonl", backend="batch")
    assert not (tmp_path / "r.jsonl").exists()


def test_traces_name_the_provider_aws_bedrock() -> None:
    from agentlab.telemetry.attributes import provider_name

    assert provider_name("bedrock") == "aws.bedrock"


def test_real_models_are_priced_by_the_library_and_unknown_stays_unknown() -> None:
    price = al.get_price("bedrock", "global.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert price is not None and price.output > 0
    assert al.get_price("bedrock", "no-such-vendor.model-v1:0") is None
