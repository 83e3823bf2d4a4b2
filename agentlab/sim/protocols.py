"""The table of simulated wire protocols: which protocol answers which request, and how.

Why a table: routing, error rendering and fault injection must not branch on a provider name, or
every new protocol edits all three. Each protocol declares everything the app needs from it in one
:class:`SimProtocol` entry, and a new simulated protocol (a provider package's Gemini or Chat
Completions endpoint) joins with one :func:`register_protocol` call, without editing the
simulator's core.

Routing (see :func:`endpoint_for` and :func:`protocol_for`):

* ``POST`` to a path ending in one of a protocol's ``endpoints`` is that protocol's request. Suffixes,
  not whole paths, because clients put their own prefix in ``base_url`` (``/v1`` or none).
* Any other request (``GET .../models``, unknown URLs) belongs to the protocol whose ``marker_header``
  it carries (the Anthropic SDK always sends ``anthropic-version``), else the one whose endpoint its
  path ends with, else the first registered protocol (the simulator's default, OpenAI). That protocol
  answers ``GET .../models`` with its model list and unknown URLs with a 404 in its error shape, as a
  real server of that protocol would.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentlab.sim.core import SimReply, Simulator, SSEEvent
from agentlab.sim.errors import ErrorDialect

#: ``handle(sim, request, headers, model) -> SimReply``: one request of the protocol, the model
#: already checked against ``models`` and stripped of ``+option`` suffixes; refusals raise ``SimError``.
Handler = Callable[[Simulator, dict[str, Any], dict[str, str], str], SimReply]


@dataclass(frozen=True)
class SimProtocol:
    """One simulated wire protocol, as the app dispatches to it.

    ``name`` keys the registry (``"openai"``, ``"anthropic"``); ``endpoints`` are the path suffixes
    it serves with ``POST``; ``marker_header`` (lower case) is a header only its clients send, used
    to route requests that reach no endpoint; ``models`` are the names it serves (any other is
    refused with ``errors.model_not_found``); ``models_page`` is its ``GET .../models`` body;
    ``errors`` renders every refusal in its shape; ``unknown_event`` is the SSE event the
    ``unknown_event`` fault injects (a type none of its SDKs knows).
    """

    name: str
    endpoints: tuple[str, ...]
    handle: Handler
    models: tuple[str, ...]
    models_page: Callable[[], dict[str, Any]]
    errors: ErrorDialect
    unknown_event: SSEEvent
    marker_header: str | None = None


_lock = threading.Lock()
_table: dict[str, SimProtocol] = {}


def register_protocol(protocol: SimProtocol, *, replace: bool = False) -> None:
    """Add ``protocol`` to the table (the first one registered is the default for stray requests).

    Refuses (``ValueError``) a second protocol under the same name unless ``replace=True``, and an
    endpoint or marker header another protocol already claims: two protocols answering one path would
    make routing depend on registration order.
    """
    with _lock:
        if protocol.name in _table and not replace:
            raise ValueError(f"a simulated protocol named {protocol.name!r} is already registered")
        for other in _table.values():
            if other.name == protocol.name:
                continue
            clash = set(other.endpoints) & set(protocol.endpoints)
            if clash:
                raise ValueError(f"{protocol.name!r}: endpoint {sorted(clash)} is served by {other.name!r}")
            if protocol.marker_header is not None and protocol.marker_header == other.marker_header:
                raise ValueError(f"{protocol.name!r}: marker header is {other.name!r}'s")
        _table[protocol.name] = protocol


def unregister_protocol(name: str) -> None:
    """Remove a protocol (for tests that register a toy one); unknown names raise ``KeyError``."""
    with _lock:
        del _table[name]


def protocols() -> tuple[SimProtocol, ...]:
    """The registered protocols, in registration order."""
    with _lock:
        return tuple(_table.values())


def endpoint_for(method: str, path: str) -> SimProtocol | None:
    """The protocol serving ``method path`` (query and trailing slash already stripped), if any."""
    if method != "POST":
        return None
    return next((p for p in protocols() if path.endswith(p.endpoints)), None)


def protocol_for(path: str, headers: Mapping[str, str]) -> SimProtocol:
    """The protocol a request that reaches no endpoint belongs to (``headers`` lower-cased)."""
    table = protocols()
    if not table:
        raise LookupError("no simulated protocol is registered")
    for p in table:
        if p.marker_header is not None and p.marker_header in headers:
            return p
    return next((p for p in table if path.endswith(p.endpoints)), table[0])
