"""Keyed signatures for the opaque reasoning state the simulated providers hand out.

Why: the strictness rules (a modified thinking block gets a 400, a tampered ``encrypted_content`` is
rejected) must be decided by cryptography, not by string comparison with something the server
remembers, so the simulator stays stateless like the real stateless modes.

* Anthropic ``thinking.signature``: base64 of ``version | block position (2 bytes) | turn layout
  (9 bytes) | sha256(text)[:16] | HMAC-SHA256(key, "thinking" | head)``. A bad MAC is an *invalid
  signature*; a good MAC whose position or digest disagrees with the block it came with means the
  block was *modified* or moved. The turn layout (count of thinking/redacted blocks in the response +
  a digest over all of them, :func:`turn_layout`) binds every block to its siblings: a turn sent back
  with one of its thinking blocks missing, or with a block from another response, is *modified*.
* Anthropic ``redacted_thinking.data``: the hidden thinking text, encrypted and authenticated, bound
  to its position and turn layout the same way.
* OpenAI ``encrypted_content``: a Fernet-shaped token (``0x80 | timestamp | iv | ciphertext | mac``,
  urlsafe base64, so it starts ``gAAAAA`` like the real one) whose plaintext is JSON carrying the
  model's plan for the current tool loop. The cipher is an HMAC-SHA256 counter keystream: stdlib only,
  deterministic (the IV is derived from the plaintext), authenticated with encrypt-then-MAC.

* Gemini ``thoughtSignature``: base64 of ``version | content index (2 bytes) | call index (2 bytes) |
  sha256(name, args)[:16] | HMAC-SHA256(key, "gemini" | head)``. The content index is where the model
  turn sits in the next request's ``contents``; the call index counts the turn's ``functionCall``
  parts (thought summaries, which clients may drop, do not shift it). The API sends standard base64
  and accepts URL-safe too (the Python SDK re-encodes), so both decode to the same bytes here.

Each provider uses its own key derived from the simulator secret, so one provider's opaque item can
never verify at the other's endpoint. Claude's thinking is keyed per platform too (``platform``:
``""`` for Anthropic's API, ``"bedrock"``, ``"vertex"``): a block signed on Bedrock is an invalid
signature on Anthropic's API and on Vertex, and the reverse, as on the real services.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import struct
from dataclasses import dataclass, field
from typing import Any

DEFAULT_SECRET = b"agentlab-sim-default-secret-v1"
_SIG_VERSION = 0x13
_RED_VERSION = 0x1B
LAYOUT_BYTES = 9
_FERNET_VERSION = 0x80
_GEMINI_VERSION = 0x47
#: A fixed timestamp so identical requests give identical bytes.
FIXED_TIMESTAMP = 1_767_225_600


def _key(secret: bytes, purpose: str) -> bytes:
    return hmac.new(secret, purpose.encode(), hashlib.sha256).digest()


def _claude_key(secret: bytes, purpose: str, platform: str) -> bytes:
    """The key of Claude's opaque blocks on one platform (Anthropic's own API keeps the original key)."""
    return _key(secret, f"{purpose}@{platform}" if platform else purpose)


def _keystream(key: bytes, iv: bytes, n: int) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hmac.new(key, iv + struct.pack(">I", counter), hashlib.sha256).digest()
        counter += 1
    return bytes(out[:n])


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def _b64decode(text: str, *, urlsafe: bool) -> bytes | None:
    try:
        pad = "=" * (-len(text) % 4)
        raw = text + pad
        return base64.urlsafe_b64decode(raw) if urlsafe else base64.b64decode(raw, validate=True)
    except (ValueError, TypeError):
        return None


def _layout(layout: bytes) -> bytes:
    if len(layout) != LAYOUT_BYTES:
        raise ValueError(f"a turn layout is {LAYOUT_BYTES} bytes")
    return layout


def turn_layout(blocks: list[tuple[int, str, str]]) -> bytes:
    """Count + digest of one turn's thinking/redacted blocks, given as (position, type, text).

    ``text`` is what the client sends back for thinking (shown text, ``""`` when omitted) and the
    hidden text for redacted thinking, so the server can recompute it from a request.
    """
    h = hashlib.sha256()
    for pos, kind, text in sorted(blocks):
        h.update(struct.pack(">H", pos) + kind.encode() + b"\0" + hashlib.sha256(text.encode()).digest())
    return struct.pack(">B", min(len(blocks), 255)) + h.digest()[:8]


class ThinkingVerdict:
    """Outcome names of :meth:`Signer.check_thinking` (plain strings so callers can match)."""

    OK = "ok"
    INVALID = "invalid_signature"
    MODIFIED = "modified"


@dataclass(frozen=True)
class Signer:
    """Signs and verifies opaque items with keys derived from one secret."""

    secret: bytes = field(default=DEFAULT_SECRET, repr=False)

    # -- Anthropic thinking --------------------------------------------------------------------
    def sign_thinking(
        self, text: str, position: int, layout: bytes = bytes(LAYOUT_BYTES), *, platform: str = ""
    ) -> str:
        """Signature for a thinking block showing ``text`` at content index ``position`` of a turn."""
        digest = hashlib.sha256(text.encode()).digest()[:16]
        head = struct.pack(">BH", _SIG_VERSION, position) + _layout(layout) + digest
        key = _claude_key(self.secret, "anthropic-thinking", platform)
        tag = hmac.new(key, b"thinking" + head, hashlib.sha256).digest()
        return base64.b64encode(head + tag).decode()

    def check_thinking(
        self, text: Any, signature: Any, position: int, *, platform: str = ""
    ) -> tuple[str, bytes | None]:
        """(verdict, signed turn layout): ``ok``, ``invalid_signature`` or ``modified``."""
        if not isinstance(signature, str) or not isinstance(text, str):
            return ThinkingVerdict.INVALID, None
        raw = _b64decode(signature, urlsafe=False)
        n_head = 3 + LAYOUT_BYTES + 16
        if raw is None or len(raw) != n_head + 32 or raw[0] != _SIG_VERSION:
            return ThinkingVerdict.INVALID, None
        head, tag = raw[:n_head], raw[n_head:]
        key = _claude_key(self.secret, "anthropic-thinking", platform)
        want = hmac.new(key, b"thinking" + head, hashlib.sha256).digest()
        if not hmac.compare_digest(tag, want):
            return ThinkingVerdict.INVALID, None
        (pos,) = struct.unpack(">H", head[1:3])
        layout = head[3 : 3 + LAYOUT_BYTES]
        if pos != position or head[3 + LAYOUT_BYTES :] != hashlib.sha256(text.encode()).digest()[:16]:
            return ThinkingVerdict.MODIFIED, layout
        return ThinkingVerdict.OK, layout

    # -- Anthropic redacted_thinking ------------------------------------------------------------

    def seal_redacted(
        self, hidden: str, position: int, layout: bytes = bytes(LAYOUT_BYTES), *, platform: str = ""
    ) -> str:
        """``redacted_thinking.data`` hiding ``hidden`` at content index ``position`` of a turn."""
        plain = hidden.encode()
        key = _claude_key(self.secret, "anthropic-redacted", platform)
        iv = hmac.new(key, b"iv" + plain, hashlib.sha256).digest()[:12]
        head = struct.pack(">BH", _RED_VERSION, position) + _layout(layout) + iv
        body = _xor(plain, _keystream(key, iv, len(plain)))
        tag = hmac.new(key, head + body, hashlib.sha256).digest()
        return base64.b64encode(head + body + tag).decode()

    def open_redacted(self, data: Any, position: int, *, platform: str = "") -> tuple[str, bytes] | None:
        """(hidden text, signed turn layout), or None when ``data`` is not ours, tampered or moved."""
        if not isinstance(data, str):
            return None
        raw = _b64decode(data, urlsafe=False)
        n_head = 3 + LAYOUT_BYTES + 12
        if raw is None or len(raw) < n_head + 32 or raw[0] != _RED_VERSION:
            return None
        head, body, tag = raw[:n_head], raw[n_head:-32], raw[-32:]
        key = _claude_key(self.secret, "anthropic-redacted", platform)
        if not hmac.compare_digest(tag, hmac.new(key, head + body, hashlib.sha256).digest()):
            return None
        (pos,) = struct.unpack(">H", head[1:3])
        if pos != position:
            return None
        iv = head[3 + LAYOUT_BYTES :]
        return _xor(body, _keystream(key, iv, len(body))).decode(errors="replace"), head[3 : 3 + LAYOUT_BYTES]

    # -- Gemini thoughtSignature -----------------------------------------------------------------
    def sign_gemini(self, content: str, position: tuple[int, int]) -> str:
        """A ``thoughtSignature`` for a part showing ``content`` at (content index, call index)."""
        digest = hashlib.sha256(content.encode()).digest()[:16]
        head = struct.pack(">BHH", _GEMINI_VERSION, position[0], position[1]) + digest
        tag = hmac.new(_key(self.secret, "gemini-thought"), b"gemini" + head, hashlib.sha256).digest()
        return base64.b64encode(head + tag).decode()

    def check_gemini(self, signature: Any, content: str, position: tuple[int, int] | None) -> bool:
        """Whether ``signature`` is ours, for this content, at ``position`` (``None``: any position)."""
        if not isinstance(signature, str):
            return False
        raw = _b64decode(signature, urlsafe="-" in signature or "_" in signature)
        if raw is None or len(raw) != 21 + 32 or raw[0] != _GEMINI_VERSION:
            return False
        head, tag = raw[:21], raw[21:]
        want = hmac.new(_key(self.secret, "gemini-thought"), b"gemini" + head, hashlib.sha256).digest()
        if not hmac.compare_digest(tag, want):
            return False
        pos = struct.unpack(">HH", head[1:5])
        if position is not None and pos != position:
            return False
        return head[5:] == hashlib.sha256(content.encode()).digest()[:16]

    # -- OpenAI encrypted_content ---------------------------------------------------------------
    def encrypt_reasoning(self, payload: dict[str, Any]) -> str:
        """A Fernet-shaped authenticated token carrying ``payload`` (JSON)."""
        plain = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        key = _key(self.secret, "openai-reasoning")
        iv = hmac.new(key, b"iv" + plain, hashlib.sha256).digest()[:16]
        head = struct.pack(">BQ", _FERNET_VERSION, FIXED_TIMESTAMP) + iv
        body = _xor(plain, _keystream(key, iv, len(plain)))
        tag = hmac.new(key, head + body, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(head + body + tag).decode()

    def decrypt_reasoning(self, token: Any) -> dict[str, Any] | None:
        """The payload, or None when the token is foreign, truncated or tampered."""
        if not isinstance(token, str):
            return None
        raw = _b64decode(token, urlsafe=True)
        if raw is None or len(raw) < 25 + 32 or raw[0] != _FERNET_VERSION:
            return None
        head, body, tag = raw[:25], raw[25:-32], raw[-32:]
        key = _key(self.secret, "openai-reasoning")
        if not hmac.compare_digest(tag, hmac.new(key, head + body, hashlib.sha256).digest()):
            return None
        try:
            obj = json.loads(_xor(body, _keystream(key, head[9:25], len(body))))
        except ValueError:
            return None
        return obj if isinstance(obj, dict) else None
