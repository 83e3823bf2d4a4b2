"""A sweep and a comparison logged to a real ``mlflow server`` over HTTP: nothing private stored.

The adversarial counterpart of ``test_mlflow_ui.py`` without the browser (so it runs wherever
MLflow does): ``mlflow server`` on loopback (``sqlite:///`` backend, proxied artifacts), the shared
canary runs of ``conftest.py`` (reasoning with a unique token, every opaque payload the simulator
handed out, fake API keys), logged through the tracking URI. Then everything the server stored is
read back: its REST answers (runs and experiments search, every artifact downloaded through the
proxy) and, once it has stopped, every byte of its database and artifacts folder. Controls: the
canaries were on the wire, and the scan sees stored data (the run ids, the task ids).
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from agentlab.tracking import log_comparison, log_sweep
from tests.tracking.conftest import Runs, check_canaries_were_there, files_under, require_mlflow, scan
from tests.tracking.test_mlflow_ui import _server

pytestmark = pytest.mark.slow


def _post(url: str, payload: dict[str, object]) -> bytes:
    req = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        body: bytes = r.read()
        return body


def test_a_tracking_server_stores_no_reasoning_opaque_item_or_key(
    runs: Runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mlflow = require_mlflow()
    monkeypatch.setenv("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
    check_canaries_were_there(runs)
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    read_back = tmp_path / "read_back"
    read_back.mkdir()
    with _server(server_dir) as url:
        swept = log_sweep(
            runs.report, experiment="agentlab-canaries", tracking_uri=url, settings=runs.settings
        )
        compared = log_comparison(runs.comparison, experiment="agentlab-canaries", tracking_uri=url)
        client = mlflow.tracking.MlflowClient(url)
        api = _post(
            f"{url}/api/2.0/mlflow/runs/search",
            {"experiment_ids": [swept.experiment_id], "max_results": 1000},
        )
        api += _post(f"{url}/api/2.0/mlflow/experiments/search", {"max_results": 100})
        (read_back / "api.json").write_bytes(api)
        ids = [swept.run_id, *swept.child_run_ids, compared.run_id, *compared.child_run_ids]
        downloaded = 0
        for run_id in ids:
            for art in client.list_artifacts(run_id):
                if not art.is_dir:
                    mlflow.artifacts.download_artifacts(
                        run_id=run_id,
                        artifact_path=art.path,
                        dst_path=str(read_back / run_id),
                        tracking_uri=url,
                    )
                    downloaded += 1
    assert swept.run_id.encode() in api and b"warm-oslo-berlin" in api, "control: the scan reads stored runs"
    assert downloaded >= 4, "control: the artifacts (summaries, figures) were read back through the proxy"
    stored = files_under(server_dir, read_back)
    assert server_dir / "mlflow.db" in stored
    assert scan(stored, runs.needles()) == []
