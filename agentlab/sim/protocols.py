"""The table of simulated wire protocols: which protocol answers which request, and how.

Why a table: routing, error rendering and fault injection must not branch on a provider name, or
every new protocol edits all three. Each protocol declares everything the app needs from it in one
:class:`SimProtocol` entry, and a new simulated protocol (a provider package's Gemini or Chat
Completions endpoint) joins with one :func:`register_protocol` call, without editing the
simulator's core.

Routing (see :func:`route_for`) is by whole path, as on the real hosts: a protocol's ``endpoints``
(its ``POST`` generation paths) and ``routes`` (everything else it serves) are path *patterns*
(``/v1/responses``, ``/v1/models/{model_id}``, ``/v1beta/models/{model}:generateContent``), matched
against the whole path (query and trailing slash stripped). A path that only ends like one
(``/v1/v1/messages``, ``/responses``) is the 404 a misconfigured ``base_url`` gets in production.
Two protocols may serve one path (``GET /v1/models``): the request's ``marker_header`` (the
Anthropic SDK always sends ``anthropic-version``) picks one, else the first registered protocol
(the simulator's default, OpenAI). A request no route serves belongs, for its 404's shape, to the
protocol named by its marker header, else the one whose endpoint its path ends with, else the
default.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from agentlab.sim.core import SimReply, Simulator, SSEEvent
from agentlab.sim.errors import ErrorDialect

#: ``handle(sim, request, headers, model) -> SimReply``: one request of the protocol, the model
#: already resolved to a simulated one (``request["model"]`` is the name the reply shows, which says
#: "simulated" for a real model name); refusals raise ``SimError``.
Handler = Callable[[Simulator, dict[str, Any], dict[str, str], str], SimReply]


@dataclass(frozen=True)
class RouteCall:
    """What a route handler gets: the simulator, the path parameters, headers and the JSON body.

    ``served`` resolves a model name to the simulated model that answers it (``None``: unknown),
    honouring the simulator's ``real_models`` switch, so handlers never re-implement that rule.
    """

    sim: Simulator
    protocol: SimProtocol
    params: dict[str, str]
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes

    def served(self, name: str) -> str | None:
        """The simulated model answering ``name`` here, if any."""
        return served_model(self.protocol, name, self.sim.real_models)


RouteHandler = Callable[[RouteCall], SimReply]


@dataclass(frozen=True)
class Route:
    """One ``method pattern`` a protocol serves besides generation; ``{name}`` captures one segment."""

    method: str
    pattern: str
    handle: RouteHandler
    #: The handler reads ``call.raw`` itself (file upload chunks): the body is not parsed as JSON.
    raw_body: bool = False


def versioned(versions: Sequence[str], *table: tuple[str, str, RouteHandler]) -> tuple[Route, ...]:
    """Each ``(method, path, handler)`` of ``table`` under each API version (``/v1beta`` + path).

    Gemini serves every route once per API version; listing a route once keeps the versions alike.
    The order is the table's within each version, so a more specific pattern listed first wins.
    """
    return tuple(Route(method, f"/{v}{path}", handle) for v in versions for method, path, handle in table)


@dataclass(frozen=True)
class SimProtocol:
    """One simulated wire protocol, as the app dispatches to it.

    ``name`` keys the registry (``"openai"``, ``"anthropic"``); ``endpoints`` are the path patterns
    of its ``POST`` generation requests (models checked, faults applied, ``handle`` called);
    ``routes`` are its other paths; ``marker_header`` (lower case) is a header only its clients
    send; ``models`` are the simulated names it serves and ``real_models`` the real names it may
    also answer (real name -> the simulated model that behaves like it; only when the simulator's
    ``real_models`` is on); ``model_card(name, served)`` is one ``GET .../models/{id}`` object and
    ``models_page(cards)`` the list page; ``check_headers`` refuses (raises ``SimError``) a request
    whose credentials or version headers the real API would refuse; ``errors`` renders every
    refusal in its shape; ``unknown_event`` is the SSE event the ``unknown_event`` fault injects.
    """

    name: str
    endpoints: tuple[str, ...]
    handle: Handler
    models: tuple[str, ...]
    models_page: Callable[[Sequence[dict[str, Any]]], dict[str, Any]]
    model_card: Callable[[str, str], dict[str, Any]]
    errors: ErrorDialect
    unknown_event: SSEEvent
    marker_header: str | None = None
    routes: tuple[Route, ...] = ()
    real_models: Mapping[str, str] = field(default_factory=dict)
    check_headers: Callable[[Mapping[str, str]], None] | None = None
    #: ``model_rules(real_name, request)`` refuses (raises ``SimError``) what that real model does
    #: not take though its simulated model would (Claude's thinking modes); real names only.
    model_rules: Callable[[str, dict[str, Any]], None] | None = None
    #: ``check_body(request)`` refuses (raises ``SimError``) a body the platform's own rules refuse
    #: before the model is looked up, on the body as sent (Bedrock: no ``model`` key, its
    #: ``anthropic_version``); the handler then gets it with the model filled in.
    check_body: Callable[[dict[str, Any]], None] | None = None


def served_model(protocol: SimProtocol, name: str, real_models: bool) -> str | None:
    """The simulated model that answers ``name`` (a simulated name itself, or a mapped real one)."""
    if name in protocol.models:
        return name
    if real_models:
        return protocol.real_models.get(name)
    return None


_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """``/v1/models/{model_id}`` -> a regex of the whole path; a parameter is one non-empty segment."""
    out, pos = [], 0
    for m in _PARAM.finditer(pattern):
        out.append(re.escape(pattern[pos : m.start()]))
        out.append(f"(?P<{m.group(1)}>[^/]+?)")
        pos = m.end()
    out.append(re.escape(pattern[pos:]))
    return re.compile("".join(out) + r"\Z")


@dataclass(frozen=True)
class Match:
    """A routed request: its protocol, the route (``None``: a generation endpoint) and path params."""

    protocol: SimProtocol
    route: Route | None
    params: dict[str, str]


_lock = threading.Lock()
_table: dict[str, SimProtocol] = {}


def _paths(protocol: SimProtocol) -> set[tuple[str, str]]:
    return {("POST", e) for e in protocol.endpoints} | {(r.method, r.pattern) for r in protocol.routes}


def register_protocol(protocol: SimProtocol, *, replace: bool = False) -> None:
    """Add ``protocol`` to the table (the first one registered is the default for stray requests).

    Refuses (``ValueError``) a second protocol under the same name unless ``replace=True``; an
    endpoint another protocol already serves; a marker header another protocol claims; and a shared
    route (``GET /v1/models``) between two protocols without a marker header to tell them apart: two
    protocols answering one request would make routing depend on registration order.
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
            shared = _paths(other) & _paths(protocol)
            if shared and protocol.marker_header is None and other.marker_header is None:
                raise ValueError(
                    f"{protocol.name!r}: {sorted(shared)} also served by {other.name!r}, and neither "
                    "has a marker header to tell their requests apart"
                )
        _table[protocol.name] = protocol


