"""``python -m bench --quick`` keeps working: every section runs and reports its figures and targets.

Structure only: timings are never asserted here (CI machines are noisy; the figures live in README's
Performance section and come from ``make bench``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_bench_quick_writes_every_section(tmp_path: Path) -> None:
    from bench import SECTIONS

    out = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["quick"] is True
    assert [s["name"] for s in data["sections"]] == [
        "adapter_overhead",
        "peers",
        "startup",
        "notebook",
        "compare",
        "analysis",
        "memory",
    ]
    assert len(data["sections"]) == len(SECTIONS)
    for sec in data["sections"]:
        assert not sec.get("error"), (sec["name"], sec.get("traceback"))
        assert sec["rows"], sec["name"]
        for t in sec["targets"]:
            assert {"name", "value", "limit", "op", "met"} <= set(t), t
    named = {s["name"]: s for s in data["sections"]}
    assert set(named["adapter_overhead"]["figures"]) >= {"openai", "anthropic"}
    for provider in ("openai", "anthropic"):
        us = named["adapter_overhead"]["figures"][provider]["us_per_event"]
        assert set(us) >= {"floor", "sdk", "adapter", "run_step"}
        assert "raw SDK typed stream" in named["peers"]["figures"][provider]["us_per_event"]
    assert "| target (issue #7) |" in proc.stdout  # the markdown table was printed
