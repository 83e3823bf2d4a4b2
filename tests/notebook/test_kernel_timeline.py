"""In a real kernel: the saved final state of a run view carries the timeline strip and the rates.

A frontend (and nbclient) keeps the last ``display_data`` / ``update_display_data`` of a view as the
notebook's saved output; that is what GitHub, nbviewer and a reopened notebook show. The cell runs
a simulated provider with a tool through ``%load_ext agentlab`` exactly as a user would; the kernel
prints the reasoning it streamed, which must be in no saved output.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.notebook.test_kernel import Kernel

pytestmark = pytest.mark.kernel

CELL = """
%load_ext agentlab
import json, time
import agentlab
from agentlab.notebook.live import live_run_view

@agentlab.tool
def get_weather(city: str) -> str:
    "Current weather for a city."
    time.sleep(0.05)
    return f"{city}: 21 C"

run = agentlab.Run("openai:sim-reasoner", "Is it warmer in Paris or Rome?", tools=[get_weather])
seen = []
run.subscribe(lambda ev: seen.append(ev.text) if type(ev).__name__ == "ReasoningDeltaEvent" else None)
view = live_run_view(run)
r = agentlab.run_sync(run.arun())
print("RESULT", json.dumps({"status": r.status, "steps": r.steps, "reasoning": "".join(seen)}))
"""


def _execute(code: str, timeout: float = 90) -> tuple[str, list[dict[str, Any]]]:
    """Run ``code`` in a fresh kernel: its stdout, and its display and display-update contents in order."""
    kernel = Kernel()
    try:
        cell = kernel.ok(code, timeout=timeout)
        return cell.stdout, cell.displays
    finally:
        kernel.close()


def test_saved_final_state_has_the_timeline_and_rates_but_no_reasoning() -> None:
    stdout, outputs = _execute(CELL)
    line = next(ln for ln in stdout.splitlines() if ln.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    assert result["status"] == "completed" and result["steps"] >= 2
    views = [o for o in outputs if "agentlab-view" in json.dumps(o) or "Timeline" in str(o["data"])]
    assert views, "the run view was not displayed"
    final = views[-1]["data"]  # what the saved notebook keeps (the last update of the display)
    html, text = final["text/html"], final["text/plain"]
    assert 'class="agentlab-timeline"' in html and "Timeline (recorded" in text
    assert "step 1:" in text and "get_weather" in text
    assert "tok/s" in html and "Run throughput:" in text
    reasoning = result["reasoning"]
    assert len(reasoning) > 40
    for piece in (reasoning[:40], reasoning[-40:]):
        assert piece not in html and piece not in text
