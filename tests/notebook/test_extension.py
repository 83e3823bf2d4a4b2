"""The cell-scope extension on a real IPython shell object (the kernel test covers a real kernel)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentlab.loop.continuation import Continuation, live_continuations, release_all


class _Shell:
    """The part of an IPython shell the extension uses: its real event manager."""

    def __init__(self) -> None:
        from IPython.core.events import EventManager, available_events

        # a stand-in for InteractiveShell: EventManager only keeps a reference to it
        self.events = EventManager(self, available_events)  # type: ignore[arg-type]


@pytest.fixture
def shell() -> Iterator[_Shell]:
    release_all()
    ip = _Shell()
    yield ip
    from agentlab.notebook.extension import unload_ipython_extension

    unload_ipython_extension(ip)
    release_all()


def _cell(ip: _Shell, body: Any, *, raises: bool = False) -> None:
    """Fire the hooks around ``body`` the way IPython's run_cell does (post_run_cell also on error)."""
    ip.events.trigger("pre_run_cell", None)
    try:
        body()
    except BaseException:
        if not raises:
            raise
    finally:
        ip.events.trigger("post_run_cell", None)


def test_cell_end_releases_continuations_created_in_the_cell(shell: _Shell) -> None:
    import agentlab

    before = Continuation(provider="openai", api="responses", model="m")  # made before loading
    agentlab.load_ipython_extension(shell)
    agentlab.load_ipython_extension(shell)  # idempotent
    made: list[Continuation] = []
    _cell(shell, lambda: made.append(Continuation(provider="anthropic", api="messages", model="m")))
    assert made[0].released
    assert live_continuations() == [before]  # not this cell's


def test_interrupted_cell_still_releases(shell: _Shell) -> None:
    from agentlab.notebook.extension import load_ipython_extension

    load_ipython_extension(shell)
    made: list[Continuation] = []

    def body() -> None:
        made.append(Continuation(provider="openai", api="responses", model="m"))
        raise KeyboardInterrupt

    _cell(shell, body, raises=True)
    assert made[0].released and live_continuations() == []


def test_loading_mid_cell_covers_that_cell(shell: _Shell) -> None:
    from agentlab.notebook.extension import load_ipython_extension

    shell.events.trigger("pre_run_cell", None)  # the cell starts before the extension exists
    load_ipython_extension(shell)
    c = Continuation(provider="openai", api="responses", model="m")
    shell.events.trigger("post_run_cell", None)
    assert c.released


def test_unload_stops_releasing(shell: _Shell) -> None:
    from agentlab.notebook.extension import is_loaded, load_ipython_extension, unload_ipython_extension

    load_ipython_extension(shell)
    assert is_loaded(shell)
    unload_ipython_extension(shell)
    assert not is_loaded(shell)
    made: list[Continuation] = []
    _cell(shell, lambda: made.append(Continuation(provider="openai", api="responses", model="m")))
    assert not made[0].released


def test_cell_end_collapses_panels(shell: _Shell, comm_messages: list[dict[str, Any]]) -> None:
    from agentlab.notebook.extension import load_ipython_extension
    from agentlab.notebook.panel import ReasoningPanel

    load_ipython_extension(shell)
    panels: list[ReasoningPanel] = []

    def body() -> None:
        p = ReasoningPanel("r")
        p.append("SECRET-THOUGHT")
        p.end()
        panels.append(p)

    _cell(shell, body)
    assert panels[0].collapsed and "SECRET-THOUGHT" not in panels[0]._body.value


def test_autoload_outside_ipython_is_a_no_op() -> None:
    from agentlab.notebook.extension import autoload

    # pytest has no running IPython shell: nothing loaded, nothing raised.
    assert autoload() is False
