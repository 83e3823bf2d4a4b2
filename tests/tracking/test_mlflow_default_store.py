"""Without a tracking URI, MLflow logging writes to agentlab's documented store, never the current folder.

MLflow's own default is the current directory (``mlflow.db`` and ``mlruns/`` beside the notebook);
agentlab's is ``$AGENTLAB_CACHE_DIR/mlflow``, and the call returns the URI it used.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import agentlab as al
from tests.tracking.conftest import require_mlflow


def test_no_tracking_uri_writes_to_the_cache_not_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_mlflow()
    from agentlab.tracking import log_comparison

    cwd, cache = tmp_path / "notebook-folder", tmp_path / "cache"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("AGENTLAB_CACHE_DIR", str(cache))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    cmp = al.compare("What is 2 + 2?", ["openai:sim-reasoner"], live=False)
    logged = log_comparison(cmp, experiment="agentlab-default-store")
    assert sorted(p.name for p in cwd.iterdir()) == []  # no mlflow.db, no mlruns/ beside the notebook
    from agentlab.tracking.mlflow_log import default_store

    store = default_store()
    assert store == cache / "mlflow"
    assert logged.tracking_uri == f"sqlite:///{store / 'mlflow.db'}"
    assert (store / "mlflow.db").is_file()
    assert any((store / "mlruns").rglob("summary.csv"))  # the artifacts are there too


def test_an_explicit_tracking_uri_is_used_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_mlflow()
    from agentlab.tracking import log_comparison

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTLAB_CACHE_DIR", str(tmp_path / "cache"))
    uri = f"sqlite:///{tmp_path / 'mine.db'}"
    cmp = al.compare("What is 2 + 2?", ["openai:sim-reasoner"], live=False)
    logged = log_comparison(
        cmp, experiment="mine", tracking_uri=uri, artifact_location=(tmp_path / "art").as_uri()
    )
    assert logged.tracking_uri == uri and not (tmp_path / "cache").exists()
