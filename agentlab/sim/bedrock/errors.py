"""Bedrock runtime errors in the real restJson1 shape: ``{"message": ...}`` + ``x-amzn-ErrorType``.

Why its own dialect: botocore reads the error code from the ``x-amzn-ErrorType`` header (the part
before ``:``), else from the body's ``__type``, and the message from ``message``; the request id from
``x-amzn-RequestId``. An adapter's translation is only tested if these match the service.
``SimError.type`` carries the AWS error code (``ValidationException``, ``ThrottlingException``...).
"""

from __future__ import annotations

import hashlib
import json
import uuid

from agentlab.sim.errors import ErrorDialect, SimError, throttled

_CORAL = ":http://internal.amazon.com/coral/com.amazon.bedrock/"
#: What botocore says the model identifier error reads like on the real service.
INVALID_MODEL = "The provided model identifier is invalid."


def request_id(seed: bytes) -> str:
    """A UUID-shaped ``x-amzn-RequestId``, deterministic per request."""
    return str(uuid.UUID(bytes=hashlib.sha256(b"bedrock-rid" + seed).digest()[:16]))


def validation(message: str) -> SimError:
    """A 400 ``ValidationException`` (the service's one type for a request it refuses)."""
    return SimError(400, "ValidationException", message)


def model_error(message: str) -> SimError:
    """A refusal the model behind Converse made: Bedrock prefixes the model's own text."""
    return validation(f"The model returned the following errors: {message}")


class BedrockErrors(ErrorDialect):
    """``{"message"}`` body, code in ``x-amzn-ErrorType``, id in ``x-amzn-RequestId``."""

    not_found_type = "UnknownOperationException"

    def unknown_url(self, method: str, path: str) -> SimError:
        """A path no Bedrock runtime operation serves (no message: the service sends none)."""
        return SimError(404, "UnknownOperationException", "")

    def render(self, err: SimError, seed: bytes) -> tuple[int, dict[str, str], bytes]:
        """Status, the AWS error headers and the JSON body (``message`` only, as the service sends)."""
        headers = {
            "content-type": "application/json",
            "x-amzn-requestid": request_id(seed),
            "x-amzn-errortype": err.type + _CORAL,
            **err.headers,
        }
        body = {"message": err.message} if err.message else {}
        return err.status, headers, json.dumps(body, separators=(",", ":")).encode()

    def model_not_found(self, model: str) -> SimError:
        """Bedrock answers an unknown model id with a 400 ``ValidationException``."""
        return validation(INVALID_MODEL)

    def bad_request(self, message: str, param: str | None = None, code: str | None = None) -> SimError:
        """Every malformed request is a ``ValidationException``."""
        return validation(message)

    def rate_limited(self, retry_after_ms: int) -> SimError:
        """``ThrottlingException`` 429, with the simulator's usual ``retry-after`` hint.

        botocore backs off by itself; the hint is what agentlab's errors report on every protocol.
        """
        message = "Too many requests, please wait before trying again."
        return throttled("ThrottlingException", message, retry_after_ms)

    def server_error(self) -> SimError:
        """A 500 ``InternalServerException``."""
        return SimError(
            500, "InternalServerException", "The server encountered an internal error (simulated)."
        )

    def overloaded(self) -> SimError:
        """A 503 ``ServiceUnavailableException``, Bedrock's "overloaded"."""
        return SimError(503, "ServiceUnavailableException", "Service is temporarily unavailable (simulated).")


BEDROCK = BedrockErrors()
