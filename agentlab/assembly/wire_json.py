r"""The one JSON decoder of the streaming hot path: jiter on bytes, the stdlib where jiter says no.

Decoding a streamed event with ``json.loads`` costs several times what jiter (Rust; a dependency of
both the openai and anthropic SDKs) does, and the SSE framer (:mod:`agentlab.assembly.sse`) hands
over ``bytes``, which jiter reads without decoding them to ``str`` first. Only object keys are cached
(``cache_mode="keys"``): string values (reasoning and answer text) are not kept in jiter's
process-wide string cache.

Same results as ``json.loads``: jiter is stricter on a few inputs ``json.loads`` accepts (a lone
surrogate escape such as ``"\ud800"``), so any input jiter rejects is decoded again by the stdlib,
which returns the same value it always did or raises its usual error (the one the adapters' error
text is written from). Text (``str``) goes to the stdlib directly: only tests and hand-fed
assemblers pass it.
"""

from __future__ import annotations

import json
from typing import Any

import jiter

__all__ = ["FAST", "loads"]

_stdlib = json.loads
_from_json = jiter.from_json
FAST = jiter.from_json
"""The fast decoder in use (a guard test checks the hot path keeps it)."""


def loads(data: bytes | str) -> Any:
    """One JSON document -> its value, as ``json.loads`` gives it (jiter for ``bytes``)."""
    if data.__class__ is bytes:
        try:
            return _from_json(data, cache_mode="keys")
        except ValueError:
            pass  # malformed, or a form only the stdlib reads: it decides, with its own error
    return _stdlib(data)
