"""The one place where ``anthropic`` SDK exceptions become agentlab errors.

Why one place: user code catches ``agentlab.errors`` types only and never imports the SDK; retries are
decided by the SDK (``max_retries``, honouring ``retry-after``/``retry-after-ms``) *before* anything
reaches here, so what arrives is final. Messages carry the provider's own error text, status, error
type and request id, never request headers (which hold the key). The provider's own message is kept
(it is the API speaking, not the model) with key-looking substrings redacted and quoted values
removed (:func:`~agentlab.neutral.error_text.provider_text`); an exception that is
not the SDK's is described by type and position only (:mod:`agentlab.neutral.error_text`).
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2

from agentlab.adapters.http_errors import connection_error, status_error, stream_reported
from agentlab.adapters.http_errors import retry_after_seconds as retry_after
from agentlab.errors import (
    AgentlabError,
    ProviderAPIError,
    ProviderError,
    StreamInterruptedError,
)
from agentlab.neutral.error_text import provider_text, wire_error_text

__all__ = ["PROVIDER", "in_stream_error", "retry_after", "translate"]

PROVIDER = "anthropic"

# In-stream ``error`` event types a caller may retry (a *new* call; never transparently). Claude on
# Bedrock reports in-stream failures as AWS event-stream exceptions, named in AWS's camelCase.
_RETRYABLE_TYPES = frozenset(
    {
        "overloaded_error",
        "api_error",
        "rate_limit_error",
        "timeout_error",
        "throttlingException",
        "serviceUnavailableException",
        "internalServerException",
        "modelStreamErrorException",
        "modelTimeoutException",
    }
)
# Error types that mean overloaded whatever the status (besides 503/529, the shared ladder's).
_OVERLOADED_TYPES = frozenset({"overloaded_error"})


def _body_error(body: object) -> tuple[str | None, str | None, str | None]:
    """(error type, message, request_id) from an Anthropic error envelope, when it is one."""
    if not isinstance(body, dict):
        return None, None, None
    err = body.get("error")
    etype = msg = None
    if isinstance(err, dict):
        etype = err.get("type") if isinstance(err.get("type"), str) else None
        msg = err.get("message") if isinstance(err.get("message"), str) else None
    rid = body.get("request_id")
    return etype, msg, rid if isinstance(rid, str) else None


def translate(exc: BaseException, provider: str = PROVIDER) -> AgentlabError:
    """Map an SDK (or transport) exception onto agentlab's error tree. Unknown ones are wrapped.

    ``provider``: the registry entry the errors are tagged with (a platform serving Claude passes its own).
    """
    if isinstance(exc, AgentlabError):
        return exc
    if isinstance(exc, anthropic.APIStatusError):
        etype, msg, body_rid = _body_error(exc.body)
        status = exc.status_code
        return status_error(
            status,
            provider_text(msg or exc.api_message or f"HTTP {status}"),
            provider=provider,
            error_type=etype or exc.type,
            request_id=exc.request_id or body_rid,
            headers=exc.response.headers,
            overloaded_types=_OVERLOADED_TYPES,
        )
    if isinstance(exc, anthropic.APIConnectionError):  # APITimeoutError included
        return connection_error(provider, exc, timed_out=isinstance(exc, anthropic.APITimeoutError))
    if isinstance(exc, httpx2.TransportError):
        # What anthropic < 2.17 let through bare when a body read failed (2.17 wraps it, above).
        return connection_error(provider, exc, timed_out=isinstance(exc, httpx2.TimeoutException))
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ProviderAPIError(
            "response did not match the Messages API schema", provider=provider, status=exc.status_code
        )
    if isinstance(exc, anthropic.AnthropicError):
        return ProviderError(f"{type(exc).__name__}: {provider_text(str(exc))}", provider=provider)
    # Anything else (a pydantic or JSON error while the SDK read or wrote a body, a bug) may quote the
    # body it touched: described by type and position only.
    return ProviderError(f"unexpected {type(exc).__name__}: {wire_error_text(exc)}", provider=provider)


def in_stream_error(
    obj: dict[str, Any], *, request_id: str | None, provider: str = PROVIDER
) -> StreamInterruptedError:
    """An SSE ``error`` event (HTTP status was 200): typed by its ``error.type``, never retried here."""
    etype, msg, body_rid = _body_error(obj)
    return stream_reported(
        msg, provider=provider, error_type=etype, request_id=request_id or body_rid,
        retryable=etype in _RETRYABLE_TYPES,
    )  # fmt: skip
