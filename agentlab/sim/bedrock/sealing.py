"""Keyed signatures and sealed bytes for the simulated Converse reasoning blocks.

Why separate keys from the Anthropic simulator's: a Bedrock-signed Claude thinking block is not valid
on Anthropic's own API (and the reverse), so the simulated Bedrock signs with its own key purpose and
the simulated Anthropic endpoint refuses it, as the real ones do.

* ``reasoningText.signature``: base64 of ``version | position (2 bytes) | turn layout (9 bytes) |
  sha256(text)[:16] | HMAC-SHA256``; the layout (count of reasoning blocks in the turn + a digest over
  them, :func:`agentlab.sim.signing.turn_layout`) binds a block to its siblings, so a turn sent back
  with one reasoning block missing is *modified*.
* ``redactedContent``: the hidden text, encrypted and authenticated, bound the same way. Claude's
  bytes are ASCII (as recorded: they read ``Eu8ECkgI...``); the OpenAI family's start with ``rsn_``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct

from agentlab.sim.signing import LAYOUT_BYTES

_SIG = 0x42
_SEAL = 0x43
OK, INVALID, MODIFIED = "ok", "invalid_signature", "modified"


def _key(secret: bytes, purpose: str) -> bytes:
    return hmac.new(secret, b"bedrock|" + purpose.encode(), hashlib.sha256).digest()


def _stream(key: bytes, iv: bytes, n: int) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hmac.new(key, iv + counter.to_bytes(4, "big"), hashlib.sha256).digest()
        counter += 1
    return bytes(out[:n])


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def sign(secret: bytes, text: str, position: int, layout: bytes) -> str:
    """The signature of a reasoning block showing ``text`` at content index ``position``."""
    head = struct.pack(">BH", _SIG, position) + layout + hashlib.sha256(text.encode()).digest()[:16]
    tag = hmac.new(_key(secret, "thinking"), head, hashlib.sha256).digest()
    return base64.b64encode(head + tag).decode()


def check(secret: bytes, text: object, signature: object, position: int) -> tuple[str, bytes | None]:
    """(verdict, signed layout): ``ok``, ``invalid_signature`` (not ours) or ``modified``."""
    if not isinstance(signature, str) or not isinstance(text, str):
        return INVALID, None
    try:
        raw = base64.b64decode(signature, validate=True)
    except ValueError:
        return INVALID, None
    n = 3 + LAYOUT_BYTES + 16
    if len(raw) != n + 32 or raw[0] != _SIG:
        return INVALID, None
    head, tag = raw[:n], raw[n:]
    if not hmac.compare_digest(tag, hmac.new(_key(secret, "thinking"), head, hashlib.sha256).digest()):
        return INVALID, None
    (pos,) = struct.unpack(">H", head[1:3])
    layout = head[3 : 3 + LAYOUT_BYTES]
    if pos != position or head[3 + LAYOUT_BYTES :] != hashlib.sha256(text.encode()).digest()[:16]:
        return MODIFIED, layout
    return OK, layout


def seal(secret: bytes, hidden: str, position: int, layout: bytes, *, prefix: bytes = b"") -> bytes:
    """``redactedContent`` bytes hiding ``hidden`` (``prefix`` + base64 text, so ASCII like the real ones)."""
    plain = hidden.encode()
    key = _key(secret, "redacted")
    iv = hmac.new(key, b"iv" + plain, hashlib.sha256).digest()[:12]
    head = struct.pack(">BH", _SEAL, position) + layout + iv
    body = _xor(plain, _stream(key, iv, len(plain)))
    tag = hmac.new(key, head + body, hashlib.sha256).digest()
    return prefix + base64.b64encode(head + body + tag)


def unseal(
    secret: bytes, data: bytes, position: int | None, *, prefix: bytes = b""
) -> tuple[str, bytes] | None:
    """(hidden text, signed layout), or ``None`` for bytes that are not ours, tampered or moved."""
    if not data.startswith(prefix):
        return None
    try:
        raw = base64.b64decode(data[len(prefix) :], validate=True)
    except ValueError:
        return None
    n = 3 + LAYOUT_BYTES + 12
    if len(raw) < n + 32 or raw[0] != _SEAL:
        return None
    head, body, tag = raw[:n], raw[n:-32], raw[-32:]
    key = _key(secret, "redacted")
    if not hmac.compare_digest(tag, hmac.new(key, head + body, hashlib.sha256).digest()):
        return None
    (pos,) = struct.unpack(">H", head[1:3])
    if position is not None and pos != position:
        return None
    hidden = _xor(body, _stream(key, head[3 + LAYOUT_BYTES :], len(body))).decode(errors="replace")
    return hidden, head[3 : 3 + LAYOUT_BYTES]
