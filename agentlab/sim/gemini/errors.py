"""Gemini API errors in the real shape: ``{"error": {"code", "message", "status", "details"?}}``.

Why its own dialect: the google-genai SDK raises ``ClientError`` / ``ServerError`` from the status
and reads ``error.status`` (``INVALID_ARGUMENT``, ``RESOURCE_EXHAUSTED``) and ``details`` (a
``google.rpc.RetryInfo`` tells how long to wait); an adapter's error translation is only tested if
these match the API. ``SimError.type`` carries the status string, ``SimError.details`` the list.
"""

from __future__ import annotations

import json
from typing import Any

from agentlab.sim.errors import ErrorDialect, SimError

RPC = "type.googleapis.com/google.rpc."
NO_KEY = (
    "Method doesn't allow unregistered callers (callers without established identity). Please use API "
    "Key or other form of API consumer identity to call this API."
)
BAD_KEY = "API key not valid. Please pass a valid API key."
BAD_TOKEN = (
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other "
    "valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
)


def error_info(reason: str) -> dict[str, Any]:
    """A ``google.rpc.ErrorInfo`` detail as the API attaches it (``API_KEY_INVALID``, ...)."""
    return {
        "@type": RPC + "ErrorInfo",
        "reason": reason,
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    }


def invalid_argument(message: str, violations: list[dict[str, str]] | None = None) -> SimError:
    """A 400 ``INVALID_ARGUMENT``; field violations go in a ``google.rpc.BadRequest`` detail."""
    details = [{"@type": RPC + "BadRequest", "fieldViolations": violations}] if violations else None
    return SimError(400, "INVALID_ARGUMENT", message, details=details)


class GeminiErrors(ErrorDialect):
    """The Google API error object; no request-id header (the API sends none the SDK reads)."""

    not_found_type = "NOT_FOUND"

    def unknown_url(self, method: str, path: str) -> SimError:
        """A path no Gemini method serves: the API's bare 404 "Method not found."."""
        return SimError(404, "NOT_FOUND", "Method not found.")

    def render(self, err: SimError, seed: bytes) -> tuple[int, dict[str, str], bytes]:
        """``{"error": {...}}``, pretty-printed with two spaces as the API sends it."""
        inner: dict[str, Any] = {"code": err.status, "message": err.message, "status": err.type}
        if err.details is not None:
            inner["details"] = err.details
        headers = {"content-type": "application/json; charset=UTF-8", **err.headers}
        return err.status, headers, json.dumps({"error": inner}, indent=2).encode()

    def model_not_found(self, model: str) -> SimError:
        """The API's 404 for a model name it does not serve."""
        return SimError(
            404,
            "NOT_FOUND",
            f"models/{model} is not found for API version v1beta, or is not supported for generateContent. "
            "Call ListModels to see the list of available models and their supported methods.",
        )

    def unknown_model_card(self, model: str) -> SimError:
        """``GET models/{id}`` of an unknown model."""
        return SimError(404, "NOT_FOUND", f"models/{model} is not found for API version v1beta")

    def bad_request(self, message: str, param: str | None = None, code: str | None = None) -> SimError:
        """A 400 ``INVALID_ARGUMENT`` (the field, when known, as a BadRequest violation)."""
        return invalid_argument(message, [{"field": param, "description": message}] if param else None)

    def request_too_large(self, limit: int) -> SimError:
        """Google's API front end: a 400 ``INVALID_ARGUMENT`` naming the limit, not a 413."""
        return invalid_argument(f"Request payload size exceeds the limit: {limit} bytes.")

    def rate_limited(self, retry_after_ms: int) -> SimError:
        """429 ``RESOURCE_EXHAUSTED`` with a ``RetryInfo`` detail (the wait), as the API sends it."""
        secs = max(1, -(-retry_after_ms // 1000))
        return SimError(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota, please check your plan and billing details (simulated). "
            f"Please retry in {retry_after_ms / 1000:g}s.",
            details=[
                {
                    "@type": RPC + "Help",
                    "links": [
                        {
                            "description": "Learn more about Gemini API quotas",
                            "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                        }
                    ],
                },
                {"@type": RPC + "RetryInfo", "retryDelay": f"{secs}s"},
            ],
        )

    def server_error(self) -> SimError:
        """500 ``INTERNAL``."""
        return SimError(
            500,
            "INTERNAL",
            "An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting (simulated)",
        )

    def overloaded(self) -> SimError:
        """Gemini has no 529: overload is 503 ``UNAVAILABLE``."""
        return SimError(503, "UNAVAILABLE", "The model is overloaded. Please try again later. (simulated)")


GEMINI = GeminiErrors()
