"""The one status-to-error ladder for every adapter: an HTTP error answer -> agentlab's error tree.

Why one: the same status must mean the same error type whatever the provider, so a caller's
``except RateLimitError`` (and the run's retry classification) works alike on all of them. Each
adapter's ``_errors`` module keeps only what is the provider's own: where its error body puts the
type and message, which of its error type names mean "overloaded", its SDK's exception classes.

The ladder, in order:

====================================  ==========================
429                                   ``RateLimitError``
503, 529, or an "overloaded" type     ``OverloadedError``
other 5xx                             ``ProviderServerError``
any other status (4xx)                ``ProviderAPIError``
====================================  ==========================

Every error carries the provider, status, provider error type, finer code, request id and the
server's retry hint (``retry-after-ms``, then ``retry-after`` in seconds).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from agentlab.errors import (
    OverloadedError,
    ProviderAPIError,
    ProviderConnectionError,
    ProviderServerError,
    RateLimitError,
    StreamInterruptedError,
)
from agentlab.neutral.error_text import provider_text

__all__ = [
    "OVERLOADED_STATUSES",
    "broken_stream",
    "connection_error",
    "retry_after_seconds",
    "status_error",
    "stream_reported",
]

OVERLOADED_STATUSES = frozenset({503, 529})


def stream_reported(
    message: str | None, *, provider: str, error_type: str | None, request_id: str | None, retryable: bool
) -> StreamInterruptedError:
    """An error the API reported inside a 200 stream: the call failed after it started.

    One wording for every adapter; the provider's message is cleaned (:func:`provider_text`), and a
    missing or empty one says so. Each adapter reads the type and whether it is retryable its own way.
    """
    return StreamInterruptedError(
        f"the stream reported an error: {provider_text(message) if message else 'no message'}",
        provider=provider,
        error_type=error_type,
        request_id=request_id,
        retryable=retryable,
    )


def retry_after_seconds(headers: Any) -> float | None:
    """The server's retry hint in seconds: ``retry-after-ms`` first, then ``retry-after`` (seconds form).

    Both providers send these headers on 429/529/5xx answers; an HTTP-date ``retry-after`` is ignored.
    """
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return float(raw) / scale
        except (TypeError, ValueError):
            continue
    return None


def status_error(
    status: int,
    message: str,
    *,
    provider: str,
    error_type: str | None = None,
    code: str | None = None,
    request_id: str | None = None,
    headers: Any = None,
    overloaded_types: Collection[str] = (),
) -> ProviderAPIError:
    """The typed error for an HTTP error answer (the ladder in the module docstring).

    ``message`` passes through :func:`~agentlab.neutral.error_text.provider_text` (again: it is
    idempotent), so no adapter's status error can carry a value the provider quoted back.

    ``overloaded_types``: the provider's error type names that mean "overloaded" whatever the status
    (Anthropic ``overloaded_error``; OpenAI ``server_is_overloaded``).
    """
    kw: dict[str, Any] = {
        "provider": provider,
        "status": status,
        "error_type": error_type,
        "request_id": request_id,
        "retry_after": retry_after_seconds(headers),
        "code": code,
    }
    message = provider_text(message)
    if status == 429:
        return RateLimitError(message, **kw)
    if status in OVERLOADED_STATUSES or (error_type is not None and error_type in overloaded_types):
        return OverloadedError(message, **kw)
    if status >= 500:
        return ProviderServerError(message, **kw)
    return ProviderAPIError(message, **kw)


def connection_error(provider: str, exc: BaseException, *, timed_out: bool) -> ProviderConnectionError:
    """A request that got no answer: a timeout, or a connection that failed.

    The failure is named by the cause's type only: its text may quote the request.
    """
    if timed_out:
        return ProviderConnectionError(f"request to {provider} timed out", provider=provider)
    cause = exc.__cause__
    detail = f" ({type(cause).__name__})" if cause is not None else ""
    return ProviderConnectionError(f"could not reach {provider}{detail}", provider=provider)


def broken_stream(
    exc: BaseException, request_id: str | None, *, provider: str, retryable: bool = True
) -> StreamInterruptedError:
    """A connection that broke mid-stream: nothing of the call is kept; a new call may well succeed.

    Named by the exception's type only (its text may quote the body read so far).
    """
    return StreamInterruptedError(
        f"the connection broke mid-stream ({type(exc).__name__}); nothing of this call was kept",
        provider=provider,
        request_id=request_id,
        retryable=retryable,
    )
