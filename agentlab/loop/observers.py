"""Run observers: integrations that follow *every* run, including those ``compare()`` and ``sweep()`` build.

A user's ``on_event`` or ``Run.subscribe`` reaches one run they hold. Tracing (``agentlab.telemetry``)
must see runs the user never holds (a comparison's columns, a sweep's jobs), so core keeps this small
registry: each observer is called with every ``Run`` at construction and may ``run.subscribe(...)``.

An observer may return a *closer*, a function of no argument that the run calls once its loop has
ended, on every exit, after its closing records. It is the one signal that does not depend on a
record being delivered: when the event log refuses the closing records (a full disk), no subscriber
gets them, and the closer is how a trace still ends its spans.

Core imports no integration. Two ways in, both from outside:

- :func:`add_run_observer` registers a function now (``agentlab.telemetry.instrument()`` does);
- :func:`observe_when` declares "once module ``trigger`` is loaded, ask ``target``
  (``"module:attribute"``, a function of the run)". The facade declares the OpenTelemetry one
  (``opentelemetry.trace`` -> ``agentlab.telemetry``), so a user who configured a tracer provider gets
  traces without a call, and a script that never imported OpenTelemetry pays one dict lookup per run.

``AGENTLAB_OTEL=0`` in the environment turns every observer off (read at each run, so a notebook can
flip it without a restart). An observer that raises is logged and skipped: watching a run must never
break it.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentlab.loop.runner import Run

__all__ = [
    "Closer",
    "RunObserver",
    "add_run_observer",
    "notify_run_created",
    "notify_run_ended",
    "observe_when",
    "observers_disabled",
]

log = logging.getLogger(__name__)

Closer = Callable[[], Any]
RunObserver = Callable[["Run"], Closer | None]

_observers: tuple[RunObserver, ...] = ()
_declared: list[tuple[str, str]] = []
_OFF = frozenset({"0", "false", "no", "off"})


def observers_disabled() -> bool:
    """Whether ``AGENTLAB_OTEL`` turns observers off (``0``/``false``/``no``/``off``)."""
    return os.environ.get("AGENTLAB_OTEL", "").strip().lower() in _OFF


def add_run_observer(observer: RunObserver) -> Callable[[], None]:
    """Call ``observer`` with every ``Run`` created from now on; returns a function that removes it."""
    global _observers
    _observers = (*_observers, observer)

    def remove() -> None:
        global _observers
        _observers = tuple(o for o in _observers if o is not observer)

    return remove


def observe_when(trigger: str, target: str) -> None:
    """Once module ``trigger`` is loaded, call ``target`` (``"module:attr"``) with each new run."""
    if (trigger, target) not in _declared:
        _declared.append((trigger, target))


def _call(observer: RunObserver, run: Run) -> Closer | None:
    try:
        closer = observer(run)
    except Exception:
        log.warning("run observer %r failed on run %s; the run goes on", observer, run.run_id, exc_info=True)
        return None
    return closer if callable(closer) else None


def notify_run_created(run: Run) -> tuple[Closer, ...]:
    """Every ``Run`` at construction: hand it to each registered and each triggered observer.

    Returns the closers they gave back, for :func:`notify_run_ended` when the run's loop ends.
    """
    if observers_disabled():
        return ()
    found: list[RunObserver] = list(_observers)
    for trigger, target in _declared:
        if trigger in sys.modules:  # a dict lookup: nothing is imported for a module nobody loaded
            module, _, attr = target.partition(":")
            try:
                found.append(getattr(importlib.import_module(module), attr))
            except Exception:
                log.warning("run observer %s could not be loaded", target, exc_info=True)
    closers = (_call(observer, run) for observer in found)
    return tuple(c for c in closers if c is not None)


def notify_run_ended(closers: tuple[Closer, ...]) -> None:
    """A run's loop ended (any exit): call each closer its observers returned; none may raise."""
    for closer in closers:
        try:
            closer()
        except Exception:
            log.warning("run observer closer %r failed", closer, exc_info=True)
