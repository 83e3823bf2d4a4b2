"""Live views of runs: a run view (step timeline) and a compare view (one column per model).

Views consume agentlab events only (never SDK types), from any thread: ``view.on_event`` is a plain
callable to pass as a run's ``on_event``. State is kept in Python and rendered by the coalescing
flusher (:mod:`agentlab.notebook._coalesce`), which sends the updates of all live views within one
budget for the whole frontend (~16 comm messages per second), so a fast stream, or a comparison of
many columns, costs a bounded number of frontend messages. Reasoning goes to one
:class:`~agentlab.notebook.panel.ReasoningPanel` per step (cleared at cell end); everything else
shown here is portable (tool calls and results, answers, usage, throughput, the timeline strip of
:mod:`agentlab.notebook.timeline_strip`) and may be saved with the notebook.

A displayed view's output is replaced at cell end, once its run is over, by its static final state
(:func:`refresh_displays`: ``text/html`` and ``text/plain``, no widget), so JupyterLab with its
default settings, VS Code, GitHub, nbviewer and nbconvert show how the run ended, without a kernel
and without widget state: not the placeholder of the moment it started, not "model not found".
"""

from __future__ import annotations

import html
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from agentlab.neutral.events import ModelCallCompletedEvent
from agentlab.notebook import _shared as shared
from agentlab.notebook._coalesce import DEFAULT_INTERVAL, forget, gate, mark_dirty, render_now
from agentlab.notebook._compare_column import CompareRun, ModelColumn
from agentlab.notebook._run_state import RunState, _clip, _Step, _step_title, _text, _wrap
from agentlab.notebook.display import PALETTE, UI_FONT
from agentlab.notebook.panel import ReasoningPanel
from agentlab.notebook.timeline_strip import strip_html

__all__ = ["CompareView", "RunView", "refresh_displays", "show_saved", "static_bundle"]

_STATUS_SLACK = 0.5
"""Seconds a run view's status update may wait behind streaming reasoning panels for a message slot."""


_shown: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_shown_lock = threading.Lock()
_held: dict[int, Any] = {}
"""Displayed objects nothing else keeps alive (a sweep's progress bar outlives its sweep only here),
held until the end of their cell; widgets are kept alive by ipywidgets' own registry."""


def show_saved(view: Any) -> Any:
    """Display ``view`` with a display id (so its saved output can be replaced later); returns the handle.

    ``view`` has ``summary_text()`` and, once displayed, ``_display``; its saved output is updated
    at cell end by :func:`refresh_displays` until ``view.finished`` (or, for a run or compare view,
    every run's end).
    """
    from IPython.display import display

    handle = display(view, display_id=True)  # type: ignore[no-untyped-call]
    with _shown_lock:
        _shown[view] = view.summary_text()
        if not isinstance(view, widgets.Widget):
            _held[id(view)] = view
    return handle


def refresh_displays() -> int:
    """Replace the output of every displayed view that finished by its static final state (cell end).

    A view is displayed when its run starts ("importing the SDK…", "waiting, 0 steps"), as a widget
    with ``text/plain`` and ``text/html`` beside it. A frontend renders the widget first, and a
    notebook reopened without its widget state (JupyterLab's default: "Save Widget State
    Automatically" off; or saved after a kernel restart) shows "Error displaying widget: model not
    found" in its place, whatever HTML sits beside it. So at cell end the extension calls this, on
    the kernel's main thread, and a finished view's output is updated (``update_display_data``, which
    JupyterLab, VS Code and nbclient apply) to :func:`static_bundle`: text and HTML only, no widget
    mime type, what every frontend renders without a kernel. A view still running (a task left
    running past its cell) keeps its widget, its saved text brought up to date, until a later cell
    end finds it finished. Returns how many outputs were updated.
    """
    with _shown_lock:
        items = list(_shown.items())
    n = 0
    for view, last in items:
        now = view.summary_text()
        done = _finished(view)
        if view._display is not None and (done or now != last):
            if done:
                view._display.update(static_bundle(view), raw=True)
                _retire(view)
            else:
                view._display.update(view)
            n += 1
        with _shown_lock:
            _held.pop(id(view), None)  # its cell has ended: its saved output is now its last state
            if done:  # final: nothing left to update, stop checking it
                _shown.pop(view, None)
            else:
                _shown[view] = now
    return n


