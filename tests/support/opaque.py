"""Find the simulator's opaque reasoning items in saved text, by what they are, not by a known string.

A notebook or report executed in another process holds whatever that run produced, so a scan
cannot look for a canary planted beforehand. Instead it looks for any token the simulator (default
secret, as the notebooks and the demo use) would accept as its own opaque item: a Gemini
``thoughtSignature`` (in either base64 alphabet: the Python SDK re-encodes URL-safe), an OpenAI
``encrypted_content``, or a simulated Chat Completions router item: OpenRouter's ``reasoning_details``
``reasoning.encrypted`` data (a Gemini-backed thought signature) or ``reasoning.text`` signature
(Claude-backed, Anthropic's thinking-signature layout). Each candidate is authenticated with the
simulator's key, so a PNG or an id never counts, and a real item always does
(``test_opaque_scan.py`` shows both on live wire traffic).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from typing import Any

from agentlab.sim.signing import (  # the layouts the simulator signs
    _SIG_VERSION,
    DEFAULT_SECRET,
    LAYOUT_BYTES,
    Signer,
    _key,
)
from agentlab.sim.transport import SimTransport

__all__ = [
    "RecordingTransport",
    "chat_reasoning_in",
    "gemini_signatures_in",
    "is_sim_gemini_signature",
    "is_sim_router_signature",
    "sim_opaque_tokens",
]

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


_ROUTER_GEMINI_HEAD = 2 + 2 + 16  # agentlab.sim.chat.rules.sign_gemini: magic | position | digest | tag
_THINKING_HEAD = 3 + LAYOUT_BYTES + 16  # Signer.sign_thinking: version | position | layout | digest


def is_sim_router_signature(token: str, secret: bytes = DEFAULT_SECRET) -> bool:
    """Whether ``token`` is a simulated OpenRouter ``reasoning_details`` secret (its MAC verifies).

    That is a Gemini-backed ``reasoning.encrypted`` ``data`` or a thinking ``signature``
    (Claude-backed, and the simulated Anthropic's own).
    """
    raw = _b64(token)
    if raw is None:
        return False
    if len(raw) == _ROUTER_GEMINI_HEAD + _TAG and raw[:2] == b"\x12\x34":
        key = hmac.new(secret, b"openrouter-gemini-signature", hashlib.sha256).digest()
        want = hmac.new(key, b"gemini" + raw[2:_ROUTER_GEMINI_HEAD], hashlib.sha256).digest()
        return hmac.compare_digest(raw[_ROUTER_GEMINI_HEAD:], want)
    if len(raw) == _THINKING_HEAD + _TAG and raw[0] == _SIG_VERSION:
        key = _key(secret, "anthropic-thinking")
        want = hmac.new(key, b"thinking" + raw[:_THINKING_HEAD], hashlib.sha256).digest()
        return hmac.compare_digest(raw[_THINKING_HEAD:], want)
    return False


def sim_opaque_tokens(text: str, secret: bytes = DEFAULT_SECRET) -> list[str]:
    """Every simulator-issued opaque item in ``text``.

    Gemini signatures, OpenAI encrypted content, OpenRouter ``reasoning_details`` data and signatures.
    """
    signer = Signer(secret)
    found = []
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        if len(token) > 4096:  # an embedded image or similar: far longer than any opaque item here
            continue
        if (
            is_sim_gemini_signature(token, secret)
            or signer.decrypt_reasoning(token) is not None
            or is_sim_router_signature(token, secret)
        ):
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


def chat_reasoning_in(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """``(reasoning texts, opaque secrets)`` on the assistant messages of a Chat Completions request.

    Texts: ``reasoning_content`` / ``reasoning`` and the ``text`` / ``summary`` of ``reasoning_details``
    (DeepSeek's and local servers' reasoning is plain text: it can only be found by value); secrets:
    the details' ``data`` and ``signature``.
    """
    texts: list[str] = []
    secrets: list[str] = []
    for m in body.get("messages") or []:
        if m.get("role") != "assistant":
            continue
        texts += [m[k] for k in ("reasoning_content", "reasoning") if isinstance(m.get(k), str) and m[k]]
        for d in m.get("reasoning_details") or []:
            texts += [d[k] for k in ("text", "summary") if isinstance(d.get(k), str) and d[k]]
            secrets += [d[k] for k in ("data", "signature") if isinstance(d.get(k), str) and d[k]]
    return texts, secrets


class RecordingTransport(SimTransport):
    """The in-process simulator, keeping every request body it was sent (the positive controls)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.bodies: list[bytes] = []

    def _respond(self, request: Any, body: bytes) -> Any:
        self.bodies.append(body)
        return super()._respond(request, body)
