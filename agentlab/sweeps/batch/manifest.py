"""What a batch sweep keeps on disk besides its results: the batch ids per round, and portable steps.

Two append-only JSONL files beside the results file (mode 0600, one line per record, torn tails
repaired like the results file's):

* ``<results>.batches.jsonl``, the **manifest**: each batch created (round, provider, model, batch
  id, and which run key each request belongs to), each batch that ended (status, counts) and each
  one a restarted driver abandoned. A restarted driver reads it to find the batches the dead one
  left running and cancels them at the provider (their answers could only be applied with the
  continuation the dead process held).
* ``<results>.journal.jsonl``, the **journal**: each run's checkpoint as of the request it just
  submitted, which is portable items only (system, user, assistant text, tool calls and results:
  ``Checkpoint`` serializes no continuation, by construction). A restarted driver resumes an
  unfinished run from its last checkpoint there instead of from scratch.

Neither holds reasoning text, opaque items, request bodies or keys; the canary tests scan both.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentlab.adapters.batch_api import BatchState
from agentlab.loop.checkpoint import Checkpoint
from agentlab.records.jsonl import AppendOnlyJsonl, iter_lines
from agentlab.sweeps.batch.rounds import Submitted
from agentlab.sweeps.store import RunKey

__all__ = ["Journal", "Manifest", "journal_path", "manifest_path"]


def manifest_path(results: Path) -> Path:
    """``<results stem>.batches.jsonl`` beside the results file."""
    return results.with_name(results.stem + ".batches.jsonl")


def journal_path(results: Path) -> Path:
    """``<results stem>.journal.jsonl`` beside the results file."""
    return results.with_name(results.stem + ".journal.jsonl")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _records(path: Path) -> list[dict[str, Any]]:
    import json

    if not path.exists():
        return []
    return [json.loads(raw) for _, raw in iter_lines(path)]


class Manifest:
    """The batch ids of every round, appended as batches are created and end."""

    def __init__(self, path: Path, *, fsync: bool) -> None:
        self.path = path
        self._file = AppendOnlyJsonl(path, fsync=fsync)

    def __repr__(self) -> str:
        return f"<Manifest {self.path}>"

    def submitted(self, s: Submitted, keys: Mapping[str, RunKey]) -> None:
        """A batch was created: its round, id, and the run key of each of its requests."""
        self._file.append(
            {
                "event": "submitted",
                "at": _now(),
                "round": s.round,
                "provider": s.provider,
                "model": s.model,
                "batch_id": s.batch_id,
                "requests": len(s.custom_ids),
                "runs": {cid: list(keys[cid]) for cid in s.custom_ids if cid in keys},
            }
        )

    def ended(self, state: BatchState) -> None:
        """A batch ended (completed, expired, cancelled, failed), with its counts."""
        self._file.append(
            {"event": "ended", "at": _now(), "batch_id": state.batch_id, "status": state.status,
             "counts": dict(state.counts)}
        )

    def abandoned(self, batch_id: str, why: str) -> None:
        """A restarted driver gave up a batch the dead one left (and asked to cancel it)."""
        self._file.append({"event": "abandoned", "at": _now(), "batch_id": batch_id, "why": why})

    @staticmethod
    def open_batches(path: Path) -> list[dict[str, Any]]:
        """Batches a manifest shows created but neither ended nor abandoned (a dead driver's)."""
        created: dict[str, dict[str, Any]] = {}
        for rec in _records(path):
            if rec.get("event") == "submitted":
                created[str(rec["batch_id"])] = rec
            elif rec.get("event") in ("ended", "abandoned"):
                created.pop(str(rec.get("batch_id")), None)
        return list(created.values())


class Journal:
    """Each run's portable checkpoint as of its latest submitted request."""

    def __init__(self, path: Path, *, fsync: bool) -> None:
        self.path = path
        self._file = AppendOnlyJsonl(path, fsync=fsync)

    def __repr__(self) -> str:
        return f"<Journal {self.path}>"

    def record(self, key: RunKey, checkpoint: Checkpoint) -> None:
        """The run's portable checkpoint as of the request it just submitted."""
        self._file.append({"key": list(key), "checkpoint": checkpoint.model_dump(mode="json")})

    @staticmethod
    def latest(path: Path) -> dict[RunKey, Checkpoint]:
        """The last checkpoint journaled per run key."""
        out: dict[RunKey, Checkpoint] = {}
        for rec in _records(path):
            k = rec["key"]
            out[(str(k[0]), str(k[1]), str(k[2]), int(k[3]))] = Checkpoint.model_validate(rec["checkpoint"])
        return out