def _retire(view: Any) -> None:
    """A view replaced by its static state: its pending widget updates and live texts are dropped.

    Its widgets are on screen nowhere any more, so the cell-end collapse need not render them.
    """
    if isinstance(view, CompareView):
        for column in view.model_columns:
            column.retire()
        return
    cols = [view] if isinstance(view, RunView) else []
    for col in cols:
        forget(col)
        with col._lock:  # the panels made so far (none is made for a view no longer shown)
            panels = [s.panel for s in col._steps.values() if s.panel is not None]
        for panel in panels:
            panel.retire()


def static_bundle(view: Any) -> dict[str, str]:
    """``view``'s final state as a mimebundle every frontend renders without a kernel or widget state.

    ``text/html`` (``summary_html``: no reasoning, unless the view keeps it) and ``text/plain``
    (``summary_text``), and no ``application/vnd.jupyter.widget-view+json``: a frontend picks the
    widget first when it is there, and without the widget's state it draws an error instead.
    """
    return {"text/plain": view.summary_text(), "text/html": view.summary_html()}


def _finished(view: Any) -> bool:
    done = getattr(view, "finished", None)
    if isinstance(done, bool):
        return done
    cols = view.columns if isinstance(view, CompareView) else [view]
    return all(c._t_end is not None and c.status not in ("running", "waiting") for c in cols)


def _html(value: str) -> widgets.HTML:
    """An ``HTML`` widget on the shared layout and style: one widget model, not three."""
    return widgets.HTML(value=value, layout=shared.layout(), style=shared.html_style())


