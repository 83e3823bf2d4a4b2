"""What a sweep call returns.

``SweepReport``, its status and message, built once the scheduler ends.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentlab.errors import (
    BudgetExceededError,
)
from agentlab.sweeps.limiter import LimiterStats
from agentlab.sweeps.progress import ProgressDisplay
from agentlab.sweeps.schedule import Scheduler, stopped_on_storage

if TYPE_CHECKING:
    import pandas as pd


__all__ = ["SweepReport", "SweepStatus", "build_report"]

SweepStatus = Literal["completed", "budget_exceeded", "provider_down"]


@dataclass
class SweepReport:
    """What one ``sweep`` call did. The data is in the results file: ``frame()`` / ``summary()``."""

    path: Path
    status: SweepStatus
    planned: int
    from_file: int
    ran: int
    failed: int
    not_started: int
    cost_usd: float
    tokens: int
    wall_s: float
    message: str | None = None
    limiters: dict[str, LimiterStats] = field(default_factory=dict)

    def frame(self) -> pd.DataFrame:
        """The results file as a frame (one row per run key; see ``load_results``)."""
        from agentlab.sweeps.analysis import load_results

        return load_results(self.path)

    def summary(self, by: Sequence[str] = ("model", "setting")) -> pd.DataFrame:
        """Success rate with Wilson intervals, steps, tokens, cost per solved task, reasoning share."""
        from agentlab.sweeps.analysis import summarize

        return summarize(self.frame(), by=by)

    def raise_for_status(self) -> SweepReport:
        """Return self, or raise ``BudgetExceededError`` when the budget guard stopped the sweep."""
        if self.status == "budget_exceeded":
            raise BudgetExceededError(self.message or "sweep budget exceeded")
        return self

    def __str__(self) -> str:
        head = (
            f"sweep {self.status}: {self.from_file + self.ran}/{self.planned} runs in {self.path} "
            f"({self.ran} ran now, {self.from_file} from file, {self.failed} failed, "
            f"{self.not_started} not started), ${self.cost_usd:.4f} in the file, {self.wall_s:.1f} s"
        )
        return f"{head}\n{self.message}" if self.message else head

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


def build_report(
    sched: Scheduler, path: Path, display: ProgressDisplay | None, cancelled: int
) -> SweepReport:
    """The final status, message and figures (or the ``StorageError`` of a storage stop)."""
    st = sched.st
    not_started = sched.not_started()
    if st.storage is not None:
        raise stopped_on_storage(st.storage, st, cancelled, not_started)
    status: SweepStatus = "completed"
    msgs: list[str] = []
    if st.budget:
        status = "budget_exceeded"
        msgs.append(f"{st.budget}; {not_started} run(s) not started (raise the budget and call again)")
    if st.down:
        if status == "completed":
            status = "provider_down"
        msgs += list(st.down.values())
        msgs.append(
            "call again later to run what was not started (retry_failed=True also redoes failed runs)"
        )
    message = "\n".join(msgs) or None
    if display is not None:
        display.update(sched.snapshot(message), final=True)
    return SweepReport(
        path=path,
        status=status,
        planned=sched.plan_size,
        from_file=sched.from_file,
        ran=st.done,
        failed=st.failed,
        not_started=not_started,
        cost_usd=st.usd,
        tokens=st.tokens,
        wall_s=time.monotonic() - sched.t_start,
        message=message,
        limiters=sched.limiter_stats(),
    )
