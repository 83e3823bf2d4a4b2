"""Fixtures for the notebook layer: a headless matplotlib and a comm that counts frontend messages."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

_ids = itertools.count()


class CountingComm:
    """Stands in for a kernel comm: records every message a widget would send to the frontend."""

    def __init__(self, sink: list[dict[str, Any]], **kwargs: Any) -> None:
        self.comm_id = f"comm-{next(_ids)}"
        self.kernel = object()
        self.sink = sink
        self.open_data = kwargs.get("data")

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        self.sink.append({"comm_id": self.comm_id, "data": data})

    def on_msg(self, callback: Any) -> None:
        pass

    def on_close(self, callback: Any) -> None:
        pass

    def close(self, *args: Any, **kwargs: Any) -> None:
        pass


@pytest.fixture
def comm_messages(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Every comm message widgets created in the test send, in order (``data`` as sent)."""
    from ipywidgets.widgets import widget

    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(widget.comm, "create_comm", lambda *a, **kw: CountingComm(sent, **kw))
    yield sent


@pytest.fixture(autouse=True)
def _agg_backend() -> Iterator[None]:
    import matplotlib

    matplotlib.use("Agg", force=True)
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def synced_text(messages: list[dict[str, Any]]) -> str:
    """All state the widgets ever synced, as one string (what a saved notebook could hold)."""
    import json

    return "\n".join(json.dumps(m["data"], ensure_ascii=False) for m in messages)


@pytest.fixture(scope="session", autouse=True)
def _close_widgets() -> Iterator[None]:
    """Close widgets before interpreter teardown (ipywidgets' ``__del__`` is noisy at exit)."""
    yield
    import sys

    if "ipywidgets" in sys.modules:
        import ipywidgets

        ipywidgets.Widget.close_all()


def _quickstart_reasoning() -> list[str]:
    """The reasoning text of each step of the quickstart's first run (the simulator is deterministic)."""
    import agentlab
    from agentlab.events import ReasoningDeltaEvent

    weather = {"Paris": "24 C, sunny", "Rome": "21 C, cloudy", "Oslo": "9 C, rain", "Florence": "23 C, clear"}

    @agentlab.tool
    def get_weather(city: str) -> str:
        """Current weather for a city (a fixed table, so every run sees the same facts)."""
        name = city.split(",")[0].strip()
        return f"{name}: {weather[name]}" if name in weather else f"{name}: no data"

    steps: dict[int, list[str]] = {}
    agentlab.run(
        "anthropic:sim-thinker",
        "Is it warmer in Paris or Rome?",
        tools=[get_weather],
        on_event=lambda e: (
            steps.setdefault(e.step or 0, []).append(e.text) if isinstance(e, ReasoningDeltaEvent) else None
        ),
    )
    return ["".join(parts) for _, parts in sorted(steps.items())]


@pytest.fixture(scope="session")
def quickstart_canaries() -> list[str]:
    """Reasoning lines of the quickstart's first run: long enough to be unmistakable, not in its source.

    The real reasoning the simulated model streams, so "no canary in the file" means "no reasoning".
    """
    from pathlib import Path

    source = (Path(__file__).resolve().parents[2] / "notebooks" / "01_quickstart.ipynb").read_text()
    lines = [ln.strip() for text in _quickstart_reasoning() for ln in text.splitlines()]
    out = [ln for ln in lines if len(ln) >= 40 and ln not in source and '"' not in ln and "\\" not in ln]
    assert len(out) >= 3, f"too few canary lines in the simulated reasoning: {lines}"
    return out
