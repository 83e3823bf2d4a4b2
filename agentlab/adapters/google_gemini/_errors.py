"""The one place where ``google-genai`` SDK exceptions become agentlab errors.

Why one place: user code catches ``agentlab.errors`` types only and never imports the SDK; retries are
the SDK's (``HttpRetryOptions``, built from ``max_retries``) and have happened before anything
arrives here. Gemini's error body is ``{"error": {"code", "message", "status", "details": [...]}}``
(Google's ``google.rpc.Status``): ``status`` (``INVALID_ARGUMENT``, ``RESOURCE_EXHAUSTED``,
``UNAVAILABLE``...) becomes ``error_type``; a ``google.rpc.RetryInfo`` detail's ``retryDelay``
(``"30s"``) becomes ``retry_after`` when no ``retry-after`` header gave one; a
``google.rpc.BadRequest`` detail's first ``fieldViolations[].field`` becomes ``code`` (the field the
API refused), else a ``google.rpc.ErrorInfo`` detail's ``reason`` (``API_KEY_INVALID``,
``ACCESS_TOKEN_TYPE_UNSUPPORTED``: what an auth refusal is about, as OpenAI's ``invalid_api_key``).
The API's own message is kept (it is the API speaking, not the model) with key-looking substrings
redacted and the values it quotes removed (its protobuf parser quotes a rejected signature:
:func:`~agentlab.neutral.error_text.provider_text`); nothing else of the SDK exception (which holds
the response and, through it, the request with the key header) is kept, and the agentlab error is
raised without chaining it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import httpx2
from google.auth import exceptions as google_auth_errors
from google.genai import errors as genai_errors

from agentlab.adapters.http_errors import connection_error, retry_after_seconds, status_error, stream_reported
from agentlab.errors import AgentlabError, ConfigError, ProviderError, StreamInterruptedError
from agentlab.neutral.error_text import provider_text, wire_error_text

__all__ = ["PROVIDER", "error_fields", "in_stream_error", "translate"]

PROVIDER = "google"
_OVERLOADED = frozenset({"UNAVAILABLE"})
_RETRYABLE = frozenset({"UNAVAILABLE", "RESOURCE_EXHAUSTED", "INTERNAL", "DEADLINE_EXCEEDED"})
_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _error_object(body: object) -> Mapping[str, Any]:
    """The ``error`` object of a Gemini error body (also the one-element list the API sometimes sends)."""
    if isinstance(body, list) and len(body) == 1:
        body = body[0]
    if not isinstance(body, Mapping):
        return {}
    err = body.get("error", body)
    return err if isinstance(err, Mapping) else {}


def error_fields(body: object) -> tuple[str | None, str | None, float | None, str | None]:
    """(status name, message, RetryInfo delay in seconds, first refused field or ErrorInfo reason)."""
    err = _error_object(body)
    status = err.get("status") if isinstance(err.get("status"), str) else None
    message = err.get("message") if isinstance(err.get("message"), str) else None
    delay: float | None = None
    field: str | None = None
    reason: str | None = None
    details = err.get("details")
    for d in details if isinstance(details, list) else ():
        if not isinstance(d, Mapping):
            continue
        kind = str(d.get("@type", ""))
        if kind.endswith("google.rpc.RetryInfo") and isinstance(d.get("retryDelay"), str):
            m = _DELAY.match(d["retryDelay"])
            delay = float(m.group(1)) if m else None
        elif kind.endswith("google.rpc.ErrorInfo") and isinstance(d.get("reason"), str):
            reason = reason or d["reason"]
        elif kind.endswith("google.rpc.BadRequest") and field is None:
            for v in d.get("fieldViolations") or ():
                if isinstance(v, Mapping) and isinstance(v.get("field"), str):
                    field = v["field"]
                    break
    return status, message, delay, field or reason


def _status_error(code: int, body: object, headers: Any) -> ProviderError:
    status, message, delay, field = error_fields(body)
    hint = retry_after_seconds(headers)
    hdrs = {"retry-after": str(hint if hint is not None else delay)} if (hint or delay) is not None else None
    return status_error(
        code,
        provider_text(message or f"HTTP {code}"),
        provider=PROVIDER,
        error_type=status,
        code=field,
        request_id=_request_id(headers),
        headers=hdrs,
        overloaded_types=_OVERLOADED,
    )


def _request_id(headers: Any) -> str | None:
    if headers is None:
        return None
    for name in ("x-request-id", "x-goog-request-id"):
        value = headers.get(name)
        if isinstance(value, str):
            return value
    return None


def translate(exc: BaseException, request_id: str | None = None) -> AgentlabError:
    """Map an SDK (or transport) exception onto agentlab's error tree. Unknown ones are wrapped."""
    if isinstance(exc, AgentlabError):
        return exc
    if isinstance(exc, genai_errors.APIError):
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        return _status_error(int(exc.code or 0), exc.details, headers)
    if isinstance(exc, google_auth_errors.GoogleAuthError):
        # Vertex AI: the SDK could not get or refresh an access token (before anything was sent).
        return ConfigError(
            f"google: the Vertex AI credentials could not be used ({type(exc).__name__}); check "
            "Application Default Credentials (gcloud auth application-default login) or pass api_key="
        )
    if isinstance(exc, httpx2.TimeoutException):
        return connection_error(PROVIDER, exc, timed_out=True)
    if isinstance(exc, httpx2.TransportError):
        return connection_error(PROVIDER, exc, timed_out=False)
    if isinstance(exc, httpx2.HTTPError | httpx2.StreamError):
        return StreamInterruptedError(
            f"the connection broke mid-stream ({type(exc).__name__}); nothing of this call was kept",
            provider=PROVIDER,
            request_id=request_id,
            retryable=True,
        )
    # Anything else (a JSON error while the SDK read a body, a bug) may quote the body it touched:
    # described by type and position only.
    return ProviderError(f"unexpected {type(exc).__name__}: {wire_error_text(exc)}", provider=PROVIDER)


def in_stream_error(obj: Mapping[str, Any], *, request_id: str | None) -> StreamInterruptedError:
    """An ``{"error": ...}`` chunk inside a 200 stream: typed by its status, never retried here."""
    status, message, _delay, _field = error_fields(obj)
    return stream_reported(
        message, provider=PROVIDER, error_type=status, request_id=request_id, retryable=status in _RETRYABLE
    )
