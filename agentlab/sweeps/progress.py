r"""Sweep progress: a snapshot value, a terminal line and a notebook bar.

Why both: people run sweeps from scripts (a ``\r``-rewritten line on stderr, as pip and tqdm do)
and from notebooks (an ipywidgets bar, built by the notebook layer through :mod:`agentlab.frontend`, so
this module never imports ipywidgets or IPython). Both are throttled (a few
redraws per second) and consume only :class:`SweepProgress` snapshots; the final state is always
drawn. From the worker thread a notebook sweep runs on, the widget is updated by setting traits only.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from typing import Protocol, TextIO

import agentlab.frontend as frontend
from agentlab.errors import ConfigError
from agentlab.render.html_tables import fmt_usd

__all__ = ["ProgressDisplay", "SweepProgress", "TextProgress", "make_display"]


def _clock(s: float | None) -> str:
    if s is None or not math.isfinite(s):
        return "--:--"
    s = round(s)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


@dataclass(frozen=True)
class SweepProgress:
    """Where a sweep stands, as one value the text line and the widget bar both draw.

    ``done`` counts runs finished in this call (failed ones included); ``from_file`` runs were already
    in the results file; ``cost_usd``/``tokens`` are the file's totals (what the budget guard compares
    against).
    """

    total: int
    from_file: int = 0
    done: int = 0
    running: int = 0
    failed: int = 0
    solved: int = 0
    not_started: int = 0
    cost_usd: float = 0.0
    tokens: int = 0
    elapsed_s: float = 0.0
    rate_limited: int = 0
    message: str | None = None
    limits: dict[str, int] = field(default_factory=dict)

    @property
    def remaining(self) -> int:
        """Runs still to finish in this call: neither from the file, done, nor given up before starting."""
        return max(0, self.total - self.from_file - self.done - self.not_started)

    @property
    def eta_s(self) -> float | None:
        """Remaining runs at this call's pace so far (``None`` before the first run finishes)."""
        if self.done == 0:
            return None
        return self.elapsed_s / self.done * self.remaining

    def line(self) -> str:
        """The one-line summary both displays draw (the text line, and the label beside the widget bar)."""
        finished = self.from_file + self.done
        parts = [f"sweep {finished}/{self.total} done"]
        if self.from_file:
            parts[0] += f" ({self.from_file} from file)"
        parts += [f"{self.running} running", f"{self.failed} failed", fmt_usd(self.cost_usd)]
        if self.rate_limited:
            parts.append(f"{self.rate_limited}x rate-limited")
        parts.append(f"{_clock(self.elapsed_s)} elapsed, ETA {_clock(self.eta_s)}")
        text = " · ".join(parts)
        return f"{text} · {self.message}" if self.message else text


class ProgressDisplay(Protocol):
    """What a sweep's ``progress=`` object must do: take snapshots, throttling itself."""

    def update(self, p: SweepProgress, *, final: bool = False) -> None:
        """Show ``p``; ``final`` is the last call and must be drawn, whatever the throttle says."""


class TextProgress:
    r"""One line rewritten in place with ``\r`` (a newline after the final state)."""

    def __init__(self, stream: TextIO | None = None, *, interval_s: float = 0.25) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.interval_s = interval_s
        self._last = -math.inf
        self._width = 0

    def update(self, p: SweepProgress, *, final: bool = False) -> None:
        """Rewrite the line at most every ``interval_s`` (the final state always), blanking leftovers."""
        now = time.monotonic()
        if not final and now - self._last < self.interval_s:
            return
        self._last = now
        text = p.line()
        pad = max(0, self._width - len(text))
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad + ("\n" if final else ""))
        self.stream.flush()


def make_display(progress: str | ProgressDisplay | None) -> ProgressDisplay | None:
    """The progress display a sweep's ``progress=`` asks for.

    ``"auto"``: a widget bar inside a Jupyter kernel (unless ``AGENTLAB_NO_WIDGETS=1``), else a text
    line on stderr; ``"text"``, ``"widget"``, ``None`` (nothing) or any object with ``update``.
    """
    if progress is None:
        return None
    if not isinstance(progress, str):
        if not callable(getattr(progress, "update", None)):
            raise ConfigError("progress must be 'auto', 'text', 'widget', None or an object with update()")
        return progress
    if progress == "auto":
        shown = fe.progress_display("auto") if (fe := frontend.current()) is not None else None
        return shown if shown is not None else TextProgress()
    if progress == "text":
        return TextProgress()
    if progress == "widget":
        fe = frontend.current(force=True)
        if fe is None:
            raise ConfigError("progress='widget' needs the notebook layer (agentlab.notebook)")
        return fe.progress_display("widget")
    raise ConfigError(f"progress must be 'auto', 'text', 'widget' or None, got {progress!r}")
