"""The one seam where an interactive frontend (Jupyter) plugs into core, without core importing it.

Imports point one way: the notebook layer imports core, never the reverse, so a script loads no
IPython or ipywidgets and core has no import cycle through the views. Yet inside a Jupyter kernel a
run shows a live view, the cell-scope extension is loaded the first time a run starts (cell-scoped
continuations depend on it), and an interrupt renders as one line. Core asks for those through a
:class:`Frontend` found here, and the frontend is *installed from outside*:

- :func:`install_when` declares "once module ``trigger`` is loaded, build the frontend from
  ``target`` (``"module:attribute"``, a zero-argument factory)". The facade
  (``agentlab/__init__.py``) declares the Jupyter one: IPython → ``agentlab.notebook.hookup``.
- :func:`current` looks each trigger up in ``sys.modules`` (a dict lookup, not an import): a
  script that never imported IPython imports nothing here; the first run inside IPython installs
  the frontend, which then stays.
- :func:`set_frontend` installs one directly (tests, other frontends); ``None`` removes it.

Live views receive a run's events through the public :meth:`agentlab.Run.subscribe` hook.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agentlab.loop.runner import Run
    from agentlab.sweeps.progress import ProgressDisplay

__all__ = ["Frontend", "at_cell_end", "cell_ended", "current", "install_when", "set_frontend"]


class Frontend(Protocol):
    """What core asks of an interactive frontend; each call is a no-op where nothing applies."""

    def run_created(self, run: Run) -> None:
        """Every ``Run`` at construction (Jupyter: load the cell-scope extension)."""

    def present_run(self, run: Run) -> None:
        """``run``/``arun``/``Session.run`` before the loop starts (Jupyter: subscribe a live view)."""

    def present_compare(
        self,
        runs: Sequence[Run],
        labels: Sequence[str],
        task: str,
        live: bool | None,
        repeats: int = 1,
    ) -> Callable[[], None] | None:
        """``compare`` before its runs start; returns what to call once they all ended, or None.

        ``labels``: one per model; ``runs``: model by model, ``repeats`` runs each.
        """

    def interrupt(self, e: KeyboardInterrupt) -> KeyboardInterrupt:
        """The interrupt to re-raise (Jupyter: rendered as one line, not agentlab's frames)."""

    def progress_display(self, kind: str) -> ProgressDisplay | None:
        """A sweep progress display: ``"auto"`` (None when this frontend shows none) or ``"widget"``."""


_installed: Frontend | None = None
_pending: list[tuple[str, str]] = []
_cell_end: list[Callable[[], None]] = []


def at_cell_end(fn: Callable[[], None]) -> None:
    """Call ``fn`` once when the current notebook cell ends (finished, failed or interrupted).

    For what must live no longer than the cell that made it (an MCP server started outside a
    ``with`` block). The notebook extension calls :func:`cell_ended` after every cell; outside a
    notebook nothing does, so register only when :func:`current` is not None.
    """
    if fn not in _cell_end:
        _cell_end.append(fn)


def cell_ended() -> None:
    """Run (and forget) the ``at_cell_end`` callbacks; one that fails is logged, the rest still run."""
    import logging

    while _cell_end:
        fn = _cell_end.pop(0)
        try:
            fn()
        except Exception:
            logging.getLogger("agentlab").warning("a cell-end callback failed", exc_info=True)


def install_when(trigger: str, target: str) -> None:
    """Once module ``trigger`` is in ``sys.modules``, :func:`current` builds the frontend from ``target``."""
    if (trigger, target) not in _pending:
        _pending.append((trigger, target))


def set_frontend(frontend: Frontend | None) -> Frontend | None:
    """Install ``frontend`` (``None``: none); returns the one it replaces."""
    global _installed
    old, _installed = _installed, frontend
    return old


def current(*, force: bool = False) -> Frontend | None:
    """The installed frontend; installs a declared one whose trigger module is loaded.

    ``force=True`` installs the first declared frontend even if its trigger is not loaded (an
    explicit request such as ``progress="widget"`` in a script).
    """
    global _installed
    if _installed is not None or not _pending:
        return _installed
    for trigger, target in list(_pending):
        if force or trigger in sys.modules:
            module, _, attr = target.partition(":")
            factory: Any = getattr(importlib.import_module(module), attr)
            if _installed is None:  # two threads racing here build two; one wins, both work
                _installed = factory()
            return _installed
    return None
