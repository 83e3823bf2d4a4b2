"""Fault x sink matrix: no reasoning text, opaque payload or API key reaches any sink.

Each (provider, fault) scenario runs a two-step tool loop on the real adapter and SDK against a
hostile wire whose reasoning deltas, opaque payloads and auth header carry distinct canaries; the
fault hits step 2 (see ``support.responder_for``). Each sink is its own test. Positive controls in
the scenario prove the canaries flowed (they reached ``on_event`` and the wire).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.adversarial.support import FAULTS, KEY_BLIND, PROVIDERS, SINKS, TASK, Outcome, report, scan


def _texts(out: Outcome, sink: str) -> dict[str, str]:
    """The sink's text, and the same sink as filled by the sweep / comparison of the scenario."""
    return {k: v for k, v in out.sinks.items() if k == sink or k in (f"sweep {sink}", f"compare {sink}")}


@pytest.mark.parametrize("sink", SINKS)
@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_no_canary_in_sink(
    scenario: Callable[[str, str], Outcome], provider: str, fault: str, sink: str
) -> None:
    out = scenario(provider, fault)
    c = out.canaries
    needles = c.payload if sink in KEY_BLIND else c.all
    hits = []
    for name, text in _texts(out, sink).items():
        hits += scan(f"{name} [{provider}/{fault}]", text, needles, everything=c.all)
    assert not hits, report(hits)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_scenario_really_ran(scenario: Callable[[str, str], Outcome], provider: str, fault: str) -> None:
    """Controls: the sinks that must be filled are filled, and the fault produced its outcome."""
    out = scenario(provider, fault)
    assert out.sinks.get("event log file", "").strip(), "no event log was written"
    assert out.sinks.get("structured logs at DEBUG (all loggers)", "").count("\n") > 5, "DEBUG logs captured"
    assert "widget state at cell end" in out.sinks
    spans = out.sinks.get("OpenTelemetry spans (content on)", "")
    assert spans.count('"name": "invoke_agent agentlab"') >= 1, "the run was traced"
    if fault == "none":
        assert TASK in spans, "the spans carry content (a canary-free place for it to leak into)"
    if fault == "http400echo":
        assert out.canaries.echoed, "the 400 quoted back a reasoning or opaque value of the request"
    if fault in ("none", "tool_raises"):
        assert out.raised is None, f"{fault}: the run raised {out.raised!r}"
        assert "sweep results file" in out.sinks and out.sinks["sweep results file"].strip()
        assert out.sinks["save_report file"].startswith("<!DOCTYPE html>"), "the report was written"
        assert out.sinks["export_frames files (csv, parquet)"].startswith("label,"), "the frames were written"
    elif fault == "cancel":
        assert out.raised is not None and type(out.raised).__name__ == "CancelledError", repr(out.raised)
    else:
        assert out.raised is not None, f"{fault}: the run did not fail"


HTML_SINKS = ("html: RunResult, usage", "html: Comparison", "widget state at cell end")


@pytest.mark.parametrize("fault", ["http401"])
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("sink", HTML_SINKS)
def test_provider_text_is_escaped_in_html(
    scenario: Callable[[str, str], Outcome], provider: str, fault: str, sink: str
) -> None:
    """A provider error echoing markup (a model name, say) reaches every HTML output escaped."""
    out = scenario(provider, fault)
    marker = out.canaries.html.split("onerror=")[0] + "onerror="  # survives JSON encoding unchanged
    assert out.canaries.html.split("=")[-1].rstrip(">") in "".join(out.sinks.values()), (
        "control: the echoed markup reached some output"
    )
    text = out.sinks.get(sink, "")
    i = text.find(marker)
    assert i < 0, (
        f"{sink} [{provider}/{fault}]: unescaped provider markup: ...{text[max(0, i - 80) : i + 60]}..."
    )
