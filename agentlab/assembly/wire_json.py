r"""The one JSON decoder of the streaming hot path: msgspec on bytes, the stdlib where msgspec says no.

Decoding a streamed event with ``json.loads`` costs several times what msgspec (C) does, and the
SSE framer (:mod:`agentlab.assembly.sse`) hands over ``bytes``, which msgspec reads without
decoding them to ``str`` first. Why msgspec rather than jiter (which both SDKs bring): bench
section 1 decodes every event of each protocol's stream with each candidate, side by side
(``bench/decoders.py``), and msgspec builds the same plain dicts and lists in less time. msgspec
caches short object keys only; string values (reasoning and answer text) are never kept in a
process-wide cache (``tests/assembly/test_wire_json.py`` checks it; jiter's ``cache_mode="all"``
would keep them).

Same results as ``json.loads``: msgspec is stricter on a few inputs ``json.loads`` accepts (a lone
surrogate escape such as ``"\ud800"``, ``NaN``, ``1e400``, a byte order mark), so any input msgspec
rejects is decoded again by the stdlib, which returns the same value it always did or raises its
usual error (the one the adapters' error text is written from). Text (``str``) goes to the stdlib
directly: only tests and hand-fed assemblers pass it. The two are held to the same values on the
edge cases in ``tests/assembly/test_hot_path.py`` and on generated documents in
``tests/assembly/test_wire_json.py``.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

__all__ = ["FAST", "loads"]

_stdlib = json.loads
FAST = msgspec.json.Decoder().decode
"""The fast decoder in use: any JSON to plain Python values, raising ``ValueError`` on what it refuses
(a guard test checks the hot path keeps it)."""


def loads(data: bytes | str) -> Any:
    """One JSON document -> its value, as ``json.loads`` gives it (msgspec for ``bytes``)."""
    if data.__class__ is bytes:
        try:
            return FAST(data)
        except ValueError:
            pass  # malformed, or a form only the stdlib reads: it decides, with its own error
    return _stdlib(data)
