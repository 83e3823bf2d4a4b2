"""Explicit context caching (``CacheHints(mode="explicit")``): one ``cachedContents`` resource per loop.

Why explicit caching at all: implicit caching (the default) discounts a repeated prefix when Gemini
happens to hit its cache; an explicit cache guarantees the discount for a tool loop whose stable
prefix (a long system prompt, many tools, a long earlier conversation) is sent on every step.

What goes into the cache (and what never does): the request's ``systemInstruction``, ``tools``,
``toolConfig`` and the *portable* prefix of ``contents``: the leading contents before the first one
that carries a ``thoughtSignature`` or a thought part, never the last one (the request must keep
contents of its own). Opaque signatures and thought summaries therefore never enter a cache; they
stay in the request, on their parts, as ``_request`` put them there.

The request then carries ``cachedContent: <name>`` and omits the cached fields: the API refuses
``cachedContent`` beside ``systemInstruction``/``tools``/``toolConfig`` with 400 INVALID_ARGUMENT
"Tool config, tools and system instruction should not be set in the request when using cached
content." Every step of the loop (one run: ``request.origin.run_id``) reuses the cache while its
prefix is unchanged; a changed prefix (e.g. ``toolConfig`` after a forced ``tool_choice`` went back
to auto) replaces it, and one that expired mid-loop (403 "CachedContent not found") is made again
once. The cache is deleted when the run ends (answer, step limit, failure, cancel: the run calls
``end_run``) and when the adapter closes; its ttl (``CacheHints.ttl``: 5 m, 1 h, 24 h) bounds it on
the server even if the process dies first. A run paused across notebook cells keeps its cache until
it ends: the cache holds portable items only (the cell-end release is about opaque ones), and its
ttl still bounds it.

Minimum size: the API refuses a cache below the model's minimum with 400 "Cached content is too
small. total_token_count=N, min_total_token_count=M". ``MIN_TOKENS`` is the documented table (Gemini
caching guide, updated 2026-10: 4096 tokens for Gemini 3, 2048 for 2.5); a prefix whose UTF-8 size
is below it cannot reach it (a token is at least one byte) and is not sent; anything else is sent
and the API's own count decides. Either way no cache is made, a ``cache_not_created`` diagnostic says
why, and the loop goes on with implicit caching.

Cost, honestly: calls using the cache report its tokens as ``cachedContentTokenCount``, cache reads
at the cached price. Creating it is billed as input at the standard input price (the caching docs:
"billed for the input tokens used to create the cache at the standard input token price"), so the
creating call's usage gets those tokens added as cache writes (inside ``input_tokens``, as on
Anthropic; genai-prices has no Gemini write price, so they cost input). Storage is billed per
token-hour; genai-prices does not carry that price, so it is **not** in ``cost_usd``: the
``cache_created`` diagnostic gives the tokens and the ttl to price it by.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Literal

from google.genai import errors as genai_errors
from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from agentlab.adapters.built_request import BuiltRequest
from agentlab.adapters.google_gemini._errors import translate
from agentlab.errors import AgentlabError, ProviderError
from agentlab.neutral.diagnostics import diagnostic, register_code
from agentlab.neutral.events import ResponseCompletedEvent
from agentlab.neutral.request import ModelRequest

__all__ = ["MIN_TOKENS", "TTL_SECONDS", "ExplicitCaches", "minimum_tokens", "wants_explicit"]

log = logging.getLogger("agentlab.adapters.google")

MIN_TOKENS: tuple[tuple[str, int], ...] = (
    (r"sim-gemini-legacy", 2048),
    (r"sim-gemini", 4096),
    (r"gemini-([3-9]|\d\d)", 4096),
    (r"gemini-2\.5", 2048),
)
"""The smallest explicit cache per model family, first match wins (unknown models: not checked)."""
TTL_SECONDS: dict[str, int] = {"5m": 300, "1h": 3600, "24h": 86400}
_TOO_SMALL = re.compile(r"Cached content is too small\. total_token_count=(\d+), min_total_token_count=(\d+)")
_CACHED_FIELDS = ("systemInstruction", "tools", "toolConfig")
NOT_FOUND = "CachedContent not found"
"""How the API's 403 for an unknown, expired or foreign cache begins."""


