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


def test_demo_defaults_to_three_providers_in_one_session(capsys: pytest.CaptureFixture[str]) -> None:
    """One model per built-in provider, Gemini last: both provider switches drop opaque items visibly."""
    assert main(["demo", "--scripted", "--no-report"]) == 0
    out = capsys.readouterr().out
    heads = [line.split()[1] for line in out.splitlines() if line.startswith("== ")]
    assert heads == ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]
    assert "session moved from anthropic:messages:sim-thinker to google:generate_content:sim-gemini" in out
    frame = out[out.index("usage frame") :]
    providers = [line.split()[2] for line in frame.splitlines()[2:]]
    assert providers == ["openai"] * 2 + ["anthropic"] * 2 + ["google"] * 2


def test_demo_rejects_unknown_command() -> None:
    with pytest.raises(SystemExit):
        main(["nope"])