class _SavedView(widgets.VBox):  # type: ignore[misc]
    """A live view whose saved output (what a notebook keeps beside the widget) is its summary.

    Run and compare views share it: a reader without widgets sees ``summary_text``/``summary_html``.
    """

    _display: Any = None

    def summary_text(self) -> str:
        raise NotImplementedError

    def summary_html(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        data = super()._repr_mimebundle_(**kwargs)
        if isinstance(data, dict):
            data["text/plain"] = self.summary_text()
            data["text/html"] = self.summary_html()
        return data

    def show(self) -> None:
        """Display the view, and keep its saved output current (:func:`refresh_displays`, at cell end)."""
        self._display = show_saved(self)


class RunView(RunState, _SavedView):
    """A run as it happens: header, one section per step (reasoning, text, tool calls), answer, usage.

    ``RunView(title)`` then pass ``view.on_event`` to a run. ``finish()`` (or a ``RunCompletedEvent``)
    renders the final state immediately.
    """

    _header: widgets.HTML
    _steps_box: widgets.VBox
    _timeline: widgets.HTML
    _footer: widgets.HTML

    def __init__(
        self,
        title: str = "",
        *,
        keep_text: bool | None = None,
        flush_interval: float = DEFAULT_INTERVAL,
        compact: bool = False,
        line: bool = False,
    ) -> None:
        self._init_state(title, keep_text, compact)
        self._flush_interval = flush_interval
        self._sync_slack = _STATUS_SLACK
        self._display: Any = None

        self._framed = False  # its own widgets made (_build_frame)
        # A repeat of a compare column: one summary line, shown above its collapsed full view.
        self.line: widgets.HTML | None = _html(_wrap(self.line_html())) if line else None
        # A compact view is a compare column: its layout is set at creation (setting it afterwards
        # would cost a frontend message per trait per column).
        column = {"flex": "1 1 0", "min_width": "260px", "width": "auto"} if compact else {"width": "100%"}
        super().__init__(
            layout=shared.layout(border=f"1px solid {PALETTE['grey']}55", padding="4px", **column),
            _dom_classes=["agentlab-view"],
        )
        # Syncs of these (and of each step's title and tools) are sent by the flusher only, within the
        # frontend's message budget; a step's reasoning panel is a view of its own.
        self._synced: list[widgets.Widget] = []
        if self.line is not None:  # synced by the flusher like the rest: the same message budget
            self._synced.append(gate(self.line))
        if compact:  # its widgets are made later, off the caller's thread (_build_frame); the view's
            self._synced.append(gate(self))  # children are then set within the budget like the rest
        else:
            self._build_frame()

    def _build_frame(self) -> None:
        """Make the view's own widgets (header, steps box, timeline strip, footer), once.

        A compare column's are made at its first render off the runs' threads (the flusher thread,
        as a step's widgets are): a 15-run compare built them on the caller's thread before any run
        started, 60 of the 137 widget models its view opened there, all on the compare's wall time (issue 33,
        item 3). A run view alone makes them at once (it is shown as soon as it is made).
        """
        with self._lock:
            if self._framed:
                return
            self._steps_box = widgets.VBox(layout=shared.layout(width="100%"))
            self._timeline = _html("")
            self._footer = _html("")
            self._header = _html(_wrap(self._render_header()))
            # The step structure comes first in each turn (it is what makes a new step's panel visible).
            # The timeline strip changes only when a step's call or a tool ends.
            first = [self._steps_box, self._header, self._timeline, self._footer]
            self._synced[0:0] = [gate(w) for w in first]
            self.children = [self._header, self._steps_box, self._timeline, self._footer]
            self._framed = True

    # ------------------------------------------------------------------ state hooks

    def _changed(self, *, slack: float | None = None) -> None:
        mark_dirty(self, slack=slack)

    def _render_now(self) -> None:
        render_now(self)

    def _call_progress(self, st: _Step) -> None:
        if st.panel is not None:  # else its widgets, when made, start from the call so far
            st.panel.show_call(st.call)

    def _call_ended(self, st: _Step, event: ModelCallCompletedEvent) -> None:
        if st.panel is not None:  # else made later, from the completed call
            st.panel.set_usage(event.usage)
            st.panel.end(event.stop_reason)

    def _steps_ended(self, steps: list[_Step]) -> None:
        for st in steps:
            if not st.done and st.panel is not None:
                st.panel.end(self._status)

    def _build_steps(self) -> None:
        """Make the widgets of the steps that have none yet, each starting from its call so far.

        Not on the run's own thread (see :meth:`_flush`): a step's widgets are 8 widget models, each
        a comm opened, and the run's loop, in a compare every run's, is what the run's timings are
        measured on. The flusher thread (or the cell end, or :attr:`panels`) makes them instead.
        """
        with self._lock:
            self._build_frame()
            new = [st for st in self._steps.values() if st.panel is None]
            for st in new:
                panel = ReasoningPanel(f"Reasoning · step {st.number}", keep_text=self._keep_text)
                st.title = gate(_html(_wrap(_step_title(st.number))))
                st.tools_html = gate(_html(""))
                st.box = widgets.VBox(
                    children=[st.title, panel, st.tools_html],
                    layout=shared.layout(width="100%", margin="2px 0 2px 0"),
                )
                st.panel = panel
                at = self._synced.index(self._footer)
                self._synced[at:at] = [st.title, st.tools_html]  # before the footer
                panel.show_call(st.call)
                if st.done:
                    panel.set_usage(st.call.usage)
                    panel.end(st.call.stop_reason or "")
                elif self._t_end is not None and self._status not in ("running", "waiting"):
                    panel.end(self._status)
            if new:
                self._steps_box.children = [s.box for _, s in sorted(self._steps.items())]

    def _flush(self) -> None:
        with self._lock:  # held while setting traits, so flushes from two threads cannot land out of order
            if threading.current_thread() not in self._feeders:
                self._build_steps()
            elif not self._framed or any(st.panel is None for st in self._steps.values()):
                mark_dirty(self)  # a render on the flusher thread makes them (a run's end renders here)
            header = self._render_header()
            steps = [(st, self._render_step_title(st), self._render_tools(st)) for st in self._steps.values()]
            footer = self._render_footer()
            timeline = strip_html(self._timeline_rows())
            pairs = (
                [(self._header, header), (self._timeline, timeline), (self._footer, footer)]
                if self._framed
                else []
            )
            if self.line is not None:
                pairs.append((self.line, self.line_html()))
            for w, v in pairs + [
                pair
                for st, title, tools in steps
                if st.title is not None and st.tools_html is not None
                for pair in ((st.title, title), (st.tools_html, tools))
            ]:
                v = _wrap(v)
                if w.value != v:
                    w.value = v

    # ------------------------------------------------------------------ reading back

    @property
    def panels(self) -> list[ReasoningPanel]:
        """The reasoning panel of every step so far, in step order (a snapshot; steps may still be added)."""
        self._build_steps()
        with self._lock:
            return [s.panel for _, s in sorted(self._steps.items()) if s.panel is not None]

    def __repr__(self) -> str:
        return f"<RunView {self.title!r} {self._status}, {len(self._steps)} steps>"


class CompareView(_SavedView):
    """Several runs side by side, one column per model, streaming concurrently.

    A model's column (:class:`~agentlab.notebook._compare_column.ModelColumn`) is an HTML widget
    the flusher re-renders, and one live text streaming its runs' reasoning: a few widget models per
    column, whatever the runs do, none on the runs' loop. With ``repeats=N`` the column holds its N
    runs compactly: one summary line per repeat (status, steps, tokens, cost, time), each above its
    full run view folded in a ``<details>``, so five models by three repeats read as five columns,
    not fifteen full views. ``columns`` is one run (its events in, its state) per run, model by model
    (``labels`` the models); ``model_columns`` the widgets, one per model.
    """

    def __init__(
        self,
        titles: Sequence[str],
        *,
        task: str | None = None,
        keep_text: bool | None = None,
        repeats: int = 1,
    ) -> None:
        self.labels = list(titles)
        self.repeats = repeats
        grouped = repeats > 1
        self.model_columns = [
            ModelColumn(
                t,
                [f"r{k + 1}" for k in range(repeats)] if grouped else [t],
                keep_text=keep_text,
                grouped=grouped,
            )
            for t in titles
        ]
        self.columns: list[CompareRun] = [r for c in self.model_columns for r in c.runs]
        # Shared layouts and styles (one model per distinct value, see ``_shared``): made on the
        # caller's thread before any run starts, every model is on the compare's wall time.
        head = _html(
            f'<div style="font-size:13px;{UI_FONT}"><b>Compare</b> · {html.escape(self.shape)}'
            + (f" · task: {html.escape(_clip(task, 200))}" if task else "")
            + "</div>"
        )
        row = widgets.HBox(
            children=self.model_columns,
            # Columns share the width (at least 260 px each) and wrap onto a new row when the page is
            # too narrow for all of them (three providers on a laptop screen), instead of overflowing.
            layout=shared.layout(width="100%", align_items="flex-start", flex_flow="row wrap"),
        )
        self._display: Any = None
        super().__init__(
            children=[head, row], layout=shared.layout(width="100%"), _dom_classes=["agentlab-view"]
        )

    @property
    def shape(self) -> str:
        """``5 models × 3 repeats`` (or ``2 models``): what the header says."""
        n = len(self.labels)
        models = f"{n} model{'s' if n != 1 else ''}"
        return models if self.repeats == 1 else f"{models} × {self.repeats} repeats"

    def _runs_of(self, i: int) -> list[CompareRun]:
        return self.model_columns[i].runs

    def __repr__(self) -> str:
        return f"<CompareView {self.labels}{f' x{self.repeats}' if self.repeats > 1 else ''}>"

    def summary_text(self) -> str:
        """Every column's final state as plain text (no reasoning); a repeat is its summary line."""
        if self.repeats == 1:
            return "\n".join(c.summary_text() for c in self.columns)
        lines = [f"Compare · {self.shape}"]
        for i, label in enumerate(self.labels):
            lines.append(label)
            lines += ["  " + _text(v.line_html()) for v in self._runs_of(i)]
        return "\n".join(lines)

    def summary_html(self) -> str:
        """The columns' collapsed views side by side, as static HTML (no reasoning).

        With repeats: one column per model, a line per repeat over its run view in a closed
        ``<details>`` (expandable without a kernel, on GitHub or in nbconvert's HTML).
        """
        if self.repeats == 1:
            cols = "".join(c.summary_html() for c in self.columns)
        else:
            cols = "".join(self._model_html(i, label) for i, label in enumerate(self.labels))
        head = f'<div style="font-size:13px;{UI_FONT}"><b>Compare</b> · {html.escape(self.shape)}</div>'
        return (
            f'<div class="agentlab-compare">{head}<div class="agentlab-row" style="display:flex;'
            f'flex-flow:row wrap;gap:4px;width:100%">{cols}</div></div>'
        )

    def _model_html(self, i: int, label: str) -> str:
        runs = "".join(
            f"{v.line_html()}<details><summary style='font-size:11px;opacity:0.75'>{html.escape(v.title)}: "
            f"full run view</summary>{v.summary_html()}</details>"
            for v in self._runs_of(i)
        )
        return (
            f'<div style="{UI_FONT};border:1px solid {PALETTE["grey"]}55;padding:4px;box-sizing:border-box;'
            f'flex:1 1 0;min-width:260px"><div style="font-size:13px"><b>{html.escape(label)}</b></div>'
            f"{runs}</div>"
        )

    @property
    def panels(self) -> list[ReasoningPanel]:
        """None: a compare streams each column's reasoning in one live text, not in per-step panels."""
        return []
