"""Anthropic message threads (beta ``message-threads-2026-08-12``): server-held conversations.

What the Messages API documents, and what the simulator does:

* ``"thread": {"type": "create"}`` on an ordinary request holds the conversation (``system``,
  ``tools``, ``messages``) and Claude's reply under the response ``id``.
* ``"thread": {"type": "continue", "previous_message_id": id}`` sends only the messages since that
  reply and leaves ``system`` and ``tools`` out; the server rebuilds the whole conversation (the held
  reply's thinking blocks with their signatures included, so they pass the strict thinking checks)
  before the model answers, and holds the new turn under the new response ``id``.
* A thread is best-effort and short-lived: it expires ``ttl_s`` after its last stored turn (the
  docs: 5 minutes). An unknown or expired id is a 404 ``not_found_error`` with
  ``error.details.error_code: "thread_not_found"``: the SDK's thread helper reads that code and
  replays the full history under a new thread.
* ``model``, ``thinking``, ``tool_choice`` and a top-level ``cache_control`` are pinned by the create
  request; a continue that changes one is a 400 with ``error_code: "thread_fingerprint_mismatch"``.
* Without the beta header the field is not part of the request schema (400 "thread: Extra inputs
  are not permitted").

The error codes are those the SDK's thread helper (``anthropic/lib/threads/_thread_state.py``)
reacts to; the message texts are the simulator's own (the public docs quote the codes, not the
texts). The store is in memory, per :class:`~agentlab.sim.core.Simulator`, bounded (``max_held``
turns, oldest dropped first) and never written anywhere; held content is the request's own, so a
thread on the simulator is as private as the process.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import agentlab.sim.errors as E

__all__ = ["THREADS_BETA", "HeldTurn", "ThreadStore", "expand", "hold"]

THREADS_BETA = "message-threads-2026-08-12"
#: Fields a continue takes from the thread; repeating them is refused (the SDK never sends them).
CREATE_ONLY = ("system", "tools")
#: Fields fixed by the create request; a continue must send the same values.
PINNED = ("model", "thinking", "tool_choice", "cache_control")
DEFAULT_TTL_S = 300.0
DEFAULT_MAX_HELD = 1000


@dataclass(frozen=True)
class HeldTurn:
    """One stored turn: the whole conversation up to and including the reply ``id`` names."""

    system: Any
    tools: Any
    messages: tuple[Any, ...]
    pinned: dict[str, Any]
    stored_at: float


@dataclass
class ThreadStore:
    """The threads one simulator holds, keyed by response id; thread-safe and bounded."""

    ttl_s: float = DEFAULT_TTL_S
    max_held: int = DEFAULT_MAX_HELD
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    _held: OrderedDict[str, HeldTurn] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __len__(self) -> int:
        return len(self._held)

    def put(self, message_id: str, turn: HeldTurn) -> None:
        """Hold ``turn``; past ``max_held`` the oldest turn is forgotten."""
        with self._lock:
            self._held[message_id] = turn
            self._held.move_to_end(message_id)
            while len(self._held) > self.max_held:
                self._held.popitem(last=False)

    def get(self, message_id: str) -> HeldTurn | None:
        """The held turn, or None when unknown or expired (an expired one is forgotten)."""
        with self._lock:
            turn = self._held.get(message_id)
            if turn is not None and self.clock() - turn.stored_at > self.ttl_s:
                del self._held[message_id]
                return None
            return turn


@dataclass(frozen=True)
class Pending:
    """What :func:`hold` needs to store the turn once the reply exists (None: not threaded)."""

    turn: HeldTurn


def _bad(message: str, error_code: str | None = None) -> E.SimError:
    return E.SimError(400, "invalid_request_error", message, details=_details(error_code))


def _details(error_code: str | None) -> dict[str, Any] | None:
    return None if error_code is None else {"error_code": error_code}


def _betas(headers: dict[str, str]) -> frozenset[str]:
    return frozenset(b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip())


def _thread_param(req: dict[str, Any], headers: dict[str, str]) -> dict[str, Any] | None:
    """The validated ``thread`` field, or None when the request carries none."""
    thread = req.get("thread")
    if thread is None:
        return None
    if THREADS_BETA not in _betas(headers):
        raise _bad("thread: Extra inputs are not permitted")
    if not isinstance(thread, dict):
        raise _bad("thread: Input should be a valid dictionary or object to extract fields from")
    kind = thread.get("type")
    if kind not in ("create", "continue"):
        raise _bad(
            f"thread: Input tag '{kind}' found using 'type' does not match any of the expected tags: "
            "'create', 'continue'"
        )
    allowed = {"type"} if kind == "create" else {"type", "previous_message_id"}
    for key in thread:
        if key not in allowed:
            raise _bad(f"thread.{kind}.{key}: Extra inputs are not permitted")
    if kind == "continue" and not isinstance(thread.get("previous_message_id"), str):
        raise _bad(
            "thread.continue.previous_message_id: Field required"
            if "previous_message_id" not in thread
            else "thread.continue.previous_message_id: Input should be a valid string"
        )
    return thread


def _without_cache_control(value: Any) -> Any:
    """Blocks as held: each ``cache_control`` was set for the request that sent it first."""
    if isinstance(value, dict):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(v) for v in value]
    return value


def _resume(store: ThreadStore, req: dict[str, Any], previous: str) -> dict[str, Any]:
    """The full request a continue stands for: the held conversation, then the new turn."""
    for name in CREATE_ONLY:
        if name in req:
            raise _bad(
                f"thread: `{name}` cannot be sent with `thread.type: continue`; the thread keeps the "
                "value of its create request"
            )
    held = store.get(previous)
    if held is None:
        raise E.SimError(
            404,
            "not_found_error",
            f"thread: no thread holds a message with id '{previous}' (unknown, expired, or made "
            "elsewhere); send the full conversation with `thread.type: create`",
            details=_details("thread_not_found"),
        )
    changed = [name for name in PINNED if req.get(name) != held.pinned.get(name)]
    if changed:
        raise _bad(
            f"thread: {', '.join(f'`{n}`' for n in changed)} must match the thread's create request",
            "thread_fingerprint_mismatch",
        )
    messages = req.get("messages")
    new = list(messages) if isinstance(messages, list) else []
    full = {k: v for k, v in req.items() if k not in ("thread", "messages")}
    if held.system is not None:
        full["system"] = held.system
    if held.tools is not None:
        full["tools"] = held.tools
    full["messages"] = [*held.messages, *new]
    return full


def expand(
    store: ThreadStore, req: dict[str, Any], headers: dict[str, str]
) -> tuple[dict[str, Any], Pending | None]:
    """The request as the model sees it, and what to hold once the reply exists.

    A continue is rebuilt in full and ``thread`` is removed; a request without ``thread`` passes
    through untouched.
    """
    thread = _thread_param(req, headers)
    if thread is None:
        return req, None
    if thread["type"] == "continue":
        full = _resume(store, req, str(thread["previous_message_id"]))
    else:
        full = {k: v for k, v in req.items() if k != "thread"}
    messages = full.get("messages")
    pending = HeldTurn(
        system=full.get("system"),
        tools=full.get("tools"),
        messages=tuple(_without_cache_control(messages if isinstance(messages, list) else [])),
        pinned={name: full.get(name) for name in PINNED},
        stored_at=0.0,
    )
    return full, Pending(pending)


def hold(store: ThreadStore, pending: Pending | None, reply: dict[str, Any]) -> None:
    """Hold the conversation plus ``reply`` under the reply's id (a refusal is not held)."""
    if pending is None or reply.get("stop_reason") == "refusal":
        return
    turn = pending.turn
    answer = {"role": "assistant", "content": json.loads(json.dumps(reply.get("content") or []))}
    store.put(
        str(reply["id"]),
        HeldTurn(
            system=turn.system,
            tools=turn.tools,
            messages=(*turn.messages, answer),
            pinned=turn.pinned,
            stored_at=store.clock(),
        ),
    )
