"""Error responses in each provider's real shape: status, body, and headers.

Why exact shapes: adapters translate SDK exceptions into agentlab's error tree by status, error
type and request id; the SDKs themselves decide retries from status and ``retry-after`` /
``x-should-retry``. If these differ from the real API, retry and error tests prove nothing.

* OpenAI: ``{"error": {"message", "type", "param", "code"}}`` with ``x-request-id: req_<32 hex>``.
* Anthropic: ``{"type": "error", "error": {"type", "message"}, "request_id"}`` with ``request-id``.

Each protocol's shape and catalogue (bad request, unknown model, the 429/500/529 faults) is one
:class:`ErrorDialect` (:data:`OPENAI`, :data:`ANTHROPIC`); a protocol's registry entry names its
dialect, so the app renders every refusal without knowing which protocol it serves.
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
    #: ``error.details`` when set: Anthropic's object (a message thread's ``error_code``), Gemini's
    #: list of typed ``google.rpc`` details (``ErrorInfo``, ``RetryInfo``, ``BadRequest``).
    details: dict[str, Any] | list[dict[str, Any]] | None = None

    def __str__(self) -> str:
        return f"{self.status} {self.type}: {self.message}"


def openai_body(err: SimError) -> dict[str, Any]:
    """The OpenAI error body (some quoted errors carry no ``code`` key: ``omit_code``)."""
    inner: dict[str, Any] = {"message": err.message, "type": err.type, "param": err.param}
    if not err.omit_code:
        inner["code"] = err.code
    return {"error": inner}


def anthropic_body(err: SimError, request_id: str) -> dict[str, Any]:
    """The Anthropic error body, repeating the ``request-id`` header's value."""
    inner: dict[str, Any] = {"type": err.type, "message": err.message}
    if err.details is not None:
        inner["details"] = err.details
    return {"type": "error", "error": inner, "request_id": request_id}


