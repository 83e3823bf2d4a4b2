"""What each real API requires of a request's headers before it reads the body.

Why here, before routing to a handler: a client that forgets its key or the version header fails
in production with these exact statuses and texts, so it must fail the same way offline. The
simulator checks that a credential is *present* and non-empty, never its value (any key works;
none is stored, logged or echoed). Each protocol's registry entry names its check
(``SimProtocol.check_headers``).

* OpenAI: ``Authorization: Bearer <key>``; otherwise 401 ``invalid_request_error`` "You didn't
  provide an API key. ..." with ``param`` and ``code`` null (the API's text).
* Anthropic: ``x-api-key`` (or an OAuth ``Authorization: Bearer`` token); otherwise 401
  ``authentication_error`` "x-api-key header is required". Then ``anthropic-version`` is required:
  400 ``invalid_request_error`` "anthropic-version: header is required".
"""

from __future__ import annotations

from collections.abc import Mapping

from agentlab.sim.errors import SimError

OPENAI_NO_KEY = (
    "You didn't provide an API key. You need to provide your API key in an Authorization header using "
    "Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if "
    "you're accessing the API from your browser and are prompted for a username and password. You can "
    "obtain an API key from https://platform.openai.com/account/api-keys."
)
ANTHROPIC_NO_KEY = "x-api-key header is required"
ANTHROPIC_NO_VERSION = "anthropic-version: header is required"


def _bearer(headers: Mapping[str, str]) -> str:
    """The token of an ``Authorization: Bearer <token>`` header ('' when absent or another scheme)."""
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def openai_headers(headers: Mapping[str, str]) -> None:
    """Refuse a request without a non-empty bearer key, as OpenAI does (``headers`` lower-cased)."""
    if not _bearer(headers):
        raise SimError(401, "invalid_request_error", OPENAI_NO_KEY)


def anthropic_headers(headers: Mapping[str, str]) -> None:
    """Refuse a request without a key (401), then one without ``anthropic-version`` (400)."""
    if not (headers.get("x-api-key", "").strip() or _bearer(headers)):
        raise SimError(401, "authentication_error", ANTHROPIC_NO_KEY)
    if not headers.get("anthropic-version", "").strip():
        raise SimError(400, "invalid_request_error", ANTHROPIC_NO_VERSION)
