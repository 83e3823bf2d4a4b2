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

    def __init__(
        self, sink: list[dict[str, Any]], opened: list[CountingComm] | None = None, **kwargs: Any
    ) -> None:
        self.comm_id = f"comm-{next(_ids)}"
        self.kernel = object()
        self.sink = sink
        self.open_data = kwargs.get("data")
        self.closed = False
        if opened is not None:
            opened.append(self)

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        self.sink.append({"comm_id": self.comm_id, "data": data})

    def on_msg(self, callback: Any) -> None:
        pass

    def on_close(self, callback: Any) -> None:
        pass

    def close(self, *args: Any, **kwargs: Any) -> None:
        self.closed = True


class Frontend:
    """What a frontend's widget manager holds, replayed from the comm traffic of the kernel's widgets.

    JupyterLab's "Save Widget State" writes the frontend's copy of every live model's state: the state
    each comm opened with, updated by every ``update``/``echo_update`` message since and by what the user
    changed in the page, for the models whose comm is still open. Custom messages (``Widget.send``)
    change no model state: they are kept apart, in :attr:`custom`.
    """

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.comms: list[CountingComm] = []
        self.user: dict[str, dict[str, Any]] = {}

    def stored_by_nbclient(self) -> dict[str, dict[str, Any]]:
        """Comm id -> state as nbclient's ``store_widget_state`` keeps it: closed models included."""
        state: dict[str, dict[str, Any]] = {}
        for c in self.comms:
            state[c.comm_id] = dict((c.open_data or {}).get("state") or {})
        for m in self.messages:
            data = m["data"]
            if isinstance(data, dict) and "state" in data and m["comm_id"] in state:
                state[m["comm_id"]].update(data["state"])
        return state

    def models(self) -> dict[str, dict[str, Any]]:
        """Comm id -> the frontend's state of that model, for every model not closed."""
        state: dict[str, dict[str, Any]] = {}
        for c in self.comms:
            state[c.comm_id] = dict((c.open_data or {}).get("state") or {})
        for m in self.messages:
            data = m["data"]
            if (
                isinstance(data, dict)
                and data.get("method") in ("update", "echo_update")
                and m["comm_id"] in state
            ):
                state[m["comm_id"]].update(data.get("state") or {})
        for comm_id, changed in self.user.items():
            if comm_id in state:
                state[comm_id].update(changed)
        closed = {c.comm_id for c in self.comms if c.closed}
        return {k: v for k, v in state.items() if k not in closed}

    def saved_state(self) -> str:
        """The widget state a save would write now (JupyterLab's format), as JSON text."""
        import json

        return json.dumps(
            {
                "version_major": 2,
                "version_minor": 0,
                "state": {k: {"state": v} for k, v in self.models().items()},
            },
            ensure_ascii=False,
        )

    def every_state_ever_sent(self) -> str:
        """Every state the kernel ever sent (nbclient's ``store_widget_state`` keeps closed models too)."""
        import json

        opens = [(c.open_data or {}).get("state") for c in self.comms]
        updates = [m["data"].get("state") for m in self.messages if isinstance(m["data"], dict)]
        return json.dumps([s for s in opens + updates if s], ensure_ascii=False)

    def custom(self) -> list[Any]:
        """The custom messages sent to the frontend (not part of any model state)."""
        return [
            m["data"]["content"]
            for m in self.messages
            if isinstance(m["data"], dict) and m["data"].get("method") == "custom"
        ]

    def set(self, widget: Any, **state: Any) -> None:
        """The user changes ``widget`` in the page: the frontend model changes, then tells the kernel."""
        self.user.setdefault(widget.comm.comm_id, {}).update(state)
        widget._handle_msg({"content": {"data": {"method": "update", "state": state}}, "buffers": []})

    def send(self, widget: Any, content: Any) -> None:
        """The frontend's view sends a custom message to ``widget`` (``model.send`` in JS)."""
        widget._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})


@pytest.fixture
def frontend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Frontend]:
    """A frontend replayed from the comm traffic of the widgets created in the test."""
    from ipywidgets.widgets import widget

    fe = Frontend()
    monkeypatch.setattr(
        widget.comm, "create_comm", lambda *a, **kw: CountingComm(fe.messages, fe.comms, **kw)
    )
    yield fe


@pytest.fixture
def comm_messages(frontend: Frontend) -> list[dict[str, Any]]:
    """Every comm message widgets created in the test send, in order (``data`` as sent)."""
    return frontend.messages


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


def _build_two_kernels_at_a_time(builds: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``build_report(**kw)`` for each of ``builds``, every notebook executed ahead, two at a time.

    Why: one kernel runs one notebook on one core, so building the reports one notebook after another
    (as ``build_report`` does) left the second core idle for the suite's slowest setup (76 s on a quiet
    2-core machine). ``build_report`` itself still writes and exports every page; only its
    ``_execute`` is handed the notebook that already ran (or is running) in the pool.
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    from agentlab.notebook import report as nbreport

    real = nbreport._execute

    def execute(src: Path, env: dict[str, str], timeout: int) -> Any:
        try:
            return real(src, env, timeout)
        finally:  # nbclient made this thread an event loop (jupyter_core's run_sync): close it here
            from jupyter_core.utils import ensure_event_loop

            loop = ensure_event_loop()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    src_dir = Path(__file__).resolve().parents[2] / "notebooks"
    ahead: dict[tuple[str, str], Future[Any]] = {}
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="notebook")
    try:
        for kw in builds.values():
            env = nbreport._kernel_env(bool(kw.get("keep_reasoning")))
            for name in kw.get("names") or sorted(p.stem for p in src_dir.glob("*.ipynb")):
                src = src_dir / f"{name}.ipynb"
                ahead[(str(src), env["AGENTLAB_KEEP_REASONING"])] = pool.submit(execute, src, env, 180)

        def executed(src: Path, env: dict[str, str], timeout: int) -> Any:
            done = ahead.pop((str(src), env["AGENTLAB_KEEP_REASONING"]), None)
            return done.result() if done is not None else real(src, env, timeout)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(nbreport, "_execute", executed)
            return {key: nbreport.build_report(**kw) for key, kw in builds.items()}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="session")
def shipped_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every shipped notebook's report (``"default"``) and the quickstart's kept one (``"keep"``).

    ``"default"`` is built as ``make demo`` builds it, but into a temp dir: its notebooks run ahead,
    two at a time, so the index's "executed in" times are waits, which must not land in ``out/report``
    where ``make demo`` puts a report people read; ``"keep"`` has the keep option on. Built once per
    session: ``test_browser.py`` renders both in Chromium and ``test_report_three_providers.py`` reads
    the compare page without a browser. Offline: the widget JS comes from the cache or is left out
    (``fetch_assets=False``).
    """
    keep_dir = tmp_path_factory.mktemp("keep")
    return _build_two_kernels_at_a_time(
        {
            "default": {"out_dir": tmp_path_factory.mktemp("report"), "fetch_assets": False},
            "keep": {
                "out_dir": keep_dir,
                "names": ["01_quickstart"],
                "keep_reasoning": True,
                "fetch_assets": False,
            },
        }
    )


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
    from agentlab.neutral.events import ReasoningDeltaEvent

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
    r"""The text a reader of ``path`` could see: HTML-unescaped, and for ``.ipynb`` every JSON string too.

    Decoding the JSON catches text that escaping would hide (``\u2019``, ``\n`` inside a line), and
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
