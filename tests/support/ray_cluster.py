"""A local 2-CPU Ray for a test module, and the skip-or-fail rule when Ray is missing."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest


def unavailable(reason: str) -> None:
    """Skip with ``reason``; under CI (``CI=true``) fail instead: there the dev extra installed it."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (CI=true: failing instead of skipping, the dev extra should install it)")
    pytest.skip(reason)


def start_local_ray(temp_dir: Path, attempts: int = 2, **init: Any) -> None:
    """``ray.init`` with 2 CPUs, no dashboard and Ray's files under ``temp_dir`` (for the canary scans).

    Ray gives its raylet a fixed 30 s to register; an overloaded machine can miss that, so a startup
    timeout is retried (``attempts`` in all). Skips (fails under CI) without ``ray``.
    """
    if importlib.util.find_spec("ray") is None:
        unavailable("ray is not installed (pip install 'agentlab[ray]')")
    import ray

    for attempt in range(1, attempts + 1):
        try:
            ray.init(
                num_cpus=2, include_dashboard=False, _temp_dir=str(temp_dir), log_to_driver=False, **init
            )
            return
        except Exception as e:
            ray.shutdown()
            if attempt == attempts or "timed out during startup" not in str(e):
                raise