class ErrorDialect:
    """How one protocol writes its errors: body shape, request-id header, and its catalogue.

    Why a class per protocol: the app renders every refusal (unknown URL, bad JSON, faults, unknown
    model) through the protocol the request reached, so a new simulated protocol brings its error
    shape as one object instead of another ``if provider == ...`` branch here.
    """

    #: The ``type`` of the 404 a real server of this protocol sends for an unknown URL.
    not_found_type: str = "invalid_request_error"

    def unknown_url(self, method: str, path: str) -> SimError:
        """The 404 for a path (or method) the real host does not serve: a misconfigured ``base_url``."""
        return SimError(404, self.not_found_type, f"Unknown request URL: {method} {path}.")

    def unknown_model_card(self, model: str) -> SimError:
        """``GET .../models/{id}`` for a model it does not serve (the same refusal by default)."""
        return self.model_not_found(model)

    def render(self, err: SimError, seed: bytes) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and JSON body bytes of ``err`` as this protocol sends it."""
        raise NotImplementedError

    def model_not_found(self, model: str) -> SimError:
        """The refusal of a model name the simulator does not serve."""
        raise NotImplementedError

    def bad_request(self, message: str, param: str | None = None, code: str | None = None) -> SimError:
        """A 400 ``invalid_request_error`` (``param`` kept where the protocol reports one)."""
        return SimError(400, "invalid_request_error", message, param, code)

    def rate_limited(self, retry_after_ms: int) -> SimError:
        """The 429 of the ``429`` fault, asking for ``retry_after_ms``."""
        raise NotImplementedError

    def request_too_large(self, limit: int) -> SimError | None:
        """The refusal of a body over ``limit`` bytes; None: the host's front end answers (a 413 page).

        api.openai.com's front end (Cloudflare) answers with an HTML 413, no JSON body.
        """
        return None

    def server_error(self) -> SimError:
        """The 500 of the ``500`` fault."""
        raise NotImplementedError

    def overloaded(self) -> SimError:
        """What the ``529`` fault answers with (a 503 or 529, as the real service does)."""
        raise NotImplementedError


def throttled(error_type: str, message: str, retry_after_ms: int, code: str | None = None) -> SimError:
    """A 429 asking for ``retry_after_ms``: ``retry-after`` (seconds, rounded up) and ``retry-after-ms``.

    The wait goes in the headers on every protocol that has them, so the SDKs back off as asked and
    agentlab's errors can report it; each protocol words the body its own way.
    """
    secs = max(1, -(-retry_after_ms // 1000))
    headers = {"retry-after": str(secs), "retry-after-ms": str(retry_after_ms)}
    return SimError(429, error_type, message, code=code, headers=headers)


class OpenAIErrors(ErrorDialect):
    """``{"error": {"message", "type", "param", "code"}}`` with ``x-request-id``."""

    def unknown_url(self, method: str, path: str) -> SimError:
        """``Invalid URL (POST /v1/v1/responses)`` with ``param`` and ``code`` null, as the API words it."""
        return SimError(404, "invalid_request_error", f"Invalid URL ({method} {path})")

    def unknown_model_card(self, model: str) -> SimError:
        """A 404 (a generation request gets a 400) with ``param: "model"``, ``code: "model_not_found"``."""
        return SimError(
            404, "invalid_request_error", f"The model '{model}' does not exist", "model", "model_not_found"
        )

    def render(self, err: SimError, seed: bytes) -> tuple[int, dict[str, str], bytes]:
        """Sends no ``x-should-retry``: the OpenAI SDK decides retries from the status alone here.

        ``x-request-id`` comes from the request, so a retried identical request gets the same id; the
        error's own headers (``retry-after``) go on last.
        """
        headers = {"content-type": "application/json", "x-request-id": openai_request_id(seed)}
        headers.update(err.headers)
        return err.status, headers, json.dumps(openai_body(err), separators=(",", ":")).encode()

    def model_not_found(self, model: str) -> SimError:
        """A 400, not a 404, naming ``param: "model"`` and ``code: "model_not_found"``, as recorded."""
        return SimError(
            400,
            "invalid_request_error",
            f"The requested model '{model}' does not exist.",
            "model",
            "model_not_found",
        )

    def rate_limited(self, retry_after_ms: int) -> SimError:
        """Type ``requests`` (the limit hit), code ``rate_limit_exceeded``; the wait in text and headers."""
        return throttled(
            "requests",
            f"Rate limit reached for requests (simulated). Please try again in {retry_after_ms}ms.",
            retry_after_ms,
            "rate_limit_exceeded",
        )

    def server_error(self) -> SimError:
        """A 500 ``server_error`` with ``param`` and ``code`` null, which the SDK retries by status."""
        return SimError(
            500,
            "server_error",
            "The server had an error while processing your request. Sorry about that! (simulated)",
            None,
            None,
        )

    def overloaded(self) -> SimError:
        """OpenAI has no 529: overload is a 503 ``server_error``, so this fault tests the 503 path."""
        return SimError(
            503,
            "server_error",
            "The engine is currently overloaded, please try again later. (simulated)",
            None,
            None,
        )


class AnthropicErrors(ErrorDialect):
    """``{"type": "error", "error": {"type", "message"}, "request_id"}`` with ``request-id``.

    Non-retryable statuses also carry ``x-should-retry: false``, which the SDK obeys.
    """

    not_found_type = "not_found_error"

    def unknown_url(self, method: str, path: str) -> SimError:
        """The API's bare ``not_found_error`` "Not Found": it does not echo the path."""
        return SimError(404, "not_found_error", "Not Found")

    def render(self, err: SimError, seed: bytes) -> tuple[int, dict[str, str], bytes]:
        """Statuses other than 408/409/429/5xx carry ``x-should-retry: false``, which the SDK obeys.

        The SDK reads that header before it looks at the status; the body repeats ``request-id``, and
        the error's own headers (``retry-after``) go on last.
        """
        rid = anthropic_request_id(seed)
        headers = {"content-type": "application/json", "request-id": rid}
        if err.status < 500 and err.status not in (408, 409, 429):
            headers["x-should-retry"] = "false"
        headers.update(err.headers)
        return err.status, headers, json.dumps(anthropic_body(err, rid), separators=(",", ":")).encode()

    def model_not_found(self, model: str) -> SimError:
        """A 404 ``not_found_error`` whose message is only ``model: <name>``, as recorded (OpenAI: a 400)."""
        return SimError(404, "not_found_error", f"model: {model}")

    def bad_request(self, message: str, param: str | None = None, code: str | None = None) -> SimError:
        """Anthropic errors name no parameter: ``param`` is dropped."""
        return SimError(400, "invalid_request_error", message, None, code)

    def request_too_large(self, limit: int) -> SimError:
        """413 ``request_too_large``, the documented refusal of a body over the 32 MB limit."""
        return SimError(413, "request_too_large", "Request exceeds the maximum size")

    def rate_limited(self, retry_after_ms: int) -> SimError:
        """``rate_limit_error`` with no code; the wait is only in the headers, which the SDK honours."""
        return throttled(
            "rate_limit_error",
            "This request would exceed your organization's rate limit (simulated). Please try again later.",
            retry_after_ms,
        )

    def server_error(self) -> SimError:
        """A 500 ``api_error``: Anthropic's type for its own failures (OpenAI says ``server_error``)."""
        return SimError(500, "api_error", "Internal server error (simulated)")

    def overloaded(self) -> SimError:
        """A 529 ``overloaded_error``, the Anthropic-only status the SDK retries like any 5xx."""
        return SimError(529, "overloaded_error", "Overloaded")


OPENAI = OpenAIErrors()
ANTHROPIC = AnthropicErrors()
