"""The one place where ``openai`` SDK exceptions (and in-stream failures) become agentlab errors.

Every translated error carries the provider, HTTP status, the provider's error ``type`` (as
``error_type``) and ``code`` (as the extra attribute ``code``), the message and the ``x-request-id``.
Keys never appear: the SDK's messages quote only what the API returned, and the API masks keys (and
key-looking substrings are redacted here too; values the API quotes are removed,
:func:`~agentlab.neutral.error_text.provider_text`). An exception that is not the SDK's is described by type
and position only (:mod:`agentlab.neutral.error_text`): its text may quote a body.
"""

from __future__ import annotations

from typing import Any

import httpx2
import openai

from agentlab.adapters.http_errors import retry_after_seconds as retry_after
from agentlab.adapters.http_errors import status_error
from agentlab.adapters.openai_sdk import sdk_error
from agentlab.errors import ProviderError, StreamInterruptedError
from agentlab.neutral.error_text import provider_text

__all__ = ["in_stream_error", "retry_after", "translate"]

PROVIDER = "openai"

# Error ``type`` names that mean overloaded whatever the status (besides 503/529, the shared ladder's).
_OVERLOADED_TYPES = frozenset({"overloaded_error", "server_is_overloaded"})


def _body_error(body: object) -> dict[str, Any]:
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        return inner if isinstance(inner, dict) else {}
    return {}


def translate(
    exc: BaseException, *, request_id: str | None = None, provider: str = PROVIDER
) -> ProviderError:
    """Map an SDK (or transport) exception onto the error tree.

    ``request_id``: the response's id when the failure came after its headers (a stream that broke
    or timed out mid-way); such a broken connection is retryable, as in the Anthropic adapter.
    ``provider``: the dialect's name (``xai``, ``azure``...), which the error carries.
    """
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        info = _body_error(exc.body)
        # ``code`` (e.g. ``model_not_found``, ``invalid_api_key``) is finer than ``type``; keep both.
        return status_error(
            exc.status_code,
            provider_text(str(info.get("message") or exc.message)),
            provider=provider,
            error_type=exc.type or (str(info["type"]) if info.get("type") else None),
            code=exc.code,
            request_id=exc.request_id,
            headers=exc.response.headers,
            overloaded_types=_OVERLOADED_TYPES,
        )
    if isinstance(exc, httpx2.TimeoutException):
        return StreamInterruptedError(
            f"stream timed out ({type(exc).__name__})",
            provider=provider,
            request_id=request_id,
            retryable=True,
        )
    if isinstance(exc, httpx2.TransportError | httpx2.StreamError):  # only a transport error is retryable
        return StreamInterruptedError(
            f"stream broke ({type(exc).__name__}: {provider_text(str(exc))})",
            provider=provider,
            request_id=request_id,
            retryable=isinstance(exc, httpx2.TransportError),
        )
    return sdk_error(exc, provider, "the Responses API")


def in_stream_error(
    error: dict[str, Any] | None, *, request_id: str | None, failed: bool, provider: str = PROVIDER
) -> StreamInterruptedError:
    """An ``error`` event / ``response.failed`` in a 200 stream: the call failed after it started.

    It is a ``StreamInterruptedError`` (nothing of the call is kept) that still says what the
    provider said: ``error_type`` and ``code`` from the event (e.g. ``insufficient_quota``).
    """
    error = error if isinstance(error, dict) else {}
    etype = _str(error.get("type")) or _str(error.get("code"))
    code = _str(error.get("code"))
    text = _str(error.get("message"))
    message = provider_text(text) if text else ("response.failed" if failed else "error event in stream")
    err = StreamInterruptedError(
        message,
        provider=provider,
        status=None,
        error_type=etype,
        request_id=request_id,
        retryable=etype in ("server_error", "rate_limit_exceeded"),
    )
    err.code = code
    return err


def _str(value: object) -> str | None:
    """A provider-given string field, or None (a non-string there is not shown: it could be anything)."""
    return value if isinstance(value, str) and value else None
