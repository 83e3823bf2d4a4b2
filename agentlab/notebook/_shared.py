"""Layout and style models shared by every view: one comm each, not one per widget.

An ``ipywidgets`` DOM widget gets a ``Layout`` (and a ``HTML`` its ``HTMLStyle``) of its own unless
given one: each a widget model of its own, with its comm and its ``comm_open`` message. A run view's
step (its title, tools line, box and reasoning panel) made about 17 models, 7 of them layouts and
styles that never change; built on the run's event path, they cost the runs being timed (issue 33,
item 3: a 15-run compare took 2.31 s with the view, 0.63 s without). A layout model may be shared
by any number of widgets (each view of it applies the same CSS), so views share one per distinct
value, and creating a widget costs about a third as much. Never set a trait of a shared model: it
would change every widget using it.
"""

from __future__ import annotations

import threading
from typing import Any

import ipywidgets as widgets

__all__ = ["html_style", "layout", "toggle_style"]

_cache: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}
_lock = threading.Lock()


def _get(kind: str, make: Any, kw: dict[str, str]) -> Any:
    key = (kind, tuple(sorted(kw.items())))
    with _lock:
        model = _cache.get(key)
        if model is None or getattr(model, "comm", None) is None:  # closed (Widget.close_all): anew
            model = make(**kw)
            _cache[key] = model
        return model


def layout(**kw: str) -> widgets.Layout:
    """The shared ``Layout`` with these values (created once per kernel, again if it was closed)."""
    model: widgets.Layout = _get("layout", widgets.Layout, kw)
    return model


def html_style() -> Any:
    """The shared default ``HTMLStyle`` of ``HTML`` widgets."""
    from ipywidgets.widgets.widget_string import HTMLStyle

    return _get("html_style", HTMLStyle, {})


def toggle_style() -> Any:
    """The shared default ``ToggleButtonStyle`` of ``ToggleButton`` widgets."""
    from ipywidgets.widgets.widget_bool import ToggleButtonStyle

    return _get("toggle_style", ToggleButtonStyle, {})
