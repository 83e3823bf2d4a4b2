"""Ray object-store spilling: what agentlab hands to Ray can reach disk; reasoning and opaque state must not.

A Ray sweep sends each worker its plan and the sweep's shared config through the object store, and
each worker's row comes back through it. When the store is full, Ray *spills* those objects to files
on local disk, where nothing cleans them up if the cluster dies. So the objects themselves must hold
nothing a run's reasoning or opaque continuation state could leak into.

The cluster here is made to spill everything it can: every object goes through the shared-memory
store (``max_direct_call_object_size=0``: nothing is inlined into the owner's memory), spilling
starts as soon as a few rows are in it (``object_spilling_threshold=1e-5``,
``min_spilling_size=0``), into a directory the test owns. The driver is slowed down in
``on_progress`` (one second per landed row), so finished rows wait in the store, unread, while they
are spilled; the spill files are read there, during the sweep, since Ray deletes a spilled object's
file once the object is freed. A positive control proves rows did reach the spill files (a
non-secret marker the model writes into its answer is found there); only then is the absence of the
canaries meaningful. Locally the module skips without ``ray``; under ``CI=true`` it fails instead.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentlab import tool
from agentlab.adapters.base import ModelRef
from agentlab.sweeps import SweepProgress, Task, load_results, sweep
from agentlab.testing import ScriptedAdapter, Step
from tests.support.ray_cluster import start_local_ray, unavailable


@pytest.fixture(scope="module")
def spill_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A local 2-CPU Ray that spills every object it can, into the returned directory."""
    if importlib.util.find_spec("ray") is None:
        unavailable("ray is not installed (pip install 'agentlab[ray]')")
    import ray

    if ray.is_initialized():  # another module's cluster: this one needs its own system config
        ray.shutdown()
    tmp = tmp_path_factory.mktemp("ray-spill")
    spill = tmp / "spill"
    spill.mkdir()
    config = {
        "max_direct_call_object_size": 0,
        "object_spilling_threshold": 0.00001,
        "min_spilling_size": 0,
        "object_spilling_config": json.dumps(
            {"type": "filesystem", "params": {"directory_path": str(spill)}}
        ),
    }
    start_local_ray(
        tmp / "ray", attempts=3, object_store_memory=80 * 1024 * 1024, _system_config=config
    )
    try:
        yield spill
    finally:
        ray.shutdown()


def _spilled_bytes(spill: Path) -> bytes:
    return b"".join(p.read_bytes() for p in spill.rglob("*") if p.is_file())


def test_spilled_objects_hold_rows_but_no_reasoning_or_opaque_state(spill_dir: Path, tmp_path: Path) -> None:
    # Both strings are made in the worker from a salt: the adapter factory itself goes through the
    # object store too (pickled with its constants), so it must not hold them, or the scan would find
    # the test's own script instead of what a run wrote.
    salt = uuid.uuid4().hex

    def derived(kind: str) -> str:  # nested, like everything the workers run: pickled by value
        return f"{kind}-{hashlib.sha256(f'{kind}:{salt}'.encode()).hexdigest()}"

    canary = derived("CANARY")
    marker = derived("MARKER")  # not secret: the answer carries it, so rows carry it

    @tool
    def lookup(key: str) -> str:  # nested: pickled by value, so workers need not import this module
        """Look a key up."""
        return f"value-of-{key}"

    def scripted(ref: ModelRef) -> Any:  # built in the worker: a fresh two-step script per run
        canary, marker = derived("CANARY"), derived("MARKER")
        return ScriptedAdapter(
            [
                Step(
                    reasoning=[f"thinking {canary}"],
                    opaque=[json.dumps({"type": "reasoning", "encrypted_content": canary}), f"sig:{canary}"],
                    tool_calls=[("lookup", {"key": "a"}, "call_1")],
                ),
                Step(
                    reasoning=[f"done {canary}"],
                    opaque=[f"x{canary}"],
                    text=f"The answer is 42. {marker}",
                    expect_continuation_from=[0],
                ),
            ],
            provider=ref.provider,
            model=ref.model,
        )

    import ray

    seen: list[bytes] = []
    ballast: list[Any] = []

    def slow_driver(p: SweepProgress) -> None:
        # Finished rows wait in the object store, unread, while Ray spills them; the spill files are
        # read now, while they exist (Ray deletes a spilled object's file once it is freed).
        ballast.append(ray.put(os.urandom(256 * 1024)))  # over the threshold: Ray spills
        time.sleep(1.0)
        seen.append(_spilled_bytes(spill_dir))

    out = tmp_path / "r.jsonl"
    rep = sweep(
        [Task("What is the answer?", id="q", expected=42)],
        ["openai:sim-reasoner"],
        results=out,
        tools=[lookup],
        repeats=8,
        progress=None,
        adapter_factory=scripted,
        on_progress=slow_driver,
        executor="ray",
    )
    # The loops really carried their opaque items (the script refuses any other continuation).
    assert rep.status == "completed" and rep.failed == 0
    df = load_results(out)
    assert df["success"].all() and (df["steps"] == 2).all()
    spilled = b"".join([*seen, _spilled_bytes(spill_dir)])
    # Positive control: rows reached the spill files, so the scan below looked at what Ray wrote.
    assert marker.encode() in spilled, f"no row was spilled ({len(spilled)} bytes in {spill_dir})"
    # The canary is in every reasoning delta and every opaque payload of every run (field names such as
    # "encrypted_content" are in the pickled script itself, so they are not evidence either way).
    i = spilled.find(canary.encode())
    assert i < 0, spilled[max(0, i - 300) : i + 100]
