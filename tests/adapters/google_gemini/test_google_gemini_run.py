"""A whole tool loop through ``agentlab.Run`` on the Gemini adapter (scripted Gemini far side).

The run carries each thought signature back on its functionCall part within the loop (the far side
answers 400 with the API's text otherwise), and no signature reaches the event log file.
"""

from __future__ import annotations

import json
from pathlib import Path

import agentlab as al
from agentlab.adapters.google_gemini import GoogleGeminiAdapter
from agentlab.records.eventlog import EventLog
from tests.adapters.google_gemini.gemini_scripted import GeminiScripted
from tests.adapters.google_gemini.gemini_support import client_on, signed_parts

PRICE = {"input": 1.0, "cache_read": 0.1, "cache_write_5m": 1.0, "cache_write_1h": 1.0, "output": 2.0}


def test_tool_loop_through_a_run_sends_signatures_back_and_logs_none(tmp_path: Path) -> None:
    far = GeminiScripted()
    adapter = GoogleGeminiAdapter("sim-gemini", client=client_on(far), max_retries=0)
    seen: list[str] = []

    @al.tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        seen.append(city)
        return {"Paris": "18 C, cloudy", "Rome": "24 C, sunny"}[city]

    log_path = tmp_path / "events.jsonl"
    with al.prices_override({"google:sim-gemini": PRICE}):
        run = al.Run(
            "google:sim-gemini", "Is it warmer in Paris or Rome?", tools=[get_weather], adapter=adapter,
            event_log=EventLog(log_path),
        )  # fmt: skip
        result = al.run_sync(run.arun())
    result.raise_for_status()
    assert sorted(seen) == ["Paris", "Rome"] and "Rome" in (result.output or "")  # side by side: no order
    assert [c.stop_reason for c in result.calls] == ["tool_use", "end_turn"]
    second = json.loads(far.bodies[1])
    kinds = [(k, s) for _, _, k, s in signed_parts(second)]
    assert [k for k, _ in kinds] == ["functionCall:get_weather"]
    log = log_path.read_text()
    assert "get_weather" in log  # the log holds the loop's durable records ...
    assert kinds[0][1] not in log and "thoughtSignature" not in log
    assert result.usage.tokens.reasoning_source == "reported" and result.usage.tokens.reasoning_tokens
