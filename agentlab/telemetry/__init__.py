"""OpenTelemetry traces of agentlab runs, following the GenAI semantic conventions; private by construction.

Off by default. On when:

- :func:`instrument` was called (with a ``TracerProvider``, or the global one), or
- the user configured a real global tracer provider (``trace.set_tracer_provider(...)``): then every
  run is traced without a call, content off. A ``ProxyTracerProvider`` with nothing behind it or a
  ``NoOpTracerProvider`` counts as not configured.

``AGENTLAB_OTEL=0`` in the environment turns both off.

Only ``opentelemetry-api`` is needed here (the ``otel`` extra); the SDK and the exporter are the
user's choice. What a span carries is listed in README "Traces (OpenTelemetry)"; in short: names,
models, ids, finish reasons, token buckets, cost and timings always; message text, tool arguments
and tool results only with ``include_content=True``; reasoning text, opaque provider payloads
(signatures, ``encrypted_content``) and API keys never, whatever the setting: the spans are built
from durable records only (:mod:`agentlab.telemetry.spans`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentlab.errors import MissingExtraError

try:
    from opentelemetry import trace
except ImportError as e:  # pragma: no cover - the otel extra is in dev; this is the user's message
    raise MissingExtraError("agentlab.telemetry", "opentelemetry-api", "otel") from e

from agentlab.loop.observers import add_run_observer
from agentlab.telemetry.spans import RunSpans

if TYPE_CHECKING:
    from agentlab.loop.runner import Run

__all__ = ["RunSpans", "instrument", "is_instrumented", "observe_if_configured", "uninstrument"]

TRACER_NAME = "agentlab"


@dataclass(frozen=True)
class _Instrumented:
    provider: trace.TracerProvider | None
    include_content: bool
    remove: Callable[[], None]


_active: _Instrumented | None = None


def _tracer(provider: trace.TracerProvider | None) -> trace.Tracer:
    from agentlab._version import __version__

    return (provider or trace.get_tracer_provider()).get_tracer(TRACER_NAME, __version__)


def _attach(run: Run, provider: trace.TracerProvider | None, include_content: bool) -> Callable[[], None]:
    """Follow ``run``; the closer ends whatever its closing records did not (``RunSpans.close``)."""
    spans = RunSpans(_tracer(provider), run, include_content=include_content)
    run.subscribe(spans)
    return spans.close


def instrument(tracer_provider: trace.TracerProvider | None = None, *, include_content: bool = False) -> None:
    """Trace every run created from now on (``compare()``'s and ``sweep()``'s too).

    ``tracer_provider``: where spans go; ``None``: the global one at each run (so one configured
    later is used). ``include_content=True`` adds user/system/answer text, tool arguments and tool
    results as the convention's message attributes; reasoning text and opaque payloads are never
    exported. Calling it again replaces the previous settings.
    """
    global _active
    uninstrument()

    def observe(run: Run) -> Callable[[], None]:
        return _attach(run, tracer_provider, include_content)

    _active = _Instrumented(tracer_provider, include_content, add_run_observer(observe))


def uninstrument() -> None:
    """Stop tracing new runs (runs already started keep their spans to the end)."""
    global _active
    if _active is not None:
        _active.remove()
        _active = None


def is_instrumented() -> bool:
    """Whether :func:`instrument` is in force (the automatic mode aside)."""
    return _active is not None


def _configured(provider: trace.TracerProvider) -> bool:
    """A provider that records: not the API's no-op, not the proxy that has nothing behind it yet."""
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def observe_if_configured(run: Run) -> Callable[[], None] | None:
    """The automatic mode: trace ``run`` (content off) when a real global tracer provider is set.

    Declared in the facade for when ``opentelemetry.trace`` is loaded (``agentlab.loop.observers``);
    does nothing when :func:`instrument` is in force (it traces the run already).
    """
    if _active is not None:
        return None
    provider = trace.get_tracer_provider()
    return _attach(run, provider, False) if _configured(provider) else None
