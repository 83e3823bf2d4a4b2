"""A widget that shows text the page is sent by custom messages, so no save can keep the text.

A notebook save keeps the widget state (JupyterLab writes the frontend's copy of every live model;
nbclient keeps every state the kernel ever sent) and the cell outputs. Text set as a trait (an
``HTML`` value, an ``Output``'s outputs) is in both as soon as it is on screen. A custom message
(``Widget.send``) is neither: the frontend hands it to the model's views, and nothing stores it. So
reasoning is shown through :class:`LiveText`: an anywidget whose only synced traits are its (text-free)
code, and whose view draws each snapshot it receives into a DOM node it owns, with ``textContent``
(never parsed as HTML). The view keeps the last snapshot in JavaScript memory, not in the model; a
view that has none yet (a second view, a reload while the kernel lives) asks the kernel for it.

Closed, it turns itself into an empty standard ``HTML`` model first: nbclient's stored widget state
keeps closed models, and the static HTML widget manager (nbconvert's HTML, the report) must be able
to load every model of that state, which it cannot for a module it does not know.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets
from ipywidgets import HTML, DOMWidget  # at import: a close() from __del__ at interpreter exit cannot import

__all__ = ["LiveText", "Snapshot"]

Snapshot = dict[str, Any]
"""``{"type": "snapshot", "meta": str, "text": str, "streaming": bool}``: what the view draws."""

TEXT_STYLE = (
    "font-family:var(--jp-code-font-family,monospace);font-size:12px;line-height:1.35;"
    "white-space:pre-wrap;word-break:break-word;overflow-y:auto;margin:2px 0 0 0;"
    "padding:4px 6px;border-left:3px solid #0072B2;background:rgba(0,114,178,0.06);color:inherit"
)

_ESM = """
const latest = new WeakMap();
const TEXT_STYLE = __TEXT_STYLE__;
const FOLLOW_SLACK = 8;  // px from the bottom that still count as "at the bottom"

function isSnapshot(msg) {
  return msg && msg.type === "snapshot" && typeof msg.text === "string";
}

export default {
  initialize({ model }) {
    model.on("msg:custom", (msg) => { if (isSnapshot(msg)) latest.set(model, msg); });
  },
  render({ model, el }) {
    const meta = document.createElement("div");
    meta.style.cssText = "font-size:11px;opacity:0.7";
    const pre = document.createElement("pre");
    el.append(meta, pre);
    // Follow the tail like a terminal: a redraw while streaming keeps the text at the bottom if it
    // was at the bottom; if the user scrolled up, their position survives every redraw; scrolling
    // back to the bottom resumes following. (Read from the position itself, not from scroll events,
    // which may arrive after the next redraw.)
    const draw = () => {
      const s = latest.get(model);
      if (!s) return;
      const top = pre.scrollTop;
      const follow = top + pre.clientHeight >= pre.scrollHeight - FOLLOW_SLACK;
      meta.textContent = s.meta || "";
      meta.style.display = s.meta ? "" : "none";
      pre.textContent = s.text;
      pre.style.cssText = TEXT_STYLE + ";max-height:" + (s.streaming ? "14em" : "30em");
      pre.style.display = s.text ? "" : "none";
      pre.scrollTop = s.streaming && follow ? pre.scrollHeight : top;
    };
    const onMsg = (msg) => { if (isSnapshot(msg)) { latest.set(model, msg); draw(); } };
    model.on("msg:custom", onMsg);
    if (latest.has(model)) draw(); else model.send({ type: "ready" });
    return () => model.off("msg:custom", onMsg);
  },
};
""".replace("__TEXT_STYLE__", json.dumps(TEXT_STYLE))


class LiveText(anywidget.AnyWidget):
    """Shows the snapshots a source gives; its synced state is code only, never the text.

    ``source()`` returns the current snapshot (called when a view asks for it). :meth:`push` queues a
    snapshot for the coalescing flusher (``agentlab.notebook._coalesce``), which sends it as one
    custom message within the frontend's message budget.
    """

    # Declared as synced traits of the class, with the values ``AnyWidget.__init__`` would give them:
    # that initializer adds them to a new subclass made for each instance (traitlets' ``add_traits``,
    # ~1 ms a widget), and a compare makes a live text per column while its runs stream.
    _esm = traitlets.Unicode(_ESM).tag(sync=True)
    _anywidget_id = traitlets.Unicode(f"{__name__}.LiveText").tag(sync=True)

    def __init__(self, source: Callable[[], Snapshot]) -> None:
        DOMWidget.__init__(self)  # AnyWidget's own adds nothing these declarations do not
        self._source = source
        self._custom_lock = threading.Lock()
        self._custom_pending: Snapshot | None = None
        self.on_msg(self._on_frontend)

    def push(self, snapshot: Snapshot) -> None:
        """Queue ``snapshot`` (replacing any queued one: each snapshot is the whole current state)."""
        with self._custom_lock:
            self._custom_pending = snapshot

    def take_pending(self) -> Snapshot | None:
        """The queued snapshot, if any, now removed from the queue (for the flusher)."""
        with self._custom_lock:
            snap, self._custom_pending = self._custom_pending, None
        return snap

    def _on_frontend(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "ready" and self.comm is not None:
            self.send(self._source())

    def close(self) -> None:
        """Close, leaving behind (in stored widget state) an empty standard ``HTML`` model."""
        if self.comm is not None:
            traits = HTML.class_traits()
            keys = ["_model_module", "_model_module_version", "_model_name", "_view_module"]
            keys += ["_view_module_version", "_view_name"]
            state: dict[str, Any] = {k: traits[k].default_value for k in keys}
            state["value"] = ""
            self.comm.send({"method": "update", "state": state, "buffer_paths": []})
        layout = self.layout
        super().close()
        layout.close()

    def __repr__(self) -> str:
        return "<LiveText>"
