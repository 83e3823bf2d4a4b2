"""A sweep logged to a real ``mlflow server`` over HTTP (the shared-server path), shown in MLflow's own UI.

The test starts ``mlflow server`` on loopback with a ``sqlite:///`` backend and an artifacts folder
of its own, logs the sweep with ``tracking_uri="http://127.0.0.1:<port>"`` (artifacts go through the
server's proxy), reads it back through the same URI, renders the parent run's page with headless
Chromium into ``out/screenshots/mlflow_run.png``, and scans the server's database file, its artifacts
folder, its REST answers and the rendered page for the canaries.

Skips, saying why, without MLflow or Chromium, except under CI (``CI=true``), where it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentlab.tracking import log_sweep
from tests.tracking.conftest import Runs, files_under, require_mlflow, scan, unavailable

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SHOT = ROOT / "out" / "screenshots" / "mlflow_run.png"
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
START_S = 180  # a cold start on a busy 2-core machine (imports, database migrations) takes ~30 s


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as r:
        body: bytes = r.read()
        return body


@contextlib.contextmanager
def _server(root: Path) -> Iterator[str]:
    """``mlflow server`` on a free loopback port, in its own process group (stopped as a group)."""
    port = _free_port()
    # The job runner (huey consumers) serves MLflow's GenAI jobs, which nothing here uses.
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    args = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
            "--workers", "1", "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
            "--artifacts-destination", str(root / "artifacts")]  # fmt: skip
    with (root / "server.log").open("wb") as log:
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                if _get(f"{url}/health").strip() == b"OK":
                    break
            except OSError:
                pass
            assert proc.poll() is None, (root / "server.log").read_text()[-3000:]
            assert time.monotonic() < deadline, f"mlflow server not up in {START_S} s"
            time.sleep(0.5)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _chromium(url: str, screenshot: Path | None = None) -> str:
    assert CHROMIUM is not None
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1400,2000",
            "--virtual-time-budget=20000"]  # fmt: skip
    args += [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    out = subprocess.run([*args, url], capture_output=True, text=True, timeout=180, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_sweep_on_a_tracking_server_shows_in_the_ui_without_reasoning(
    runs: Runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mlflow = require_mlflow()
    monkeypatch.setenv("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")  # two lines per run otherwise
    if CHROMIUM is None:
        unavailable("headless Chromium not found (Debian: apt-get install -y chromium; .ci/run installs it)")
    with _server(tmp_path) as url:
        logged = log_sweep(runs.report, experiment="agentlab-ui", tracking_uri=url, settings=runs.settings,
                           run_name="continuity sweep (simulated)")  # fmt: skip
        client = mlflow.tracking.MlflowClient(url)
        assert client.get_run(logged.run_id).data.tags["agentlab.kind"] == "sweep"
        assert {f.path for f in client.list_artifacts(logged.run_id)} >= {"summary.csv", "summary.html"}
        assert len(logged.child_run_ids) == len(runs.report.frame())

        search = json.dumps({"experiment_ids": [logged.experiment_id], "max_results": 1000}).encode()
        req = urllib.request.Request(f"{url}/api/2.0/mlflow/runs/search", data=search,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(req, timeout=30) as r:
            api = r.read()
        assert logged.run_id.encode() in api and b"agentlab.unknown" in api

        page = f"{url}/#/experiments/{logged.experiment_id}/runs/{logged.run_id}"
        dom = _chromium(page)
        SHOT.parent.mkdir(parents=True, exist_ok=True)
        _chromium(page, screenshot=SHOT)

    (tmp_path / "api.json").write_bytes(api)
    (tmp_path / "dom.html").write_text(dom)
    assert "continuity sweep (simulated)" in dom and "agentlab.kind" in dom and "total_cost_usd" not in dom
    assert "output_tokens" in dom and "warm-oslo-berlin · " in dom  # metrics table, child runs (last 10)
    assert SHOT.stat().st_size > 50_000
    stored = files_under(tmp_path)
    assert tmp_path / "mlflow.db" in stored and any(p.suffix == ".png" for p in stored)
    assert scan(stored, runs.needles()) == []
