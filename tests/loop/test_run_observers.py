"""The run-observer registry (agentlab/loop/observers.py): who sees every Run, and what cannot break one."""

from __future__ import annotations

import logging
import sys
import types
from collections.abc import Iterator

import pytest

import agentlab as al
from agentlab.loop import observers
from agentlab.testing import ScriptedAdapter, Step


def _run() -> al.Run:
    return al.Run("openai:sim-reasoner", "hi", adapter=ScriptedAdapter([Step(text="ok")]))


@pytest.fixture
def declared() -> Iterator[list[tuple[str, str]]]:
    saved = list(observers._declared)
    yield observers._declared
    observers._declared[:] = saved


def test_an_observer_sees_every_run_until_removed() -> None:
    seen: list[str] = []
    remove = observers.add_run_observer(lambda run: seen.append(run.run_id))
    try:
        a, b = _run(), _run()
    finally:
        remove()
    _run()
    assert seen == [a.run_id, b.run_id]


def test_an_observer_that_raises_is_logged_and_the_run_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    def bad(run: al.Run) -> None:
        raise RuntimeError("observer broke")

    remove = observers.add_run_observer(bad)
    try:
        with caplog.at_level(logging.WARNING, logger="agentlab.loop.observers"):
            result = _run().run_sync()
    finally:
        remove()
    assert result.status == "completed"
    assert any("run observer" in r.getMessage() for r in caplog.records)


def test_a_declared_observer_loads_only_once_its_trigger_is_imported(
    declared: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    target = types.ModuleType("tests_fake_observer_target")
    target.observe = lambda run: seen.append(run.run_id)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tests_fake_observer_target", target)
    observers.observe_when("tests_fake_trigger", "tests_fake_observer_target:observe")
    _run()
    assert seen == []
    monkeypatch.setitem(sys.modules, "tests_fake_trigger", types.ModuleType("tests_fake_trigger"))
    r = _run()
    assert seen == [r.run_id]
    monkeypatch.setenv("AGENTLAB_OTEL", "0")
    _run()
    assert seen == [r.run_id]


def test_a_closer_is_called_once_when_the_loop_ends() -> None:
    ended: list[str] = []

    def observer(run: al.Run) -> observers.Closer:
        return lambda: ended.append(f"{run.run_id}:{run.result.status if run.result else None}")

    remove = observers.add_run_observer(observer)
    try:
        run = _run()
        assert ended == []
        run.run_sync()
    finally:
        remove()
    assert ended == [f"{run.run_id}:completed"]
