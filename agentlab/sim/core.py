"""Shared plumbing of the simulator: the state one simulator holds, replies, ids, SSE framing.

Why a :class:`Simulator` object: the transport (in process) and the loopback server share one
request handler, so both reach the same behaviour; the only state it keeps is what the real
services keep too (prompt cache, stored responses for ``store: true``, fault attempt counters).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from agentlab.sim.batch.store import BatchStore
from agentlab.sim.caching import CacheStore
from agentlab.sim.signing import DEFAULT_SECRET, Signer
from agentlab.sim.threads import ThreadStore

OPENAI_MODELS = ("sim-reasoner", "sim-reasoner-mini")
ANTHROPIC_MODELS = ("sim-thinker", "sim-thinker-legacy")
#: ``sim-gemini`` behaves as Gemini 3 (``thinkingLevel``, thought signatures required back on function
#: calls); ``sim-gemini-legacy`` as Gemini 2.5 Flash (``thinkingBudget``, signatures not enforced).
GEMINI_MODELS = ("sim-gemini", "sim-gemini-legacy")
#: Chat Completions dialect -> its simulated models (see :mod:`agentlab.sim.chat.dialects`).
CHAT_MODELS: dict[str, tuple[str, ...]] = {
    "deepseek": ("sim-deepseek",),
    "openrouter": ("sim-router-gemini", "sim-router-claude", "sim-router-openai"),
    "local": ("sim-local", "sim-local-reasoning"),
    "moonshot": ("sim-kimi",),
    "zai": ("sim-glm",),
    "xai_chat": ("sim-xai-chat",),
}
#: Responses/items kept for ``store: true`` (oldest dropped first): a long-lived server stays bounded.
MAX_STORED = 10_000
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


@dataclass(frozen=True)
class SSEEvent:
    """One framed SSE event; ``delta`` marks events a ``slow`` fault delays."""

    raw: bytes
    delta: bool = False
    #: What the ``error_chunk`` fault sends in place of this event (and of the rest of the stream).
    error: bytes | None = None


def sse(event_type: str, data: dict[str, Any], *, delta: bool = False) -> SSEEvent:
    r"""Frame ``data`` as ``event: <type>\ndata: <compact json>\n\n`` like both real APIs."""
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return SSEEvent(f"event: {event_type}\ndata: {payload}\n\n".encode(), delta)


@dataclass
class SimReply:
    """A reply: JSON (``body``) or a stream of SSE events (``events``)."""

    status: int
    headers: dict[str, str]
    body: bytes | None = None
    events: list[SSEEvent] | None = None


class Ids:
    """Deterministic ids for one request: same request bytes + seed -> same ids."""

    def __init__(self, seed: int, request_bytes: bytes) -> None:
        self._base = hashlib.sha256(f"{seed}|".encode() + request_bytes).digest()
        self._n = 0

    def _next(self) -> bytes:
        self._n += 1
        return hashlib.sha256(self._base + self._n.to_bytes(4, "big")).digest()

    def hex(self, prefix: str, n: int = 48) -> str:
        """``prefix`` + ``n`` hex chars: the shape of OpenAI ids (``resp_``, ``rs_``, ``fc_``, ``msg_``)."""
        return prefix + (self._next().hex() * 2)[:n]

    def b58(self, prefix: str, n: int = 22) -> str:
        """``prefix`` + ``n`` base58 chars: Anthropic's id shape (``msg_01`` / ``toolu_01`` + 22)."""
        d = self._next() + self._next()
        return prefix + "".join(_B58[b % 58] for b in d[:n])

    def alnum(self, prefix: str, n: int = 24) -> str:
        """``prefix`` + ``n`` chars of ``[A-Za-z0-9]``: OpenAI ``call_`` ids, unlike its hex ones."""
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        d = self._next() + self._next()
        return prefix + "".join(alphabet[b % 62] for b in d[:n])

    @property
    def seed_bytes(self) -> bytes:
        """The per-request digest itself, not drawn from the id sequence.

        Values derived from it (the request-id header, OpenAI's delta obfuscation) therefore do not
        shift the ids a reply carries, and stay the same for the same seed and request bytes.
        """
        return self._base


@dataclass
class Simulator:
    """One simulated provider deployment (both APIs). Thread-safe.

    ``seed`` changes every id and obfuscation string but not the model's behaviour; ``secret`` keys
    signatures and encrypted content (two simulators with different secrets reject each other's
    opaque items, like two providers would); ``retry_after_ms`` is what 429 replies ask for;
    ``default_fault`` applies to requests that name none; ``real_models`` lets it also answer to the
    real model names of :mod:`agentlab.sim.real_models` (labelled simulated in every reply; off by
    default in process, so a real name gets the provider's "model not found"; the loopback server
    ``python -m agentlab.sim serve`` turns it on unless ``--sim-names-only``).
    """

    seed: int = 0
    secret: bytes = field(default=DEFAULT_SECRET, repr=False)
    retry_after_ms: int = 20
    default_fault: str | None = None
    real_models: bool = False
    cache: CacheStore = field(default_factory=CacheStore)
    signer: Signer = field(init=False)
    stored: dict[str, dict[str, Any]] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    #: Anthropic message threads held under response ids (in memory, bounded, short-lived).
    threads: ThreadStore = field(default_factory=ThreadStore)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Files and jobs of the simulated batch APIs (see :mod:`agentlab.sim.batch.store`).
    batches: BatchStore = field(default_factory=BatchStore)

    def __post_init__(self) -> None:
        self.signer = Signer(self.secret)

    def __repr__(self) -> str:  # never show the secret
        fault, real = self.default_fault, self.real_models
        return f"Simulator(seed={self.seed}, default_fault={fault!r}, real_models={real})"

    def remember(self, key: str, value: dict[str, Any]) -> None:
        """Store a response or reasoning item (``store: true``), keeping at most ``MAX_STORED``."""
        with self.lock:
            self.stored[key] = value
            while len(self.stored) > MAX_STORED:
                self.stored.pop(next(iter(self.stored)))

    def forget(self, key: str) -> bool:
        """Drop a stored response (``DELETE``); whether it was there."""
        with self.lock:
            return self.stored.pop(key, None) is not None

    def count_attempt(self, key: str) -> int:
        """1-based attempt number of requests with this fault key (fault header + body)."""
        with self.lock:
            self.attempts[key] = self.attempts.get(key, 0) + 1
            return self.attempts[key]
