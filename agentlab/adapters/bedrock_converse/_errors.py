"""The one place where botocore exceptions become agentlab errors.

botocore retries first (``max_retries``: the client's standard retry mode, which backs off on
``ThrottlingException``, 5xx and dropped connections), so what arrives here is final. A
``ClientError`` carries the AWS error code (``ValidationException``, ``ThrottlingException``,
``ModelStreamErrorException``...) and the HTTP status, which go through the one status ladder
(:mod:`agentlab.adapters.http_errors`); the message is the service's (key-looking parts redacted and
quoted values removed by :func:`~agentlab.neutral.error_text.provider_text`). Missing credentials
are a ``ConfigError`` naming what to set, raised before anything is sent.
"""

from __future__ import annotations

from typing import Any

from agentlab.adapters.http_errors import connection_error, status_error, stream_reported
from agentlab.errors import AgentlabError, ConfigError, ProviderError, StreamInterruptedError
from agentlab.neutral.error_text import provider_text, wire_error_text

__all__ = ["NO_CREDENTIALS", "PROVIDER", "in_stream_error", "translate"]

PROVIDER = "bedrock"
NO_CREDENTIALS = (
    "bedrock: no AWS credentials found; set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), or "
    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (a profile in ~/.aws), and a region "
    "(AWS_REGION or region_name=)"
)
# Error codes that mean "overloaded" whatever the status (503 is the ladder's own).
_OVERLOADED = frozenset({"ServiceUnavailableException", "ModelNotReadyException", "overloaded_error"})
# In-stream exception types a caller may retry with a new call (never transparently).
_RETRYABLE = frozenset(
    {
        "modelStreamErrorException",
        "throttlingException",
        "serviceUnavailableException",
        "internalServerException",
    }
)


def _client_error(exc: Any) -> AgentlabError:
    response = getattr(exc, "response", None) or {}
    err = response.get("Error") or {}
    meta = response.get("ResponseMetadata") or {}
    headers = {str(k).lower(): v for k, v in (meta.get("HTTPHeaders") or {}).items()}
    code = err.get("Code") if isinstance(err.get("Code"), str) else None
    message = err.get("Message") if isinstance(err.get("Message"), str) else None
    status = meta.get("HTTPStatusCode")
    return status_error(
        status if isinstance(status, int) else 400,
        provider_text(message or code or "HTTP error"),
        provider=PROVIDER,
        error_type=code,
        request_id=meta.get("RequestId") or headers.get("x-amzn-requestid") or headers.get("request-id"),
        headers=headers,
        overloaded_types=_OVERLOADED,
    )


def translate(exc: BaseException) -> AgentlabError:
    """Map a botocore (or urllib3) exception onto agentlab's error tree. Unknown ones are wrapped."""
    if isinstance(exc, AgentlabError):
        return exc
    from botocore import exceptions as bx  # type: ignore[import-untyped]

    if isinstance(exc, bx.NoCredentialsError | bx.PartialCredentialsError | bx.NoAuthTokenError):
        return ConfigError(NO_CREDENTIALS)
    if isinstance(exc, bx.NoRegionError):
        return ConfigError("bedrock: no AWS region; set AWS_REGION (e.g. us-east-1) or pass region_name=")
    if isinstance(exc, bx.EventStreamError):
        return in_stream_error(
            {"type": exc.response.get("Error", {}).get("Code"), **exc.response.get("Error", {})}, None
        )
    if isinstance(exc, bx.ClientError):
        return _client_error(exc)
    if isinstance(exc, bx.ReadTimeoutError | bx.ConnectTimeoutError):
        return connection_error(PROVIDER, exc, timed_out=True)
    if isinstance(exc, bx.EndpointConnectionError | bx.ConnectionClosedError | bx.HTTPClientError):
        return connection_error(PROVIDER, exc, timed_out=False)
    if isinstance(exc, bx.ResponseStreamingError) or _urllib3_error(exc):
        return connection_error(PROVIDER, exc, timed_out=False)
    if isinstance(exc, bx.BotoCoreError):
        return ProviderError(f"{type(exc).__name__}: {provider_text(str(exc))}", provider=PROVIDER)
    return ProviderError(f"unexpected {type(exc).__name__}: {wire_error_text(exc)}", provider=PROVIDER)


def _urllib3_error(exc: BaseException) -> bool:
    """A read that failed under botocore (urllib3's ``ProtocolError``, ``ReadTimeoutError``...)."""
    from urllib3.exceptions import HTTPError

    return isinstance(exc, HTTPError | ConnectionError)


def in_stream_error(body: dict[str, Any], request_id: str | None) -> StreamInterruptedError:
    """An exception message inside a 200 stream (``modelStreamErrorException``...): never retried here."""
    etype = body.get("type") if isinstance(body.get("type"), str) else None
    msg = body.get("message") or body.get("Message")
    return stream_reported(
        msg if isinstance(msg, str) else None, provider=PROVIDER, error_type=etype, request_id=request_id,
        retryable=etype in _RETRYABLE,
    )  # fmt: skip
