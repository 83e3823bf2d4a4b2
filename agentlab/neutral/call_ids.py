"""Tool-call ids carried across providers, made acceptable to the provider a request goes to.

Why: a ``Session`` that switches provider carries the portable history's tool-call ids in the shape
the first provider minted them (OpenAI ``call_...``, Anthropic ``toolu_...``, DeepSeek
``call_00_...``, vLLM ``chatcmpl-tool-...``, Kimi ``functions.get_weather:0``, composite
``call_...|fc_...``), and some APIs validate the id of a call in the history against their own grammar
(Anthropic: ``^[a-zA-Z0-9_-]+$``, a 400 otherwise). The portable history keeps the original id; the
adapter renders each id through :func:`conform_call_id` with its provider's rule, for the call and
its result alike, so a pair stays a pair. A conforming id is sent unchanged.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["conform_call_id"]


def conform_call_id(call_id: str, allowed: re.Pattern[str], *, max_len: int | None = None) -> str:
    """``call_id`` when ``allowed`` matches it whole (and it fits), else a deterministic stand-in.

    The stand-in keeps the allowed characters (``_`` for the others) and ends with a hash of the
    original, so two distinct ids never render alike and the same id always renders the same.
    ``allowed`` is a full-match pattern over one or more ``[A-Za-z0-9_-]``-like characters.
    """
    if allowed.fullmatch(call_id) and (max_len is None or len(call_id) <= max_len):
        return call_id
    digest = hashlib.sha256(call_id.encode()).hexdigest()[:12]
    kept = "".join(ch if allowed.fullmatch(ch) else "_" for ch in call_id)
    head = kept if max_len is None else kept[: max(0, max_len - len(digest) - 1)]
    return f"{head}_{digest}" if head else digest
