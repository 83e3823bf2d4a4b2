"""The simulated Gemini ``cachedContents`` resource (explicit context caching) and its use in generation.

Why in the simulator: an adapter that creates a cache, sends ``cachedContent`` and deletes the cache
at the end of a loop is only tested if the server refuses what the real API refuses. This module
serves the REST surface the google-genai SDK's ``client.caches`` calls (``/v1beta/cachedContents``):

* ``POST cachedContents``: a ``CachedContent`` (``model``, ``contents``, ``systemInstruction``,
  ``tools``, ``toolConfig``, ``ttl`` *or* ``expireTime``, ``displayName``). The answer is the
  resource without its contents: ``name`` (``cachedContents/<12 lowercase letters and digits>``),
  ``model``, ``displayName``, ``usageMetadata.totalTokenCount``, ``createTime``/``updateTime``/
  ``expireTime`` (RFC 3339, UTC, microseconds). Below the model's minimum the API's 400 "Cached
  content is too small. total_token_count=N, min_total_token_count=M". The ttl defaults to 1 hour.
* ``GET cachedContents`` (``pageSize``, ``pageToken``), ``GET``/``PATCH``/``DELETE
  cachedContents/<id>``. ``PATCH`` changes only the expiration (``ttl`` or ``expireTime``; an
  ``updateMask`` naming any other field is a 400). ``DELETE`` answers ``{}``.
* A cache belongs to the API key that created it. An unknown, expired, deleted or foreign name is the
  API's 403 ``PERMISSION_DENIED`` "CachedContent not found (or permission denied)" (the real API does
  not tell a foreign cache from a missing one).
* ``generateContent`` with ``cachedContent``: the request may not also set ``systemInstruction``,
  ``tools`` or ``toolConfig`` (the API's 400 "Tool config, tools and system instruction should not be
  set in the request when using cached content."), the model must be the cache's, and the cached
  prefix (system instruction, tools, tool config, then its contents before the request's) is what the
  model sees; ``usageMetadata.cachedContentTokenCount`` is the cache's token count (a part of
  ``promptTokenCount``).

The per-model minimum follows the Gemini caching guide's table (ai.google.dev/gemini-api/docs/
caching, last updated 2026-10): 4096 tokens for the Gemini 3 models (``sim-gemini``), 2048 for 2.5
(``sim-gemini-legacy``). State lives per ``Simulator``, in memory, bounded; time comes from
``CacheState.clock`` so tests can let a cache expire without sleeping.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agentlab.sim.app import QUERY_HEADER
from agentlab.sim.core import SimReply, Simulator
from agentlab.sim.errors import SimError
from agentlab.sim.gemini import errors as GE
from agentlab.sim.gemini import schema as gemini_schema
from agentlab.sim.gemini.request import prompt_tokens, read_request
from agentlab.sim.protocols import Route, RouteCall, versioned

__all__ = [
    "CONFLICT",
    "MIN_TOKENS",
    "NOT_FOUND",
    "CacheState",
    "resolve",
    "routes",
    "state_of",
]

MIN_TOKENS: dict[str, int] = {"sim-gemini": 4096, "sim-gemini-legacy": 2048}
"""The smallest cache each simulated model takes (its real family's documented minimum)."""
NOT_FOUND = "CachedContent not found (or permission denied)"
CONFLICT = (
    "Tool config, tools and system instruction should not be set in the request when using cached content."
)
TOO_SMALL = "Cached content is too small. total_token_count={n}, min_total_token_count={m}"
MODEL_MISMATCH = (
    "Model used by GenerateContent request ({asked}) and CachedContent ({cached}) has to be the same."
)
GE_ONEOF = "Only one of ttl or expire_time can be set."
DEFAULT_TTL_S = 3600.0
MAX_CACHES = 256
_PAGE = 50
_DURATION = re.compile(r"^(\d+(?:\.\d{1,9})?)s$")
_CACHED_FIELDS = ("systemInstruction", "tools", "toolConfig")

# The CachedContent message, as the API's JSON parser reads it (camelCase or snake_case, unknown
# names refused): registered into the shared table so ``read_request`` checks create/patch bodies.
gemini_schema.MESSAGES.setdefault(
    "CachedContent",
    {
        "model": (gemini_schema.SCALAR, False),
        "contents": ("Content", True),
        "systemInstruction": ("Content", False),
        "tools": ("Tool", True),
        "toolConfig": ("ToolConfig", False),
        "ttl": (gemini_schema.SCALAR, False),
        "expireTime": (gemini_schema.SCALAR, False),
        "displayName": (gemini_schema.SCALAR, False),
        "name": (gemini_schema.SCALAR, False),
    },
)


@dataclass
class _Entry:
    """One cache: who made it, for which model, what it holds and until when."""

    name: str
    model: str
    owner: str
    held: dict[str, Any]
    tokens: int
    created: float
    updated: float
    expires: float
    display_name: str | None = None

    def resource(self) -> dict[str, Any]:
        """The ``CachedContent`` as ``GET`` shows it (never its contents)."""
        out: dict[str, Any] = {"name": self.name, "model": self.model}
        if self.display_name:
            out["displayName"] = self.display_name
        out["usageMetadata"] = {"totalTokenCount": self.tokens}
        out["createTime"] = _stamp(self.created)
        out["updateTime"] = _stamp(self.updated)
        out["expireTime"] = _stamp(self.expires)
        return out


@dataclass
class CacheState:
    """The caches one simulator holds; ``clock`` (seconds since the epoch) is settable for tests."""

    clock: Callable[[], float] = time.time
    entries: dict[str, _Entry] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    serial: int = 0

    def live(self, name: str, owner: str) -> _Entry:
        """The caller's unexpired cache ``name``, or the API's 403."""
        with self.lock:
            entry = self.entries.get(name)
            if entry is not None and entry.expires <= self.clock():
                del self.entries[name]
                entry = None
        if entry is None or entry.owner != owner:
            raise SimError(403, "PERMISSION_DENIED", NOT_FOUND)
        return entry

    def names(self) -> list[str]:
        """Every cache still held (expired or not), for tests that check nothing was left behind."""
        with self.lock:
            return list(self.entries)


_states: dict[int, CacheState] = {}
_states_lock = threading.Lock()


def state_of(sim: Simulator) -> CacheState:
    """The cache state of ``sim`` (made on first use, dropped with the simulator)."""
    key = id(sim)
    with _states_lock:
        state = _states.get(key)
        if state is None:
            state = _states[key] = CacheState()
            weakref.finalize(sim, _states.pop, key, None)
        return state


# -- helpers ------------------------------------------------------------------------------------


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(value: Any, name: str) -> float:
    if not isinstance(value, str):
        raise GE.invalid_argument(
            f"Invalid value at '{name}' (type.googleapis.com/google.protobuf.Timestamp)"
        )
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise GE.invalid_argument(
            f"Invalid value at '{name}' (type.googleapis.com/google.protobuf.Timestamp), Field '{name}', "
            f"Invalid time format: {value}"
        ) from None


def _parse_ttl(value: Any) -> float:
    m = _DURATION.match(value) if isinstance(value, str) else None
    if m is None:
        raise GE.invalid_argument(
            f"Invalid value at 'cached_content.ttl' (type.googleapis.com/google.protobuf.Duration), {value}"
        )
    return float(m.group(1))


def _expiry(body: dict[str, Any], now: float, default: float | None) -> float:
    """The expiry a body asks for: ``ttl`` or ``expireTime`` (a oneof: not both), else ``default``."""
    if "ttl" in body and "expireTime" in body:
        raise GE.invalid_argument(GE_ONEOF)
    if "ttl" in body:
        return now + _parse_ttl(body["ttl"])
    if "expireTime" in body:
        when = _parse_time(body["expireTime"], "expire_time")
        if when <= now:
            raise GE.invalid_argument("expire_time must be in the future.")
        return when
    if default is None:
        raise GE.invalid_argument("Either ttl or expire_time must be set.")
    return default


def owner_of(headers: dict[str, str]) -> str:
    """Who is calling: a digest of the API key (``x-goog-api-key`` or ``key=``) or bearer token."""
    key = headers.get("x-goog-api-key")
    if key is None:
        for pair in headers.get(QUERY_HEADER, "").split("&"):
            k, _, v = pair.partition("=")
            if k == "key":
                key = v
    if key is None:
        key = headers.get("authorization", "")
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _id(sim: Simulator, state: CacheState, seed: bytes) -> str:
    state.serial += 1
    digest = hashlib.sha256(sim.secret + seed + state.serial.to_bytes(8, "big")).digest()
    return "".join("abcdefghijklmnopqrstuvwxyz0123456789"[b % 36] for b in digest[:12])


def _model_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GE.invalid_argument("* CreateCachedContentRequest.cached_content.model: model is required\n")
    return value.removeprefix("models/")


def held_tokens(held: dict[str, Any]) -> int:
    """How many prompt tokens a cache holds (its prefix of every prompt that uses it)."""
    return len(prompt_tokens(held, list(held.get("contents") or [])))


def _json(status: int, obj: dict[str, Any]) -> SimReply:
    return SimReply(
        status, {"content-type": "application/json; charset=UTF-8"}, json.dumps(obj, indent=2).encode()
    )


def _query(call: RouteCall) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in call.headers.get(QUERY_HEADER, "").split("&"):
        k, _, v = pair.partition("=")
        if k:
            out[k] = v
    return out


# -- the routes ---------------------------------------------------------------------------------


def _create(call: RouteCall) -> SimReply:

    body = read_request(dict(call.body), "CachedContent")
    model = _model_name(body.get("model"))
    served = call.served(model)
    if served is None:
        raise GE.GEMINI.model_not_found(model)
    held = {k: body[k] for k in (*_CACHED_FIELDS, "contents") if k in body}
    tokens = held_tokens(held)
    minimum = MIN_TOKENS.get(served, 4096)
    if tokens < minimum:
        raise GE.invalid_argument(TOO_SMALL.format(n=tokens, m=minimum))
    state = state_of(call.sim)
    now = state.clock()
    expires = _expiry(body, now, now + DEFAULT_TTL_S)
    with state.lock:
        name = f"cachedContents/{_id(call.sim, state, call.raw)}"
        entry = _Entry(
            name=name, model=f"models/{model}", owner=owner_of(call.headers), held=held, tokens=tokens,
            created=now, updated=now, expires=expires, display_name=body.get("displayName"),
        )  # fmt: skip
        state.entries[name] = entry
        while len(state.entries) > MAX_CACHES:
            state.entries.pop(next(iter(state.entries)))
    return _json(200, entry.resource())


def _list(call: RouteCall) -> SimReply:
    state = state_of(call.sim)
    owner = owner_of(call.headers)
    now = state.clock()
    with state.lock:
        mine = [e for e in state.entries.values() if e.owner == owner and e.expires > now]
    q = _query(call)
    size = min(int(q.get("pageSize") or _PAGE), 1000) or _PAGE
    start = int(q["pageToken"]) if q.get("pageToken", "").isdigit() else 0
    page = mine[start : start + size]
    out: dict[str, Any] = {}
    if page:
        out["cachedContents"] = [e.resource() for e in page]
    if start + size < len(mine):
        out["nextPageToken"] = str(start + size)
    return _json(200, out)


def _name(call: RouteCall) -> str:
    return f"cachedContents/{call.params['cache_id']}"


def _get(call: RouteCall) -> SimReply:
    return _json(200, state_of(call.sim).live(_name(call), owner_of(call.headers)).resource())


def _patch(call: RouteCall) -> SimReply:

    state = state_of(call.sim)
    entry = state.live(_name(call), owner_of(call.headers))
    body = read_request(dict(call.body), "CachedContent")
    mask = [m.strip() for m in _query(call).get("updateMask", "").replace("%2C", ",").split(",") if m.strip()]
    other = [m for m in mask if m not in ("ttl", "expireTime", "expire_time")]
    if other:
        raise GE.invalid_argument(f"Only ttl or expire_time can be updated; got update_mask {other}")
    now = state.clock()
    with state.lock:
        entry.expires = _expiry(body, now, None)
        entry.updated = now
    return _json(200, entry.resource())


def _delete(call: RouteCall) -> SimReply:
    state = state_of(call.sim)
    entry = state.live(_name(call), owner_of(call.headers))
    with state.lock:
        state.entries.pop(entry.name, None)
    return _json(200, {})


def routes(versions: tuple[str, ...]) -> tuple[Route, ...]:
    """The ``cachedContents`` routes on each API version (the protocol table registers them)."""
    return versioned(
        versions,
        ("POST", "/cachedContents", _create),
        ("GET", "/cachedContents", _list),
        ("GET", "/cachedContents/{cache_id}", _get),
        ("PATCH", "/cachedContents/{cache_id}", _patch),
        ("DELETE", "/cachedContents/{cache_id}", _delete),
    )


# -- generation with a cache ----------------------------------------------------------------------


def resolve(
    sim: Simulator, body: dict[str, Any], headers: dict[str, str], model: str
) -> tuple[dict[str, Any], int | None]:
    """``body`` with its ``cachedContent`` prefix put in front, and the cache's token count.

    ``(body, None)`` when the request names no cache. The conflicting-fields 400 comes before the
    lookup (the API checks the request's shape first), then the 403 for a name the caller cannot use,
    then the model check.
    """
    name = body.get("cachedContent")
    if not name:
        return body, None
    if any(k in body for k in _CACHED_FIELDS):
        raise GE.invalid_argument(CONFLICT)
    entry = state_of(sim).live(str(name), owner_of(headers))
    asked = model if model.startswith("models/") else f"models/{model}"
    if asked != entry.model:
        raise GE.invalid_argument(MODEL_MISMATCH.format(asked=asked, cached=entry.model))
    merged = {k: v for k, v in body.items() if k != "cachedContent"}
    for k in _CACHED_FIELDS:
        if k in entry.held:
            merged[k] = entry.held[k]
    merged["contents"] = [*(entry.held.get("contents") or []), *body["contents"]]
    return merged, entry.tokens
