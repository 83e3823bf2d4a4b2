"""End to end against a real tracing backend: Arize Phoenix, started here on loopback.

``.ci/run`` installs a pinned ``arize-phoenix`` into its own venv, ``.venv-phoenix`` (kept out of the
main venv: it brings a web server, SQLAlchemy and its own OpenTelemetry SDK). This test starts
``phoenix serve`` from it on free loopback ports with its own working directory (SQLite storage) in
tmp, exports agentlab spans over OTLP/HTTP with content *on*, and then:

1. reads the spans back through Phoenix's REST API and checks the trees arrived whole;
2. scans every API answer and, once the server has stopped, every byte under the working directory
   (the SQLite database with its WAL, and whatever else Phoenix wrote) for the reasoning canary, the
   opaque-payload canaries, the simulator's own opaque items and the API key. Positive controls
   show that the scan sees stored data (the run ids, the answer) and that the canaries flowed;
3. screenshots the trace in Phoenix's UI with headless Chromium into ``out/screenshots/``.

Without ``.venv-phoenix`` (or Chromium, for the screenshot) the test skips saying why; under
``CI=true`` it fails instead, since ``.ci/run`` installs both.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab import sim, telemetry
from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.testing import ScriptedAdapter, Step
from tests.support.opaque import sim_opaque_tokens
from tests.telemetry.support import TASK, get_weather

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PHOENIX = ROOT / ".venv-phoenix" / "bin" / "phoenix"
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
SHOT = ROOT / "out" / "screenshots" / "phoenix_trace.png"
PROJECT = "agentlab-e2e"
OPAQUE_MARKERS: tuple[str, ...] = ("encrypted_content", "signature", "redacted_thinking", "thoughtSignature")
OPAQUE_MARKERS += ("reasoning_details",)
"""Field names of opaque provider state: Phoenix itself stores none of them, so any hit is a leak."""


def _unavailable(reason: str) -> None:
    """Skip with ``reason``; under CI (``CI=true``) fail instead: there .ci/run installed it."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (CI=true: .ci/run should have installed it)")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:  # loopback only: the server this test started
        return json.loads(r.read())


@dataclass
class Phoenix:
    base: str
    workdir: Path
    log: Path
    proc: subprocess.Popen[bytes]
    answers: list[str]

    def api(self, path: str) -> Any:
        raw = _get(f"{self.base}{path}")
        self.answers.append(json.dumps(raw))
        return raw

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # pragma: no cover - a hung server is killed
                self.proc.kill()
                self.proc.wait(timeout=10)


@contextlib.contextmanager
def phoenix(tmp: Path) -> Iterator[Phoenix]:
    port, grpc = _free_port(), _free_port()
    workdir = tmp / "phoenix"
    workdir.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))},
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    log = tmp / "phoenix.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(PHOENIX), "serve"], env=env, stdout=out, stderr=subprocess.STDOUT)
    server = Phoenix(f"http://127.0.0.1:{port}", workdir, log, proc, [])
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, f"phoenix exited: {log.read_text(errors='replace')[-3000:]}"
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{server.base}/healthz", timeout=2) as r,
            ):
                if r.status == 200:
                    break
            assert time.monotonic() < deadline, f"phoenix not up in 120 s: {log.read_text()[-3000:]}"
            time.sleep(0.5)
        yield server
    finally:
        server.stop()


@dataclass(frozen=True)
class Canaries:
    reasoning: str
    opaque: str
    signature: str
    key: str

    @classmethod
    def fresh(cls) -> Canaries:
        h = uuid.uuid4().hex
        return cls(
            f"cnyRSN{h[:12]}", f"cnyENC{h[12:24]}", f"cnySIG{h[24:]}", f"sk-ant-canary-{uuid.uuid4().hex}"
        )

    def needles(self) -> dict[str, str]:
        return {
            "reasoning": self.reasoning,
            "encrypted_content": self.opaque,
            "signature": self.signature,
            "api key": self.key,
            "api key tail": self.key.rsplit("-", 1)[-1],
        }


def _export_runs(base: str, c: Canaries) -> tuple[list[al.RunResult], list[str]]:
    """Two traced runs (content on): a scripted one carrying the canaries, one on the simulator."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    resource = Resource.create({"service.name": "agentlab-tests", "openinference.project.name": PROJECT})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces")))
    shown: list[str] = []

    def display(ev: object) -> None:
        if isinstance(ev, al.ReasoningDeltaEvent):
            shown.append(ev.text)

    scripted = ScriptedAdapter(
        [
            Step(
                reasoning=[f"let me think about {c.reasoning}"],
                opaque=[
                    json.dumps({"type": "reasoning", "encrypted_content": c.opaque}),
                    f"sig:{c.signature}",
                ],
                tool_calls=[("get_weather", {"city": "Paris"})],
            ),
            Step(reasoning=[f"so {c.reasoning}"], text="Paris is warm.", expect_continuation_from=[0]),
        ]
    )
    keyed = sim.anthropic_client(api_key=c.key)
    telemetry.instrument(provider, include_content=True)
    try:
        results = [
            al.run("openai:sim-reasoner", TASK, tools=[get_weather], adapter=scripted, on_event=display),
            al.run(
                "anthropic:sim-thinker",
                TASK,
                tools=[get_weather],
                adapter=AnthropicMessagesAdapter("sim-thinker", client=keyed),
                on_event=display,
            ),
        ]
    finally:
        telemetry.uninstrument()
        provider.shutdown()  # flushes: every span is sent before this returns
    assert keyed.api_key == c.key  # control: the second run's requests carried the key
    return results, shown


def _spans(server: Phoenix, want: int) -> list[dict[str, Any]]:
    """The project's spans once ``want`` of them are in (Phoenix ingests asynchronously)."""
    deadline = time.monotonic() + 60
    while True:
        with contextlib.suppress(OSError):
            data: list[dict[str, Any]] = server.api(f"/v1/projects/{PROJECT}/spans?limit=1000")["data"]
            if len(data) >= want:
                return data
        assert time.monotonic() < deadline, f"phoenix holds fewer than {want} spans"
        time.sleep(0.5)


