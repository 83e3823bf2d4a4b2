"""Request dispatch shared by the in-process transport and the loopback server.

Why one function: both ways of reaching the simulator must behave identically, so routing, header
checks, model checks, fault selection and error rendering live here and nowhere else. Which
protocol answers is looked up in the table of :mod:`agentlab.sim.protocols`; this module knows no
protocol by name. The checks run in the real hosts' order: the path (404 for one no real host
serves), the protocol's required headers (key, version), then the body. The result is a status,
the headers and a list of chunks (bytes, pauses, resets) that each front end delivers its own way.
"""

from __future__ import annotations

import html
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

import agentlab.sim.errors as E
import agentlab.sim.faults as faults
import agentlab.sim.reasoner as reasoner
from agentlab.sim.core import Simulator
from agentlab.sim.faults import Chunk, Fault
from agentlab.sim.pacing import PaceError, parse_options, read_options
from agentlab.sim.protocols import Match, RouteCall, SimProtocol, protocol_for, route_for, served_model
from agentlab.sim.real_models import HEADER, label

Answer = tuple[int, dict[str, str], list[Chunk]]
log = logging.getLogger("agentlab.sim")
#: The request's path and raw query string, passed to protocols among the (lower-cased) headers.
PATH_HEADER = ":path"
QUERY_HEADER = ":query"

#: What each error fault answers with, in the protocol's own words.
_FAULT_ERRORS: dict[str, Callable[[E.ErrorDialect, Simulator], E.SimError]] = {
    "429": lambda errors, sim: errors.rate_limited(sim.retry_after_ms),
    "500": lambda errors, sim: errors.server_error(),
    "529": lambda errors, sim: errors.overloaded(),
}


def split_model(raw: str) -> tuple[str, str | None]:
    """``sim-reasoner+fault=429x1`` -> (``sim-reasoner``, ``429x1``); raises ``PaceError`` on a bad option."""
    base, fault, _ = parse_options(raw)
    return base, fault


class _Refused(Exception):
    """A refusal already rendered in the protocol's shape (raised by the steps below)."""

    def __init__(self, answer: Answer) -> None:
        super().__init__()
        self.answer = answer


