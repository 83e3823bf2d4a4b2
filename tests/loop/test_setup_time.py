"""Set-up (SDK import, client creation) is timed as ``setup_s``, never inside a model's latency.

Each case runs in a fresh interpreter, so the SDKs are not imported yet, with an import hook that
makes importing them slow: the slow import must land in ``setup_s`` and nowhere in the latencies.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SLOW_S = 1.5

_PRELUDE = f"""
import json, sys, time
class _SlowSDK:
    def find_spec(self, name, path=None, target=None):
        if name in ("anthropic", "openai"):
            time.sleep({SLOW_S})
        return None
sys.meta_path.insert(0, _SlowSDK())
import agentlab as al
"""


def _run(code: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AGENTLAB_WARMUP": "0"}
    out = subprocess.run(
        [sys.executable, "-c", _PRELUDE + code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    data: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return data


@pytest.mark.slow
def test_first_run_latency_excludes_the_sdk_import() -> None:
    got = _run(
        """
r = al.run("anthropic:sim-thinker", "What is 12 * (3 + 4)?")
df = r.usage_frame()
print(json.dumps({"setup_s": getattr(r, "setup_s", None), "latency_s": df["latency_s"].max(),
                  "first_reasoning_s": df["first_reasoning_s"].max()}))
"""
    )
    assert float(got["latency_s"]) < 1.0  # type: ignore[arg-type]
    assert float(got["first_reasoning_s"]) < 1.0  # type: ignore[arg-type]
    assert got["setup_s"] is not None and float(got["setup_s"]) >= SLOW_S  # type: ignore[arg-type]


@pytest.mark.slow
def test_compare_latencies_exclude_every_sdk_import() -> None:
    """Two providers at once: one's SDK import must not land in the other's in-flight call."""
    got = _run(
        """
c = al.compare("What is 12 * (3 + 4)?", ["anthropic:sim-thinker", "openai:sim-reasoner"])
df, s = c.usage, c.summary()
print(json.dumps({"latency_s": df["latency_s"].tolist(),
                  "first_reasoning_s": df["first_reasoning_s"].tolist(),
                  "duration_s": s["duration_s"].tolist(),
                  "setup_s": s["setup_s"].tolist() if "setup_s" in s else []}))
"""
    )
    for col in ("latency_s", "first_reasoning_s", "duration_s"):
        assert max(got[col]) < 1.0, (col, got)  # type: ignore[call-overload]
    # each SDK's import is in its own run's set-up, and nowhere else
    assert min(got["setup_s"]) >= SLOW_S, got  # type: ignore[call-overload]


@pytest.mark.slow
def test_sweep_latencies_exclude_every_sdk_import(tmp_path: Path) -> None:
    """A sweep's runs share one adapter per model, all built before the first run starts."""
    got = _run(
        f"""
from agentlab.sweeps import load_results
tasks = [{{"id": "t1", "prompt": "What is 12 * (3 + 4)?"}}]
al.sweep(tasks, ["anthropic:sim-thinker", "openai:sim-reasoner"], results={str(tmp_path / "r.jsonl")!r})
df = load_results({str(tmp_path / "r.jsonl")!r})
print(json.dumps({{"latency_s": df["latency_s"].tolist(), "status": df["status"].tolist()}}))
"""
    )
    assert got["status"] == ["completed", "completed"], got
    assert max(got["latency_s"]) < 1.0, got  # type: ignore[call-overload]
