"""The Jupyter hook-up, in one place: what core asks of a frontend, answered for IPython/Jupyter.

Core (``agentlab.loop.runner``, ``agentlab.sweeps.compare``, ``agentlab.sweeps``) never imports this package;
it calls the :class:`agentlab.frontend.Frontend` protocol, and ``agentlab/__init__.py`` declares
that this module's :class:`JupyterFrontend` is installed once IPython is loaded. It lives in the
notebook package (not beside core) because everything it does is the notebook layer's: load the
cell-scope extension, display run/compare views subscribed to their runs, render interrupts as one
line, show the sweep progress bar. Importing it imports nothing heavy; each method imports late.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from agentlab.notebook.extension import autoload, shorten_interrupt
from agentlab.notebook.live import in_kernel, live_run_view, sdk_note

if TYPE_CHECKING:
    from agentlab.loop.runner import Run
    from agentlab.sweeps.progress import ProgressDisplay

__all__ = ["JupyterFrontend"]


class JupyterFrontend:
    """Installed by :func:`agentlab.frontend.current` the first time a run starts inside IPython."""

    def run_created(self, run: Run) -> None:
        """Load the cell-scope extension, so the run's continuation cannot outlive its cell."""
        autoload()

    def present_run(self, run: Run) -> None:
        """In a kernel (unless ``AGENTLAB_NO_WIDGETS=1``): a live run view subscribed to ``run``."""
        live_run_view(run)

    def present_compare(
        self,
        runs: Sequence[Run],
        labels: Sequence[str],
        task: str,
        live: bool | None,
        repeats: int = 1,
    ) -> Callable[[], None] | None:
        """A compare view, a column per model, a run view subscribed to each run; shown in a kernel.

        ``live=True`` builds it outside a kernel. ``labels`` has one entry per model; ``runs`` are model
        by model, ``repeats`` each.
        """
        autoload()
        if live is False or (live is None and not in_kernel()):
            return None
        from agentlab.notebook.run_view import CompareView

        view = CompareView(list(labels), task=task, repeats=repeats)
        for r, col in zip(runs, view.columns, strict=True):
            r.subscribe(col.on_event)
            note = sdk_note(r)
            if note:
                col.set_status(note)
        if in_kernel():
            view.show()  # its saved output becomes the final state at cell end

        def finish() -> None:
            for col, r in zip(view.columns, runs, strict=True):
                col.finish(r.result.status if r.result is not None else "cancelled")

        return finish

    def interrupt(self, e: KeyboardInterrupt) -> KeyboardInterrupt:
        """The interrupt to re-raise: one line in IPython instead of agentlab's frames."""
        return shorten_interrupt(e)

    def progress_display(self, kind: str) -> ProgressDisplay | None:
        """``"widget"``: an ipywidgets bar; ``"auto"``: one in a kernel, else None (the text line)."""
        if kind == "auto" and not in_kernel():
            return None
        from agentlab.notebook.progress import WidgetProgress

        return WidgetProgress()
