"""The sweep progress bar for notebooks (ipywidgets), built by the Jupyter frontend.

``agentlab.sweeps`` asks :mod:`agentlab.frontend` for it (``progress="auto"`` in a kernel, or
``progress="widget"``), so the sweep code never imports ipywidgets or IPython itself. The line
beside the bar is :meth:`SweepProgress.line`, the same text the terminal display prints.
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

    def update(self, p: SweepProgress, *, final: bool = False) -> None:
        """Redraw at most every ``interval_s`` (the final state always); trait sets only: thread-safe."""
        now = time.monotonic()
        if not final and now - self._last < self.interval_s:
            return
        self._last = now
        if not self._shown:
            from IPython.display import display

            display(self.box)  # type: ignore[no-untyped-call]
            self._shown = True
        self.bar.max = max(1, p.total)
        self.bar.value = p.from_file + p.done
        if final:
            self.bar.bar_style = "success" if p.failed == 0 and not p.message else "warning"
        self.label.value = f"<span style='font-family:monospace'>{html.escape(p.line())}</span>"

    def _repr_mimebundle_(self, **kw: Any) -> Any:  # pragma: no cover - display helper
        return self.box._repr_mimebundle_(**kw)
