"""Where agentlab meets a live Jupyter kernel: detect it, display views, hook a run into a view.

Kept apart from the views so that the hook-up (``agentlab.notebook.hookup``, which core reaches only
through ``agentlab.frontend``) can ask "am I in a kernel that shows widgets?" without importing
ipywidgets when it is not.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from agentlab.notebook.kernel import in_kernel

if TYPE_CHECKING:
    from agentlab.notebook.run_view import RunView

__all__ = ["display", "in_kernel", "live_run_view", "sdk_note"]


def display(obj: Any) -> None:
    """IPython's ``display`` (imported late: only called when :func:`in_kernel` is true)."""
    from IPython.display import display as _display

    _display(obj)  # type: ignore[no-untyped-call]


def sdk_note(run: Any) -> str | None:
    """A note, "importing the <provider> SDK…", when this run's first call will pay for that import.

    The SDK imports take seconds in a fresh kernel (measured: anthropic ~2.8 s, openai ~1.3 s);
    saying so keeps a silent first cell from looking hung.
    """
    from agentlab.adapters.registry import find_provider

    provider = getattr(getattr(run, "ref", None), "provider", None)
    spec = find_provider(provider) if isinstance(provider, str) else None
    if spec is None or getattr(run, "adapter", None) is not None:
        return None
    sdk = spec.sdk_module  # the provider's spec names the module its adapter imports
    if sdk is None or sdk in sys.modules:
        return None
    return f"importing the {sdk} SDK (first call in this kernel)…"


def live_run_view(run: Any, *, title: str | None = None) -> RunView | None:
    """In a kernel: display a :class:`RunView` for ``run``, subscribed to its events (``Run.subscribe``).

    Returns the view, or None outside a kernel (nothing imported, nothing shown). Also loads the
    cell-scope extension, so the run's continuation cannot outlive the cell.
    """
    from agentlab.notebook.extension import autoload

    autoload()
    if not in_kernel():
        return None
    from agentlab.notebook.run_view import RunView

    view = RunView(title or f"{run.ref}")
    note = sdk_note(run)
    if note:
        view.set_status(note)
    run.subscribe(view.on_event)
    view.show()  # displayed with an id: its saved output is replaced by the final state at cell end
    return view
