"""What a batch sweep creates at a provider is recorded first and deleted on every exit.

Each test looks at the simulator's own batch store (what the provider would still hold): OpenAI's
files (the input file holds the loop's ``encrypted_content`` items with their summary text, the
output and error files the answers), Anthropic's and Gemini's batches (their requests hold the
thinking blocks and thought signatures). The exits: the batch read (the control), the sweep
cancelled mid-round, a round that fails, the manifest unable to take the batch's id (a full disk),
and a later call resuming after a driver that left its batches behind. OpenAI has no endpoint to
delete a batch object (it holds ids and counts only), so its batches stay, cancelled or ended.
"""

from __future__ import annotations

import asyncio
import errno
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlab.adapters.base import Adapter, ModelRef, create_adapter, parse_model
from agentlab.errors import ProviderError, StorageError
from agentlab.sim import anthropic_client, gemini_client, openai_client
from agentlab.sweeps import asweep, load_results, sim_tasks, sim_tools, sweep
from agentlab.sweeps.batch import rounds
from agentlab.sweeps.batch.driver import batch_api_for
from agentlab.sweeps.batch.manifest import Manifest, manifest_path
from tests.support.faulty_files import Faults
from tests.support.opaque import RecordingTransport
from tests.support.provider_copies import left_at_provider

FAST = {"poll_s": 0.02, "poll_max_s": 0.1}
MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]


def _factory(transport: RecordingTransport, seconds: float = 0.05) -> Callable[[ModelRef], Adapter]:
    transport.simulator.batches.seconds = seconds

    def make(ref: ModelRef) -> Adapter:
        if ref.provider == "openai":
            return create_adapter(ref, client=openai_client(transport=transport))
        if ref.provider == "google":
            return create_adapter(ref, client=gemini_client(transport=transport))
        return create_adapter(ref, client=anthropic_client(transport=transport))

    return make


def _records(out: Path) -> list[dict[str, Any]]:
    p = manifest_path(out)
    return [json.loads(x) for x in p.read_text().splitlines()] if p.exists() else []


def _round_two(out: Path) -> list[dict[str, Any]]:
    return [r for r in _records(out) if r["event"] == "submitted" and r["round"] == 2]


async def _interrupt_in_round_two(out: Path, model: str, make: Callable[[ModelRef], Adapter]) -> None:
    """Start a batch sweep, cancel it (what Ctrl-C does) once round 2 is submitted."""
    task = asyncio.ensure_future(asweep(
        sim_tasks()[:2], [model], results=out, tools=sim_tools(), progress=None, adapter_factory=make,
        backend="batch", batch=FAST))  # fmt: skip
    while not _round_two(out):
        assert not task.done(), task.exception() if task.done() else None
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_a_completed_batch_sweep_leaves_nothing_at_the_provider(tmp_path: Path) -> None:
    """Control: read batches are deleted, and the manifest records each deletion."""
    t = RecordingTransport()
    rep = sweep(sim_tasks()[:2], MODELS, results=tmp_path / "r.jsonl", tools=sim_tools(), progress=None,
                adapter_factory=_factory(t), backend="batch", batch=FAST)  # fmt: skip
    assert rep.status == "completed" and rep.failed == 0
    assert t.simulator.batches.jobs  # positive control: batches were made
    assert left_at_provider(t.simulator.batches) == []
    recs = _records(rep.path)
    assert {r["batch_id"] for r in recs if r["event"] == "deleted"} == {
        r["batch_id"] for r in recs if r["event"] == "submitted"
    }
    assert Manifest.undeleted(manifest_path(rep.path)) == []


@pytest.mark.parametrize("model", MODELS)
def test_a_cancelled_round_is_deleted_at_the_provider(tmp_path: Path, model: str) -> None:
    t = RecordingTransport()
    out = tmp_path / "r.jsonl"
    asyncio.run(_interrupt_in_round_two(out, model, _factory(t, seconds=5.0)))
    (second,) = _round_two(out)
    job = t.simulator.batches.jobs.get(second["batch_id"])
    assert job is None or job.cancelled_at is not None  # cancelled at OpenAI, deleted elsewhere
    assert left_at_provider(t.simulator.batches) == []
    assert Manifest.undeleted(manifest_path(out)) == []


