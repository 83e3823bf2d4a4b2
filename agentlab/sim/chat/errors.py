"""Errors of the simulated Chat Completions hosts, in each dialect's real shape, and their auth rules.

Why per dialect: the ``openai`` SDK raises by status (so retries and typed errors follow), but an
adapter's translation reads the body, and each host writes it differently:

* DeepSeek: OpenAI's shape ``{"error": {"message", "type", "param", "code"}}`` with ``code`` usually
  ``"invalid_request_error"`` too (the quoted bodies in ``fixtures/errors/issue__deepseek_*``), and an
  ``x-ds-trace-id`` header. A missing key is 401 "Authentication Fails (auth header format should
  be Bearer sk-...)".
* OpenRouter: ``{"error": {"message", "code": <int>, "metadata"?}, "user_id"?}``; an upstream
  refusal is "Provider returned error" with ``metadata.raw`` (the vendor's own body, as text) and
  ``provider_name`` (``fixtures/errors/issue__openrouter_400_*``). A missing key is 401 "No auth
  credentials found".
* Local servers (llama.cpp's shape): ``{"error": {"code": <int>, "message", "type"}}``; no key
  needed (a server started without ``--api-key``).
* Kimi (Moonshot): ``{"error": {"message", "type"}}`` (the reasoning_content 400 as quoted in
  sipeed/picoclaw#588); a missing key is 401 "Invalid Authentication" (``invalid_authentication_error``).
* GLM (Z.AI): ``{"error": {"code": "<digits>", "message"}}`` with Z.AI's numeric string codes
  (``"1210"`` "Invalid API parameter, please check the documentation.", quoted in cline/cline#9939);
  a missing key is 401 code ``"1001"``.
* xAI: ``{"code": "<gRPC status text>", "error": "<message>"}`` (no ``error`` object); a missing
  key is 400 "Client specified an invalid argument".

One :class:`ChatErrors` serves DeepSeek, Kimi, GLM, xAI and the local servers (they share
``/v1/chat/completions``);
it writes an error in the dialect the error names (:class:`ChatError`) or, for the app's own
refusals (faults, bad JSON), the dialect of the request's model; DeepSeek's shape otherwise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentlab.sim.chat.dialects import dialect_of
from agentlab.sim.errors import ErrorDialect, SimError, throttled

DEEPSEEK_NO_KEY = "Authentication Fails (auth header format should be Bearer sk-...)"
OPENROUTER_NO_KEY = "No auth credentials found"
DEEPSEEK_NO_MODEL = "Model Not Exist"
MOONSHOT_NO_KEY = "Invalid Authentication"
ZAI_NO_KEY = "Authorization header is missing (simulated)"
ZAI_BAD_PARAMETER = "Invalid API parameter, please check the documentation."
XAI_NO_KEY = (
    "Incorrect API key provided: (none). You can obtain an API key from https://console.x.ai."
)
XAI_INVALID_ARGUMENT = "Client specified an invalid argument"
#: xAI's ``code`` texts (gRPC status descriptions) per HTTP status.
XAI_STATUS = {
    400: XAI_INVALID_ARGUMENT,
    401: "Unauthenticated",
    403: "The caller does not have permission to execute the specified operation",
    404: "Some requested entity was not found",
    429: "Some resource has been exhausted",
    503: "The service is currently unavailable",
}
#: The marker header ``agentlab.sim.chat_client`` sends: the dialect a shared path (``GET /v1/models``) means.
DIALECT_HEADER = "x-agentlab-chat-dialect"
#: A fixed OpenRouter account id for the ``user_id`` its error bodies carry (no real account).
SIM_USER_ID = "user_agentlabsimulated000000000"


@dataclass
class ChatError(SimError):
    """A refusal that knows which dialect's host wrote it (``deepseek`` / ``local``)."""

    dialect: str = "deepseek"


def _bearer(headers: Mapping[str, str]) -> str:
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def deepseek_error(status: int, message: str, type_: str = "invalid_request_error") -> ChatError:
    """A DeepSeek refusal (``code`` is ``invalid_request_error`` in every quoted body)."""
    return ChatError(status, type_, message, None, "invalid_request_error", dialect="deepseek")


