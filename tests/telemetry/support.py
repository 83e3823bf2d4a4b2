"""The tracing tests' kit: an in-memory span store, a tree view of it, and a dump for canary scans."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import agentlab as al
from agentlab import telemetry

TASK = "Is it warmer in Paris or Rome?"
SIM_MODELS = ("openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini", "deepseek:sim-deepseek")


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: {len(city) + 15} C"


@al.tool
def broken(city: str) -> str:
    """A tool that always fails."""
    raise RuntimeError(f"no station in {city}")


@dataclass
class Traced:
    provider: TracerProvider
    exporter: InMemorySpanExporter

    def finished(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.finished() if s.name.startswith(prefix)]

    def run_span(self, run_id: str) -> ReadableSpan:
        found = [s for s in self.named("invoke_agent") if attrs(s).get("agentlab.run_id") == run_id]
        assert len(found) == 1, [s.name for s in self.finished()]
        return found[0]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        assert parent.context is not None
        pid = parent.context.span_id
        out = [s for s in self.finished() if s.parent is not None and s.parent.span_id == pid]
        return sorted(out, key=lambda s: s.start_time or 0)

    def dump(self) -> str:
        """Everything the spans hold (names, attributes, events, status, resource) as one text."""
        return "\n".join(s.to_json() for s in self.finished())


def trace_id(span: ReadableSpan) -> int:
    assert span.context is not None
    tid: int = span.context.trace_id
    return tid


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def messages(span: ReadableSpan, key: str) -> list[dict[str, Any]]:
    raw = attrs(span)[key]
    assert isinstance(raw, str)
    out = json.loads(raw)
    assert isinstance(out, list)
    return out


@contextlib.contextmanager
def traced(*, include_content: bool) -> Iterator[Traced]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.instrument(provider, include_content=include_content)
    try:
        yield Traced(provider, exporter)
    finally:
        telemetry.uninstrument()
        provider.shutdown()