def handle(sim: Simulator, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Answer:
    """Answer one HTTP request: (status, headers, chunks); a failure of the simulator itself is a 500.

    A bug (or a request shape no rule foresaw) must not drop the connection: the client gets the
    500 the real host would send, in the protocol's error shape, and the failure is logged here.
    """
    try:
        return _handle(sim, method, path, headers, body)
    except Exception:
        log.exception("the simulator failed on %s %s", method, path.partition("?")[0])
        return internal_error(path, headers)


def _handle(sim: Simulator, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Answer:
    h = {k.lower(): v for k, v in headers.items()}
    path, _, query = path.partition("?")
    path = path.rstrip("/") or "/"
    # Pseudo-headers (no real header name starts with ":"): protocols that read the query
    # (Gemini's ``key=``, ``alt=sse``) or tell endpoints apart by path see them like headers.
    h[PATH_HEADER], h[QUERY_HEADER] = path, query
    match = route_for(method, path, h)
    if match is None:
        protocol = protocol_for(path, h)
        return _render(protocol, protocol.errors.unknown_url(method, path), body)
    try:
        _check_headers(match.protocol, h, body)
        if match.route is None:
            return _serve(sim, match, method, path, h, body)
        return _route(sim, match, h, body)
    except _Refused as refused:
        return refused.answer


def _protocol_of(path: str, headers: Mapping[str, str]) -> SimProtocol | None:
    """The protocol a request addresses, for an answer given outside :func:`handle`'s steps."""
    h = {k.lower(): v for k, v in headers.items()}
    try:
        return protocol_for(path.partition("?")[0].rstrip("/") or "/", h)
    except Exception:  # no protocol registered, or a table that fails: the plain answer
        return None


def internal_error(path: str, headers: Mapping[str, str]) -> Answer:
    """The 500 of a failure inside the simulator, in the shape of the protocol addressed."""
    protocol = _protocol_of(path, headers)
    if protocol is None:
        return front_end(500, "the simulator failed on this request")
    return _render(protocol, protocol.errors.server_error(), path.encode())


def too_large(path: str, headers: Mapping[str, str], limit: int) -> Answer:
    """A declared body over ``limit`` bytes: the protocol's own refusal, else the front end's 413."""
    protocol = _protocol_of(path, headers)
    err = protocol.errors.request_too_large(limit) if protocol is not None else None
    if protocol is None or err is None:
        return front_end(413, f"the request body exceeds {limit} bytes")
    return _render(protocol, err, path.encode())


def front_end(status: int, why: str) -> Answer:
    """What the host's front end (not the API) answers to a request it refuses: a small HTML page.

    The shape Cloudflare (api.openai.com, api.anthropic.com) and Google's front end send for
    malformed framing, with ``connection: close``; ``why`` says what was wrong, never echoing the
    request (which may hold a key).
    """
    reason = _FRONT_END_REASONS.get(status, "Error")
    page = (
        f"<html>\r\n<head><title>{status} {reason}</title></head>\r\n<body>\r\n"
        f"<center><h1>{status} {reason}</h1></center>\r\n<p>{html.escape(why)}</p>\r\n"
        "<hr><center>agentlab.sim</center>\r\n</body>\r\n</html>\r\n"
    )
    return status, {"content-type": "text/html", "connection": "close"}, [page.encode()]


_FRONT_END_REASONS = {
    400: "Bad Request",
    408: "Request Timeout",
    411: "Length Required",
    413: "Request Entity Too Large",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
}


def _check_headers(protocol: SimProtocol, h: dict[str, str], body: bytes) -> None:
    """The protocol's credential and version rules, before anything reads the body."""
    if protocol.check_headers is None:
        return
    try:
        protocol.check_headers(h)
    except E.SimError as err:
        raise _Refused(_render(protocol, err, body)) from None


def _route(sim: Simulator, match: Match, h: dict[str, str], body: bytes) -> Answer:
    """A non-generation route (models, token counts, stored responses): JSON in, JSON out."""
    assert match.route is not None
    protocol = match.protocol
    multipart = h.get("content-type", "").startswith("multipart/")  # file uploads: the route reads raw
    parse = match.route.method in ("POST", "PUT", "PATCH") and not multipart and not match.route.raw_body
    req = _parse_body(protocol, body) if parse else {}
    call = RouteCall(sim, protocol, match.params, h, req, body)
    try:
        reply = match.route.handle(call)
    except E.SimError as err:
        raise _Refused(_render(protocol, err, body)) from None
    assert reply.body is not None
    return reply.status, reply.headers, [reply.body]


def _serve(sim: Simulator, match: Match, method: str, path: str, h: dict[str, str], body: bytes) -> Answer:
    """One generation request, step by step; each step refuses in the protocol's shape.

    A real model name (when the simulator answers them) is served by its simulated model: the
    handler behaves as that model, the reply's ``model`` field reads as simulated
    (:func:`agentlab.sim.real_models.label`) and its ``x-agentlab-simulated`` header names the model.
    The model comes from the body, or from the path for protocols that put it there
    (``/v1beta/models/{model}:generateContent``).
    """
    protocol = match.protocol
    req = _parse_body(protocol, body)
    if protocol.check_body is not None:
        try:
            protocol.check_body(req)
        except E.SimError as err:
            raise _Refused(_render(protocol, err, body)) from None
    # A model in the path arrives percent-encoded (``sim-thinker%2Bfault%3D429x1``), as servers see it.
    raw_model = str(req.get("model") or unquote(match.params.get("model") or ""))
    try:
        model, model_fault, pace, skill = read_options(raw_model)
    except PaceError as err:
        raise _Refused(_render(protocol, protocol.errors.bad_request(str(err), "model"), body)) from None
    spec = h.get("x-sim-fault") or model_fault or sim.default_fault or ""
    active = _active_faults(sim, protocol, spec, method, path, body)
    served = served_model(protocol, model, sim.real_models)
    if served is None:
        raise _Refused(_render(protocol, protocol.errors.model_not_found(raw_model), body))
    for f in active:
        if f.kind in faults.ERROR_FAULTS:
            raise _Refused(_render(protocol, _FAULT_ERRORS[f.kind](protocol.errors, sim), body))
    try:
        if served != model and protocol.model_rules is not None:
            protocol.model_rules(model, req)
        token = reasoner.SKILL.set(None if skill is None else (model, skill))
        try:
            reply = protocol.handle(sim, {**req, "model": label(model, served)}, h, served)
        finally:
            reasoner.SKILL.reset(token)
    except E.SimError as err:
        raise _Refused(_render(protocol, err, body)) from None
    headers = {**reply.headers, HEADER: served}
    if reply.events is not None:
        return reply.status, headers, faults.stream_plan(reply.events, active, protocol.unknown_event, pace)
    assert reply.body is not None
    return reply.status, headers, faults.body_plan(reply.body, active, pace)


def _parse_body(protocol: SimProtocol, body: bytes) -> dict[str, Any]:
    """The request body as a JSON object (an empty body is ``{}``)."""
    try:
        req = json.loads(body or b"{}")
        if not isinstance(req, dict):
            raise ValueError("body must be a JSON object")
    except ValueError:
        err = protocol.errors.bad_request("We could not parse the JSON body of your request.")
        raise _Refused(_render(protocol, err, body)) from None
    return req


def _active_faults(
    sim: Simulator, protocol: SimProtocol, spec: str, method: str, path: str, body: bytes
) -> list[Fault]:
    """The faults of this attempt (counting it); a spec outside the grammar is a 400, never ignored."""
    if not spec:
        return []
    try:
        return faults.active(sim, spec, method, path, body)
    except faults.FaultSpecError as exc:
        err = protocol.errors.bad_request(str(exc), "x-sim-fault")
        raise _Refused(_render(protocol, err, body)) from None


def _render(protocol: SimProtocol, err: E.SimError, seed: bytes) -> Answer:
    status, headers, body = protocol.errors.render(err, seed)
    return status, headers, [body]