def moonshot_error(status: int, message: str, type_: str = "invalid_request_error") -> ChatError:
    """A Kimi (Moonshot) refusal: ``{"error": {"message", "type"}}``."""
    return ChatError(status, type_, message, dialect="moonshot")


def local_error(status: int, message: str, type_: str = "invalid_request_error") -> ChatError:
    """A local server's refusal in llama.cpp's shape."""
    return ChatError(status, type_, message, dialect="local")


def require_key(dialect: str, headers: Mapping[str, str]) -> None:
    """Refuse a request without a non-empty bearer key where the host needs one."""
    if _bearer(headers):
        return
    if dialect == "deepseek":
        raise deepseek_error(401, DEEPSEEK_NO_KEY, "authentication_error")
    if dialect == "openrouter":
        raise SimError(401, "authentication_error", OPENROUTER_NO_KEY)
    if dialect == "moonshot":
        raise moonshot_error(401, MOONSHOT_NO_KEY, "invalid_authentication_error")
    if dialect == "zai":
        raise ChatError(401, "authentication_error", ZAI_NO_KEY, code="1001", dialect="zai")
    if dialect == "xai_chat":
        raise ChatError(400, XAI_INVALID_ARGUMENT, XAI_NO_KEY, dialect="xai_chat")


def shared_headers(headers: Mapping[str, str]) -> None:
    """DeepSeek-only paths (``/chat/completions``, ``/models``) need a key before the body is read.

    On ``/v1/...`` (DeepSeek and local servers) the model decides, so the handler checks there; a
    ``GET /v1/models`` says its dialect with :data:`DIALECT_HEADER` (default: DeepSeek).
    """
    path = headers.get(":path", "")
    if not path.startswith("/v1/"):
        require_key("deepseek", headers)
    elif not path.endswith("/completions"):
        require_key(headers.get(DIALECT_HEADER, "deepseek"), headers)


def zai_headers(headers: Mapping[str, str]) -> None:
    """Z.AI refuses every request without a key (401, its code ``"1001"``)."""
    require_key("zai", headers)


def openrouter_headers(headers: Mapping[str, str]) -> None:
    """OpenRouter refuses every request without a key (401 "No auth credentials found")."""
    require_key("openrouter", headers)


def _model_in(seed: bytes) -> object:
    try:
        body = json.loads(seed or b"{}")
    except ValueError:
        return None
    return (
        body.get("model", "").partition("+")[0]
        if isinstance(body, dict) and isinstance(body.get("model"), str)
        else None
    )