class CacheNotCreated(BaseModel):
    """Why no explicit cache was made: its size (``at_most``: an upper bound) against the minimum."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reason: Literal["below_minimum", "nothing_to_cache"]
    tokens: int | None = Field(default=None, ge=0)
    at_most: bool = False
    minimum: int | None = None


class CacheCreated(BaseModel):
    """A cache made for this loop: its tokens and ttl, what its storage (not in ``cost_usd``) is billed on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tokens: int = Field(ge=0)
    ttl_s: int = Field(gt=0)
    storage_token_hours_max: float = Field(ge=0)


register_code(
    "cache_not_created",
    "explicit caching was asked for, but no cache was made (too small, or nothing stable to cache)",
    CacheNotCreated,
)
register_code(
    "cache_created",
    "an explicit cache was made for this loop; its creation is counted as cache writes, its storage "
    "(billed per token-hour) is not in cost_usd",
    CacheCreated,
)


def wants_explicit(request: ModelRequest) -> bool:
    """Whether ``request`` asks for an explicit cache (hints on, ``mode="explicit"``)."""
    hints = request.cache
    return hints is not None and hints.enabled and hints.mode == "explicit"


def minimum_tokens(model: str) -> int | None:
    """The documented minimum cache size of ``model`` (``None``: not known here; the API decides)."""
    name = model.removeprefix("models/")
    for pattern, minimum in MIN_TOKENS:
        if re.match(pattern, name):
            return minimum
    return None


@dataclass
class _LoopCache:
    """The cache of one loop: its name (``None``: declined), what it holds and creation not yet billed."""

    digest: str
    held: int
    name: str | None
    unbilled: int = 0


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _stable_prefix(contents: list[dict[str, Any]]) -> int:
    """How many leading contents hold nothing opaque (no signature, no thought part); never all."""
    n = 0
    for content in contents[:-1]:
        if any("thoughtSignature" in p or p.get("thought") for p in content.get("parts") or []):
            break
        n += 1
    return n


