"""Prompt-cache simulation, so cache hints have a measurable effect on usage and cost.

* OpenAI (automatic): a prompt's token prefix is cached in blocks of 128 tokens once it is at least
  1024 tokens long. A later request with the same model and ``prompt_cache_key`` (absent = one shared
  bucket) reports ``cached_tokens`` = the longest such block boundary it shares with an earlier one.
  The first request never hits.
* Anthropic (explicit): only prefixes ending at a ``cache_control`` breakpoint (tools, then system,
  then messages; at most 4, a top-level ``cache_control`` marks the last block) are cached, and only
  when the prefix is at least 1024 tokens. A request reads the longest breakpoint prefix seen before
  (``cache_read_input_tokens``) and writes the rest up to its last breakpoint
  (``cache_creation_input_tokens``, split by ttl ``5m``/``1h``).

Entries never expire (deterministic tests need no clock); one :class:`CacheStore` lives per
transport or server, so a fresh transport starts cold.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field

#: Prefix hashes kept per bucket; beyond it the bucket starts cold again (a long-lived server stays bounded).
MAX_ENTRIES = 200_000
OPENAI_MIN_TOKENS = 1024
OPENAI_BLOCK = 128
ANTHROPIC_MIN_TOKENS = 1024


def _prefix_hashes(tokens: list[str], cuts: list[int]) -> dict[int, str]:
    """sha256 of the first ``k`` tokens for every ``k`` in ``cuts`` (ascending)."""
    h = hashlib.sha256()
    out: dict[int, str] = {}
    done = 0
    for k in sorted(set(cuts)):
        for tok in tokens[done:k]:
            h.update(tok.encode())
            h.update(b"\x00")
        done = k
        out[k] = h.copy().hexdigest()
    return out


@dataclass(frozen=True)
class Breakpoint:
    """A cache_control breakpoint: prefix length in tokens and its ttl."""

    tokens: int
    ttl: str = "5m"


@dataclass(frozen=True)
class AnthropicCacheResult:
    """Cache token counts of one Anthropic request: the prefix read, and what was written per ttl.

    Writes stay split by ttl because the API reports them that way (``cache_creation``:
    ``ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens``) and prices the two differently.
    """

    read: int
    write_5m: int
    write_1h: int

    @property
    def write(self) -> int:
        """Both ttls together: the ``cache_creation_input_tokens`` total the API reports beside the split.

        ``input_tokens`` on the wire excludes these and ``read``, so usage sums back to the prompt length.
        """
        return self.write_5m + self.write_1h


@dataclass
class CacheStore:
    """Thread-safe in-memory prefix cache shared by the endpoints of one simulator."""

    _seen: dict[str, set[str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def openai(self, model: str, cache_key: str | None, tokens: list[str]) -> int:
        """Cached tokens for this prompt; records the prompt's blocks for later requests."""
        n = len(tokens)
        cuts = list(range(OPENAI_MIN_TOKENS, n + 1, OPENAI_BLOCK))
        if not cuts:
            return 0
        hashes = _prefix_hashes(tokens, cuts)
        bucket = f"openai|{model}|{cache_key or ''}"
        with self._lock:
            seen = self._seen.setdefault(bucket, set())
            if len(seen) > MAX_ENTRIES:
                seen.clear()
            hit = max((k for k, h in hashes.items() if h in seen), default=0)
            seen.update(hashes.values())
        return hit

    def gemini(self, model: str, tokens: list[str]) -> int:
        """A Gemini prompt's implicit cache hit: the OpenAI rule (1024 tokens, 128 blocks), own bucket."""
        return self.openai(f"gemini|{model}", None, tokens)

    def anthropic(self, model: str, tokens: list[str], breakpoints: list[Breakpoint]) -> AnthropicCacheResult:
        """Read/write token counts for one request's breakpoints (see module docstring)."""
        eligible = [b for b in breakpoints if b.tokens >= ANTHROPIC_MIN_TOKENS]
        if not eligible:
            return AnthropicCacheResult(0, 0, 0)
        hashes = _prefix_hashes(tokens, [b.tokens for b in eligible])
        bucket = f"anthropic|{model}"
        with self._lock:
            seen = self._seen.setdefault(bucket, set())
            if len(seen) > MAX_ENTRIES:
                seen.clear()
            read = max((b.tokens for b in eligible if hashes[b.tokens] in seen), default=0)
            seen.update(hashes.values())
        w5 = w1 = 0
        last = read
        for b in sorted(eligible, key=lambda b: b.tokens):
            if b.tokens <= last:
                continue
            if b.ttl == "1h":
                w1 += b.tokens - last
            else:
                w5 += b.tokens - last
            last = b.tokens
        return AnthropicCacheResult(read, w5, w1)
