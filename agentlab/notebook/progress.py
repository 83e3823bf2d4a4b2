"""The sweep progress bar for notebooks (ipywidgets), built by the Jupyter frontend.

``agentlab.sweeps`` asks :mod:`agentlab.frontend` for it (``progress="auto"`` in a kernel, or
``progress="widget"``), so the sweep code never imports ipywidgets or IPython itself. The line
beside the bar is :meth:`SweepProgress.line`, the same text the terminal display prints.

What a saved notebook keeps beside the widget is that line too (``text/plain`` and ``text/html``),
replaced by its final state at cell end like the run views' (``run_view.refresh_displays``): a
reader without the kernel or the widget state sees "sweep 108/108 done · …", never the widget's
Python repr (``HBox(children=(IntProgress(…``).
"""

from __future__ import annotations

import html
import math
import time
from typing import Any

from agentlab.sweeps.progress import SweepProgress

__all__ = ["WidgetProgress"]


class WidgetProgress:
    """An ipywidgets bar with the same line beside it (shown on the first update)."""

    def __init__(self, *, interval_s: float = 0.2) -> None:
        import ipywidgets as w

        self.interval_s = interval_s
        self._last = -math.inf
        self.bar = w.IntProgress(value=0, min=0, max=1, description="sweep", bar_style="info")
        self.label = w.HTML(value="")
        self.box = w.HBox([self.bar, self.label])
        self._shown = False
        self._line = "sweep starting"
        self._final = False
        self._display: Any = None

    def update(self, p: SweepProgress, *, final: bool = False) -> None:
        """Redraw at most every ``interval_s`` (the final state always); trait sets only: thread-safe."""
        now = time.monotonic()
        if not final and now - self._last < self.interval_s:
            return
        self._last = now
        self._line = p.line()
        self._final = final
        if not self._shown:
            from agentlab.notebook.run_view import show_saved

            self._display = show_saved(self)  # its saved text becomes the final line at cell end
            self._shown = True
        self.bar.max = max(1, p.total)
        self.bar.value = p.from_file + p.done
        if final:
            self.bar.bar_style = "success" if p.failed == 0 and not p.message else "warning"
        self.label.value = f"<span style='font-family:monospace'>{html.escape(self._line)}</span>"

    @property
    def finished(self) -> bool:
        """Whether the final state was drawn (then the saved output needs no further update)."""
        return self._final

    def summary_text(self) -> str:
        """The line beside the bar: what a saved notebook shows without the widget."""
        return self._line

    def summary_html(self) -> str:
        """The line as static HTML (monospace, as beside the bar)."""
        return f"<div style='font-family:monospace'>{html.escape(self._line)}</div>"

    def _repr_mimebundle_(self, **kw: Any) -> Any:
        data = self.box._repr_mimebundle_(**kw)
        if isinstance(data, dict):
            data["text/plain"] = self.summary_text()
            data["text/html"] = self.summary_html()
        return data
