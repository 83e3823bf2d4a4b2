"""Warm the provider SDKs in a background thread while a fresh kernel sits idle.

Why: the first call in a kernel pays the SDK import in the foreground (``anthropic`` 2-3 s, about
2,850 modules; ``openai`` about 1 s). A notebook is read top to bottom, so between ``%load_ext
agentlab`` (or ``import agentlab``) and the first run there are usually seconds of idle kernel:
importing the SDKs then moves that cost off the cell that asks for a model.

Safety, in order of importance:

* **Kernels only.** :func:`start` does nothing unless :func:`agentlab.notebook.kernel.in_kernel` is
  true, so scripts, tests and the IPython terminal import nothing they did not ask for.
  ``AGENTLAB_WARMUP=0`` turns it off in a kernel too.
* **Only while no cell runs.** The thread imports one package at a time and, before each, waits
  for the kernel to be idle (``pre_run_cell`` / ``post_run_cell``). A cell that starts meanwhile
  races with at most the one package already being imported. If the cell imports that same
  package, Python's per-module import locks make it wait for the import to finish (and then reuse
  it), which is never slower than importing it itself.
* **No partial module where an SDK peeks.** ``openai`` reads ``sys.modules["httpx"]`` without
  importing it; a module being imported by this thread is there half-initialized, so such modules
  (:data:`_PEEKED`) are imported whole in the foreground, in the cell that starts the warm-up.
* **No deadlock, no partial module.** The two threads could only deadlock if each held one
  module's import lock while waiting for the other's. The warm thread imports only the SDKs and
  agentlab's adapter modules, and user code runs only between whole packages (see above). A
  circular wait would also need an SDK's import to import the user's module, which it never does.
  ``tests/notebook/test_warmup.py`` imports the same SDKs from a cell while the warm-up runs, in a
  real kernel.
* **Kernel > Interrupt.** SIGINT reaches only the main thread: the cell's ``import`` raises
  ``KeyboardInterrupt`` (never swallowed here) whether it was executing a module or waiting on the
  warm thread's lock, and a retry imports normally. One CPython behaviour needs a repair: when the
  cell was executing a module the warm thread waits on, the warm thread's ``import`` returns the
  interrupted module object (half-initialized, already removed from ``sys.modules``), and the warm
  thread's module keeps it. So after a warm import that raced an interrupted cell, modules imported
  meanwhile that hold such an orphan are removed from ``sys.modules`` (:func:`_drop_orphan_holders`),
  and the user's next import executes them again, cleanly.
  ``tests/adversarial/test_warmup_interrupt.py`` interrupts a real kernel in both interleavings.
* **Never an error.** A warm-up import that fails is logged at debug level and skipped: the run
  that needs the SDK then imports it itself, with its own clear error.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
import threading
import types
from typing import Any

from agentlab.notebook.kernel import in_kernel

__all__ = ["modules_to_warm", "start", "wait"]

_log = logging.getLogger("agentlab.notebook.warmup")
_lock = threading.Lock()
_thread: threading.Thread | None = None
_idle = threading.Event()
_interrupts = 0
"""Cells that ended in ``KeyboardInterrupt`` (Kernel > Interrupt) since the kernel started."""


_AFTER = (
    "agentlab.loop.runner",
    "agentlab.loop.sync",
    "agentlab.costs.pricing",
    "agentlab.notebook.hookup",
    "agentlab.notebook.run_view",  # ipywidgets, anywidget: the live view the run shows
    # What the SDK clients import late, when the first client is built (measured with -X importtime
    # after importing the SDKs: about 0.3 s on a loaded 2-core machine). Skipped when not installed.
    "anyio",
    "h11",
    "httpcore2",
    "httpcore",
    "truststore",
    "opentelemetry.trace",
)
"""After the SDKs: agentlab's own run path, then the transport modules a first request imports."""


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module.split(".")[0]) is not None
    except (ImportError, ValueError):
        return False


def modules_to_warm() -> list[str]:
    """The installed SDKs of the registered providers, their adapter modules, and :data:`_AFTER`.

    Only the providers whose API key variable is set, when any is; the SDK names come from each
    provider's ``ProviderSpec.sdk_module``, so no provider is named here.
    """
    from agentlab.adapters.registry import get_provider, provider_names

    specs = [get_provider(n) for n in provider_names()]
    keyed = [s for s in specs if s.api_key_env and os.environ.get(s.api_key_env)]
    # A key set says which providers this notebook will call; with none set (the simulated
    # providers need none) every installed SDK is warmed.
    specs = keyed or specs
    out: list[str] = []
    for s in specs:
        if s.sdk_module is None or not _installed(s.sdk_module):
            continue
        for mod in (s.sdk_module, s.adapter.partition(":")[0]):
            if mod not in out:
                out.append(mod)
        if len(out) == 2:  # the first provider's whole path before the next provider's SDK
            out += [m for m in _AFTER if _installed(m)]
    return out


