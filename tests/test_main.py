"""``python -m agentlab demo``: runs a tool loop, says which backend it used, prints the usage frame."""

from __future__ import annotations

import pytest

from agentlab.__main__ import main


def test_demo_scripted(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--scripted", "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "via ScriptedAdapter (testing helper)" in out
    assert "Rome is warmer" in out and "usage frame" in out
    assert "reasoning_item_dropped" in out and "session moved from openai" in out
    assert out.count("completed") >= 3


def test_demo_defaults_to_five_providers_in_one_session(capsys: pytest.CaptureFixture[str]) -> None:
    """One model per hosted built-in provider, DeepSeek and OpenRouter after Gemini.

    Every provider switch drops opaque items visibly.
    """
    assert main(["demo", "--scripted", "--no-report"]) == 0
    out = capsys.readouterr().out
    heads = [line.split()[1] for line in out.splitlines() if line.startswith("== ")]
    assert heads == [
        "openai:sim-reasoner",
        "anthropic:sim-thinker",
        "google:sim-gemini",
        "deepseek:sim-deepseek",
        "openrouter:sim-router-claude",
    ]
    assert "session moved from anthropic:messages:sim-thinker to google:generate_content:sim-gemini" in out
    frame = out[out.index("usage frame") :]
    providers = [line.split()[2] for line in frame.splitlines()[2:]]
    expected = ["openai", "anthropic", "google", "deepseek", "openrouter"]
    assert providers == [p for p in expected for _ in range(2)]


def test_demo_on_the_chat_simulator_shows_reported_cost_and_unknown_local_price(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """OpenRouter's own ``usage.cost`` is printed beside agentlab's; a local server's cost is unknown."""
    models = ["deepseek:sim-deepseek", "openrouter:sim-router-claude", "vllm:sim-local"]
    assert main(["demo", "--no-report", *[a for m in models for a in ("--model", m)]]) == 0
    out = capsys.readouterr().out
    assert out.count("via simulated provider behind the openai SDK") == 3
    cost_lines = [line for line in out.splitlines() if line.startswith("tokens:")]
    assert "provider reported $" not in cost_lines[0]  # DeepSeek reports no cost
    assert "provider reported $" in cost_lines[1]
    assert "cost: unknown (no price)" in cost_lines[2] and "(reasoning <NA>)" in cost_lines[2]
    frame = out[out.index("usage frame") :].splitlines()
    assert "provider_cost_usd" in frame[1]


def test_demo_rejects_unknown_command() -> None:
    with pytest.raises(SystemExit):
        main(["nope"])
