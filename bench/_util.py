"""Shared helpers: interleaved CPU-time rounds, medians, percentiles, and the section result shape."""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Section", "Target", "cpu_rounds", "percentile"]


@dataclass
class Target:
    """One performance target: ``value`` compared with ``limit`` (``value <= limit`` unless ``higher``)."""

    name: str
    value: float | None
    limit: float
    unit: str = ""
    higher: bool = False

    @property
    def met(self) -> bool | None:
        if self.value is None or (isinstance(self.value, float) and math.isnan(self.value)):
            return None
        return self.value >= self.limit if self.higher else self.value <= self.limit

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "limit": self.limit,
            "unit": self.unit,
            "op": ">=" if self.higher else "<=",
            "met": self.met,
        }


@dataclass
class Section:
    """What a section returns: raw figures, the targets it checks, the table rows, notes."""

    name: str
    title: str
    figures: dict[str, Any] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    rows: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None

    def row(self, label: str, value: str) -> None:
        self.rows.append((label, value))

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "figures": self.figures,
            "targets": [t.as_json() for t in self.targets],
            "rows": [list(r) for r in self.rows],
            "notes": self.notes,
            "skipped": self.skipped,
        }


async def cpu_rounds(
    runners: dict[str, Callable[[], Awaitable[Any]]],
    rounds: int,
    *,
    warmup: int = 1,
    together: tuple[str, ...] = (),
    passes: int = 2,
) -> dict[str, list[float]]:
    """Process CPU seconds of each runner per round; runners interleaved so drift hits all alike.

    Each round starts one runner later than the one before (round ``r`` runs them rotated by ``r``),
    so no runner always follows the same one (whose garbage, heap and caches it would inherit).

    ``together``: the runners whose ratios are read run by run (``bench.adapters.paired_ratios``).
    They run back to back, ``passes`` times a round (an even number), alternately forward and
    backward: forward before the others, backward after them, then the further passes (A B C,
    the others, C B A, A B C, C B A, ...). So the two runs a ratio divides are always neighbours,
    each comes first as often as second, and each has ``passes`` samples a round. Why: on this
    shared 2-core machine a run now and then lands in a slow mode (half again as slow) that often
    outlasts one run; neighbours mostly share it, runs a second apart often do not.
    """
    if passes < 2 or passes % 2:
        raise ValueError(f"passes must be an even number >= 2, got {passes}")
    for _ in range(warmup):
        for fn in runners.values():
            await fn()
    samples: dict[str, list[float]] = {k: [] for k in runners}
    block = [(k, runners[k]) for k in together if k in runners]
    order = [(k, fn) for k, fn in runners.items() if k not in together]
    more = (block + block[::-1]) * (passes // 2 - 1)
    for r in range(rounds):
        shift = r % len(order) if order else 0
        for name, fn in block + order[shift:] + order[:shift] + block[::-1] + more:
            gc.collect()
            t0 = time.process_time()
            await fn()
            samples[name].append(time.process_time() - t0)
    return samples


def proc_mb(pid: int | str = "self", field: str = "VmRSS:") -> float | None:
    """A ``/proc/<pid>/status`` memory field in MB (None where the process or field is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def rss_mb() -> float:
    """This process's resident MB (NaN where ``/proc`` is not there)."""
    mb = proc_mb()
    return math.nan if mb is None else mb


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else math.nan


def percentile(xs: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    if not xs:
        return math.nan
    s = sorted(xs)
    k = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return s[k]
