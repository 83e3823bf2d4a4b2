"""Kernel > Interrupt while the SDK warm-up thread and the user's cell import the same modules.

Real kernels (jupyter_client), a real SIGINT (``interrupt_kernel``). The warm list is replaced by
slow stand-in packages written for the test, so the two interleavings are deterministic:

* the warm thread holds the module's import lock and the user's ``import`` waits on it when the
  interrupt lands;
* the user's cell holds it (executing the module) and the warm thread waits on it.

Each must end the same way: the cell fails with ``KeyboardInterrupt`` (not swallowed, no hang), no
module is left half-initialized in ``sys.modules``, the user's import succeeds on retry, and the warm
thread ends.
"""

from __future__ import annotations

import gc
import json
import threading
import time
import warnings
from pathlib import Path

import pytest

pytest.importorskip("jupyter_client")

from tests.notebook.test_kernel import Cell, Kernel

pytestmark = pytest.mark.kernel

MODULE = """
import builtins, threading, time
builtins.LOG.append(("start", __name__, threading.current_thread().name))
{before}time.sleep({sleep})
{after}READY = True
builtins.LOG.append(("end", __name__, threading.current_thread().name))
"""

HALF = (
    "import sys\n"
    "print(sorted(n for n, m in list(sys.modules.items())"
    " if getattr(getattr(m, '__spec__', None), '_initializing', False)))"
)


def _write(root: Path, name: str, *, sleep: float, after: str = "") -> None:
    (root / f"{name}.py").write_text(MODULE.format(before="", sleep=sleep, after=after))


def _start(k: Kernel, root: Path, warm: list[str]) -> None:
    """The stand-ins on the path, the warm list replaced, then ``%load_ext agentlab`` starts the thread."""
    k.ok(
        f"import os, sys, builtins\nsys.path.insert(0, {str(root)!r})\nbuiltins.LOG = []\n"
        "os.environ['AGENTLAB_WARMUP'] = '0'  # import agentlab without starting the real warm-up\n"
        f"import agentlab.notebook.warmup as w\nw.modules_to_warm = lambda: {warm!r}\n"
        "del os.environ['AGENTLAB_WARMUP']\n%load_ext agentlab\nprint(w._thread is not None)",
        timeout=180,
    )


def _interrupted(k: Kernel, code: str, after_s: float) -> Cell:
    """Run ``code``; a real SIGINT reaches the kernel ``after_s`` seconds later."""
    timer = threading.Timer(after_s, k.km.interrupt_kernel)
    timer.start()
    try:
        return k.run(code, timeout=180)
    finally:
        timer.cancel()


def _log(k: Kernel) -> list[list[str]]:
    out = k.ok("import builtins, json\nprint(json.dumps(builtins.LOG))", timeout=60).stdout
    return [list(e) for e in json.loads(out)]


def _close(k: Kernel) -> None:
    """Shut the kernel down; jupyter_client's own unclosed client sockets are collected quietly here."""
    k.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def _settled(k: Kernel) -> None:
    """The warm thread ended (it hangs on no lock) and nothing is left half-initialized."""
    deadline = time.monotonic() + 120
    while k.ok("print(w._thread.is_alive())", timeout=60).stdout.strip() == "True":
        assert time.monotonic() < deadline, "the warm-up thread never ended"
        time.sleep(1)
    assert k.ok(HALF, timeout=60).stdout.strip() == "[]"


def test_interrupt_while_the_users_import_waits_on_the_warm_threads_lock(tmp_path: Path) -> None:
    _write(tmp_path, "al_slow_sdk", sleep=4)
    k = Kernel()
    try:
        _start(k, tmp_path, ["al_slow_sdk"])
        time.sleep(1.0)  # kernel idle: the warm thread starts the 4 s import
        cell = _interrupted(k, "import al_slow_sdk", after_s=1.0)
        assert cell.error is not None and cell.error["ename"] == "KeyboardInterrupt", cell.error
        log = _log(k)
        assert ["start", "al_slow_sdk", "agentlab-sdk-warmup"] in log, log
        assert ["end", "al_slow_sdk", "agentlab-sdk-warmup"] not in log, "control: interrupted mid-import"
        assert k.ok("import al_slow_sdk\nprint(al_slow_sdk.READY)", timeout=120).stdout.strip() == "True"
        _settled(k)
        assert sum(e[0] == "start" for e in _log(k)) == 1, "imported once, by the warm thread"
    finally:
        _close(k)


def test_interrupt_while_the_warm_thread_waits_on_the_users_import(tmp_path: Path) -> None:
    _write(tmp_path, "al_shared_dep", sleep=4)
    _write(tmp_path, "al_slow_sdk", sleep=1.5, after="import al_shared_dep\n")
    k = Kernel()
    try:
        _start(k, tmp_path, ["al_slow_sdk"])
        time.sleep(0.5)  # the warm thread is in al_slow_sdk's body; it imports al_shared_dep at 1.5 s
        cell = _interrupted(k, "import al_shared_dep", after_s=2.5)
        assert cell.error is not None and cell.error["ename"] == "KeyboardInterrupt", cell.error
        log = _log(k)
        assert ["start", "al_shared_dep", "MainThread"] in log, log
        assert ["end", "al_shared_dep", "MainThread"] not in log, "control: interrupted mid-import"
        assert k.ok("import al_shared_dep\nprint(al_shared_dep.READY)", timeout=120).stdout.strip() == "True"
        _settled(k)
        log = _log(k)
        assert ["end", "al_slow_sdk", "agentlab-sdk-warmup"] in log, log
        assert (
            k.ok("import al_slow_sdk\nprint(al_slow_sdk.al_shared_dep.READY)", timeout=60).stdout.strip()
            == "True"
        )
    finally:
        _close(k)
