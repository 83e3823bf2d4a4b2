"""The loopback simulator (real sockets) for the tests that need them: timeouts and socket counts."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """``python -m agentlab.sim serve --port 0``; yields its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentlab.sim", "serve", "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None
    m = re.search(r"http://127\.0\.0\.1:(\d+)", proc.stdout.readline())
    assert m, "loopback simulator did not start"
    try:
        yield m.group(0)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