class ChatErrors(ErrorDialect):
    """DeepSeek's and the local servers' error bodies (see the module docstring)."""

    def _dialect(self, err: SimError, seed: bytes) -> str:
        if isinstance(err, ChatError):
            return err.dialect
        return dialect_of(_model_in(seed)) or "deepseek"

    def render(self, err: SimError, seed: bytes) -> tuple[int, dict[str, str], bytes]:
        """The body in the dialect's shape, compact JSON as the hosts send it."""
        headers = {"content-type": "application/json", **err.headers}
        dialect = self._dialect(err, seed)
        body: Any
        if dialect == "local":
            body = {"error": {"code": err.status, "message": err.message, "type": err.type}}
        elif dialect == "moonshot":
            body = {"error": {"message": err.message, "type": err.type}}
        elif dialect == "zai":
            body = {"error": {"code": err.code or "1210", "message": err.message}}
        elif dialect == "xai_chat":
            body = {"code": XAI_STATUS.get(err.status, "Internal error"), "error": err.message}
        else:
            body = {"error": {"message": err.message, "type": err.type, "param": err.param, "code": err.code}}
            headers["x-ds-trace-id"] = hashlib.sha256(b"ds-trace" + seed).hexdigest()[:32]
        return err.status, headers, json.dumps(body, separators=(",", ":")).encode()

    def unknown_url(self, method: str, path: str) -> SimError:
        """A path neither host serves: a 404 (DeepSeek's shape)."""
        return deepseek_error(404, f"Not Found: {method} {path}")

    def model_not_found(self, model: str) -> SimError:
        """DeepSeek's "Model Not Exist" (a 400), for any name neither host serves."""
        return deepseek_error(400, DEEPSEEK_NO_MODEL)

    def unknown_model_card(self, model: str) -> SimError:
        """``GET /models/{id}`` of an unknown id: a 404."""
        return deepseek_error(404, DEEPSEEK_NO_MODEL)

    def bad_request(self, message: str, param: str | None = None, code: str | None = None) -> SimError:
        """A 400 in DeepSeek's shape (``param`` is null in every body DeepSeek sends)."""
        return deepseek_error(400, message)

    def rate_limited(self, retry_after_ms: int) -> SimError:
        """429 with ``retry-after`` headers (DeepSeek's "Rate Limit Reached")."""
        return throttled(
            "rate_limit_error", "Rate Limit Reached (simulated)", retry_after_ms, code="rate_limit_error"
        )

    def server_error(self) -> SimError:
        """500 "Server Error"."""
        return SimError(500, "server_error", "Server Error (simulated)", None, "server_error")

    def overloaded(self) -> SimError:
        """503 "Server Overloaded" (DeepSeek's documented overload status)."""
        return SimError(503, "server_error", "Server Overloaded (simulated)", None, "server_error")


class OpenRouterErrors(ErrorDialect):
    """OpenRouter's ``{"error": {"message", "code", "metadata"?}, "user_id"?}``."""

    def render(self, err: SimError, seed: bytes) -> tuple[int, dict[str, str], bytes]:
        """``metadata`` is carried in ``SimError.details``; ``user_id`` on refusals of a keyed request."""
        inner: dict[str, Any] = {"message": err.message, "code": err.status}
        if err.details is not None:
            inner["metadata"] = err.details
        body: dict[str, Any] = {"error": inner}
        if err.status not in (401, 404):
            body["user_id"] = SIM_USER_ID
        headers = {"content-type": "application/json", **err.headers}
        return err.status, headers, json.dumps(body, separators=(",", ":")).encode()

    def unknown_url(self, method: str, path: str) -> SimError:
        """A path OpenRouter does not serve."""
        return SimError(404, "not_found", "Not Found")

    def model_not_found(self, model: str) -> SimError:
        """OpenRouter's 400 for a model id it does not route."""
        return SimError(400, "bad_request", f"{model} is not a valid model ID")

    def unknown_model_card(self, model: str) -> SimError:
        """``GET /api/v1/models/{id}`` of an unknown id."""
        return SimError(404, "not_found", f"Model {model} not found")

    def bad_request(self, message: str, param: str | None = None, code: str | None = None) -> SimError:
        """A 400 of OpenRouter's own validation."""
        return SimError(400, "bad_request", message)

    def rate_limited(self, retry_after_ms: int) -> SimError:
        """429, with ``retry-after`` headers so the SDK waits as asked."""
        return throttled("rate_limited", "Rate limit exceeded (simulated)", retry_after_ms)

    def server_error(self) -> SimError:
        """500."""
        return SimError(500, "server_error", "Internal Server Error (simulated)")

    def overloaded(self) -> SimError:
        """An overloaded upstream: 502 "Provider returned error", as OpenRouter relays it."""
        return SimError(
            502,
            "provider_error",
            "Provider returned error",
            details={"raw": "overloaded (simulated)", "provider_name": "Simulated", "is_byok": False},
        )


def upstream(raw: str, provider_name: str, prefix: str = "") -> SimError:
    """OpenRouter relaying a vendor's 400: "Provider returned error" with the vendor body as ``raw``."""
    details = {"raw": prefix + raw, "provider_name": provider_name, "is_byok": False}
    return SimError(400, "provider_error", "Provider returned error", details=details)


CHAT = ChatErrors()
OPENROUTER = OpenRouterErrors()
