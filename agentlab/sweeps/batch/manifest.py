"""What a batch sweep keeps on disk besides its results: the batch ids per round, and portable steps.

Two append-only JSONL files beside the results file (mode 0600, one line per record, torn tails
repaired like the results file's):

* ``<results>.batches.jsonl``, the **manifest**: each batch about to be created (``intent``,
  written *before* the create call, so no batch exists that the manifest cannot name), each batch
  created (round, provider, model, batch id, and which run key each request belongs to), each batch
  that ended (status, counts), each one a restarted driver abandoned, and each one whose copies at
  the provider are deleted. A restarted driver reads it to find the batches the dead one left
  running and cancels them (their answers could only be applied with the continuation the dead
  process held), and deletes at the provider every batch not recorded as deleted.
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
from agentlab.sweeps.batch.rounds import Intent, Submitted
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


def _still_open(path: Path, key: str, opened: str, closed: tuple[str, ...]) -> list[dict[str, Any]]:
    """The ``opened`` records that no later ``closed`` record of the same ``key`` ends, oldest first.

    Each question a restarted driver asks of a manifest (which batches still run, which still exist
    at the provider, which intents never got a batch) is this one, with other events.
    """
    live: dict[str, dict[str, Any]] = {}
    for rec in _records(path):
        if rec.get("event") == opened:
            live[str(rec[key])] = rec
        elif rec.get("event") in closed and rec.get(key):
            live.pop(str(rec[key]), None)
    return list(live.values())


def _round_record(
    event: str, batch: Intent | Submitted, keys: Mapping[str, RunKey], **ids: str | None
) -> dict[str, Any]:
    """An ``intent`` or ``submitted`` line: the batch's round, provider, model, ids and requests' run keys."""
    return {
        "event": event,
        "at": _now(),
        "round": batch.round,
        "provider": batch.provider,
        "model": batch.model,
        **ids,
        "requests": len(batch.custom_ids),
        "runs": {cid: list(keys[cid]) for cid in batch.custom_ids if cid in keys},
    }


class _Appended:
    """One of the two append-only JSONL files a batch sweep keeps beside its results."""

    def __init__(self, path: Path, *, fsync: bool) -> None:
        self.path = path
        self._file = AppendOnlyJsonl(path, fsync=fsync)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"


class Manifest(_Appended):
    """The batch ids of every round, appended as batches are created and end."""

    def intent(self, i: Intent, keys: Mapping[str, RunKey]) -> None:
        """A batch is about to be created (write-ahead: a failure here means it is not created)."""
        self._file.append(_round_record("intent", i, keys, intent=i.intent))

    def void(self, intent: str, why: str) -> None:
        """No batch is known for an intent (its create call failed, or a search found none)."""
        self._file.append({"event": "void", "at": _now(), "intent": intent, "why": why})

    def recovered(self, intent: Mapping[str, Any], batch_id: str) -> dict[str, Any]:
        """A batch of an unrecorded intent, found at the provider: recorded as created (returned)."""
        rec = {**intent, "event": "submitted", "at": _now(), "batch_id": batch_id, "recovered": True}
        self._file.append(rec)
        return rec

    def submitted(self, s: Submitted, keys: Mapping[str, RunKey]) -> None:
        """A batch was created: its round, id, and the run key of each of its requests."""
        self._file.append(_round_record("submitted", s, keys, batch_id=s.batch_id, intent=s.intent))

    def deleted(self, batch_id: str) -> None:
        """Every copy of the batch at the provider is deleted (input, output, the batch itself)."""
        self._file.append({"event": "deleted", "at": _now(), "batch_id": batch_id})

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
        return _still_open(path, "batch_id", "submitted", ("ended", "abandoned"))

    @staticmethod
    def undeleted(path: Path) -> list[dict[str, Any]]:
        """Batches a manifest shows created and not deleted at the provider (any state), oldest first."""
        return _still_open(path, "batch_id", "submitted", ("deleted",))

    @staticmethod
    def unresolved(path: Path) -> list[dict[str, Any]]:
        """Intents with neither a created batch nor a failed create: the process died in between."""
        return _still_open(path, "intent", "intent", ("submitted", "void"))


class Journal(_Appended):
    """Each run's portable checkpoint as of its latest submitted request."""

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
