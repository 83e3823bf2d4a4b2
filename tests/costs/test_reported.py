"""The provider's own cost beside agentlab's (costs/reported.py): kept, compared, unknown stays unknown."""

from __future__ import annotations

import math
from typing import Any

import pytest

import agentlab as al
from agentlab.adapters.base import parse_model
from agentlab.costs.reported import TOLERANCE, cost_check
from agentlab.loop.steps import CallTiming, apply_response
from agentlab.neutral.events import DiagnosticEvent, ModelResponse, ResponseCompletedEvent
from agentlab.neutral.items import AssistantTextItem
from agentlab.neutral.usage import CallUsage


@pytest.mark.parametrize(
    ("computed", "reported", "fires"),
    [
        (1.0, 1.0, False),
        (1.0, 1.0 + TOLERANCE * 0.9, False),
        (1.0, 1.0 + TOLERANCE * 1.5, True),
        (0.0, 0.002, True),
        (0.0, 0.0, False),
        (None, 0.5, False),  # unknown computed cost: nothing to compare
        (float("nan"), 0.5, False),
        (0.5, None, False),  # no provider figure: unknown, never 0
    ],
)
def test_cost_check(computed: float | None, reported: float | None, fires: bool) -> None:
    note = cost_check(computed, reported, provider="xai")
    assert (note is not None) == fires
    if note is not None:
        assert note.code == "provider_cost_differs"
        assert note.data == {"provider": "xai", "computed_usd": computed, "reported_usd": reported}
        assert len(note.message.splitlines()) == 1


def _completed(provider: str, model: str, reported: float | None) -> ResponseCompletedEvent:
    usage = CallUsage(
        input_tokens=1_000_000, cache_read_tokens=0, cache_write_tokens=0, cache_write_1h_tokens=0,
        output_tokens=1_000_000, reasoning_tokens=0, reasoning_source="reported",
    )  # fmt: skip
    resp = ModelResponse(
        provider=provider, api="responses", model=model, response_id="r",
        items=(AssistantTextItem(text="4"),),
        usage=usage, provider_cost_usd=reported,
    )  # fmt: skip
    return ResponseCompletedEvent(response=resp)


def _apply(model_string: str, reported: float | None) -> Any:
    ref = parse_model(model_string)
    timing = CallTiming(al.ModelRequest(model=ref.model, items=(al.UserItem(text="2+2?"),)), 1)
    timing.elapsed = 1.0
    completed = _completed(ref.provider, ref.model, reported)
    return apply_response(completed, timing, ref=ref, run_id="r1", step=1, policy="verbatim", refused=0)


def test_the_run_notes_a_provider_cost_that_differs_by_more_than_one_percent() -> None:
    # xai:sim-grok is priced 0.2 in / 1.5 out per million: 1M + 1M tokens cost 1.70 USD.
    agree = _apply("xai:sim-grok", 1.70)
    assert agree.diagnostics == () and agree.record.provider_cost_usd == 1.70
    assert agree.record.cost.total == pytest.approx(1.70)
    differ = _apply("xai:sim-grok", 2.00)
    (note,) = differ.diagnostics
    assert note.code == "provider_cost_differs" and (note.run_id, note.step) == ("r1", 1)
    assert note.data["reported_usd"] == 2.00 and note.data["computed_usd"] == pytest.approx(1.70)
    # The same rule for any provider that reports a cost (OpenRouter's usage.cost): data, not a case.
    (router,) = _apply("openrouter:sim-router-claude", 0.5).diagnostics
    assert router.data["provider"] == "openrouter"
    # Unknown stays unknown: a local server's unpriced call, or no reported figure, is not compared.
    assert _apply("vllm_responses:sim-local-responses", 0.5).diagnostics == ()
    assert math.isnan(_apply("vllm_responses:sim-local-responses", 0.5).record.cost.total)
    assert _apply("xai:sim-grok", None).diagnostics == ()


def test_xai_ticks_are_the_provider_cost_of_a_run_on_the_simulator() -> None:
    result = al.run("xai:sim-grok", "What is 2 + 3?")
    (call,) = result.calls
    assert call.provider_cost_usd is not None and call.provider_cost_usd > 0
    assert call.provider_cost_usd == pytest.approx(call.cost.total, rel=TOLERANCE)
    assert not [
        e for e in result.events if isinstance(e, DiagnosticEvent) and e.code == "provider_cost_differs"
    ]
    with al.prices_override(
        {
            "xai:sim-grok": {
                "input": 3.0,
                "output": 15.0,
                "cache_read": 0.3,
                "cache_write_5m": 3.0,
                "cache_write_1h": 3.0,
            }
        }
    ):
        dear = al.run("xai:sim-grok", "What is 2 + 3?")
    codes = [e.code for e in dear.events if isinstance(e, DiagnosticEvent)]
    assert codes.count("provider_cost_differs") == 1


@pytest.mark.parametrize(
    "model",
    [
        "openrouter:sim-router-openai",
        "openrouter:sim-router-claude",
        "openrouter:sim-router-gemini",
        "xai_chat:sim-xai-chat",
        "xai:sim-grok",
    ],
)
def test_every_simulated_provider_cost_agrees_with_agentlabs_price_row(model: str) -> None:
    """The simulator's own bill (OpenRouter ``usage.cost``, xAI ticks) and the price table are one price."""
    result = al.run(model, "What is 2 + 3?")
    assert all(c.provider_cost_usd is not None for c in result.calls)
    for c in result.calls:
        assert c.provider_cost_usd == pytest.approx(c.cost.total, rel=TOLERANCE), model
    assert "provider_cost_differs" not in [e.code for e in result.events if isinstance(e, DiagnosticEvent)]
