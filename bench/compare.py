"""Section 5: ``compare`` wall time over 3 and 10 models on the simulator, with per-delta latency.

Models run on the in-process simulator with the ``slow:<ms>`` fault (a pause before every delta, like
a real provider's token rate). Each model is first run alone (``arun``) to get its own duration; then
``acompare`` runs them together. Figures: the comparison's wall time against the slowest single run
and against the sum of the single runs (medians over repetitions of the ratios).
"""

from __future__ import annotations

import asyncio
import time
import warnings
from typing import Any

from agentlab.costs.pricing import UnpricedModelWarning

from ._util import Section, Target, median

BASE = [
    "openai:sim-reasoner",
    "anthropic:sim-thinker",
    "openai:sim-reasoner-mini",
    "anthropic:sim-thinker-legacy",
]
TASK = "Is it warmer in Paris or Rome?"


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
    """
    return {"paris": "18 C, rain", "rome": "24 C, sun"}.get(city.lower(), "no data")


def models(n: int, delay_ms: int) -> list[str]:
    return [f"{BASE[i % len(BASE)]}+fault=slow:{delay_ms}" for i in range(n)]


async def warm_up() -> None:
    """Load the SDKs and build their schemas once, so the first timed run does not pay for it."""
    import agentlab as al

    for m in BASE:
        await al.arun(m, TASK, tools=[get_weather])


async def once(n: int, delay_ms: int) -> dict[str, Any]:
    import agentlab as al

    ms = models(n, delay_ms)
    singles: list[float] = []
    for m in ms:
        t0 = time.perf_counter()
        r = await al.arun(m, TASK, tools=[get_weather])
        singles.append(time.perf_counter() - t0)
        assert r.status == "completed", r.status
    t0 = time.perf_counter()
    cmp = await al.acompare(TASK, ms, tools=[get_weather], live=False)
    wall = time.perf_counter() - t0
    assert all(e.status == "completed" for e in cmp.entries), [e.status for e in cmp.entries]
    return {
        "wall_s": wall,
        "slowest_single_s": max(singles),
        "sum_single_s": sum(singles),
        "singles_s": singles,
        "wall_over_slowest": wall / max(singles),
        "wall_over_sum": wall / sum(singles),
    }


def run(quick: bool) -> Section:
    sec = Section("compare", "5. compare() wall time (simulator, per-delta latency)")
    delay = 2 if quick else 10
    reps = 1 if quick else 3
    sec.figures["delta_latency_ms"] = delay
    warnings.simplefilter("ignore", UnpricedModelWarning)  # "+fault=" model names have no price
    asyncio.run(warm_up())
    for n in (3, 10):
        rs = [asyncio.run(once(n, delay)) for _ in range(reps)]
        fig: dict[str, Any] = {
            k: median([r[k] for r in rs])
            for k in ("wall_s", "slowest_single_s", "sum_single_s", "wall_over_slowest", "wall_over_sum")
        }
        fig["samples"] = rs
        sec.figures[f"{n}_models"] = fig
        sec.row(
            f"{n} models, {delay} ms per delta",
            f"wall {fig['wall_s']:.2f} s; slowest single {fig['slowest_single_s']:.2f} s "
            f"({fig['wall_over_slowest']:.2f}x); sum {fig['sum_single_s']:.2f} s "
            f"({fig['wall_over_sum']:.2f}x)",
        )
        sec.targets.append(
            Target(f"{n} models: compare wall / slowest single run", fig["wall_over_slowest"], 1.15, "x")
        )
    return sec
