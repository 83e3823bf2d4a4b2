"""A canary in reasoning text and opaque reasoning payloads never reaches the results file.

The positive controls show it did flow through the runs (and went back verbatim in the loop).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from agentlab import tool
from agentlab.adapters.base import ModelRef
from agentlab.sweeps import Task, load_results, sweep
from agentlab.testing import ScriptedAdapter, Step


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value-of-{key}"


def test_reasoning_canary_never_reaches_the_results_file(tmp_path: Path) -> None:
    canary = f"CANARY-{uuid.uuid4().hex}"
    repeats = 3
    adapters: list[ScriptedAdapter] = []

    def scripted(ref: ModelRef) -> Any:
        steps: list[Step] = []
        for r in range(repeats):
            first = 2 * r
            steps += [
                Step(
                    reasoning=[f"thinking {canary}"],
                    opaque=[json.dumps({"type": "reasoning", "encrypted_content": canary}), f"sig:{canary}"],
                    tool_calls=[("lookup", {"key": "a"}, f"call_{r}")],
                ),
                Step(
                    reasoning=[f"done {canary}"],
                    opaque=[f"x{canary}"],
                    text="The answer is 42.",
                    expect_continuation_from=[first],
                ),
            ]
        a = ScriptedAdapter(steps, provider=ref.provider, model=ref.model)
        adapters.append(a)
        return a

    out = tmp_path / "r.jsonl"
    rep = sweep(
        [Task("What is the answer?", id="q", expected=42)],
        ["openai:sim-reasoner"],
        results=out,
        tools=[lookup],
        repeats=repeats,
        concurrency=1,
        progress=None,
        adapter_factory=scripted,
    )
    assert rep.status == "completed" and rep.failed == 0
    # Positive controls: the scripted model saw the opaque items come back verbatim (the script checks
    # the continuation of each second call), and the answers were scored.
    adapters[0].assert_done()
    assert adapters[0].closed
    df = load_results(out)
    assert df["success"].all() and (df["reasoning_tokens"] > 0).all()
    raw = out.read_bytes()
    assert canary.encode() not in raw
    assert b"encrypted_content" not in raw and b"sig:" not in raw
    for line in raw.splitlines():
        assert set(json.loads(line)) == set(df.columns)