def _check_trees(spans: list[dict[str, Any]], results: list[al.RunResult]) -> None:
    by_id = {s["context"]["span_id"]: s for s in spans}
    for r in results:
        (root,) = [s for s in spans if s["attributes"].get("agentlab.run_id") == r.run_id]
        assert root["name"] == "invoke_agent agentlab" and root["parent_id"] is None
        kids = [s for s in spans if s["parent_id"] == root["context"]["span_id"]]
        assert sorted(s["name"].split()[0] for s in kids).count("chat") == r.steps
        assert all(s["context"]["trace_id"] == root["context"]["trace_id"] for s in kids)
        a = root["attributes"]
        assert a["gen_ai.operation.name"] == "invoke_agent"
        assert a["gen_ai.usage.output_tokens"] == r.usage.tokens.output_tokens
        if r.usage.tokens.reasoning_tokens is not None:
            assert a["gen_ai.usage.reasoning.output_tokens"] == r.usage.tokens.reasoning_tokens
    tools = [s for s in spans if s["name"] == "execute_tool get_weather"]
    assert tools and all(by_id[s["parent_id"]]["name"] == "invoke_agent agentlab" for s in tools)
    assert all("gen_ai.tool.call.result" in s["attributes"] for s in tools)  # content was on


def _storage_text(workdir: Path) -> tuple[str, int]:
    """Every file under Phoenix's working dir, as text (bytes decoded leniently), and the file count.

    The SQLite database is also read table by table (a value in a page SQLite has not yet written to
    the main file is in the WAL, which the byte scan covers too).
    """
    parts: list[str] = []
    files = [p for p in workdir.rglob("*") if p.is_file()]
    for p in files:
        parts.append(p.read_bytes().decode("utf-8", errors="replace"))
    for db in workdir.glob("*.db"):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            for t in tables:
                parts += [repr(row) for row in con.execute(f'SELECT * FROM "{t}"')]
        finally:
            con.close()
    return "\n".join(parts), len(files)


def _screenshot(server: Phoenix, trace_id: str) -> None:
    if CHROMIUM is None:
        _unavailable("headless Chromium not found (Debian: apt-get install -y chromium; .ci/run installs it)")
    assert CHROMIUM is not None
    projects = server.api("/v1/projects")["data"]
    (project_id,) = [p["id"] for p in projects if p["name"] == PROJECT]
    SHOT.parent.mkdir(parents=True, exist_ok=True)
    SHOT.unlink(missing_ok=True)
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    args += ["--window-size=1600,1000", "--virtual-time-budget=15000", f"--screenshot={SHOT}"]
    url = f"{server.base}/projects/{project_id}/traces/{trace_id}"
    out = subprocess.run([*args, url], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert SHOT.stat().st_size > 30_000, "the screenshot is (nearly) blank"


def test_phoenix_stores_the_trees_and_nothing_private(tmp_path: Path) -> None:
    if not PHOENIX.exists():
        _unavailable(f"Arize Phoenix is not installed in {PHOENIX.parent.parent} (.ci/run creates it)")
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="dev extra: the OTLP/HTTP exporter")
    c = Canaries.fresh()
    with phoenix(tmp_path) as server:
        results, shown = _export_runs(server.base, c)
        assert [r.status for r in results] == ["completed", "completed"]
        assert any(c.reasoning in t for t in shown), "control: the reasoning canary reached the live hook"
        assert "double-check the plan" in "".join(shown), "control: the simulator reasoned in its words"
        want = sum(1 + r.steps + sum(isinstance(e, al.ToolCallEvent) for e in r.events) for r in results)
        spans = _spans(server, want)
        assert len(spans) == want
        _check_trees(spans, results)
        server.api(f"/v1/projects/{PROJECT}/traces?limit=100")
        trace_id = next(s["context"]["trace_id"] for s in spans if s["parent_id"] is None)
        _screenshot(server, trace_id)
        server.stop()  # SQLite files complete, then scanned

    answers = "\n".join(server.answers)
    stored, nfiles = _storage_text(server.workdir)
    assert nfiles >= 1
    # controls: the scan sees what Phoenix stored, content included
    for r in results:
        assert r.run_id in stored and r.run_id in answers
    assert "Paris is warm." in stored and "Paris is warm." in answers
    for where, text in (("Phoenix API answers", answers), ("Phoenix storage", stored)):
        leaks = [name for name, needle in c.needles().items() if needle in text]
        assert leaks == [], f"{where} holds the {leaks} canary"
        assert sim_opaque_tokens(text) == [], f"{where} holds a simulator opaque item"
        assert "double-check the plan" not in text, f"{where} holds the simulator's reasoning"
        markers = [m for m in OPAQUE_MARKERS if m in text]
        assert markers == [], f"{where} holds opaque-payload markers {markers}"
