"""OTLP export over a real socket, with content on: the collector stores no canary.

A minimal OTLP/HTTP collector on loopback (``POST /v1/traces``, ``application/x-protobuf``, decoded
with ``opentelemetry-proto`` as a collector does) receives what the SDK's ``OTLPSpanExporter`` sends
while a hostile-wire scenario runs (the reasoning, opaque-payload and API-key canaries of
``support.Canaries``). The scan reads back what the collector stored: the raw request bodies and
their decoded form. Controls: spans arrived, with content (the task), and the 400 that quoted the
request back did quote a canary (so the error path was exercised).

Arize Phoenix as the collector is ``tests/telemetry/test_phoenix.py`` (its own venv).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.adversarial.support import (
    PROVIDERS,
    TASK,
    Canaries,
    Outcome,
    _drive_run,
    debug_logging,
    offline_comms,
    report,
    scan,
)

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="dev extra: the OTLP/HTTP exporter")


class Collector(ThreadingHTTPServer):
    """Stores each export request: its raw protobuf body and the decoded spans as JSON."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.raw: list[bytes] = []
        self.decoded: list[str] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1/traces"


class _Handler(BaseHTTPRequestHandler):
    server: Collector

    def do_POST(self) -> None:
        from google.protobuf.json_format import MessageToJson  # type: ignore[import-untyped]
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
            self.send_response(415)
            self.end_headers()
            return
        msg = ExportTraceServiceRequest()
        msg.ParseFromString(body)
        self.server.raw.append(body)
        self.server.decoded.append(MessageToJson(msg))
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: the test reads what was stored


@contextlib.contextmanager
def collector() -> Iterator[Collector]:
    server = Collector()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def exported_to(endpoint: str) -> Iterator[None]:
    """Agentlab's spans (content on) exported over OTLP/HTTP, one request per span."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agentlab import telemetry

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint, timeout=30)))
    telemetry.instrument(provider, include_content=True)
    try:
        yield
    finally:
        telemetry.uninstrument()
        provider.shutdown()


@pytest.mark.parametrize("fault", ["none", "http400echo", "tool_raises"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_no_canary_reaches_an_otlp_collector(provider: str, fault: str, tmp_path: Path) -> None:
    out = Outcome(provider, fault, Canaries.fresh())
    with collector() as server:

        async def main() -> None:
            with debug_logging() as logs, offline_comms(), exported_to(server.endpoint):
                await _drive_run(out, tmp_path, logs)

        asyncio.run(main())
    stored = "\n".join(server.decoded)
    assert server.raw and '"name": "invoke_agent agentlab"' in stored, "control: spans were exported"
    assert TASK in stored, "control: the spans carry content"
    if fault == "http400echo":
        assert out.canaries.echoed, "control: the 400 quoted back a reasoning or opaque value"
    c = out.canaries
    hits = scan(f"collector, decoded [{provider}/{fault}]", stored, c.all, everything=c.all)
    raw = b"\n".join(server.raw).decode("utf-8", "replace")
    hits += scan(f"collector, raw protobuf [{provider}/{fault}]", raw, c.all, everything=c.all)
    assert not hits, report(hits)
