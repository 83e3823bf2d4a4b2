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