def unregister_protocol(name: str) -> None:
    """Remove a protocol (for tests that register a toy one); unknown names raise ``KeyError``."""
    with _lock:
        del _table[name]


def protocols() -> tuple[SimProtocol, ...]:
    """The registered protocols, in registration order."""
    with _lock:
        return tuple(_table.values())


def _params(m: re.Match[str]) -> dict[str, str]:
    """Path parameters, percent-decoded: SDKs quote a model id in the path (Bedrock: ``%3A``, ``%2B``)."""
    return {k: unquote(v) for k, v in m.groupdict().items()}


def _match_one(protocol: SimProtocol, method: str, path: str) -> Match | None:
    if method == "POST":
        for e in protocol.endpoints:
            m = compile_pattern(e).match(path)
            if m:
                return Match(protocol, None, _params(m))
    for r in protocol.routes:
        if r.method == method:
            m = compile_pattern(r.pattern).match(path)
            if m:
                return Match(protocol, r, _params(m))
    return None


def route_for(method: str, path: str, headers: Mapping[str, str]) -> Match | None:
    """Who serves ``method path`` (query and trailing slash stripped, ``headers`` lower-cased)."""
    matches = [m for p in protocols() if (m := _match_one(p, method, path)) is not None]
    if not matches:
        return None
    for m in matches:
        marker = m.protocol.marker_header
        if marker is not None and marker in headers:
            return m
    unmarked = [m for m in matches if m.protocol.marker_header is None]
    return (unmarked or matches)[0]


def _last_literal(pattern: str) -> str:
    """The pattern's tail after its last parameter (``/v1/messages`` -> itself)."""
    return _PARAM.split(pattern)[-1]


def protocol_for(path: str, headers: Mapping[str, str]) -> SimProtocol:
    """The protocol a request no route serves belongs to, for the shape of its 404."""
    table = protocols()
    if not table:
        raise LookupError("no simulated protocol is registered")
    for p in table:
        if p.marker_header is not None and p.marker_header in headers:
            return p
    for p in table:
        tails = [_last_literal(e).rsplit("/", 1)[-1] for e in p.endpoints]
        if any(t and path.endswith(t) for t in tails):
            return p
    return table[0]
