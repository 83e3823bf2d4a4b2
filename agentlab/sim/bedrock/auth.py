"""The shape checks of a Bedrock request's credentials: SigV4, or a Bedrock API key (bearer token).

Why shape only: the simulator holds no AWS secret, so it cannot verify a signature; what it can
check is what botocore must get right for the real service to accept it at all: an
``Authorization`` header of the form ``AWS4-HMAC-SHA256 Credential=<key id>/<yyyymmdd>/<region>/
bedrock/aws4_request, SignedHeaders=<...;host;...;x-amz-date>, Signature=<64 hex>`` with an
``X-Amz-Date`` of the same day, or ``Authorization: Bearer <key>`` (``AWS_BEARER_TOKEN_BEDROCK``).
Texts and types are the service's (403 ``MissingAuthenticationTokenException`` /
``IncompleteSignatureException`` / ``InvalidSignatureException``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from agentlab.sim.errors import SimError

_SIGV4 = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[A-Z0-9]{4,128})/(?P<day>\d{8})/(?P<region>[a-z0-9-]+)/"
    r"(?P<service>[a-z0-9-]+)/aws4_request, SignedHeaders=(?P<signed>[a-z0-9;-]+), "
    r"Signature=(?P<sig>[0-9a-f]{64})\Z"
)
_AMZ_DATE = re.compile(r"(\d{8})T\d{6}Z\Z")


def _incomplete(why: str) -> SimError:
    return SimError(403, "IncompleteSignatureException", why)


def check_auth(headers: Mapping[str, str]) -> None:
    """Refuse a request whose credentials the real service would refuse for their shape."""
    auth = headers.get("authorization")
    if not auth:
        raise SimError(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
    if auth.startswith("Bearer "):
        if not auth[7:].strip():
            raise SimError(
                403, "UnrecognizedClientException", "The security token included in the request is invalid."
            )
        return
    m = _SIGV4.match(auth)
    if m is None:
        raise _incomplete(
            "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters "
            "in the AWS4-HMAC-SHA256 form."
        )
    date = _AMZ_DATE.match(headers.get("x-amz-date", ""))
    if date is None:
        raise _incomplete(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
        )
    signed = m.group("signed").split(";")
    if m.group("service") != "bedrock" or "host" not in signed or "x-amz-date" not in signed:
        raise SimError(
            403,
            "InvalidSignatureException",
            "Credential should be scoped to correct service: 'bedrock'. "
            if m.group("service") != "bedrock"
            else "The request signature we calculated does not match the signature you provided.",
        )
    if date.group(1) != m.group("day"):
        raise SimError(
            403,
            "InvalidSignatureException",
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.",
        )
