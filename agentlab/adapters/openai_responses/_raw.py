"""Slicing raw JSON text without re-serializing it.

A reasoning item must go back to the API exactly as it arrived: as raw JSON, not re-serialized
from parsed SDK models. ``json.loads`` loses the original bytes, so the few places
that need them (``response.output_item.done`` events, the ``output`` array of a non-streaming body)
locate the member's span in the original text with the stdlib scanner and slice it. Only those rare
events pay for this; deltas never do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["raw_array_elements", "raw_member", "raw_members"]

# The stdlib decoder's scanner: (text, index) -> (value, end index). Not in typeshed, but public API
# of ``json.JSONDecoder`` since Python 2.6 (``raw_decode`` is built on it).
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_WS = re.compile(r"[ \t\n\r]*")


def _skip(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return m.end() if m else pos


def raw_members(text: str, pos: int = 0) -> Iterator[tuple[str, int, int]]:
    """Yield ``(key, start, end)`` for each top-level member of the JSON object starting at ``pos``.

    ``text[start:end]`` is the member's value exactly as written. Raises ``ValueError`` on text that
    is not a JSON object (the caller has usually parsed it successfully already).
    """
    pos = _skip(text, pos)
    if text[pos : pos + 1] != "{":
        raise ValueError("not a JSON object")
    pos = _skip(text, pos + 1)
    if text[pos : pos + 1] == "}":
        return
    while True:
        try:
            key, pos = _scan(text, pos)
        except StopIteration as e:  # the C scanner signals "no value here" this way
            raise ValueError(f"malformed JSON at {e.value}") from None
        pos = _skip(text, pos)
        if text[pos : pos + 1] != ":":
            raise ValueError("malformed JSON object: ':' expected")
        start = _skip(text, pos + 1)
        try:
            _, end = _scan(text, start)
        except StopIteration as e:
            raise ValueError(f"malformed JSON at {e.value}") from None
        yield key, start, end
        pos = _skip(text, end)
        sep = text[pos : pos + 1]
        if sep == ",":
            pos = _skip(text, pos + 1)
        elif sep == "}":
            return
        else:
            raise ValueError("malformed JSON object: ',' or '}' expected")


def raw_member(text: str, key: str) -> str | None:
    """The raw text of one top-level member's value, or ``None`` when absent."""
    for k, start, end in raw_members(text):
        if k == key:
            return text[start:end]
    return None


def raw_array_elements(text: str) -> list[str]:
    """The raw text of each element of the JSON array ``text``."""
    pos = _skip(text, 0)
    if text[pos : pos + 1] != "[":
        raise ValueError("not a JSON array")
    pos = _skip(text, pos + 1)
    out: list[str] = []
    if text[pos : pos + 1] == "]":
        return out
    while True:
        try:
            _, end = _scan(text, pos)
        except StopIteration as e:
            raise ValueError(f"malformed JSON at {e.value}") from None
        out.append(text[pos:end])
        pos = _skip(text, end)
        sep = text[pos : pos + 1]
        if sep == ",":
            pos = _skip(text, pos + 1)
        elif sep == "]":
            return out
        else:
            raise ValueError("malformed JSON array: ',' or ']' expected")
