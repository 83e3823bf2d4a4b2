"""``%load_ext agentlab``: continuations and reasoning text live no longer than the cell that made them.

Before every cell the extension records :func:`agentlab.loop.continuation.generation`; after it
(``post_run_cell`` fires also when the cell raised or was interrupted) it releases every provider
continuation created since, and collapses every reasoning panel (closing its live text). A run
paused or interrupted in one cell and resumed in a later one therefore continues from portable items
only: no opaque reasoning crosses a cell boundary, and none is left in widget state to be saved.

The extension is also loaded automatically (:func:`autoload`) the first time agentlab runs or
displays something inside IPython (through the Jupyter hook-up, ``agentlab.notebook.hookup``), so
users who never type ``%load_ext`` get the same guarantee.
``autoload`` is cheap outside IPython: it never imports IPython itself.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

__all__ = ["autoload", "is_loaded", "load_ipython_extension", "shorten_interrupt", "unload_ipython_extension"]

INTERRUPT_LINE = (
    "KeyboardInterrupt: interrupted; agentlab cancelled the run(s) in this cell (status 'cancelled')"
)
"""What a Kernel > Interrupt of a sync agentlab call shows in the cell: one line, no internals."""

_lock = threading.Lock()


class _CellScope:
    """The pre/post cell hooks registered on one IPython shell."""

    def __init__(self, ip: Any) -> None:
        self.ip = ip
        from agentlab.loop.continuation import generation

        # Continuations created before the extension was loaded (e.g. earlier in the loading cell)
        # are not this cell's: take the marker now, and again before every cell.
        self.gen = generation()

    def pre_run_cell(self, info: Any = None) -> None:
        from agentlab.loop.continuation import generation

        self.gen = generation()

    def post_run_cell(self, result: Any = None) -> None:
        from agentlab.loop.continuation import release_since

        # The loading cell is covered too: ``gen`` was taken when the extension was loaded.
        release_since(self.gen)
        from agentlab.frontend import cell_ended

        cell_ended()  # what asked to live no longer than the cell (MCP servers started in it)
        # Finished views first: their outputs become static final states (what any save keeps), and
        # their widgets, on screen nowhere any more, need no collapse.
        if "agentlab.notebook.run_view" in sys.modules:
            from agentlab.notebook.run_view import refresh_displays

            refresh_displays()
        if "agentlab.notebook.panel" in sys.modules:
            from agentlab.notebook.panel import collapse_panels

            collapse_panels()


def _scope(ip: Any) -> _CellScope | None:
    scope = getattr(ip, "_agentlab_cell_scope", None)
    return scope if isinstance(scope, _CellScope) else None


def load_ipython_extension(ip: Any) -> None:
    """Register the cell hooks on ``ip`` (idempotent: loading twice registers once)."""
    with _lock:
        if _scope(ip) is not None:
            return
        scope = _CellScope(ip)
        ip.events.register("pre_run_cell", scope.pre_run_cell)
        ip.events.register("post_run_cell", scope.post_run_cell)
        ip._agentlab_cell_scope = scope
    from agentlab.notebook.warmup import start  # SDKs imported while the kernel idles (warmup.py)

    start(ip)


def unload_ipython_extension(ip: Any) -> None:
    """Remove the hooks (``%unload_ext agentlab``); continuations then live until their loop ends."""
    with _lock:
        scope = _scope(ip)
        if scope is None:
            return
        ip.events.unregister("pre_run_cell", scope.pre_run_cell)
        ip.events.unregister("post_run_cell", scope.post_run_cell)
        del ip._agentlab_cell_scope


def is_loaded(ip: Any = None) -> bool:
    """Whether the cell hooks are registered on ``ip`` (default: the running shell, if any)."""
    if ip is None:
        ip = _shell()
    return ip is not None and _scope(ip) is not None


def _shell() -> Any:
    if "IPython" not in sys.modules:  # never import IPython just to find out we are not in it
        return None
    from IPython import get_ipython

    return get_ipython()


def shorten_interrupt(e: KeyboardInterrupt) -> KeyboardInterrupt:
    """Make IPython render this interrupt as :data:`INTERRUPT_LINE` instead of a traceback.

    The frames of an interrupt caught and re-raised by ``run_sync`` are agentlab's plumbing (the
    wait on the worker thread), not the user's code: a traceback through them says nothing useful.
    IPython's ``_render_traceback_`` hook replaces the rendering only; the exception stays a plain
    ``KeyboardInterrupt`` (``ename`` in the kernel's error message, ``except`` clauses).
    """
    line = INTERRUPT_LINE if not e.args else f"{INTERRUPT_LINE}: {e}"
    e._render_traceback_ = lambda: [line]  # type: ignore[attr-defined]
    return e


def autoload() -> bool:
    """Load the extension into the running IPython shell, if there is one. Returns whether it is loaded.

    Runs and comparisons call this when they start, so ``%load_ext agentlab`` is optional. Loading is
    done through the shell's extension manager so that ``%load_ext``/``%unload_ext`` see it.
    """
    ip = _shell()
    if ip is None:
        return False
    if _scope(ip) is None:
        manager = getattr(ip, "extension_manager", None)
        if manager is not None and "agentlab" not in getattr(manager, "loaded", set()):
            manager.load_extension("agentlab")
        else:
            load_ipython_extension(ip)
    return True
