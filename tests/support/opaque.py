"""Find the simulator's opaque reasoning items in saved text, by what they are, not by a known string.

A notebook or report executed in another process holds whatever that run produced, so a scan
cannot look for a canary planted beforehand. Instead it looks for any token the simulator (default
secret, as the notebooks and the demo use) would accept as its own opaque item: a Gemini
``thoughtSignature`` (in either base64 alphabet: the Python SDK re-encodes URL-safe) or an OpenAI
``encrypted_content``. Each candidate is authenticated with the simulator's key, so a PNG or an id
never counts, and a real item always does (``test_opaque_scan.py`` shows both on live wire traffic).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from typing import Any

from agentlab.sim.signing import DEFAULT_SECRET, Signer
from agentlab.sim.transport import SimTransport

__all__ = ["RecordingTransport", "gemini_signatures_in", "is_sim_gemini_signature", "sim_opaque_tokens"]

_TOKEN = re.compile(r"[A-Za-z0-9+/_-]{40,}={0,2}")
_GEMINI_VERSION = 0x47  # agentlab.sim.signing's layout: version | positions | digest | HMAC tag
_HEAD, _TAG = 21, 32


def _b64(token: str) -> bytes | None:
    std = token.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(std + "=" * (-len(std) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def is_sim_gemini_signature(token: str, secret: bytes = DEFAULT_SECRET) -> bool:
    """Whether ``token`` is a thought signature the simulator issued (its MAC verifies)."""
    raw = _b64(token)
    if raw is None or len(raw) != _HEAD + _TAG or raw[0] != _GEMINI_VERSION:
        return False
    key = hmac.new(secret, b"gemini-thought", hashlib.sha256).digest()
    want = hmac.new(key, b"gemini" + raw[:_HEAD], hashlib.sha256).digest()
    return hmac.compare_digest(raw[_HEAD:], want)


def sim_opaque_tokens(text: str, secret: bytes = DEFAULT_SECRET) -> list[str]:
    """Every simulator-issued opaque item in ``text`` (Gemini signatures, OpenAI encrypted content)."""
    signer = Signer(secret)
    found = []
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        if len(token) > 4096:  # an embedded image or similar: far longer than any opaque item here
            continue
        if is_sim_gemini_signature(token, secret) or signer.decrypt_reasoning(token) is not None:
            found.append(token)
    return found


def gemini_signatures_in(body: dict[str, Any]) -> list[str]:
    """Every ``thoughtSignature`` on the parts of a Gemini request or response body."""
    out = []
    for content in [
        *(body.get("contents") or []),
        *(c.get("content") or {} for c in body.get("candidates") or []),
    ]:
        for part in content.get("parts") or []:
            sig = part.get("thoughtSignature", part.get("thought_signature"))
            if isinstance(sig, str):
                out.append(sig)
    return out


class RecordingTransport(SimTransport):
    """The in-process simulator, keeping every request body it was sent (the positive controls)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.bodies: list[bytes] = []

    def _respond(self, request: Any, body: bytes) -> Any:
        self.bodies.append(body)
        return super()._respond(request, body)
