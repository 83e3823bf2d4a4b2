"""What a stdio MCP server gets: tool arguments and an allow-listed environment, nothing else.

The server's own view is read back: its environment (the ``whoami`` tool) and every byte it received
on stdin (``tee`` in front of it). Canary keys sit in this process's environment, canary reasoning
and opaque payloads flow through the run (positive controls prove they did); none may reach it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import uuid
from pathlib import Path

import pytest

import agentlab as al
from agentlab import mcp
from agentlab.neutral.events import ReasoningDeltaEvent, ToolResultEvent
from agentlab.testing import ScriptedAdapter, Step

from .support import FAULT_SERVER, python

pytest.importorskip("mcp")

KEYS: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
)
KEYS += ("AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "MY_SERVICE_TOKEN")


def _teed_server(log: Path, **options: object) -> mcp.McpServer:
    if shutil.which("sh") is None or shutil.which("tee") is None:
        pytest.skip("needs sh and tee to record what the server receives")
    cmd = f"tee -a {shlex.quote(str(log))} | exec {shlex.quote(python())} {shlex.quote(str(FAULT_SERVER))}"
    return mcp.stdio("sh", "-c", cmd, name="canary", **options)  # type: ignore[arg-type]


def test_server_sees_no_key_reasoning_or_opaque_payload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = f"CANARY-{uuid.uuid4().hex}"
    for k in KEYS:
        monkeypatch.setenv(k, f"{k}-{canary}")
    log = tmp_path / "received.jsonl"
    steps = [
        Step(
            reasoning=[f"thinking about {canary}"],
            opaque=[json.dumps({"type": "reasoning", "encrypted_content": f"enc-{canary}"}), f"sig:{canary}"],
            tool_calls=[("echo", {"text": "Paris"}), ("whoami", {})],
        ),
        Step(reasoning=[f"still {canary}"], opaque=[f"x{canary}"], text="done", expect_continuation_from=[0]),
    ]
    shown: list[str] = []

    def display(ev: object) -> None:
        if isinstance(ev, ReasoningDeltaEvent):
            shown.append(ev.text)

    server = _teed_server(log, pass_env=["MY_SERVICE_TOKEN"])
    with server:
        adapter = ScriptedAdapter(steps)
        r = al.run("openai:sim-reasoner", "Echo Paris", tools=[server], adapter=adapter, on_event=display)
        adapter.assert_done()
        # real simulated reasoning too: Anthropic thinking with signatures, OpenAI encrypted items
        for model in ("anthropic:sim-thinker", "openai:sim-reasoner"):
            sim = al.run(model, "Is it warmer in Paris or Rome?", tools=[server], on_event=display)
            assert sim.status == "completed"
    assert r.status == "completed"
    assert any(canary in s for s in shown)  # positive control: the canary reasoning was there
    results = {e.result.name: e.result for e in r.events if isinstance(e, ToolResultEvent)}
    env = json.loads(results["whoami"].output)["env"]

    # the environment: allow-listed, plus the one variable passed explicitly
    assert set(env) - {"MY_SERVICE_TOKEN"} <= set(mcp.SAFE_ENV) | {"PWD", "SHLVL", "_", "LC_CTYPE"}
    assert env["MY_SERVICE_TOKEN"] == f"MY_SERVICE_TOKEN-{canary}"
    assert not [k for k in KEYS if k in env and k != "MY_SERVICE_TOKEN"]
    assert canary not in json.dumps({k: v for k, v in env.items() if k != "MY_SERVICE_TOKEN"})

    # every request the server received: no canary, no reasoning sentence, no opaque field
    received = log.read_text()
    messages = [json.loads(line) for line in received.splitlines() if line.strip()]
    assert any(m.get("method") == "tools/call" for m in messages)
    assert canary not in received
    for sentence in {s.strip() for s in shown if len(s.strip()) > 20}:
        assert sentence not in received
    for word in ("encrypted_content", "signature", "thinking", "reasoning"):
        assert word not in received
    for m in messages:
        if m.get("method") == "tools/call":
            assert set(m["params"]) <= {"name", "arguments", "_meta"}