def _on_pre_run_cell(info: Any = None) -> None:
    _idle.clear()


def _on_post_run_cell(result: Any = None) -> None:
    global _interrupts
    if isinstance(getattr(result, "error_in_exec", None), KeyboardInterrupt):
        _interrupts += 1  # counted before the thread may go on (it waits for _idle)
    _idle.set()


def _warm(modules: list[str]) -> None:
    for mod in modules:
        _idle.wait()  # never import while a cell runs (see the module docstring)
        if mod in sys.modules:
            continue
        interrupts, before = _interrupts, set(sys.modules)
        try:
            importlib.import_module(mod)
        except Exception as e:  # the run that needs it will import it and say what is wrong
            _log.debug("warm-up of %s skipped: %s", mod, type(e).__name__)
        _idle.wait()  # the cell that raced this import has ended and said whether it was interrupted
        if _interrupts != interrupts:
            _drop_orphan_holders([n for n in list(sys.modules) if n not in before])


def _orphan(value: object) -> bool:
    """A module object imported from a file that ``sys.modules`` no longer maps its name to."""
    if not isinstance(value, types.ModuleType):
        return False
    spec = getattr(value, "__spec__", None)
    if spec is None or getattr(spec, "origin", None) is None or spec.name != value.__name__:
        return False  # built on the fly, or registered under another name: not ours to judge
    return sys.modules.get(value.__name__) is not value


def _drop_orphan_holders(new: list[str]) -> None:
    """Remove the ``new`` modules that hold an orphan (see the module docstring), to a fixpoint.

    Only module objects bound by ``import x`` are seen; a name bound by ``from x import y`` before
    the interrupt cannot be told apart and stays (the interrupted module had not defined much).
    """
    dropped = True
    while dropped:
        dropped = False
        for name in new:
            mod = sys.modules.get(name)
            if mod is not None and any(_orphan(v) for v in list(vars(mod).values())):
                sys.modules.pop(name, None)
                _log.debug("warm-up: %s held a module an interrupted cell left half-initialized", name)
                dropped = True


def start(ip: Any = None) -> threading.Thread | None:
    """In a Jupyter kernel, start warming once; returns the thread (None: nothing to do here)."""
    global _thread
    if os.environ.get("AGENTLAB_WARMUP", "").lower() in {"0", "false", "no", "off"} or not in_kernel():
        return None
    if ip is None:
        from IPython import get_ipython

        ip = get_ipython()
    with _lock:
        if _thread is not None:
            return _thread
        events = getattr(ip, "events", None)
        if events is None:
            return None
        # Called from inside a cell (the one with %load_ext or the import): busy until it ends.
        _idle.clear()
        _import_peeked_modules()
        events.register("pre_run_cell", _on_pre_run_cell)
        events.register("post_run_cell", _on_post_run_cell)
        _thread = threading.Thread(
            target=_warm, args=(modules_to_warm(),), name="agentlab-sdk-warmup", daemon=True
        )
        _thread.start()
        return _thread


_PEEKED = ("httpx",)
"""Modules an SDK reads from ``sys.modules`` instead of importing (``openai`` checks for the legacy
``httpx`` on every client and request). Imported whole, in the foreground, before the thread starts:
a module the thread is still importing is in ``sys.modules`` half-initialized, and a cell peeking
at it then fails (``partially initialized module 'httpx' has no attribute 'Timeout'``, seen when
nbclient ran the next cell while google-genai's import pulled httpx in). About 0.1 s, once."""


def _import_peeked_modules() -> None:
    for mod in _PEEKED:
        if _installed(mod):
            try:
                importlib.import_module(mod)
            except Exception as e:  # as for any warm-up import: the run that needs it says what is wrong
                _log.debug("warm-up of %s skipped: %s", mod, type(e).__name__)


def wait(timeout: float | None = None) -> bool:
    """Block until the warm-up ended (True) or ``timeout`` passed; True when none was started."""
    t = _thread
    if t is None:
        return True
    t.join(timeout)
    return not t.is_alive()
