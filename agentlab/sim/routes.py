"""Route handlers every protocol with a models API shares: list the models, retrieve one.

Why shared: both real APIs serve ``GET /v1/models`` and ``GET /v1/models/{model_id}`` with their own
object shapes but the same rule (what the deployment serves; an unknown id is a 404). A protocol
lists these handlers in its ``routes`` (:func:`models_routes`, under its own prefix) and brings the shapes as
``model_card`` / ``models_page``; what is served (simulated names, and real names when the
simulator's ``real_models`` is on) is decided here once.
"""

from __future__ import annotations

import json
from typing import Any

from agentlab.sim.core import SimReply
from agentlab.sim.errors import SimError
from agentlab.sim.protocols import Route, RouteCall
from agentlab.sim.real_models import HEADER


def json_reply(body: dict[str, Any], headers: dict[str, str] | None = None) -> SimReply:
    """A 200 JSON reply (compact, like the real APIs)."""
    rh = {"content-type": "application/json", **(headers or {})}
    return SimReply(200, rh, json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())


def list_models(call: RouteCall) -> SimReply:
    """``GET .../models``: the simulated models, then the real names when they are answered."""
    p = call.protocol
    names = [(m, m) for m in p.models]
    if call.sim.real_models:
        names += list(p.real_models.items())
    return json_reply(p.models_page([p.model_card(name, served) for name, served in names]))


def retrieve_model(call: RouteCall) -> SimReply:
    """``GET .../models/{model_id}``: its object, or the protocol's 404 for an id it does not serve."""
    name = call.params["model_id"]
    served = call.served(name)
    if served is None:
        raise call.protocol.errors.unknown_model_card(name)
    return json_reply(call.protocol.model_card(name, served), {HEADER: served})


def models_routes(prefix: str = "/v1") -> tuple[Route, Route]:
    """``GET {prefix}/models`` and ``GET {prefix}/models/{model_id}``, as every models API lays them out."""
    return (
        Route("GET", f"{prefix}/models", list_models),
        Route("GET", f"{prefix}/models/{{model_id}}", retrieve_model),
    )


def require_model(call: RouteCall) -> str:
    """The served model of a body's ``model`` (the protocol's "model not found" otherwise)."""
    raw = call.body.get("model")
    served = call.served(raw) if isinstance(raw, str) else None
    if served is None:
        err: SimError = call.protocol.errors.model_not_found(str(raw or ""))
        raise err
    return served
