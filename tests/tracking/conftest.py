"""A real sweep and a real compare on the simulated providers, with canaries, shared by the MLflow tests.

Canaries, all produced by the real adapters and the simulator (as in tests/reliability/test_privacy.py):

* reasoning: the simulated models' thinking opens with "The user asks: <task>", and the task holds a
  unique token (``canary-<TOKEN>``); agentlab never logs a task's text to a tracker, so the token can
  reach MLflow only through reasoning (or by the prompt leaking, which is not allowed either);
* opaque payloads: every ``encrypted_content`` / ``signature`` / ``redacted_thinking`` the simulator
  handed out, read from the raw response bytes;
* API keys: fake keys given to the SDK clients (they travel in the auth headers).

Positive controls (:func:`check_canaries_were_there`) prove each was really there in the runs.

MLflow is an optional extra: without it these tests skip, saying why, except under CI (``CI=true``),
where they fail (.ci/run installs it, in its own venv: see the README's "Experiment tracking").
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.adapters.base import Adapter, ModelRef
from tests.reliability.support import RecordingTransport, get_weather, opaque_payloads_on_wire

TOKEN = uuid.uuid4().hex[:16]
KEYS = {"openai": f"sk-test-CANARYKEY{TOKEN}oa", "anthropic": f"sk-ant-test-CANARYKEY{TOKEN}an"}
MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker"]
FAILING = "openai:sim-reasoner+fault=500"
"""A model whose every call fails (HTTP 500; the sweep's retries are off): failed rows, unscored."""
UNREPORTED = "vllm:sim-local-reasoning"
"""A local server's model: it reports no reasoning token count, and has no price (unknown, not 0)."""
FIXED_REASONING = "The user asks:"
"""The phrase every simulated reasoning text opens with, whatever the task."""


def unavailable(reason: str) -> None:
    """Skip with ``reason``; under CI (``CI=true``) fail instead: there .ci/run installed it."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (CI=true: failing instead of skipping, the install step in .ci/run broke)")
    pytest.skip(reason)


def require_mlflow() -> Any:
    try:
        import mlflow
    except ImportError:
        unavailable(
            "mlflow is not installed (the `mlflow` extra: pip install -e '.[dev,mlflow]'; "
            "`make test` runs these tests in .venv-mlflow)"
        )
    return mlflow


def prompt(a: str, b: str) -> str:
    return f"Is it warmer in {a} or {b} for trip canary-{TOKEN}?"


def adapter(ref: ModelRef, transport: RecordingTransport) -> Adapter:
    """The real adapter on the real SDK, with a canary key, talking to the recording simulator."""
    from agentlab import sim
    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter

    if ref.provider not in KEYS:  # a local server: no key, the simulator behind the default client
        from agentlab.adapters.base import create_adapter

        return create_adapter(ref, max_retries=0)
    if ref.provider == "openai":
        client = sim.openai_client(transport=transport, api_key=KEYS["openai"], max_retries=0)
        return OpenAIResponsesAdapter(ref.model, client=client, max_retries=0)
    client2 = sim.anthropic_client(transport=transport, api_key=KEYS["anthropic"], max_retries=0)
    return AnthropicMessagesAdapter(ref.model, client=client2)


@dataclass
class Runs:
    """What the canaries went through: a sweep, a compare, and every exchange with the simulator."""

    report: al.SweepReport
    settings: list[al.Setting]
    comparison: al.Comparison
    transport: RecordingTransport

    @property
    def opaque(self) -> list[str]:
        return opaque_payloads_on_wire(self.transport.exchanges)

    def needles(self) -> dict[str, bytes]:
        """Every string that must not be in a tracking store, by what it is."""
        out = {"reasoning canary": TOKEN.encode(), "reasoning text": FIXED_REASONING.encode()}
        out.update({f"{p} key": k.encode() for p, k in KEYS.items()})
        out.update({f"opaque payload {i}": p.encode() for i, p in enumerate(self.opaque)})
        out["opaque marker"] = b"encrypted_content"
        out["thinking signature marker"] = b"redacted_thinking"
        return out


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    require_mlflow()
    transport = RecordingTransport()
    settings = [
        al.Setting("verbatim", max_steps=6),
        al.Setting(
            "effort_low",
            reasoning=al.ReasoningSettings(effort="low"),
            max_steps=6,
            system=f"secret system {TOKEN}",
        ),
    ]
    tasks = [
        al.Task(prompt("Paris", "Rome"), id="warm-paris-rome", expected="Rome", choices=("Paris", "Rome")),
        al.Task(
            prompt("Oslo", "Berlin"), id="warm-oslo-berlin", expected="Berlin", choices=("Oslo", "Berlin")
        ),
    ]
    report = al.sweep(
        tasks,
        [*MODELS, UNREPORTED, FAILING],
        results=tmp_path_factory.mktemp("sweep") / "results.jsonl",
        tools=[get_weather],
        settings=settings,
        repeats=2,
        retries=0,
        max_consecutive_failures=None,
        progress=None,
        adapter_factory=lambda ref: adapter(ref, transport),
    )
    refs = [al.parse_model(m) for m in MODELS]
    comparison = al.compare(
        prompt("Paris", "Rome"),
        MODELS,
        tools=[get_weather],
        check=lambda a: "Rome" in (a or ""),
        adapters=[adapter(r, transport) for r in refs],
        repeats=2,
    )
    return Runs(report, settings, comparison, transport)


def check_canaries_were_there(runs: Runs) -> None:
    """Positive controls: reasoning with the token, opaque payloads and the keys all reached the wire."""
    answers = [ex.text for ex in runs.transport.exchanges]
    assert any(FIXED_REASONING in t and TOKEN in t for t in answers), "no reasoning with the token streamed"
    assert len(runs.opaque) >= 4, "the simulator handed out no opaque payloads"
    sent = b"".join(ex.body for ex in runs.transport.exchanges)
    assert any(p.encode() in sent for p in runs.opaque), "no opaque payload went back within a loop"
    headers = " ".join(str(ex.headers) for ex in runs.transport.exchanges)
    assert all(k in headers for k in KEYS.values()), "the canary keys were not used"


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots for p in sorted(root.rglob("*")) if p.is_file()]


def scan(paths: Iterable[Path], needles: dict[str, bytes]) -> list[str]:
    """``what in file`` for every needle found in a file's bytes (as written, and hex-encoded)."""
    hits = []
    for path in paths:
        data = path.read_bytes()
        for what, needle in needles.items():
            if needle in data or needle.hex().encode() in data:
                hits.append(f"{what} in {path.name}")
    return hits
