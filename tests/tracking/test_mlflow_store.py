"""A sweep and a comparison logged into a real MLflow store, read back with MLflow's client, then scanned.

The store is MLflow's own: a ``sqlite:///`` tracking database and an artifacts folder the test
creates. Read back through ``MlflowClient`` (runs, params, metrics, tags, artifacts), and then every
byte of the database file and of every artifact is searched for the reasoning canary, the fixed
reasoning phrase, every opaque payload the simulator handed out, opaque markers and the API keys.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from agentlab.tracking import LoggedRuns, log_comparison, log_sweep
from agentlab.tracking.rows import METRIC_COLUMNS
from tests.tracking.conftest import (
    FAILING,
    FIXED_REASONING,
    KEYS,
    TOKEN,
    UNREPORTED,
    Runs,
    check_canaries_were_there,
    files_under,
    require_mlflow,
    scan,
)

SWEEP_ARTIFACTS = {
    "summary.csv",
    "summary.html",
    "runs.csv",
    "charts/success_rate.png",
    "charts/cost_per_solved.png",
    "charts/reasoning_share.png",
}


def _artifacts(client: Any, run_id: str, path: str | None = None) -> set[str]:
    out: set[str] = set()
    for f in client.list_artifacts(run_id, path):
        out |= _artifacts(client, run_id, f.path) if f.is_dir else {f.path}
    return out


def _store(tmp_path: Path) -> tuple[str, Path, Path]:
    db, art = tmp_path / "mlflow.db", tmp_path / "artifacts"
    art.mkdir()
    return f"sqlite:///{db}", db, art


def _children(client: Any, logged: LoggedRuns) -> list[Any]:
    found = client.search_runs(
        [logged.experiment_id], f"tags.mlflow.parentRunId = '{logged.run_id}'", max_results=1000
    )
    return sorted(found, key=lambda r: logged.child_run_ids.index(r.info.run_id))


def test_sweep_in_a_real_store_reads_back_and_holds_no_reasoning(runs: Runs, tmp_path: Path) -> None:
    mlflow = require_mlflow()
    check_canaries_were_there(runs)
    uri, db, art = _store(tmp_path)
    frame = runs.report.frame()
    assert (frame["status"] == "failed").sum() == 8 and (frame["status"] == "completed").sum() == 24
    assert frame.loc[frame["model"] == UNREPORTED, "reasoning_tokens"].isna().all()

    logged = log_sweep(
        runs.report, experiment="agentlab-sweep", tracking_uri=uri, settings=runs.settings,
        artifact_location=art.as_uri(),
    )  # fmt: skip

    client = mlflow.tracking.MlflowClient(uri)
    parent = client.get_run(logged.run_id)
    assert parent.info.status == "FINISHED"
    assert parent.data.tags["agentlab.kind"] == "sweep" and parent.data.tags["agentlab.simulated"] == "true"
    assert parent.data.tags["agentlab.version"] == __import__("agentlab").__version__
    assert parent.data.params["repeats"] == "2" and parent.data.params["tasks"] == "2"
    assert parent.data.metrics["runs"] == 32 and parent.data.metrics["failed_runs"] == 8
    # the local model's cost and reasoning are unknown: no total rather than a partial one
    assert not {"total_cost_usd", "reasoning_tokens"} & set(parent.data.metrics)
    assert parent.data.metrics["output_tokens"] == frame["output_tokens"].sum()
    assert _artifacts(client, logged.run_id) == SWEEP_ARTIFACTS
    summary = Path(client.download_artifacts(logged.run_id, "summary.csv", str(tmp_path / "dl")))
    assert summary.read_text().count("\n") == 1 + 8  # header + 4 models x 2 settings

    children = _children(client, logged)
    assert len(children) == 32 == len(logged.child_run_ids)
    for child, (_, row) in zip(children, frame.iterrows(), strict=True):
        p, m, t = child.data.params, child.data.metrics, child.data.tags
        assert (p["task_id"], p["model"], p["setting"], p["repeat"]) == (
            row["task_id"], row["model"], row["setting"], str(row["repeat"])
        )  # fmt: skip
        assert p["provider"] == row["provider"] and t["agentlab.simulated"] == "true"
        assert p["setting.continuation_policy"] == "verbatim" and p["setting.max_steps"] == "6"
        if row["setting"] == "effort_low":
            assert p["setting.reasoning.effort"] == "low" and p["setting.system"] == "set"
        unknown = set(t.get("agentlab.unknown", "").split(","))
        if row["status"] == "failed":  # no call made: zero tokens (known), no verdict (unknown)
            assert child.info.status == "FAILED" and p["model"] == FAILING
            assert "success" not in m and "success" in unknown and m["input_tokens"] == 0
            assert t["agentlab.error_type"] == row["error_type"] == "ProviderServerError"
            continue
        assert child.info.status == "FINISHED" and t["agentlab.status"] == "completed"
        for c in METRIC_COLUMNS:  # every known value as it is in the frame; every unknown left out
            if pd.isna(row[c]):
                absent_by_design = ("provider_cost_usd", "output_valid", "resumed_steps")
                assert c not in m and (c in unknown or c in absent_by_design), c
            else:
                assert math.isclose(m[c], float(row[c])), c
        if row["model"] == UNREPORTED:
            assert {"reasoning_tokens", "cache_read_tokens", "total_cost_usd"} <= unknown
            assert m["output_tokens"] > 0
        else:
            assert m["reasoning_tokens"] > 0 and "reasoning_tokens" not in unknown
    assert math.isclose(
        sum(c.data.metrics.get("total_cost_usd", 0.0) for c in children), runs.report.cost_usd, rel_tol=1e-9
    )

    stored = files_under(db.parent)
    assert db in stored and len([p for p in stored if p.is_relative_to(art)]) == len(SWEEP_ARTIFACTS)
    assert scan(stored, runs.needles()) == []


def test_comparison_with_repeats_in_a_real_store(runs: Runs, tmp_path: Path) -> None:
    mlflow = require_mlflow()
    check_canaries_were_there(runs)
    uri, db, art = _store(tmp_path)
    cmp = runs.comparison
    assert cmp.repeats == 2 and all(e.status == "completed" for e in cmp.entries)

    logged = log_comparison(
        cmp, experiment="agentlab-compare", tracking_uri=uri, artifact_location=art.as_uri(),
        params={"task": "warm-paris-rome"},
    )  # fmt: skip

    client = mlflow.tracking.MlflowClient(uri)
    parent = client.get_run(logged.run_id)
    assert parent.data.tags["agentlab.kind"] == "comparison"
    assert parent.data.params == {"models": ",".join(cmp.labels), "repeats": "2", "task": "warm-paris-rome"}
    assert math.isclose(parent.data.metrics["wall_s"], cmp.wall_s)
    assert _artifacts(client, logged.run_id) == SWEEP_ARTIFACTS | {
        "charts/costs.png",
        "charts/reasoning_per_step.png",
    }
    children = _children(client, logged)
    assert [(c.data.params["model"], c.data.params["repeat"]) for c in children] == [
        (e.label, str(e.repeat)) for e in cmp.entries
    ]
    for child, e in zip(children, cmp.entries, strict=True):
        assert e.result is not None
        assert child.data.metrics["steps"] == e.steps and child.data.metrics["success"] == 1.0
        assert child.data.metrics["reasoning_tokens"] == e.result.usage.tokens.reasoning_tokens
        assert child.data.tags["agentlab.run_id"] == e.result.run_id
    assert scan(files_under(db.parent), runs.needles()) == []


def test_the_scan_finds_what_it_looks_for(runs: Runs, tmp_path: Path) -> None:
    """The scan can fail: a reasoning text, an opaque payload and a key written as a param are found."""
    mlflow = require_mlflow()
    uri, _, _ = _store(tmp_path)
    client = mlflow.tracking.MlflowClient(uri)
    run = client.create_run(client.create_experiment("control", artifact_location=(tmp_path / "a").as_uri()))
    texts = [ex.text for ex in runs.transport.exchanges]
    leaked = next(t for t in texts if TOKEN in t and FIXED_REASONING in t)
    client.log_param(run.info.run_id, "leak", leaked[leaked.index(FIXED_REASONING) :][:300])
    client.log_text(run.info.run_id, runs.opaque[0], "opaque.txt")
    client.set_tag(run.info.run_id, "key", KEYS["openai"])
    hits = scan(files_under(tmp_path), runs.needles())
    assert "reasoning text in mlflow.db" in hits and "reasoning canary in mlflow.db" in hits
    assert "openai key in mlflow.db" in hits and "opaque payload 0 in opaque.txt" in hits
