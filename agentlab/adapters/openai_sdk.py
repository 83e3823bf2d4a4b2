"""What the two adapters on the ``openai`` SDK share (Responses, and the Chat Completions dialects).

Both post a body they built themselves through ``client.post(..., cast_to=httpx2.Response)``, so the
SDK's own options travel per request, and both meet the same SDK exceptions besides status errors;
written once here, so both send the same options and name the same failures the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import openai

from agentlab.adapters.http_errors import connection_error
from agentlab.errors import ProviderAPIError, ProviderError
from agentlab.neutral.error_text import provider_text, wire_error_text

__all__ = ["request_options", "sdk_error"]


def request_options(max_retries: int, timeout: float | None, headers: Mapping[str, str]) -> dict[str, Any]:
    """The SDK's per-request options for a raw ``client.post``: retries, bearer auth, headers, timeout.

    Per request, not on the client, so they hold on an injected client too.
    """
    options: dict[str, Any] = {"max_retries": max_retries, "security": {"bearer_auth": True}}
    if headers:
        options["headers"] = dict(headers)
    if timeout is not None:
        options["timeout"] = timeout
    return options


def sdk_error(exc: BaseException, provider: str, schema: str) -> ProviderError:
    """An exception that is neither a status error nor a broken stream, as an agentlab error.

    ``schema``: what the answer failed to match (``"the Responses API"``). An exception that is not the
    SDK's (a pydantic or JSON error while the SDK read or wrote a body, a bug) may quote the body it
    touched: described by type and position only.
    """
    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError included
        return connection_error(provider, exc, timed_out=isinstance(exc, openai.APITimeoutError))
    if isinstance(exc, openai.APIResponseValidationError):
        return ProviderAPIError(
            f"response did not match {schema} schema", provider=provider, status=exc.status_code
        )
    if isinstance(exc, openai.OpenAIError):
        return ProviderError(provider_text(str(exc)), provider=provider)
    return ProviderError(f"{type(exc).__name__}: {wire_error_text(exc)}", provider=provider)
