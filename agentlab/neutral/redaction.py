"""The one pattern for API-key-looking strings, and the function that blanks them.

Why it lives in ``neutral``: every layer that writes text somewhere durable redacts keys with it
(error texts here, the logging filter and event log in ``records``, the loop's and the sweeps'
error rows), so it sits below all of them and imports nothing of agentlab.
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "redact_secrets"]

REDACTED = "[REDACTED]"

_SECRET_RE = re.compile(
    r"(sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"
    # Bearer tokens whole, base64 alphabet included: a Bedrock API key is base64 ("+", "/", "=").
    r"|(?i:bearer)\s+[A-Za-z0-9._\-+/=]{12,}|(?i:x-api-key)[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9._\-]{12,}"
    # AWS: a session token in a header line (botocore logs SigV4's canonical request), a Bedrock
    # API key (``ABSK...``, base64), an access key id.
    r"|(?i:x-amz-security-token)[\"']?\s*[:=]\s*b?[\"']?[A-Za-z0-9+/=%]{12,}"
    r"|ABSK[A-Za-z0-9+/=]{20,}|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b)"
)


def redact_secrets(text: str) -> str:
    """Replace API-key-looking substrings with ``[REDACTED]``."""
    return _SECRET_RE.sub(REDACTED, text) if text else text
