"""Counting the runs a sweep starts, for the tests that check it stops starting them."""

from __future__ import annotations

import pytest

import agentlab as al


def count_started_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the sweep build runs that record their id when they start; return that (live) list."""
    import agentlab.sweeps.rows as sweep_rows

    started: list[str] = []

    class CountingRun(al.Run):
        async def arun(self) -> al.RunResult:
            started.append(self.run_id)
            return await super().arun()

    monkeypatch.setattr(sweep_rows, "Run", CountingRun)
    return started
