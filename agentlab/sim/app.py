"""Request dispatch shared by the in-process transport and the loopback server.

Why one function: both ways of reaching the simulator must behave identically, so routing, model
checks, fault selection and error rendering live here and nowhere else. Which protocol answers is
looked up in the table of :mod:`agentlab.sim.protocols`; this module knows no protocol by name. The
result is a status, the headers and a list of chunks (bytes, pauses, resets) that each front end
delivers its own way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from agentlab.sim import errors as E
from agentlab.sim import faults
from agentlab.sim.core import Simulator
from agentlab.sim.faults import Chunk, Fault
from agentlab.sim.protocols import SimProtocol, endpoint_for, protocol_for, protocols

Answer = tuple[int, dict[str, str], list[Chunk]]

#: What each error fault answers with, in the protocol's own words.
_FAULT_ERRORS: dict[str, Callable[[E.ErrorDialect, Simulator], E.SimError]] = {
    "429": lambda errors, sim: errors.rate_limited(sim.retry_after_ms),
    "500": lambda errors, sim: errors.server_error(),
    "529": lambda errors, sim: errors.overloaded(),
}


def split_model(raw: str) -> tuple[str, str | None]:
    """``sim-reasoner+fault=429x1`` -> (``sim-reasoner``, ``429x1``)."""
    base, _, opts = raw.partition("+")
    fault = None
    for opt in opts.split("+") if opts else []:
        key, _, value = opt.partition("=")
        if key == "fault":
            fault = value
    return base, fault


class _Refused(Exception):
    """A refusal already rendered in the protocol's shape (raised by the steps below)."""

    def __init__(self, answer: Answer) -> None:
        super().__init__()
        self.answer = answer


def handle(sim: Simulator, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Answer:
    """Answer one HTTP request: (status, headers, chunks)."""
    h = {k.lower(): v for k, v in headers.items()}
    path = path.split("?", 1)[0].rstrip("/")
    protocol = endpoint_for(method, path)
    if protocol is None:
        return _off_endpoint(method, path, h, body)
    try:
        return _serve(sim, protocol, method, path, h, body)
    except _Refused as refused:
        return refused.answer


def _off_endpoint(method: str, path: str, h: dict[str, str], body: bytes) -> Answer:
    """``GET .../models`` gets the model list; any other URL the 404 a real server sends."""
    protocol = protocol_for(path, h)
    if method == "GET" and path.endswith("/models"):
        return 200, {"content-type": "application/json"}, [json.dumps(protocol.models_page()).encode()]
    served = ", ".join(f"POST /v1{e}" for p in protocols() for e in p.endpoints)
    err = E.SimError(
        404,
        protocol.errors.not_found_type,
        f"Unknown request URL: {method} {path}. (The simulator serves {served} and GET /v1/models.)",
    )
    return _render(protocol, err, body)


def _serve(
    sim: Simulator, protocol: SimProtocol, method: str, path: str, h: dict[str, str], body: bytes
) -> Answer:
    """One endpoint request, step by step; each step refuses in the protocol's shape."""
    req = _parse_body(protocol, body)
    raw_model = str(req.get("model") or "")
    model, model_fault = split_model(raw_model)
    spec = h.get("x-sim-fault") or model_fault or sim.default_fault or ""
    active = _active_faults(sim, protocol, spec, method, path, body)
    if model not in protocol.models:
        raise _Refused(_render(protocol, protocol.errors.model_not_found(raw_model), body))
    for f in active:
        if f.kind in faults.ERROR_FAULTS:
            raise _Refused(_render(protocol, _FAULT_ERRORS[f.kind](protocol.errors, sim), body))
    try:
        reply = protocol.handle(sim, {**req, "model": model}, h, model)
    except E.SimError as err:
        raise _Refused(_render(protocol, err, body)) from None
    if reply.events is not None:
        return reply.status, reply.headers, faults.stream_plan(reply.events, active, protocol.unknown_event)
    assert reply.body is not None
    return reply.status, reply.headers, faults.body_plan(reply.body, active)


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
