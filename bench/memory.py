"""Section 7: memory over 1,000 tool-loop steps on the in-process simulator.

Two workloads, each ~1,000 model calls (tool-loop steps), alternating OpenAI and Anthropic models:

* ``loops``: independent runs whose results are dropped. Resident memory (``/proc/self/statm``)
  must stay flat: growth from 10% of the steps to the end is the figure.
* ``session``: one ``Session`` carrying portable history from run to run. Its history and results are
  kept on purpose, so its RSS grows with them (reported beside the pickled size of what it keeps);
  once the session is dropped, RSS does not fully come back (pymalloc arenas stay pinned by a few
  long-lived objects), so the Python heap blocks left (``sys.getallocatedblocks()``) are reported
  beside it (bounded interpreter and library caches, e.g. the type attribute cache and ``re``'s,
  leave a few hundred to ~1,000 of them; a leak would grow with steps).

RSS is read after ``gc.collect()`` and glibc's ``malloc_trim(0)``, so pages the allocator merely
keeps (freed request bodies, which grow with a session's history) do not count as live memory.

In both, every opaque reasoning item a loop received is watched through a weak reference, and the
registry of live continuations is read after each loop: when loops end, the count of live
continuations and of surviving reasoning items must be 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import gc
import os
import pickle
import sys
import weakref
from typing import Any

from ._util import Section, Target

MODELS = ("openai:sim-reasoner", "anthropic:sim-thinker")
TASK = "Is it warmer in Paris or Rome?"
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _trim() -> None:
    """Hand freed heap pages back to the OS (glibc ``malloc_trim``), so RSS shows live memory."""
    # Not glibc: nothing to trim, and RSS then includes what the allocator keeps.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def rss_mib() -> float:
    """Resident memory after a full collection and a heap trim."""
    gc.collect()
    _trim()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE / 2**20


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
    """
    return {"paris": "18 C, rain", "rome": "24 C, sun"}.get(city.lower(), "no data")


@functools.cache
def weather_tool() -> Any:
    """Decorated once, as a user's ``@al.tool`` is (a plain function would be wrapped per run)."""
    import agentlab as al

    return al.tool(get_weather)


async def workload(steps: int, *, session: bool) -> dict[str, Any]:
    import agentlab as al
    from agentlab.loop.continuation import live_continuations
    from agentlab.neutral.events import ResponseCompletedEvent

    refs: list[weakref.ref[Any]] = []

    def watch(ev: Any) -> None:
        if isinstance(ev, ResponseCompletedEvent):
            refs.extend(weakref.ref(item) for item in ev.response.reasoning)

    start = rss_mib()
    s = al.Session() if session else None
    done = 0
    i = 0
    samples: list[tuple[int, float]] = []
    live_after_loop = 0
    while done < steps:
        model = MODELS[i % len(MODELS)]
        i += 1
        if s is not None:
            r = await s.arun(model, TASK, tools=[weather_tool()], on_event=watch)
        else:
            r = await al.arun(model, TASK, tools=[weather_tool()], on_event=watch)
        done += r.steps
        live_after_loop = max(live_after_loop, len(live_continuations()))
        del r
        if i % 10 == 0:
            samples.append((done, rss_mib()))
    samples.append((done, rss_mib()))
    alive = sum(1 for ref in refs if ref() is not None)
    base = next((m for n, m in samples if n >= steps // 10), samples[0][1])
    out: dict[str, Any] = {
        "steps": done,
        "loops": i,
        "rss_mib_at_10pct": base,
        "rss_mib_end": samples[-1][1],
        "rss_growth_mib": samples[-1][1] - base,
        "reasoning_items_seen": len(refs),
        "reasoning_items_alive_after": alive,
        "max_live_continuations_after_a_loop": live_after_loop,
        "live_continuations_end": len(live_continuations()),
        "rss_samples": samples,
    }
    if s is not None:
        out["kept_history_items"] = len(s.history)
        out["kept_pickled_mib"] = len(pickle.dumps((s.history, s.results))) / 2**20
        del s
        out["rss_mib_after_session_dropped"] = rss_mib()
    out["rss_mib_start"] = start
    out["rss_mib_left_after_end"] = out.get("rss_mib_after_session_dropped", samples[-1][1]) - start
    return out


def measured(steps: int, *, session: bool) -> dict[str, Any]:
    """One workload in a fresh event loop, with the Python heap blocks it left once it returned."""
    gc.collect()
    before = sys.getallocatedblocks()
    out = asyncio.run(workload(steps, session=session))
    gc.collect()
    out["python_blocks_left"] = sys.getallocatedblocks() - before
    return out


def run(quick: bool) -> Section:
    import warnings

    sec = Section("memory", "7. Memory over 1,000 tool-loop steps (simulator)")
    steps = 40 if quick else 1000
    warnings.simplefilter("ignore")
    asyncio.run(workload(20, session=False))  # warm-up: SDK imports, schema caches, pools
    loops = measured(steps, session=False)
    sess = measured(steps, session=True)
    sec.figures = {"loops": loops, "session": sess}
    sec.row(
        f"{loops['steps']:,} steps in {loops['loops']} independent loops",
        f"RSS {loops['rss_mib_at_10pct']:.1f} → {loops['rss_mib_end']:.1f} MiB "
        f"(+{loops['rss_growth_mib']:.1f}); reasoning items alive after: "
        f"{loops['reasoning_items_alive_after']} of {loops['reasoning_items_seen']}; "
        f"live continuations: {loops['live_continuations_end']}; "
        f"Python heap blocks left: {loops['python_blocks_left']:,}",
    )
    sec.row(
        f"{sess['steps']:,} steps in one Session ({sess['loops']} loops)",
        f"RSS {sess['rss_mib_at_10pct']:.1f} → {sess['rss_mib_end']:.1f} MiB "
        f"(+{sess['rss_growth_mib']:.1f}) while it keeps {sess['kept_history_items']:,} history items "
        f"and {sess['loops']} results ({sess['kept_pickled_mib']:.1f} MiB pickled); "
        f"{sess['rss_mib_after_session_dropped']:.1f} MiB once the session is dropped "
        f"(start {sess['rss_mib_start']:.1f}; Python heap blocks left: {sess['python_blocks_left']:,}); "
        "reasoning items alive after: "
        f"{sess['reasoning_items_alive_after']} of {sess['reasoning_items_seen']}",
    )
    sec.targets += [
        Target(
            "independent loops: RSS growth from 10% of steps to the end", loops["rss_growth_mib"], 4.0, "MiB"
        ),
        Target(
            "reasoning items alive after their loops ended (both workloads)",
            float(loops["reasoning_items_alive_after"] + sess["reasoning_items_alive_after"]),
            0.0,
        ),
        Target(
            "live continuations after a loop ended (both workloads)",
            float(loops["max_live_continuations_after_a_loop"] + sess["max_live_continuations_after_a_loop"]),
            0.0,
        ),
    ]
    return sec
