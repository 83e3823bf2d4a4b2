"""Fault x sink matrix, batch backend: cancel, full disk, and the resume after each.

Each fault runs a batch sweep (OpenAI, Anthropic, Gemini batches on the simulator, through the real
SDKs, with canary API keys) into a fault, then resumes it to completion (the exports and reports of
runs and comparisons are sinks of the main matrix, ``test_sinks.py``; ``export_frames`` does not
take a sweep report). The sinks: every file the sweep wrote (results, manifest, journal), every log record
at DEBUG, the raised error (its text and its formatted traceback), and what is left at the providers
(nothing may be: the batch inputs hold the loop's opaque items). The needles: the simulated reasoning
("The user asks: ..."), every opaque item the batch inputs carried (read off the wire: the positive
control that they were really in flight), and the API keys.
"""

from __future__ import annotations

import asyncio
import json
import os
import traceback
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentlab.adapters.base import Adapter, ModelRef, create_adapter
from agentlab.sim import anthropic_client, gemini_client, openai_client
from agentlab.sweeps import asweep, load_results, sim_tasks, sim_tools
from agentlab.sweeps.batch.manifest import manifest_path
from tests.adversarial.support import debug_logging
from tests.adversarial.test_full_disk import fill, tiny_disk  # noqa: F401 - the fixture, used by name
from tests.support.opaque import RecordingTransport, sim_opaque_tokens
from tests.support.provider_copies import left_at_provider

FAST = {"poll_s": 0.02, "poll_max_s": 0.1}
MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]
REASONING = "The user asks:"
FAULTS = ["cancel", "full_disk", "storage_then_cancel"]


class _Wire(RecordingTransport):
    """The recording simulator, keeping the request headers too (where the keys travel)."""

    def __init__(self) -> None:
        super().__init__()
        self.headers: list[str] = []

    def _respond(self, request: Any, body: bytes) -> Any:
        self.headers.append(repr(dict(request.headers)))
        return super()._respond(request, body)


class Case:
    """One fault's run: the transport (wire and provider store), keys, and everything collected."""

    def __init__(self) -> None:
        token = uuid.uuid4().hex[:12]
        self.keys = {p: f"sk-{p}-CANARYKEY{token}" for p in ("openai", "anthropic", "google")}
        self.t = _Wire()
        self.t.simulator.batches.seconds = 0.05
        self.raised: list[BaseException] = []
        self.files: list[Path] = []

    def factory(self) -> Callable[[ModelRef], Adapter]:
        t, keys = self.t, self.keys

        def make(ref: ModelRef) -> Adapter:
            if ref.provider == "openai":
                return create_adapter(ref, client=openai_client(transport=t, api_key=keys["openai"]))
            if ref.provider == "google":
                return create_adapter(ref, client=gemini_client(transport=t, api_key=keys["google"]))
            return create_adapter(ref, client=anthropic_client(transport=t, api_key=keys["anthropic"]))

        return make

    async def sweep(self, out: Path, *, cancel_at_round: int | None = None) -> Any:
        task = asyncio.ensure_future(
            asweep(
                sim_tasks()[:2],
                MODELS,
                results=out,
                tools=sim_tools(),
                progress=None,
                adapter_factory=self.factory(),
                backend="batch",
                batch=FAST,
            )
        )
        if cancel_at_round is not None:
            while not _submitted(out, cancel_at_round) and not task.done():
                await asyncio.sleep(0.01)
            task.cancel()
        return await task

    def attempt(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except BaseException as e:  # the fault's error is a sink too
            self.raised.append(e)
            return None


def _submitted(out: Path, rnd: int) -> bool:
    path = manifest_path(out)
    if not path.exists():
        return False
    recs = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return any(r.get("event") == "submitted" and r.get("round") == rnd for r in recs)


def _finish(case: Case, out: Path) -> None:
    """Resume to completion (the same call), the results intact."""
    rep = asyncio.run(case.sweep(out))
    assert rep.status == "completed" and rep.failed == 0, (rep.status, rep.failed)
    df = load_results(out)
    assert len(df) == 2 * len(MODELS) and df["success"].notna().all() and (df["steps"] >= 1).all()


@pytest.fixture
def disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """Where the sweep writes: a 64 KiB tmpfs for the full-disk faults, else a plain folder."""
    if request.node.callspec.params["fault"] == "cancel":
        yield tmp_path / "plain"
    else:
        yield request.getfixturevalue("tiny_disk")


def _run(fault: str, disk: Path) -> Case:
    case = Case()
    out = disk / "r.jsonl"
    if fault == "cancel":
        case.attempt(lambda: asyncio.run(case.sweep(out, cancel_at_round=2)))
    else:
        filler = fill(disk)
        os.truncate(filler, filler.stat().st_size - 4096)  # one page free
        case.attempt(lambda: asyncio.run(case.sweep(out)))
        filler.unlink()
        if fault == "storage_then_cancel":  # space back, then Ctrl-C in the resumed sweep's round 2
            case.attempt(lambda: asyncio.run(case.sweep(out, cancel_at_round=2)))
    assert case.raised, "control: the fault stopped the sweep"
    assert not left_at_provider(case.t.simulator.batches), "left at the providers after the fault"
    _finish(case, out)
    assert not left_at_provider(case.t.simulator.batches), "left at the providers after the resume"
    case.files += [p for p in disk.rglob("*") if p.is_file() and p.name != "filler"]
    return case


@pytest.mark.parametrize("fault", FAULTS)
def test_batch_faults_and_their_resume_hold_no_canary(fault: str, disk: Path) -> None:
    with debug_logging() as logs:
        case = _run(fault, disk)
    sent = b"".join(case.t.bodies).decode("utf-8", "replace")
    opaque = sim_opaque_tokens(sent)
    assert REASONING in sent and opaque, "control: reasoning and opaque items were in the batch inputs"
    assert all(k in "".join(case.t.headers) for k in case.keys.values()), "control: the keys were sent"
    sinks: dict[str, str] = {str(p): p.read_bytes().decode("utf-8", "replace") for p in case.files}
    assert any(p.endswith("r.jsonl") for p in sinks) and len(sinks) >= 3, sorted(sinks)
    sinks["DEBUG logs"] = "\n".join(logs.lines)
    for i, e in enumerate(case.raised):
        sinks[f"error {i}: {type(e).__name__}"] = str(e) + "\n" + "".join(traceback.format_exception(e))
    needles = {"reasoning": REASONING, **{f"key {p}": k for p, k in case.keys.items()}}
    needles |= {f"opaque item {i}": tok for i, tok in enumerate(opaque)}
    hits = [f"{name} in {sink}" for sink, text in sinks.items() for name, n in needles.items() if n in text]
    hits += [f"an opaque item in {sink}" for sink, text in sinks.items() if sim_opaque_tokens(text)]
    assert not hits, "\n".join(hits[:12])