class ExplicitCaches:
    """The explicit caches an adapter holds, one per loop (run id), created and deleted through the SDK."""

    _shaped_repr = True

    def __init__(self, client: Any, model: str, options: types.HttpOptions) -> None:
        self._client = client
        self._model = model
        self._options = options
        self._loops: dict[str | None, _LoopCache] = {}

    def __repr__(self) -> str:
        return f"<ExplicitCaches loops={len(self._loops)}>"

    async def apply(self, request: ModelRequest, built: BuiltRequest[bytes]) -> None:
        """Rewrite ``built`` to use this loop's cache (made now if needed), or leave it whole and say why."""
        body: dict[str, Any] = json.loads(built.body)
        contents: list[dict[str, Any]] = body["contents"]
        loop = request.origin.run_id if request.origin is not None else None
        held = self._held(body, contents, loop)
        digest = hashlib.sha256(_dumps(held).encode()).hexdigest()
        cache = self._loops.get(loop)
        if cache is None or cache.digest != digest:
            if cache is not None and cache.name is not None:
                await self._delete(cache.name)
            cache = await self._create(request, held, digest, built)
            self._loops[loop] = cache
        if cache.name is None:
            return
        rest = {k: v for k, v in body.items() if k not in _CACHED_FIELDS}
        rest["contents"] = contents[cache.held :]
        rest["cachedContent"] = cache.name
        built.body = _dumps(rest).encode("utf-8")

    def _held(self, body: dict[str, Any], contents: list[dict[str, Any]], loop: str | None) -> dict[str, Any]:
        """What a cache for this request holds: the cached fields and the portable contents prefix.

        An existing cache of the loop keeps its prefix length while the request still starts with
        it (the loop appends contents; the prefix does not move), so its digest stays the same.
        """
        known = self._loops.get(loop)
        n = _stable_prefix(contents)
        if known is not None and known.held <= n:
            n = known.held
        held = {k: body[k] for k in _CACHED_FIELDS if k in body}
        if n:
            held["contents"] = contents[:n]
        return held

    async def _create(
        self, request: ModelRequest, held: dict[str, Any], digest: str, built: BuiltRequest[bytes]
    ) -> _LoopCache:
        n = len(held.get("contents") or [])
        hints = request.cache
        assert hints is not None
        minimum = minimum_tokens(self._model)
        size = len(_dumps(held).encode("utf-8"))
        if not held:
            built.diagnostics.append(_not_created("nothing_to_cache", None, False, minimum))
            return _LoopCache(digest, n, None)
        if minimum is not None and size < minimum:
            built.diagnostics.append(_not_created("below_minimum", size, True, minimum))
            return _LoopCache(digest, n, None)
        ttl = TTL_SECONDS[hints.ttl]
        config = types.CreateCachedContentConfig(
            contents=held.get("contents"), system_instruction=held.get("systemInstruction"),
            tools=held.get("tools"), tool_config=held.get("toolConfig"), ttl=f"{ttl}s",
            display_name="agentlab loop", http_options=self._options,
        )  # fmt: skip
        failure: AgentlabError | None = None
        try:
            made = await self._client.aio.caches.create(model=self._model, config=config)
        except genai_errors.APIError as exc:
            small = _TOO_SMALL.search(str(exc.message or ""))
            if exc.code == 400 and small is not None:
                tokens, minimum = int(small.group(1)), int(small.group(2))
                built.diagnostics.append(_not_created("below_minimum", tokens, False, minimum))
                return _LoopCache(digest, n, None)
            failure = translate(exc)
        if failure is not None:
            raise failure
        tokens = int((made.usage_metadata and made.usage_metadata.total_token_count) or 0)
        note = (
            f"explicit cache of {tokens} tokens made for this loop (ttl {hints.ttl}); its creation is "
            "counted as cache writes; its storage, billed per token-hour, is not in cost_usd"
        )
        hours = tokens * ttl / 3600
        built.diagnostics.append(
            diagnostic("cache_created", note, tokens=tokens, ttl_s=ttl, storage_token_hours_max=hours)
        )
        log.debug("google: explicit cache made for a loop (%d tokens, %d contents)", tokens, n)
        return _LoopCache(digest, n, str(made.name), unbilled=tokens)

    def billed(self, request: ModelRequest, event: ResponseCompletedEvent) -> ResponseCompletedEvent:
        """The completed call, with the creation of its loop's cache added as cache writes (once)."""
        loop = request.origin.run_id if request.origin is not None else None
        cache = self._loops.get(loop)
        if cache is None or not cache.unbilled:
            return event
        n, cache.unbilled = cache.unbilled, 0
        u = event.response.usage
        if u.input_tokens is None:
            return event
        usage = u.model_copy(
            update={"input_tokens": u.input_tokens + n, "cache_write_tokens": (u.cache_write_tokens or 0) + n}
        )
        return event.model_copy(update={"response": event.response.model_copy(update={"usage": usage})})

    def lost(self, request: ModelRequest, error: ProviderError) -> bool:
        """Whether ``error`` says the loop's cache is gone (expired); if so it is forgotten, not deleted."""
        loop = request.origin.run_id if request.origin is not None else None
        cache = self._loops.get(loop)
        if cache is None or cache.name is None or error.status != 403 or NOT_FOUND not in error.message:
            return False
        del self._loops[loop]
        return True

    async def end(self, loop: str | None) -> None:
        """Delete the cache of ``loop`` (a run id), if it has one."""
        cache = self._loops.pop(loop, None)
        if cache is not None and cache.name is not None:
            await self._delete(cache.name)

    async def end_all(self) -> None:
        """Delete every cache still held (the adapter is closing)."""
        for loop in list(self._loops):
            await self.end(loop)

    async def _delete(self, name: str) -> None:
        """Delete ``name``; a failure is logged, never raised (the ttl ends it on the server anyway)."""
        try:
            await self._client.aio.caches.delete(
                name=name, config=types.DeleteCachedContentConfig(http_options=self._options)
            )
        except Exception as exc:  # closing must not mask the run's outcome
            log.warning("google: deleting an explicit cache failed (%s); its ttl ends it", type(exc).__name__)


def _not_created(reason: str, tokens: int | None, at_most: bool, minimum: int | None) -> Any:
    if reason == "nothing_to_cache":
        text = "explicit caching asked for, but the request has nothing stable to cache; not cached"
    else:
        bound = "at most " if at_most else ""
        text = (
            f"explicit cache not made: the stable prefix is {bound}{tokens} tokens, below the model's "
            f"minimum of {minimum}; implicit caching only"
        )
    return diagnostic(
        "cache_not_created", text, reason=reason, tokens=tokens, at_most=at_most, minimum=minimum
    )
