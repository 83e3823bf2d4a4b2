"""``python -m agentlab demo``: runs a tool loop, says which backend it used, prints the usage frame."""

from __future__ import annotations

import pytest

from agentlab.__main__ import main


def test_demo_scripted(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--scripted"]) == 0
    out = capsys.readouterr().out
    assert "via ScriptedAdapter (testing helper)" in out
    assert "Rome is warmer" in out and "usage frame" in out
    assert "reasoning_items_dropped" in out and "session moved from openai" in out
    assert out.count("completed") >= 2


def test_demo_rejects_unknown_command() -> None:
    with pytest.raises(SystemExit):
        main(["nope"])
