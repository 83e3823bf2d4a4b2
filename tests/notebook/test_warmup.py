"""The SDK warm-up: runs in a real kernel without deadlocking the user's own imports; scripts never warm.

A kernel test, not a timing: the figure (execute -> first request, cold vs warmed) is measured by
``python -m bench --only warm_start``.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.notebook.test_kernel import ROOT, Kernel

pytest.importorskip("jupyter_client")

PROBE = "import sys, agentlab.notebook.warmup as w; print(w._thread is not None, {mods!r} in sys.modules)"


def test_warmup_in_a_kernel_races_the_users_imports_without_deadlock() -> None:
    k = Kernel()
    try:
        # The user's own imports start at once, in the same cell as %load_ext and right after it,
        # while the warm thread imports the same packages: every cell must finish.
        k.ok("%load_ext agentlab\nimport anthropic", timeout=120)
        t0 = time.monotonic()
        cell = k.ok(
            "import openai, anthropic, google.genai, threading\n"
            "import agentlab.notebook.warmup as w\n"
            "print(w._thread is not None, anthropic.AsyncAnthropic.__name__, openai.AsyncOpenAI.__name__)",
            timeout=120,
        )
        assert cell.stdout.split() == ["True", "AsyncAnthropic", "AsyncOpenAI"]
        assert time.monotonic() - t0 < 120
        # The warm thread works only while no cell runs: let the kernel idle between short probes.
        deadline = time.monotonic() + 150
        alive = "True"
        while alive == "True" and time.monotonic() < deadline:
            time.sleep(2)
            alive = k.ok("print(w._thread.is_alive())", timeout=60).stdout.strip()
        assert alive == "False"  # the warm thread ended, it did not hang on a lock
        cell = k.ok("import sys\nprint(all(m in sys.modules for m in w.modules_to_warm()))", timeout=60)
        assert cell.stdout.strip() == "True"
    finally:
        k.close()


def test_a_plain_script_warms_nothing() -> None:
    code = (
        "import sys, threading, agentlab as al\n"
        "from agentlab.notebook.extension import load_ipython_extension\n"
        "r = al.run('openai:sim-reasoner', 'hi', max_steps=1)\n"
        "print(any(t.name == 'agentlab-sdk-warmup' for t in threading.enumerate()),"
        " 'anthropic' in sys.modules, 'google.genai' in sys.modules,"
        " 'agentlab.notebook.warmup' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-4:] == ["False", "False", "False", "False"]


def test_warmup_off_in_a_kernel_with_agentlab_warmup_0(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentlab.notebook import warmup

    monkeypatch.setenv("AGENTLAB_WARMUP", "0")
    monkeypatch.setattr(warmup, "in_kernel", lambda: True)
    assert warmup.start(object()) is None


def test_modules_an_sdk_peeks_at_are_imported_whole_before_the_thread_starts() -> None:
    """The openai SDK reads sys.modules["httpx"]: the warm thread must never leave it half-imported."""
    import subprocess
    import sys

    pytest.importorskip("httpx")
    code = """
import sys
import agentlab.notebook.warmup as w
w.in_kernel = lambda: True
class Events:
    def register(self, *a): pass
class Ip:
    events = Events()
assert "httpx" not in sys.modules
t = w.start(Ip())
assert t is not None and "httpx" in sys.modules and hasattr(sys.modules["httpx"], "Timeout")
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
