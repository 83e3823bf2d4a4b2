"""``sweep(..., backend="batch")`` end to end on the simulator's batch endpoints, through the real SDKs.

What is held: a batch sweep gives the same runs as a live one (statuses, steps, tokens) at the
provider's batch price; every round is one batch per model holding every waiting run's call; the
opaque items go back verbatim between rounds (the simulator checks them, and the recorded batch
inputs hold them); lines a batch could not answer are retried in the next round; nothing the
driver writes holds reasoning or opaque payloads, and nothing of a batch input touches disk.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlab.adapters.base import Adapter, ModelRef, create_adapter
from agentlab.errors import ConfigError
from agentlab.sim import anthropic_client, gemini_client, openai_client
from agentlab.sweeps import load_results, sim_tasks, sim_tools, sweep
from agentlab.sweeps.batch.manifest import Journal, Manifest, journal_path, manifest_path
from tests.support.opaque import RecordingTransport, sim_opaque_tokens

FAST = {"poll_s": 0.02, "poll_max_s": 0.1}
KEY_COLUMNS = ["task_id", "model", "setting", "repeat"]
SAME = ["status", "success", "steps", "tool_calls", "input_tokens", "output_tokens", "reasoning_tokens"]


def _factory(transport: RecordingTransport) -> Callable[[ModelRef], Adapter]:
    """Adapters on one shared in-process simulator (its batch store), with fast batches."""
    transport.simulator.batches.seconds = 0.05

    def make(ref: ModelRef) -> Adapter:
        if ref.provider == "openai":
            return create_adapter(ref, client=openai_client(transport=transport))
        if ref.provider == "google":
            return create_adapter(ref, client=gemini_client(transport=transport))
        return create_adapter(ref, client=anthropic_client(transport=transport))

    return make


def _models() -> list[str]:
    """One model per provider with a batch API (each simulated with its batch endpoints)."""
    return ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"]


def _rows(path: Path) -> Any:
    return load_results(path).sort_values(KEY_COLUMNS).reset_index(drop=True)


def test_a_batch_sweep_runs_what_a_live_sweep_runs_at_the_batch_price(tmp_path: Path) -> None:
    tasks, models = sim_tasks()[:4], _models()
    t = RecordingTransport()
    live = sweep(tasks, models, results=tmp_path / "live.jsonl", tools=sim_tools(), progress=None,
                 adapter_factory=_factory(RecordingTransport()))
    batch = sweep(tasks, models, results=tmp_path / "batch.jsonl", tools=sim_tools(), progress=None,
                  adapter_factory=_factory(t), backend="batch", batch=FAST)
    assert live.status == batch.status == "completed" and batch.failed == 0
    a, b = _rows(live.path), _rows(batch.path)
    assert (a[KEY_COLUMNS] == b[KEY_COLUMNS]).all().all()
    for col in SAME:
        assert a[col].tolist() == b[col].tolist(), col
    assert (b["reasoning_tokens"] > 0).all() and (b["reasoning_items_dropped"] == 0).all()
    for x, y in zip(a["total_cost_usd"], b["total_cost_usd"], strict=True):
        assert math.isclose(y, x * 0.5, rel_tol=1e-9)
    assert b["price_source"].str.endswith("(batch: 50%)").all()
    assert (b["backend"] == "batch").all() and (b["pricing_tier"] == "batch").all()
    assert a["backend"].isna().all()

    # One batch per model per round; round k holds every run still going at step k.
    recs = [json.loads(x) for x in manifest_path(batch.path).read_text().splitlines()]
    submitted = [r for r in recs if r["event"] == "submitted"]
    ended = {r["batch_id"]: r for r in recs if r["event"] == "ended"}
    assert set(ended) == {r["batch_id"] for r in submitted}
    assert all(e["status"] in ("completed", "ended", "BATCH_STATE_SUCCEEDED") for e in ended.values())
    for m in models:
        mine = [r for r in submitted if r["model"] == m]
        steps = b[b["model"] == m]["steps"]
        assert [r["round"] for r in mine] == list(range(1, int(steps.max()) + 1))
        assert mine[0]["requests"] == len(tasks)
        assert [r["requests"] for r in mine] == [int((steps >= k).sum()) for k in range(1, len(mine) + 1)]
    assert Manifest.open_batches(manifest_path(batch.path)) == []

    # Positive control: the batch inputs carried the simulator's opaque items back (verbatim loop).
    sent = b"".join(t.bodies).decode("utf-8", "replace")
    assert sim_opaque_tokens(sent) or "signature" in sent


def test_nothing_the_batch_path_writes_holds_reasoning_or_opaque_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = tmp_path / "tmp"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    import agentlab.adapters.openai_responses._batch as oa_batch

    monkeypatch.setattr(oa_batch, "_SPOOL_BYTES", 16)  # force the spill to an (unlinked) temp file
    t = RecordingTransport()
    out = tmp_path / "out" / "r.jsonl"
    tasks = sim_tasks()[:3]
    rep = sweep(tasks, _models(), results=out, tools=sim_tools(), progress=None,
                adapter_factory=_factory(t), backend="batch", batch=FAST)
    assert rep.status == "completed" and rep.failed == 0
    assert list(spool.iterdir()) == []  # the spilled batch input was never a named file
    sent = b"".join(t.bodies).decode("utf-8", "replace")
    # Positive controls: the batch inputs carried the reasoning items back verbatim (OpenAI's hold
    # their summary text, "The user asks: ..."), so the canaries below were really in flight.
    assert "The user asks:" in sent
    tokens_sent = sim_opaque_tokens(sent)
    assert tokens_sent
    written = {p: p.read_bytes().decode("utf-8", "replace") for p in out.parent.rglob("*") if p.is_file()}
    assert set(written) == {out, manifest_path(out), journal_path(out)}
    for p, text in written.items():
        assert "The user asks:" not in text, p
        assert sim_opaque_tokens(text) == [], p
        assert "encrypted_content" not in text and '"signature"' not in text, p
        assert all(tok not in text for tok in tokens_sent), p
    for p in written:
        if p != out:
            assert p.stat().st_mode & 0o077 == 0, p  # private: the journal holds prompts and answers
    cps = Journal.latest(journal_path(out))
    assert cps and all(cp.step >= 1 for cp in cps.values())


class _ExpireOnce(set[str]):
    """The simulator's expiry knob, tripped once for every run's second call."""

    def __init__(self) -> None:
        super().__init__()
        self.tripped: set[str] = set()

    def __contains__(self, cid: object) -> bool:
        if isinstance(cid, str) and cid.endswith("_2") and cid not in self.tripped:
            self.tripped.add(cid)
            return True
        return False


def test_lines_a_batch_expired_are_retried_in_the_next_round(tmp_path: Path) -> None:
    t = RecordingTransport()
    make = _factory(t)
    knob = _ExpireOnce()
    t.simulator.batches.expire_ids = knob
    rep = sweep(sim_tasks()[:3], ["openai:sim-reasoner"], results=tmp_path / "r.jsonl", tools=sim_tools(),
                progress=None, adapter_factory=make, backend="batch", batch=FAST)
    assert rep.status == "completed" and rep.failed == 0
    df = load_results(rep.path)
    assert knob.tripped and (df["retries"] >= 1).all() and (df["success"]).all()
    recs = [json.loads(x) for x in manifest_path(rep.path).read_text().splitlines()]
    assert any(r["event"] == "ended" and r["counts"].get("failed") for r in recs)


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"backend": "bogus"}, "backend must be"),
        ({"batch": {"runs": 2}}, "need backend='batch'"),
        ({"backend": "batch", "batch": {"rounds": 2}}, "unknown option"),
        ({"backend": "batch", "batch": {"runs": 0}}, "runs must be"),
        ({"backend": "batch", "batch": {"poll_s": -1}}, "poll_s"),
    ],
)
def test_bad_batch_configuration_is_refused_before_anything_runs(
    tmp_path: Path, kw: dict[str, Any], needle: str
) -> None:
    out = tmp_path / "r.jsonl"
    with pytest.raises(ConfigError, match=needle):
        sweep(sim_tasks()[:1], ["openai:sim-reasoner"], results=out, tools=sim_tools(), progress=None, **kw)
    assert not out.exists() or out.read_bytes() == b""


def test_a_provider_without_a_batch_api_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no batch API for provider\(s\) \['deepseek'\]"):
        sweep(sim_tasks()[:1], ["openai:sim-reasoner", "deepseek:sim-deepseek"],
              results=tmp_path / "r.jsonl", tools=sim_tools(), progress=None, backend="batch")


def test_an_interrupted_sweep_cancels_the_batch_it_has_in_flight(tmp_path: Path) -> None:
    """Ctrl-C (run_sync cancels the sweep's task) while round 2 waits: that batch is cancelled."""
    import asyncio

    from agentlab.sweeps import asweep

    t = RecordingTransport()
    make = _factory(t)
    t.simulator.batches.seconds = 5.0
    out = tmp_path / "r.jsonl"

    def round_two() -> list[dict[str, Any]]:
        if not manifest_path(out).exists():
            return []
        recs = [json.loads(x) for x in manifest_path(out).read_text().splitlines()]
        return [r for r in recs if r["event"] == "submitted" and r["round"] == 2]

    async def interrupt() -> None:
        task = asyncio.ensure_future(asweep(
            sim_tasks()[:2], ["openai:sim-reasoner"], results=out, tools=sim_tools(), progress=None,
            adapter_factory=make, backend="batch", batch=FAST))
        while not round_two():
            assert not task.done()
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupt())
    (second,) = round_two()
    recs = [json.loads(x) for x in manifest_path(out).read_text().splitlines()]
    ended = [r["status"] for r in recs if r["event"] == "ended" and r["batch_id"] == second["batch_id"]]
    assert ended == ["cancelled by the driver"]
    assert t.simulator.batches.jobs[second["batch_id"]].cancelled_at is not None
    assert Manifest.open_batches(manifest_path(out)) == []
    assert load_results(out).empty  # nothing finished: nothing recorded, all redone on resume
