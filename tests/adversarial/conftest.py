"""Fixtures for the adversarial suite: scenarios run once per (provider, fault).

They are shared by the per-sink tests, so each sink is its own test (a failure names the sink) at the cost of
one run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.adversarial.support import Outcome, run_scenario

_cache: dict[tuple[str, str], Outcome] = {}


@pytest.fixture(autouse=True)
def _local_model_priced() -> Iterator[None]:
    """The vLLM scenarios' model has a (free) price for the test's duration only."""
    from tests.adversarial.chat_wire import local_model_priced

    with local_model_priced():
        yield


@pytest.fixture(scope="session")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Outcome]:
    """``scenario(provider, fault)`` -> its collected sinks (run on first use)."""

    def get(provider: str, fault: str) -> Outcome:
        key = (provider, fault)
        if key not in _cache:
            tmp: Path = tmp_path_factory.mktemp(f"adv-{provider}-{fault}")
            _cache[key] = run_scenario(provider, fault, tmp)
        return _cache[key]

    return get
