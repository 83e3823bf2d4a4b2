"""A real Ctrl-C for a script in a subprocess: start it, wait for its ``STARTED`` line, send SIGINT.

The script prints ``STARTED`` once its slow part runs, and ``RETURNED {json}`` (with ``"t"``, its
``time.monotonic()`` when control came back) after the call it makes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def spawn_script(tmp_path: Path, name: str, source: str, *args: str) -> subprocess.Popen[str]:
    """``source`` written to ``tmp_path/name`` and run with ``args``, this checkout's agentlab first."""
    script = tmp_path / name
    script.write_text(source)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AGENTLAB_NO_WIDGETS": "1"}
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(tmp_path),
    )


def interrupt_when_started(
    proc: subprocess.Popen[str], *, settle_s: float = 0.2, timeout_s: float = 15.0
) -> tuple[float, dict[str, Any], float]:
    """SIGINT ``settle_s`` after the script says it started; what the caller and the process saw.

    That is: seconds until the caller had control back, its report, seconds until the process exited.
    """
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "STARTED", line + (proc.stderr.read() if proc.stderr else "")
    time.sleep(settle_s)
    t_sig = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(
            f"one Ctrl-C did not end the call within {timeout_s:g} s\n{out}\n{err}"
        ) from None
    exited = time.monotonic() - t_sig
    lines = [ln for ln in out.splitlines() if ln.startswith("RETURNED ")]
    assert lines, f"control never came back to the caller\n{out}\n{err}"
    rep = json.loads(lines[0].split(" ", 1)[1])
    return rep["t"] - t_sig, rep, exited
