"""The public hooks the notebook layer uses instead of core's internals.

``Run.subscribe``, ``Run.adapter`` and the frontend seam (``agentlab.frontend``) that core calls without
importing it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

import agentlab as al
from agentlab import frontend
from agentlab.testing import ScriptedAdapter, Step


def _run(**kw: Any) -> al.Run:
    steps = [Step(reasoning=["think"], tool_calls=[("add", {"a": 1, "b": 2})]), Step(text="3")]
    return al.Run("openai:sim-reasoner", "1+2?", tools=[_add], adapter=ScriptedAdapter(steps), **kw)


@al.tool
def _add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_subscribers_get_exactly_what_on_event_gets_in_order() -> None:
    seen: list[tuple[str, object]] = []
    r = _run(on_event=lambda ev: seen.append(("on_event", ev)))
    r.subscribe(lambda ev: seen.append(("first", ev)))
    r.subscribe(lambda ev: seen.append(("second", ev)))
    al.run_sync(r.arun())
    by = {k: [ev for kk, ev in seen if kk == k] for k in ("on_event", "first", "second")}
    assert by["on_event"] and by["first"] == by["on_event"] and by["second"] == by["on_event"]
    assert all(a is b for a, b in zip(by["first"], by["on_event"], strict=True))  # the same objects
    assert [k for k, _ in seen[:3]] == ["on_event", "first", "second"]  # on_event first, then in order


def test_unsubscribe_stops_delivery_and_bad_callbacks_are_refused() -> None:
    got: list[object] = []
    r = _run()
    stop = r.subscribe(got.append)
    stop()
    al.run_sync(r.arun())
    assert got == [] and r.result is not None and r.result.output == "3"
    with pytest.raises(al.ConfigError, match="subscribe takes a function"):
        r.subscribe("print")  # type: ignore[arg-type]


def test_adapter_property_is_the_given_adapter_or_none() -> None:
    ad = ScriptedAdapter([Step(text="x")])
    assert al.Run("openai:sim-reasoner", "t", adapter=ad).adapter is ad
    assert al.Run("openai:sim-reasoner", "t").adapter is None
    with pytest.raises(AttributeError):
        al.Run("openai:sim-reasoner", "t").adapter = ad  # type: ignore[misc]


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def run_created(self, run: al.Run) -> None:
        self.calls.append("created")

    def present_run(self, run: al.Run) -> None:
        self.calls.append("present")
        run.subscribe(lambda ev: self.calls.append(type(ev).__name__))

    def present_compare(
        self, runs: Sequence[al.Run], labels: Sequence[str], task: str, live: bool | None, repeats: int = 1
    ) -> Callable[[], None] | None:
        self.calls.append(f"compare {len(runs)}")
        return lambda: self.calls.append("compare done")

    def interrupt(self, e: KeyboardInterrupt) -> KeyboardInterrupt:
        return e

    def progress_display(self, kind: str) -> Any:
        return None


@pytest.fixture
def recorder() -> Iterator[_Recorder]:
    rec = _Recorder()
    old = frontend.set_frontend(rec)
    try:
        yield rec
    finally:
        frontend.set_frontend(old)


def test_core_calls_the_installed_frontend(recorder: _Recorder) -> None:
    al.run("openai:sim-reasoner", "1+2?", tools=[_add], adapter=ScriptedAdapter([Step(text="3")]))
    assert recorder.calls[:2] == ["created", "present"] and "RunCompletedEvent" in recorder.calls
    recorder.calls.clear()
    models = ["openai:sim-reasoner", "anthropic:sim-thinker"]
    adapters = [
        ScriptedAdapter([Step(text="a")]),
        ScriptedAdapter([Step(text="b")], provider="anthropic", model="sim-thinker"),
    ]
    al.compare("q", models, adapters=adapters)
    assert recorder.calls == ["created", "created", "compare 2", "compare done"]


def test_a_script_installs_no_frontend_and_imports_no_ipython() -> None:
    """Outside IPython nothing is installed (the trigger is looked up in sys.modules, not imported)."""
    code = (
        "import sys, agentlab as al\nfrom agentlab import frontend\n"
        "from agentlab.testing import ScriptedAdapter, Step\n"
        "al.run('openai:sim-reasoner', 't', adapter=ScriptedAdapter([Step(text='x')]))\n"
        "print(frontend.current(), 'IPython' in sys.modules, any(m.startswith('agentlab.notebook') "
        "for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["None", "False", "False"]


def test_ipython_loaded_installs_the_jupyter_hookup() -> None:
    code = (
        "import sys, IPython, agentlab as al\nfrom agentlab import frontend\n"
        "al.Run('openai:sim-reasoner', 't')\nprint(type(frontend.current()).__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "agentlab.notebook.hookup"
