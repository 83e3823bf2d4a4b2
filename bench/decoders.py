"""The JSON decoders the streaming hot path could use, on each protocol's own events (section 1).

Why agentlab decodes with msgspec (:mod:`agentlab.assembly.wire_json`): every event's ``data`` of the
bench's streams (:mod:`bench.streams`) is decoded by each candidate, to plain Python values, and the
time per event is the best of ``passes`` passes over the whole stream (a micro-measure: no I/O, one
process, the candidates interleaved). ``json.loads`` is the floors' decoder; jiter (both SDKs bring
it) in the cache mode agentlab would use (``keys``: no string value kept process-wide); msgspec's
untyped decoder, agentlab's; orjson where it is installed (the ``bench`` extra's peers bring it).
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from typing import Any

from .streams import Stream, anthropic_stream, chat_stream, gemini_stream, openai_stream

STREAMS: dict[str, Callable[[int, int], Stream]] = {
    "openai": openai_stream,
    "anthropic": anthropic_stream,
    "gemini": gemini_stream,
    "chat": chat_stream,
}


def decoders() -> dict[str, Callable[[bytes], Any]]:
    """The candidates by name (orjson only where it is installed)."""
    import jiter

    from agentlab.assembly import wire_json

    out: dict[str, Callable[[bytes], Any]] = {
        "json.loads": json.loads,
        "jiter (keys)": lambda b: jiter.from_json(b, cache_mode="keys"),
        "msgspec (agentlab)": wire_json.FAST,
    }
    try:
        orjson: Any = importlib.import_module("orjson")
    except ImportError:
        return out
    out["orjson"] = orjson.loads
    return out


def event_data(stream: Stream) -> list[bytes]:
    """The ``data`` of every event of ``stream`` (``[DONE]`` left out: it is not JSON)."""
    out = []
    for line in stream.body.split(b"\n"):
        if line.startswith(b"data: ") and not line.startswith(b"data: [DONE]"):
            out.append(line[6:].rstrip(b"\r"))
    return out


def ns_per_event(datas: list[bytes], decode: Callable[[bytes], Any]) -> float:
    t0 = time.perf_counter()
    for d in datas:
        decode(d)
    return (time.perf_counter() - t0) / len(datas) * 1e9


def measure(n_reasoning: int, n_text: int, passes: int) -> dict[str, dict[str, float]]:
    """``{protocol: {decoder: ns per event}}``, the best of ``passes`` interleaved passes."""
    cands = decoders()
    out: dict[str, dict[str, float]] = {}
    for protocol, make in STREAMS.items():
        datas = event_data(make(n_reasoning, n_text))
        for d in datas:  # every candidate reads every event the same way before any is timed
            results = {name: repr(f(d)) for name, f in cands.items()}
            assert len(set(results.values())) == 1, (protocol, results)
        best = {name: float("inf") for name in cands}
        for _ in range(passes):
            for name, f in cands.items():
                best[name] = min(best[name], ns_per_event(datas, f))
        out[protocol] = best
    return out


def row(protocol: str, ns: dict[str, float]) -> tuple[str, str]:
    """One table row: each decoder's ns per event, and msgspec's ratio to jiter and to ``json.loads``."""
    ms, ji, std = ns["msgspec (agentlab)"], ns["jiter (keys)"], ns["json.loads"]
    figs = " / ".join(f"{name} {v:,.0f}" for name, v in ns.items())
    return (
        f"JSON decode per {protocol} event (ns, best of passes)",
        f"{figs}; msgspec/jiter {ms / ji:.2f}x, msgspec/json.loads {ms / std:.2f}x",
    )
