"""Error responses in each provider's real shape: status, body, and headers.

Why exact shapes: adapters translate SDK exceptions into agentlab's error tree by status, error
type and request id; the SDKs themselves decide retries from status and ``retry-after`` /
``x-should-retry``. If these differ from the real API, retry and error tests prove nothing.

* OpenAI: ``{"error": {"message", "type", "param", "code"}}`` with ``x-request-id: req_<32 hex>``.
* Anthropic: ``{"type": "error", "error": {"type", "message"}, "request_id"}`` with ``request-id``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def openai_request_id(seed: bytes) -> str:
    """``req_`` + 32 hex chars, derived from the request so replies stay deterministic."""
    return "req_" + hashlib.sha256(b"oai-req" + seed).hexdigest()[:32]


def anthropic_request_id(seed: bytes) -> str:
    """``req_011C`` + 20 base58 chars, the shape the real API uses."""
    digest = hashlib.sha256(b"ant-req" + seed).digest()
    return "req_011C" + "".join(_B58[b % 58] for b in digest[:20])


@dataclass
class SimError(Exception):
    """A provider error the endpoint raises while validating; the app renders it per provider."""

    status: int
    type: str
    message: str
    param: str | None = None
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: OpenAI bodies from some errors (quoted in fixtures) carry no ``code`` key.
    omit_code: bool = False

    def __str__(self) -> str:
        return f"{self.status} {self.type}: {self.message}"


def openai_body(err: SimError) -> dict[str, Any]:
    inner: dict[str, Any] = {"message": err.message, "type": err.type, "param": err.param}
    if not err.omit_code:
        inner["code"] = err.code
    return {"error": inner}


def anthropic_body(err: SimError, request_id: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": err.type, "message": err.message}, "request_id": request_id}


def render(provider: str, err: SimError, seed: bytes) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and JSON body bytes of ``err`` as ``provider`` sends it."""
    headers = {"content-type": "application/json"}
    if provider == "openai":
        headers["x-request-id"] = openai_request_id(seed)
        body = openai_body(err)
    else:
        rid = anthropic_request_id(seed)
        headers["request-id"] = rid
        body = anthropic_body(err, rid)
        if err.status < 500 and err.status not in (408, 409, 429):
            headers["x-should-retry"] = "false"
    headers.update(err.headers)
    return err.status, headers, json.dumps(body, separators=(",", ":")).encode()


# -- the catalogue (texts as the real APIs send them) ---------------------------------------------


def openai_model_not_found(model: str) -> SimError:
    return SimError(
        400,
        "invalid_request_error",
        f"The requested model '{model}' does not exist.",
        "model",
        "model_not_found",
    )


def anthropic_model_not_found(model: str) -> SimError:
    return SimError(404, "not_found_error", f"model: {model}")


def rate_limited(provider: str, retry_after_ms: int) -> SimError:
    secs = max(1, -(-retry_after_ms // 1000))
    headers = {"retry-after": str(secs), "retry-after-ms": str(retry_after_ms)}
    if provider == "openai":
        return SimError(
            429,
            "requests",
            f"Rate limit reached for requests (simulated). Please try again in {retry_after_ms}ms.",
            None,
            "rate_limit_exceeded",
            headers,
        )
    return SimError(
        429,
        "rate_limit_error",
        "This request would exceed your organization's rate limit (simulated). Please try again later.",
        headers=headers,
    )


def server_error(provider: str) -> SimError:
    if provider == "openai":
        return SimError(
            500,
            "server_error",
            "The server had an error while processing your request. Sorry about that! (simulated)",
            None,
            None,
        )
    return SimError(500, "api_error", "Internal server error (simulated)")


def overloaded(provider: str) -> SimError:
    if provider == "openai":
        return SimError(
            503,
            "server_error",
            "The engine is currently overloaded, please try again later. (simulated)",
            None,
            None,
        )
    return SimError(529, "overloaded_error", "Overloaded")


def bad_request(provider: str, message: str, param: str | None = None, code: str | None = None) -> SimError:
    return SimError(400, "invalid_request_error", message, param if provider == "openai" else None, code)
