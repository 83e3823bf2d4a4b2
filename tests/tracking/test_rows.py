"""What a results row may send to a tracker (agentlab.tracking.rows): no MLflow needed, so always run."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

import agentlab as al
from agentlab.errors import MissingExtraError
from agentlab.sweeps.store import ROW_FIELDS
from agentlab.tracking.rows import (
    METRIC_COLUMNS,
    NOT_LOGGED,
    PARAM_COLUMNS,
    TAG_COLUMNS,
    setting_params,
    tracked_run,
)

CANARY = "cny-free-text-7f3a"


def _row(**kw: object) -> dict[str, object]:
    row: dict[str, object] = {
        "task_id": "t1", "model": "openai:sim-reasoner", "setting": "verbatim", "repeat": 0,
        "provider": "openai", "run_id": "run_1", "status": "completed", "success": True, "steps": 3,
        "tool_calls": 2, "input_tokens": 100, "cache_read_tokens": 0, "cache_write_tokens": None,
        "output_tokens": 40, "reasoning_tokens": 30, "reasoning_source": "reported",
        "total_cost_usd": 0.5, "latency_s": 1.25, "started_at": "2026-01-02T03:04:05.000+00:00",
        "output": f"answer {CANARY}", "output_value": json.dumps({"a": CANARY}),
        "error": f"boom {CANARY}", "error_type": "X",
    }  # fmt: skip
    row.update(kw)
    return row


def test_every_results_column_is_decided_exactly_once() -> None:
    groups = [PARAM_COLUMNS, METRIC_COLUMNS, TAG_COLUMNS, NOT_LOGGED]
    flat = [c for g in groups for c in g]
    assert len(flat) == len(set(flat)), "a column in two groups"
    assert set(flat) == set(ROW_FIELDS), "a results column nobody decided on (or a stale one)"


def test_free_text_never_leaves() -> None:
    tr = tracked_run(_row())
    everything = json.dumps([tr.name, tr.params, tr.metrics, tr.tags])
    assert CANARY not in everything
    assert tr.params["model"] == "openai:sim-reasoner" and tr.tags["agentlab.error_type"] == "X"


def test_unknown_is_left_out_and_listed_and_zero_stays_zero() -> None:
    import pandas as pd

    tr = tracked_run(_row(reasoning_tokens=pd.NA, total_cost_usd=math.nan, success=None))
    assert not {"reasoning_tokens", "total_cost_usd", "success", "cache_write_tokens"} & set(tr.metrics)
    unknown = tr.tags["agentlab.unknown"].split(",")
    assert {"reasoning_tokens", "total_cost_usd", "success", "cache_write_tokens"} <= set(unknown)
    assert "provider_cost_usd" not in unknown and "output_valid" not in unknown  # absent by design
    assert tr.metrics["cache_read_tokens"] == 0.0  # a known zero is a zero
    assert tr.metrics["output_tokens"] == 40.0


def test_values_times_and_simulated_tag() -> None:
    tr = tracked_run(_row(success=False))
    assert tr.metrics["success"] == 0.0 and tr.metrics["steps"] == 3.0
    assert tr.params == {"task_id": "t1", "model": "openai:sim-reasoner", "provider": "openai",
                         "setting": "verbatim", "repeat": "0"}  # fmt: skip
    assert tr.tags["agentlab.simulated"] == "true" and not tr.failed
    assert tr.start_ms == 1767323045000 and tr.end_ms == tr.start_ms + 1250
    real = tracked_run(_row(model="openai:gpt-5.5", status="failed"))
    assert "agentlab.simulated" not in real.tags and real.failed


def test_setting_knobs_without_the_users_text() -> None:
    s = al.Setting("s", reasoning=al.ReasoningSettings(effort="low"), max_steps=4, temperature=0.3,
                   system=f"system {CANARY}", metadata={"who": CANARY})  # fmt: skip
    knobs = setting_params([s, al.Setting("plain")])
    assert knobs["s"]["setting.reasoning.effort"] == "low" and knobs["s"]["setting.max_steps"] == "4"
    assert knobs["s"]["setting.temperature"] == "0.3"
    assert knobs["s"]["setting.system"] == knobs["s"]["setting.metadata"] == "set"
    assert CANARY not in json.dumps(knobs)
    assert knobs["plain"] == {"setting.continuation_policy": "verbatim", "setting.max_steps": "20"}


def test_missing_mlflow_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from agentlab.tracking import log_sweep

    path = tmp_path / "r.jsonl"
    row = {k: v for k, v in _row().items() if k in ROW_FIELDS}
    path.write_text(json.dumps(row) + "\n")
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow raises ImportError
    monkeypatch.setitem(sys.modules, "mlflow.tracking", None)
    with pytest.raises(MissingExtraError, match=r"agentlab\[mlflow\]"):
        log_sweep(path, experiment="x", tracking_uri=f"sqlite:///{tmp_path / 'never.db'}")
    assert not (tmp_path / "never.db").exists()


def test_importing_the_tracker_module_loads_neither_mlflow_nor_pandas() -> None:
    import subprocess

    code = (
        "import sys, agentlab.tracking.mlflow_log\n"
        "print(','.join(m for m in ('mlflow', 'pandas', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
