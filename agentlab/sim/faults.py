"""Faults on demand, so retry, timeout and stream-error handling can be tested offline.

Grammar (header ``x-sim-fault`` or model option ``sim-reasoner+fault=<spec>``; the header wins)::

    spec   := fault ("," fault)*
    fault  := kind ["x" N]          N = fault only the first N attempts, then behave normally
    kind   := "429" | "500" | "529" | "cut" | "malformed" | "reset" | "unknown_event" | "error_chunk"
            | "slow:" MS

* ``429``: rate limited, with ``retry-after`` (seconds) and ``retry-after-ms`` headers.
* ``500``: server error. ``529``: Anthropic ``overloaded_error`` (OpenAI: 503 "engine overloaded").
* ``cut``: the stream stops in the middle of an event (non-stream: the JSON body is cut in half).
* ``malformed``: one event's ``data:`` is not valid JSON (non-stream: the body is not JSON).
* ``reset``: the connection drops mid-stream (the transport raises ``httpx2.ReadError``; the server
  aborts the socket).
* ``unknown_event``: an event type no SDK knows is injected after the first event; clients must
  tolerate it.
* ``error_chunk``: a 200 stream fails midway with an in-stream error event, where the protocol has
  one (Chat Completions: OpenRouter's chunk with a top-level ``error``); elsewhere it does nothing.
* ``slow:MS``: sleep MS milliseconds before every delta event (non-stream: once before replying).

Attempts are counted per (fault spec, method, path, body), so an SDK retrying the same request sees
``429x2`` as two 429s and then a success, a bounded retry test in one line.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from agentlab.sim.core import Simulator, SSEEvent
from agentlab.sim.pacing import Pace

_FAULT = re.compile(r"^(429|500|529|cut|malformed|reset|unknown_event|error_chunk|slow:(\d+))(?:x(\d+))?$")
ERROR_FAULTS = ("429", "500", "529")


class FaultSpecError(ValueError):
    """An ``x-sim-fault`` value outside the grammar (answered with a 400, never ignored)."""


@dataclass(frozen=True)
class Fault:
    """One parsed fault of a spec.

    ``times`` is compared with the attempt counter (``429x2``: the first two attempts only), so a
    retrying SDK eventually succeeds; ``delay_ms`` is only set for ``slow``.
    """

    kind: str
    times: int | None = None  # None: every attempt
    delay_ms: int = 0


def parse(spec: str) -> list[Fault]:
    """Parse a fault spec; raise :class:`FaultSpecError` naming the bad part."""
    out: list[Fault] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        m = _FAULT.match(part)
        if m is None:
            raise FaultSpecError(
                # error_chunk is left out of the text: its bytes are pinned in tests/sim/wire_golden.json
                f"Unknown x-sim-fault {part!r}; expected 429, 500, 529, cut, malformed, reset, unknown_event "
                "or slow:<ms>, optionally followed by x<N>"
            )
        kind = "slow" if m.group(1).startswith("slow:") else m.group(1)
        out.append(Fault(kind, int(m.group(3)) if m.group(3) else None, int(m.group(2) or 0)))
    return out


def active(sim: Simulator, spec: str, method: str, path: str, body: bytes) -> list[Fault]:
    """The faults that apply to this attempt (counting attempts of faults limited by ``xN``)."""
    faults = parse(spec)
    if not faults:
        return []
    key = hashlib.sha256(f"{spec}|{method}|{path}|".encode() + body).hexdigest()
    attempt = sim.count_attempt(key)
    return [f for f in faults if f.times is None or attempt <= f.times]


@dataclass(frozen=True)
class Sleep:
    """A pause in a reply's chunk plan, so the plan stays pure data.

    Whoever delivers the plan sleeps its own way (the transport with ``time.sleep`` or
    ``asyncio.sleep`` per client, the server by awaiting), and a ``slow`` fault times the same on both.
    """

    seconds: float


@dataclass(frozen=True)
class Reset:
    """Drop the connection here."""


Chunk = bytes | Sleep | Reset


def stream_plan(
    events: list[SSEEvent], faults: list[Fault], unknown_event: SSEEvent, pace: Pace | None = None
) -> list[Chunk]:
    """The byte chunks (and pauses, and resets) a faulty, or paced, stream delivers.

    ``unknown_event`` is the protocol's event of a type no SDK knows, injected after the first event
    by the ``unknown_event`` fault. ``pace`` (the ``tps``/``ttft`` model options) adds its pauses.
    """
    kinds = {f.kind for f in faults}
    delay = max((f.delay_ms for f in faults if f.kind == "slow"), default=0)
    evs = list(events)
    if "unknown_event" in kinds and evs:
        evs.insert(1, unknown_event)
    mid = len(evs) // 2
    out: list[Chunk] = [Sleep(pace.first())] if pace is not None and pace.ttft_ms else []
    for i, ev in enumerate(evs):
        if i == mid and "reset" in kinds:
            out.append(Reset())
            return out
        if i == mid and "cut" in kinds:
            out.append(ev.raw[: max(1, len(ev.raw) // 2)])
            return out
        if ev.error is not None and "error_chunk" in kinds:
            out.append(ev.error)
            return out
        raw = ev.raw
        if i == mid and "malformed" in kinds:
            head = raw.split(b"\n", 1)[0]
            raw = head + b'\ndata: {"type": "truncated", "oops\n\n'
        wait = delay / 1000 + (pace.before(raw) if ev.delta and pace is not None else 0.0)
        if ev.delta and wait:
            out.append(Sleep(wait))
        out.append(raw)
    return out


def body_plan(body: bytes, faults: list[Fault], pace: Pace | None = None) -> list[Chunk]:
    """The chunks a faulty (or paced: ``ttft`` only) non-streaming JSON reply delivers."""
    kinds = {f.kind for f in faults}
    delay = max((f.delay_ms for f in faults if f.kind == "slow"), default=0) / 1000
    delay += pace.first() if pace is not None else 0.0
    out: list[Chunk] = [Sleep(delay)] if delay else []
    if "reset" in kinds:
        return [*out, body[: len(body) // 2], Reset()]
    if "cut" in kinds:
        return [*out, body[: len(body) // 2]]
    if "malformed" in kinds:
        return [*out, b'{"malformed": ' + body[:20]]
    return [*out, body]
