"""The simulator on a real loopback socket (``python -m agentlab.sim serve --port 0``), for tests.

One way to start and stop it, so every test that needs real sockets (timeouts, socket counts, the
loggers a real HTTP stack uses, outside clients) gets the same process and the same clean shutdown.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def start(*extra: str) -> tuple[subprocess.Popen[str], str]:
    """Start the server; return the process and its base URL (``http://127.0.0.1:PORT``)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentlab.sim", "serve", "--port", "0", *extra],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
    if not m:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise AssertionError(f"loopback simulator did not start: {line!r} {err[-2000:]!r}")
    return proc, m.group(0)


def stop(proc: subprocess.Popen[str]) -> None:
    """SIGTERM, then wait (bounded) so no server outlives its test."""
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)


@contextlib.contextmanager
def serving(*extra: str) -> Iterator[str]:
    """The server for the ``with`` block; yields its base URL."""
    proc, url = start(*extra)
    try:
        yield url
    finally:
        stop(proc)
