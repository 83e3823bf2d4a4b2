"""The simulator dispatches through its protocol table: a new protocol joins with one registration.

A toy protocol (its own endpoint, marker header, models, error shape and unknown event) is
registered through the public ``register_protocol`` and reached through the real ``SimTransport``,
with no edit to the simulator's core.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agentlab import sim
from agentlab.sim.core import SimReply, Simulator, sse
from agentlab.sim.errors import ErrorDialect, SimError
from agentlab.sim.protocols import route_for
from agentlab.sim.routes import list_models, retrieve_model
from tests.sim.helpers import raw_post

GEN = "/v1echo/models/sim-echo:generateContent"


class _EchoErrors(ErrorDialect):
    """A Gemini-like error shape: ``{"error": {"code", "message", "status"}}``."""

    not_found_type = "NOT_FOUND"

    def render(self, err: SimError, seed: bytes) -> tuple[int, dict[str, str], bytes]:
        body = {"error": {"code": err.status, "message": err.message, "status": err.type}}
        return err.status, {"content-type": "application/json", **err.headers}, json.dumps(body).encode()

    def model_not_found(self, model: str) -> SimError:
        return SimError(404, "NOT_FOUND", f"models/{model} is not found")

    def rate_limited(self, retry_after_ms: int) -> SimError:
        return SimError(429, "RESOURCE_EXHAUSTED", "quota", headers={"retry-after": "1"})

    def server_error(self) -> SimError:
        return SimError(500, "INTERNAL", "internal")

    def overloaded(self) -> SimError:
        return SimError(503, "UNAVAILABLE", "overloaded")


def _echo(sim_: Simulator, req: dict[str, Any], headers: dict[str, str], model: str) -> SimReply:
    if req.get("stream"):
        return SimReply(
            200, {"content-type": "text/event-stream"}, events=[sse("a", {"n": 1}), sse("b", {"n": 2})]
        )
    body = json.dumps({"model": model, "echo": req.get("text")}).encode()
    return SimReply(200, {"content-type": "application/json"}, body)


ECHO = sim.SimProtocol(
    name="echo",
    # A Gemini-style path: the model is a path parameter, the method follows a colon.
    endpoints=("/v1echo/models/{model}:generateContent",),
    handle=_echo,
    models=("sim-echo",),
    models_page=lambda cards: {"models": list(cards)},
    model_card=lambda name, served: {"name": f"models/{name}"},
    routes=(
        sim.Route("GET", "/v1echo/models", list_models),
        sim.Route("GET", "/v1/models", list_models),
        sim.Route("GET", "/v1echo/models/{model_id}", retrieve_model),
    ),
    errors=_EchoErrors(),
    unknown_event=sse("echo_unknown", {"type": "echo_unknown"}),
    marker_header="x-echo-version",
)


@pytest.fixture
def echo() -> Iterator[sim.SimProtocol]:
    sim.register_protocol(ECHO)
    try:
        yield ECHO
    finally:
        sim.unregister_protocol("echo")


def test_builtin_table_lists_openai_first_then_anthropic_then_gemini() -> None:
    table = sim.protocols()
    names = ["openai", "anthropic", "gemini", "chat_completions", "openrouter", "zai"]
    assert [p.name for p in table][:6] == names
    assert {"anthropic_bedrock", "anthropic_vertex", "bedrock"} <= {p.name for p in table}
    assert [p.endpoints for p in table[:2]] == [("/v1/responses",), ("/v1/messages",)]
    assert "/v1beta/models/{model}:streamGenerateContent" in table[2].endpoints


def test_a_registered_protocol_is_served_through_the_transport(echo: sim.SimProtocol) -> None:
    t = sim.SimTransport()
    r = raw_post(t, GEN, {"model": "sim-echo+fault=429x1", "text": "hi"})
    assert (r.status_code, r.json()) == (
        429,
        {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}},
    )
    r = raw_post(t, GEN, {"model": "sim-echo+fault=429x1", "text": "hi"})
    assert (r.status_code, r.json()) == (200, {"model": "sim-echo", "echo": "hi"})
    assert r.headers["x-agentlab-simulated"] == "sim-echo"
    r = raw_post(t, GEN, {"text": "the model from the path"})
    assert (r.status_code, r.json()["echo"]) == (200, "the model from the path")
    r = raw_post(t, "/v1echo/models/gemini-2.5-pro:generateContent", {"text": "hi"})
    assert (r.status_code, r.json()["error"]["status"]) == (404, "NOT_FOUND")
    r = raw_post(t, GEN, {"model": "sim-echo", "stream": True}, {"x-sim-fault": "unknown_event"})
    events = [e.split("\n")[0] for e in r.text.split("\n\n") if e]
    assert events == ["event: a", "event: echo_unknown", "event: b"]


def test_requests_off_its_endpoints_follow_its_marker_header(echo: sim.SimProtocol) -> None:
    import httpx2

    with httpx2.Client(transport=sim.SimTransport(), base_url="http://sim.agentlab.local") as c:
        echo_h = {"x-echo-version": "1"}
        assert c.get("/v1echo/models", headers=echo_h).json() == {"models": [{"name": "models/sim-echo"}]}
        assert c.get("/v1echo/models/sim-echo", headers=echo_h).json() == {"name": "models/sim-echo"}
        # A path two protocols serve goes to the one whose marker header the request carries.
        assert c.get("/v1/models", headers=echo_h).json() == {"models": [{"name": "models/sim-echo"}]}
        r = c.get("/v1/nothing", headers=echo_h)
        assert (r.status_code, r.json()["error"]["status"]) == (404, "NOT_FOUND")
        key = {"authorization": "Bearer k"}
        assert c.get("/v1/models", headers=key).json()["object"] == "list"  # OpenAI's without the header


def test_unregistered_protocol_paths_are_unknown_urls_again() -> None:
    sim.register_protocol(ECHO)
    sim.unregister_protocol("echo")
    r = raw_post(sim.SimTransport(), GEN, {"model": "sim-echo"})
    # The path ends like a Gemini method, so its 404 comes in Gemini's shape.
    assert r.status_code == 404 and r.json()["error"]["status"] == "NOT_FOUND"
    r = raw_post(sim.SimTransport(), "/v1echo/other", {"model": "sim-echo"})
    assert r.status_code == 404 and r.json()["error"]["type"] == "invalid_request_error"


def test_registration_refuses_a_name_endpoint_or_marker_already_taken(echo: sim.SimProtocol) -> None:
    from dataclasses import replace

    with pytest.raises(ValueError, match="already registered"):
        sim.register_protocol(replace(ECHO, endpoints=("/other",), marker_header=None))
    with pytest.raises(ValueError, match="served by 'openai'"):
        sim.register_protocol(replace(ECHO, name="echo2", endpoints=("/v1/responses",), marker_header=None))
    with pytest.raises(ValueError, match="neither has a marker header"):
        sim.register_protocol(replace(ECHO, name="echo4", endpoints=("/y",), marker_header=None))
    with pytest.raises(ValueError, match="marker header"):
        sim.register_protocol(
            replace(ECHO, name="echo3", endpoints=("/x",), marker_header="anthropic-version")
        )
    sim.register_protocol(replace(ECHO, endpoints=("/v1echo/models/{model}:stream",)), replace=True)
    assert [p.endpoints for p in sim.protocols()][-1] == ("/v1echo/models/{model}:stream",)


def test_path_parameters_are_percent_decoded() -> None:
    """SDKs quote a model id in the path (botocore: ``:`` as ``%3A``, ``+`` as ``%2B``)."""
    match = route_for("POST", "/v1beta/models/sim-gemini%2Bfault%3D429x1:generateContent", {})
    assert match is not None and match.params == {"model": "sim-gemini+fault=429x1"}
