"""When tracing is on, and that it follows every run (compare()'s and sweep()'s included).

On with instrument() or a configured global provider; never with AGENTLAB_OTEL=0.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

import agentlab as al
from agentlab import telemetry
from agentlab.testing import ScriptedAdapter, Step
from tests.telemetry.support import TASK, Traced, attrs, get_weather

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter: the global tracer provider can be set once per process.
_SWITCH = """
import os, sys
import agentlab as al
from agentlab.testing import ScriptedAdapter, Step

def run():
    return al.run("openai:sim-reasoner", "hi", adapter=ScriptedAdapter([Step(text="ok")]))

run()
print("otel loaded by a plain run:", "opentelemetry" in sys.modules)
from opentelemetry import trace
r = al.Run("openai:sim-reasoner", "hi", adapter=ScriptedAdapter([Step(text="ok")]))
print("subscribers without a provider:", len(r._subscribers))
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
run()
print("spans with a global provider:", len(exporter.get_finished_spans()))
exporter.clear()
os.environ["AGENTLAB_OTEL"] = "0"
run()
print("spans with AGENTLAB_OTEL=0:", len(exporter.get_finished_spans()))
"""


def test_off_by_default_on_with_a_global_provider_off_with_the_env_switch() -> None:
    env = {k: v for k, v in __import__("os").environ.items() if k != "AGENTLAB_OTEL"}
    out = subprocess.run(
        [sys.executable, "-c", _SWITCH], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == [
        "otel loaded by a plain run: False",
        "subscribers without a provider: 0",
        "spans with a global provider: 2",
        "spans with AGENTLAB_OTEL=0: 0",
    ]


def test_env_switch_beats_instrument(spans: Traced, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLAB_OTEL", "0")
    al.run("openai:sim-reasoner", TASK, adapter=ScriptedAdapter([Step(text="ok")]))
    assert spans.finished() == []
    monkeypatch.delenv("AGENTLAB_OTEL")
    al.run("openai:sim-reasoner", TASK, adapter=ScriptedAdapter([Step(text="ok")]))
    assert len(spans.finished()) == 2


def test_uninstrument_stops_new_runs(spans: Traced) -> None:
    assert telemetry.is_instrumented()
    telemetry.uninstrument()
    assert not telemetry.is_instrumented()
    al.run("openai:sim-reasoner", TASK, adapter=ScriptedAdapter([Step(text="ok")]))
    assert spans.finished() == []


def test_instrument_and_a_global_provider_trace_a_run_once(
    spans: Traced, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The automatic mode steps aside while instrument() is in force: one tree per run, not two."""
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: spans.provider)
    assert isinstance(spans.provider, TracerProvider)
    result = al.run("openai:sim-reasoner", TASK, adapter=ScriptedAdapter([Step(text="ok")]))
    assert len(spans.named("invoke_agent")) == 1
    spans.run_span(result.run_id)


def test_compare_traces_every_run_under_the_callers_span(spans: Traced) -> None:
    tracer = spans.provider.get_tracer("the-user")
    models = ["openai:sim-reasoner", "anthropic:sim-thinker"]
    with tracer.start_as_current_span("experiment") as outer:
        cmp = al.compare(TASK, models=models, tools=[get_weather])
    roots = spans.named("invoke_agent")
    assert len(roots) == 2
    assert {attrs(r)["agentlab.provider"] for r in roots} == {"openai", "anthropic"}
    for r in roots:
        assert r.parent is not None and r.parent.span_id == outer.get_span_context().span_id
        assert [s.name.split()[0] for s in spans.children(r)].count("chat") == 2
    assert {attrs(r)["agentlab.run_id"] for r in roots} == {res.run_id for res in cmp.results.values() if res}


def test_sweep_runs_are_traced(spans: Traced, tmp_path: Path) -> None:
    report = al.sweep(
        ["What is 2 + 2?"], ["openai:sim-reasoner"], results=tmp_path / "r.jsonl", progress=None
    )
    assert report is not None
    roots = spans.named("invoke_agent")
    assert len(roots) == 1 and attrs(roots[0])["agentlab.status"] == "completed"
