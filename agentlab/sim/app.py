"""Request dispatch shared by the in-process transport and the loopback server.

Why one function: both ways of reaching the simulator must behave identically, so routing, model
checks, fault selection and error rendering live here and nowhere else. The result is a status, the
headers and a list of chunks (bytes, pauses, resets) that each front end delivers its own way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentlab.sim import anthropic_messages, faults, openai_responses
from agentlab.sim import errors as E
from agentlab.sim.core import ANTHROPIC_MODELS, OPENAI_MODELS, SimReply, Simulator
from agentlab.sim.faults import Chunk


def _models_openai() -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {"id": m, "object": "model", "created": 1767225600, "owned_by": "agentlab-sim"}
            for m in OPENAI_MODELS
        ],
    }


def _models_anthropic() -> dict[str, Any]:
    data = [
        {
            "type": "model",
            "id": m,
            "display_name": m.replace("-", " ").title(),
            "created_at": "2026-01-01T00:00:00Z",
        }
        for m in ANTHROPIC_MODELS
    ]
    return {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}


def split_model(raw: str) -> tuple[str, str | None]:
    """``sim-reasoner+fault=429x1`` -> (``sim-reasoner``, ``429x1``)."""
    base, _, opts = raw.partition("+")
    fault = None
    for opt in opts.split("+") if opts else []:
        key, _, value = opt.partition("=")
        if key == "fault":
            fault = value
    return base, fault


def handle(
    sim: Simulator, method: str, path: str, headers: Mapping[str, str], body: bytes
) -> tuple[int, dict[str, str], list[Chunk]]:
    """Answer one HTTP request: (status, headers, chunks)."""
    h = {k.lower(): v for k, v in headers.items()}
    path = path.split("?", 1)[0].rstrip("/")
    # Anthropic clients always send ``anthropic-version``; OpenAI clients never do.
    provider = "anthropic" if ("anthropic-version" in h or path.endswith("/messages")) else "openai"
    if method == "GET" and path.endswith("/models"):
        payload = _models_anthropic() if provider == "anthropic" else _models_openai()
        return 200, {"content-type": "application/json"}, [json.dumps(payload).encode()]
    if method != "POST" or not (path.endswith("/responses") or path.endswith("/messages")):
        err = E.SimError(
            404,
            "not_found_error" if provider == "anthropic" else "invalid_request_error",
            f"Unknown request URL: {method} {path}. (The simulator serves POST /v1/responses, "
            "POST /v1/messages and GET /v1/models.)",
        )
        return _render(provider, err, body)
    provider = "openai" if path.endswith("/responses") else "anthropic"
    try:
        req = json.loads(body or b"{}")
        if not isinstance(req, dict):
            raise ValueError("body must be a JSON object")
    except ValueError:
        return _render(
            provider, E.bad_request(provider, "We could not parse the JSON body of your request."), body
        )
    raw_model = str(req.get("model") or "")
    model, model_fault = split_model(raw_model)
    spec = h.get("x-sim-fault") or model_fault or sim.default_fault or ""
    try:
        active = faults.active(sim, spec, method, path, body) if spec else []
    except faults.FaultSpecError as exc:
        return _render(provider, E.bad_request(provider, str(exc), "x-sim-fault"), body)
    known = OPENAI_MODELS if provider == "openai" else ANTHROPIC_MODELS
    if model not in known:
        err = (
            E.openai_model_not_found(raw_model)
            if provider == "openai"
            else E.anthropic_model_not_found(raw_model)
        )
        return _render(provider, err, body)
    for f in active:
        if f.kind in faults.ERROR_FAULTS:
            err = {
                "429": lambda: E.rate_limited(provider, sim.retry_after_ms),
                "500": lambda: E.server_error(provider),
                "529": lambda: E.overloaded(provider),
            }[f.kind]()
            return _render(provider, err, body)
    try:
        req = {**req, "model": model}
        module = openai_responses if provider == "openai" else anthropic_messages
        reply: SimReply = module.handle(sim, req, h, model)
    except E.SimError as err:
        return _render(provider, err, body)
    if reply.events is not None:
        return reply.status, reply.headers, faults.stream_plan(reply.events, active, provider)
    assert reply.body is not None
    return reply.status, reply.headers, faults.body_plan(reply.body, active)


def _render(provider: str, err: E.SimError, seed: bytes) -> tuple[int, dict[str, str], list[Chunk]]:
    status, headers, body = E.render(provider, err, seed)
    return status, headers, [body]