@pytest.mark.parametrize("model", MODELS)
def test_a_failed_round_is_deleted_at_the_provider(
    tmp_path: Path, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading round 2's results fails (a provider error): its batch is deleted all the same."""
    t = RecordingTransport()
    make = _factory(t)
    cls = type(batch_api_for(make(parse_model(model))))
    real = cls.results
    failed: list[str] = []

    async def results(self: Any, batch_id: str) -> Any:
        if len(failed) < 1 and any(r["batch_id"] == batch_id for r in _round_two(tmp_path / "r.jsonl")):
            failed.append(batch_id)
            raise ProviderError("results unreadable", provider=self.provider, status=500)
        return await real(self, batch_id)

    monkeypatch.setattr(cls, "results", results)
    rep = sweep(sim_tasks()[:2], [model], results=tmp_path / "r.jsonl", tools=sim_tools(), progress=None,
                adapter_factory=make, backend="batch", batch=FAST, retries=0)  # fmt: skip
    assert failed, "round 2 never came"
    assert rep.failed == 2  # the failure reached the runs
    assert left_at_provider(t.simulator.batches) == []
    assert Manifest.undeleted(manifest_path(rep.path)) == []


@pytest.mark.parametrize("model", MODELS)
def test_a_resumed_sweep_deletes_what_an_earlier_call_left(
    tmp_path: Path, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A driver that deleted nothing (as one killed mid-round): the next call deletes all it left."""
    t = RecordingTransport()
    make = _factory(t, seconds=2.0)
    out = tmp_path / "r.jsonl"

    async def keep(*a: Any, **kw: Any) -> bool:
        return False

    with monkeypatch.context() as m:
        m.setattr(rounds, "discard", keep, raising=False)  # this driver leaves every batch behind
        m.setattr(rounds.RoundQueue, "_cancel_quietly", keep, raising=False)
        asyncio.run(_interrupt_in_round_two(out, model, make))
    assert len(left_at_provider(t.simulator.batches)) >= 1  # positive control: something was left

    rep = sweep(sim_tasks()[:2], [model], results=out, tools=sim_tools(), progress=None,
                adapter_factory=make, backend="batch", batch=FAST)  # fmt: skip
    assert rep.status == "completed" and rep.failed == 0
    assert left_at_provider(t.simulator.batches) == []
    assert Manifest.undeleted(manifest_path(out)) == []
    (second,) = _round_two(out)[:1]  # the first call's round 2, cancelled but left running there
    assert any(r["event"] == "deleted" and r["batch_id"] == second["batch_id"] for r in _records(out))


@pytest.mark.parametrize("model", MODELS)
def test_a_batch_whose_id_cannot_be_recorded_is_deleted_at_the_provider(
    tmp_path: Path, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills right after round 1's batch is created: it is recorded before, deleted after."""
    t = RecordingTransport()
    make = _factory(t)
    out = tmp_path / "r.jsonl"
    faults = Faults(monkeypatch)
    cls = type(batch_api_for(make(parse_model(model))))
    real = cls.submit
    named_before: list[bool] = []

    async def submit(self: Any, lines: Any, *, metadata: Any) -> str:
        batch_id = await real(self, lines, metadata=metadata)
        # Write-ahead: the manifest already names this batch (a crash here leaves it findable).
        named_before.append(any(r["event"] == "intent" for r in _records(out)))
        faults.fail(after=0, err=errno.ENOSPC)  # the disk is full from now on
        return batch_id

    monkeypatch.setattr(cls, "submit", submit)
    with pytest.raises(StorageError, match="ENOSPC"):
        sweep(sim_tasks()[:2], [model], results=out, tools=sim_tools(), progress=None,
              adapter_factory=make, backend="batch", batch=FAST, fsync=False)  # fmt: skip
    assert named_before == [True]
    store = t.simulator.batches
    assert len(store.jobs) <= 1  # one batch made (OpenAI's stays, cancelled), and no second round
    assert left_at_provider(store) == []
    faults.heal()
    assert load_results(out).empty


@pytest.mark.parametrize("model", MODELS)
def test_a_batch_created_but_never_recorded_is_found_and_deleted(
    tmp_path: Path, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A driver dies between creating a batch and recording its id: the next call finds it by its tag.

    OpenAI's metadata and Gemini's display name carry the manifest's intent id; an Anthropic Message
    Batch has nothing to carry it, so there the intent is closed with that reason instead.
    """
    t = RecordingTransport()
    make = _factory(t, seconds=5.0)
    out = tmp_path / "r.jsonl"
    store = t.simulator.batches

    async def nothing(*a: Any, **kw: Any) -> None:
        return None

    async def die_after_create() -> None:
        task = asyncio.ensure_future(asweep(
            sim_tasks()[:2], [model], results=out, tools=sim_tools(), progress=None, adapter_factory=make,
            backend="batch", batch=FAST))  # fmt: skip
        while not store.jobs:
            assert not task.done()
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with monkeypatch.context() as m:  # the id is never recorded, and nothing is cleaned up
        m.setattr(Manifest, "submitted", lambda *a, **kw: None)
        m.setattr(rounds.RoundQueue, "_remove", nothing, raising=False)
        m.setattr(rounds.RoundQueue, "_cancel_quietly", nothing, raising=False)
        asyncio.run(die_after_create())
    (made,) = list(store.jobs)
    assert [r["event"] for r in _records(out)] == ["intent"]

    rep = sweep(sim_tasks()[:2], [model], results=out, tools=sim_tools(), progress=None,
                adapter_factory=_factory(t), backend="batch", batch=FAST)  # fmt: skip
    assert rep.status == "completed" and rep.failed == 0
    recs = _records(out)
    if model.startswith("anthropic"):
        (void,) = [r for r in recs if r["event"] == "void"]
        assert "no tag" in void["why"]
        assert left_at_provider(store) == [f"anthropic batch {made}"]  # the known limit, said in the log
    else:
        assert any(r["event"] == "submitted" and r.get("recovered") and r["batch_id"] == made for r in recs)
        assert left_at_provider(store) == []
    assert Manifest.unresolved(manifest_path(out)) == []


@pytest.mark.parametrize("model", MODELS)
def test_a_sweep_cancelled_while_a_batch_is_being_created_deletes_it(
    tmp_path: Path, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C lands after the provider created the batch but before its id came back to the driver."""
    t = RecordingTransport()
    make = _factory(t, seconds=5.0)
    out = tmp_path / "r.jsonl"
    store = t.simulator.batches
    cls = type(batch_api_for(make(parse_model(model))))
    real = cls.submit

    async def slow_answer(self: Any, lines: Any, *, metadata: Any) -> str:
        batch_id = await real(self, lines, metadata=metadata)
        await asyncio.sleep(0.5)  # the answer is still on its way when the sweep is cancelled
        return batch_id

    monkeypatch.setattr(cls, "submit", slow_answer)

    async def cancel_mid_create() -> None:
        task = asyncio.ensure_future(asweep(
            sim_tasks()[:2], [model], results=out, tools=sim_tools(), progress=None, adapter_factory=make,
            backend="batch", batch=FAST))  # fmt: skip
        while not store.jobs:
            assert not task.done()
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_mid_create())
    assert store._n  # positive control: the batch was created (it may be deleted since)
    assert left_at_provider(store) == []
    assert Manifest.undeleted(manifest_path(out)) == []
    assert Manifest.unresolved(manifest_path(out)) == []  # recorded, then deleted: nothing to search for


@pytest.mark.parametrize(
    ("model", "batch_id"),
    [
        ("openai:sim-reasoner", "batch_gone"),
        ("anthropic:sim-thinker", "msgbatch_gone"),
        ("google:sim-gemini", "batches/gone"),
    ],
)
def test_a_batch_already_gone_counts_as_deleted(model: str, batch_id: str) -> None:
    """A manifest older than its deletion records (or a delete whose answer was lost) is not an error."""
    api = batch_api_for(_factory(RecordingTransport())(parse_model(model)))
    for ended in (False, True):
        assert asyncio.run(rounds.discard(api, batch_id, rounds.Poll(0.01, 0.05), ended=ended)) is True
