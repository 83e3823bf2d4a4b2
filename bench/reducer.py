"""Per-event cost of the neutral reducer (``agentlab.assembly.reducer.accumulate``).

``python -m bench.reducer`` folds one call of the bench's default shape (5,000 reasoning deltas,
2,000 text deltas, one streamed tool call, the completion) and prints the median CPU time per
event over several rounds, beside a baseline loop that only appends each delta to a mutable list
(what a view did before it used the reducer). ``--reads K`` also reads the snapshot's texts every
``K`` events, as a view that renders every K-th frame does.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from agentlab.assembly.reducer import accumulate
from agentlab.neutral.events import (
    ModelResponse,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
)
from agentlab.neutral.items import AssistantTextItem, ToolCallItem
from agentlab.neutral.usage import CallUsage

__all__ = ["events", "main", "measure"]

WORDS = (" The", " user", " asks", " about", " weather", " in", " Paris", ";", " I", " should")


def events(reasoning: int = 5000, text: int = 2000) -> list[Any]:
    """One call's neutral events, the shape of ``bench.streams``' default stream."""
    out: list[Any] = [ReasoningDeltaEvent(text=WORDS[i % 10], block="0", step=1) for i in range(reasoning)]
    out += [TextDeltaEvent(text=WORDS[i % 10], step=1) for i in range(text)]
    pieces = ('{"', "city", '":"', "Paris", '"}')
    out += [ToolCallDeltaEvent(call_id="c1", name="weather", arguments_delta=p, step=1) for p in pieces]
    answer = "".join(WORDS[i % 10] for i in range(text))
    response = ModelResponse(
        provider="openai",
        api="responses",
        model="sim-reasoner",
        items=(
            AssistantTextItem(text=answer),
            ToolCallItem(call_id="c1", name="weather", arguments='{"city":"Paris"}'),
        ),
        stop_reason="tool_use",
        usage=CallUsage(input_tokens=10, output_tokens=20, reasoning_tokens=5),
    )
    out.append(ResponseCompletedEvent(response=response, step=1))
    return out


def _fold(evs: list[Any], reads: int) -> float:
    t0 = time.process_time()
    snap = None
    for n, ev in enumerate(evs, 1):
        snap = accumulate(snap, ev)
        if reads and n % reads == 0:
            _ = snap.text, snap.reasoning
    return time.process_time() - t0


def _baseline(evs: list[Any]) -> float:
    t0 = time.process_time()
    parts: list[str] = []
    append = parts.append
    for ev in evs:
        if type(ev) is not ResponseCompletedEvent:
            append(getattr(ev, "text", ""))
    return time.process_time() - t0


def measure(rounds: int = 15, reads: int = 0) -> dict[str, float]:
    """Median µs per event: the reducer, and the list-append baseline, interleaved."""
    evs = events()
    fold_s, base_s = [], []
    for _ in range(rounds):
        fold_s.append(_fold(evs, reads))
        base_s.append(_baseline(evs))
    n = len(evs)
    return {
        "events": n,
        "reducer_us_per_event": statistics.median(fold_s) / n * 1e6,
        "baseline_us_per_event": statistics.median(base_s) / n * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    """Print the figures."""
    p = argparse.ArgumentParser(prog="python -m bench.reducer")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--reads", type=int, default=0, help="read the snapshot's texts every K events")
    a = p.parse_args(argv)
    r = measure(a.rounds, a.reads)
    print(
        f"{r['events']:.0f} events: reducer {r['reducer_us_per_event']:.2f} µs/event, "
        f"list-append baseline {r['baseline_us_per_event']:.2f} µs/event"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
