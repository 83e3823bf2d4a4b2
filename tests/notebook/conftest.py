"""Fixtures for the notebook layer: a headless matplotlib and a comm that counts frontend messages."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
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
    source = (Path(__file__).resolve().parents[2] / "notebooks" / "01_quickstart.ipynb").read_text()
    lines = [ln.strip() for text in _quickstart_reasoning() for ln in text.splitlines()]
    out = [ln for ln in lines if len(ln) >= 40 and ln not in source and '"' not in ln and "\\" not in ln]
    assert len(out) >= 3, f"too few canary lines in the simulated reasoning: {lines}"
    return out


# Fixed phrases the simulator's planner (agentlab/sim/reasoner.py) writes into reasoning text, whatever
# the task: every step's reasoning opens with "The user asks:", and the others appear by effort level
# or situation. Summaries (OpenAI) start with the same first sentences. None is in any notebook source.
_FIXED_MARKERS = (
    "The user asks:",
    "I do not have my earlier reasoning for this task in context",
    "There is nothing to look up or compute here",
    "I would need a tool to look up",
)


def generic_reasoning_markers() -> list[str]:
    """Task-independent markers of simulated reasoning: the fixed phrases and the verification openers."""
    import inspect

    from agentlab.sim import reasoner

    source = inspect.getsource(reasoner)
    stale = [m for m in _FIXED_MARKERS if m not in source]
    assert not stale, f"reasoner.py no longer writes {stale}: update the markers"
    sep = "\x00"
    openers = [v.split(sep)[0].rstrip() for v in reasoner._verification(6, sep)]
    assert len(openers) == 6 and all(len(o) >= 20 for o in openers), openers
    return [*_FIXED_MARKERS, *openers]


@pytest.fixture(scope="session")
def reasoning_markers() -> list[str]:
    """Markers that every simulated reasoning text contains (at least "The user asks:").

    Checked against the real stream of the quickstart's run, so an absent marker means absent reasoning.
    """
    markers = generic_reasoning_markers()
    steps = _quickstart_reasoning()
    assert steps and all(s.startswith(markers[0]) for s in steps), steps
    assert any(m in s for s in steps for m in markers[4:]), "no verification paragraph at default effort"
    return markers


@pytest.fixture(scope="session")
def reasoning_needles(quickstart_canaries: list[str], reasoning_markers: list[str]) -> list[str]:
    """Everything that betrays saved reasoning: the generic markers and the quickstart's own lines."""
    return [*reasoning_markers, *quickstart_canaries]


def saved_text(path: Path) -> str:
    """The text a reader of ``path`` could see: HTML-unescaped, and for ``.ipynb`` every JSON string too.

    Decoding the JSON catches text that escaping would hide (``\\u2019``, ``\\n`` inside a line), and
    covers the outputs and the saved widget state (``metadata.widgets``) alike.
    """
    import html
    import json

    raw = path.read_text(encoding="utf-8")
    parts = [raw]
    if path.suffix == ".ipynb":

        def strings(node: Any) -> Iterator[str]:
            if isinstance(node, str):
                yield node
            elif isinstance(node, list):
                if all(isinstance(x, str) for x in node):
                    yield "".join(node)  # multi-line sources and outputs are stored as line lists
                else:
                    for x in node:
                        yield from strings(x)
            elif isinstance(node, dict):
                for v in node.values():
                    yield from strings(v)

        parts += list(strings(json.loads(raw)))
    return html.unescape("\n".join(parts))


def widget_state_text(path: Path) -> str:
    """The saved widget state of a notebook (what nbclient/JupyterLab stored), as text; "" when none."""
    import json

    nb = json.loads(path.read_text(encoding="utf-8"))
    state = nb.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json")
    return json.dumps(state, ensure_ascii=False) if state else ""


@pytest.fixture(scope="session")
def find_reasoning(reasoning_needles: list[str]) -> Callable[[Path | str], list[str]]:
    """``find_reasoning(path_or_text)``: the reasoning needles found in a saved file (or a DOM dump)."""
    import html

    def scan(where: Path | str) -> list[str]:
        text = saved_text(where) if isinstance(where, Path) else html.unescape(where)
        return [n for n in reasoning_needles if n in text]

    return scan
