"""Section 4: what a 5,000-delta reasoning stream costs the notebook frontend.

Every comm message the panel's widgets send is captured by a stand-in comm (``comm.create_comm`` is
replaced, as a kernel would provide it), with its time and its JSON size. Each delta's text carries a
unique marker, so the delta a message shows last is known: a delta's display latency is the time from
its ``append`` to the first message that shows it (or a later delta). Two feeds: a burst (deltas as
fast as one thread can append them) and a paced stream (``--rate`` deltas per second). "No text lost":
the panel's text equals the deltas joined, and the last message shows the last delta.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from typing import Any

from agentlab.notebook._coalesce import MAX_RATE

from ._util import Section, Target, median, percentile

SENT_LIMIT = float(int(MAX_RATE) + 1)
"""Messages the kernel may send in any 1 s window (the bucket: MAX_RATE/s, burst of one); the page's
budget, 21 as received, leaves the rest for delivery bunching (README, "Message budget")."""

_MARK = re.compile(r"d(\d{6})")
_ids = itertools.count()


class RecordingComm:
    """A kernel comm stand-in: records (time, bytes, last marker shown) for every message sent."""

    def __init__(self, sink: list[tuple[float, int, int]], **kwargs: Any) -> None:
        self.comm_id = f"bench-comm-{next(_ids)}"
        self.kernel = object()
        self.sink = sink

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        t = time.perf_counter()
        raw = json.dumps(data, default=str)
        marks = _MARK.findall(raw)
        self.sink.append((t, len(raw.encode()), int(marks[-1]) if marks else -1))

    def on_msg(self, callback: Any) -> None:
        pass

    def on_close(self, callback: Any) -> None:
        pass

    def close(self, *args: Any, **kwargs: Any) -> None:
        pass


def feed(n: int, rate: float | None) -> dict[str, Any]:
    from ipywidgets.widgets import widget

    from agentlab.notebook._coalesce import wait_idle
    from agentlab.notebook.panel import ReasoningPanel

    sent: list[tuple[float, int, int]] = []
    original = widget.comm.create_comm
    widget.comm.create_comm = lambda *a, **kw: RecordingComm(sent, **kw)
    try:
        panel = ReasoningPanel("bench")
        sent.clear()  # widget creation (comm_open) is not stream load
        deltas = [f" d{i:06d}" for i in range(n)]
        arrivals: list[float] = []
        t_start = time.perf_counter()
        for i, d in enumerate(deltas):
            if rate is not None:
                due = t_start + i / rate
                while (now := time.perf_counter()) < due:
                    time.sleep(min(due - now, 0.002))
            arrivals.append(time.perf_counter())
            panel.append(d)
        t_last = time.perf_counter()
        time.sleep(0.15)  # let the flusher's trailing update go out, as it would mid-cell
        streaming_msgs = list(sent)
        panel.end("done")
        wait_idle()  # the final render goes out within the frontend's budget, right after end()
        text_ok = panel.text == "".join(deltas)
    finally:
        widget.comm.create_comm = original
    lat = _latencies(arrivals, sent)
    duration = max(t_last - t_start, 1e-9)
    span = max(duration, (streaming_msgs[-1][0] - t_start) if streaming_msgs else 0.0)
    return {
        "deltas": n,
        "rate_target": rate,
        "stream_s": duration,
        "messages": len(sent),
        "bytes": sum(b for _, b, _ in sent),
        "updates_per_s": len(streaming_msgs) / span,
        "max_updates_in_1s_window": _max_window(streaming_msgs),
        "latency_ms_p50": percentile(lat, 50) * 1000,
        "latency_ms_p99": percentile(lat, 99) * 1000,
        "latency_ms_max": max(lat) * 1000,
        "text_intact": text_ok,
        "last_delta_shown": any(m[2] == n - 1 for m in sent),  # the text, not the header, shows it
    }


def _latencies(arrivals: list[float], msgs: list[tuple[float, int, int]]) -> list[float]:
    """Per delta: time from its arrival to the first message showing it (or a later delta)."""
    lat: list[float] = []
    j = 0
    shown = [m for m in msgs if m[2] >= 0]
    for i, t in enumerate(arrivals):
        while j < len(shown) and shown[j][2] < i:
            j += 1
        lat.append(float("inf") if j == len(shown) else shown[j][0] - t)
    return lat


def feed_run_view(n: int, rate: float) -> dict[str, Any]:
    """The whole notebook path: a real ``Run`` whose ``on_event`` is a ``RunView``.

    The run uses the OpenAI adapter over an in-process transport pacing its SSE events at ``rate`` per
    second; the view has header, step and panel.
    """
    import asyncio
    from collections.abc import AsyncIterator

    import httpx2
    import openai
    from ipywidgets.widgets import widget

    import agentlab as al
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
    from agentlab.neutral.events import ReasoningDeltaEvent
    from agentlab.notebook._coalesce import wait_idle
    from agentlab.notebook.run_view import RunView

    from .streams import openai_stream

    deltas = [f" d{i:06d}" for i in range(n)]
    body = openai_stream(0, 20, reasoning_deltas=deltas).body
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e]

    async def paced() -> AsyncIterator[bytes]:
        for e in events:
            yield e
            await asyncio.sleep(1 / rate)

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=paced())

    def get_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: City name.
        """
        return "18 C, rain"

    sent: list[tuple[float, int, int]] = []
    arrivals: list[float] = []
    original = widget.comm.create_comm
    widget.comm.create_comm = lambda *a, **kw: RecordingComm(sent, **kw)
    try:
        view = RunView("bench")

        def hook(ev: object) -> None:
            if type(ev) is ReasoningDeltaEvent:
                arrivals.append(time.perf_counter())
            view.on_event(ev)

        async def go() -> str:
            client = openai.AsyncOpenAI(
                api_key="sk-bench", http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
            )
            adapter = OpenAIResponsesAdapter("gpt-5", client=client, max_retries=0)
            r = al.Run("openai:gpt-5", "hi", tools=[get_weather], adapter=adapter, max_steps=1, on_event=hook)
            res = await r.arun()
            return str(res.status)

        sent.clear()
        t0 = time.perf_counter()
        status = asyncio.run(go())
        t1 = time.perf_counter()
        wait_idle()
        panel_text = view.panels[0].text if view.panels else ""
    finally:
        widget.comm.create_comm = original
    lat = _latencies(arrivals, sent)
    return {
        "deltas": n,
        "rate_target": rate,
        "status": status,
        "stream_s": t1 - t0,
        "messages": len(sent),
        "bytes": sum(b for _, b, _ in sent),
        "max_messages_in_1s_window": _max_window(sent),
        "latency_ms_p50": percentile(lat, 50) * 1000,
        "latency_ms_p99": percentile(lat, 99) * 1000,
        "text_intact": panel_text == "".join(deltas) and len(arrivals) == n,
        "last_delta_shown": any(m[2] == n - 1 for m in sent),
    }


def feed_columns(k: int, n: int, rate: float) -> dict[str, Any]:
    """``k`` compare columns streaming at once: messages of *all* widgets, and per-column latency.

    Each column streams ``n`` deltas at ``rate``/s on its own thread, as ``compare`` runs them.
    """
    import threading

    from ipywidgets.widgets import widget

    from agentlab.neutral.events import ReasoningDeltaEvent
    from agentlab.notebook._coalesce import wait_idle
    from agentlab.notebook.run_view import CompareView

    by_comm: dict[str, list[tuple[float, int, int]]] = {}
    sent: list[tuple[float, int, int]] = []

    class Comm(RecordingComm):
        def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
            super().send(data, metadata, buffers)
            by_comm.setdefault(self.comm_id, []).append(self.sink[-1])

    arrivals: list[list[float]] = [[] for _ in range(k)]
    original = widget.comm.create_comm
    widget.comm.create_comm = lambda *a, **kw: Comm(sent, **kw)
    try:
        view = CompareView([f"col{c}" for c in range(k)])

        def stream(c: int) -> None:
            col = view.columns[c]
            t_start = time.perf_counter()
            for i in range(n):
                due = t_start + i / rate
                while (now := time.perf_counter()) < due:
                    time.sleep(min(due - now, 0.002))
                arrivals[c].append(time.perf_counter())
                col.on_event(ReasoningDeltaEvent(text=f" d{i:06d}", block="0", step=1))
            col.finish("completed")

        threads = [threading.Thread(target=stream, args=(c,)) for c in range(k)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wait_idle(30.0)
        t1 = time.perf_counter()
        lives = [c._live for c in view.model_columns]  # the text goes out as their custom messages
        bodies = [live.comm.comm_id for live in lives if live is not None]
        assert len(bodies) == k, "a column's live text closed before the cell ended"
        want = "".join(f" d{i:06d}" for i in range(n))
        text_ok = all(col._steps[1].call.reasoning == want for col in view.columns)
    finally:
        widget.comm.create_comm = original
    lat = [x for c in range(k) for x in _latencies(arrivals[c], by_comm.get(bodies[c], []))]
    return {
        "columns": k,
        "deltas_per_column": n,
        "rate_per_column": rate,
        "seconds": t1 - t0,
        "messages": len(sent),
        "max_messages_in_1s_window": _max_window(sent),
        "latency_ms_p50": percentile(lat, 50) * 1000,
        "latency_ms_p99": percentile(lat, 99) * 1000,
        "text_intact": text_ok and all(by_comm.get(b, [(0, 0, -1)])[-1][2] == n - 1 for b in bodies),
    }


def _max_window(msgs: list[tuple[float, int, int]]) -> int:
    times = [m[0] for m in msgs]
    best = 0
    j = 0
    for i, t in enumerate(times):
        while times[j] < t - 1.0:
            j += 1
        best = max(best, i - j + 1)
    return best


def run(quick: bool) -> Section:
    sec = Section("notebook", "4. Notebook load (reasoning panel, real comm messages)")
    n = 500 if quick else 5000
    rate = 2000.0 if quick else 1000.0
    reps = 1 if quick else 3
    results: dict[str, list[dict[str, Any]]] = {"burst": [], "paced": []}
    for _ in range(reps):
        results["burst"].append(feed(n, None))
        results["paced"].append(feed(n, rate))
    summary: dict[str, dict[str, Any]] = {}
    for mode, rs in results.items():
        keys = [k for k, v in rs[0].items() if isinstance(v, int | float) and not isinstance(v, bool)]
        s: dict[str, Any] = {k: median([float(r[k]) for r in rs]) for k in keys if rs[0][k] is not None}
        s["text_intact"] = all(r["text_intact"] for r in rs)
        s["last_delta_shown"] = all(r["last_delta_shown"] for r in rs)
        s["rate_target"] = rs[0]["rate_target"]
        summary[mode] = s
        label = "burst" if mode == "burst" else f"paced at {rate:,.0f} deltas/s"
        sec.row(
            f"{n:,} deltas, {label} ({s['stream_s']:.2f} s)",
            f"{s['messages']:.0f} comm msgs, {s['bytes'] / 1024:.0f} KiB, "
            f"max {s['max_updates_in_1s_window']:.0f} updates in any 1 s, "
            f"latency p50 {s['latency_ms_p50']:.1f} ms / "
            f"p99 {s['latency_ms_p99']:.1f} ms, text intact: {s['text_intact'] and s['last_delta_shown']}",
        )
        sec.targets += [
            Target(f"{mode}: updates in any 1 s window", s["max_updates_in_1s_window"], SENT_LIMIT, "/s"),
            Target(f"{mode}: p99 delta-to-display latency", s["latency_ms_p99"], 100.0, "ms"),
            Target(
                f"{mode}: text lost (deltas)",
                0.0 if s["text_intact"] and s["last_delta_shown"] else 1.0,
                0.0,
                "",
            ),
        ]
    rv = feed_run_view(n, rate)
    summary["run_view"] = rv
    sec.row(
        f"{n:,} deltas through a real Run into a RunView, transport paced at {rate:,.0f} events/s "
        f"({rv['stream_s']:.2f} s, {n / rv['stream_s']:,.0f} deltas/s achieved)",
        f"{rv['messages']} comm msgs (all widgets of the view), {rv['bytes'] / 1024:.0f} KiB, "
        f"max {rv['max_messages_in_1s_window']} msgs in any 1 s, "
        f"latency p50 {rv['latency_ms_p50']:.1f} ms / p99 {rv['latency_ms_p99']:.1f} ms, "
        f"text intact: {rv['text_intact'] and rv['last_delta_shown']}",
    )
    sec.targets += [
        Target(
            "run view: msgs in any 1 s window (all widgets)",
            rv["max_messages_in_1s_window"],
            SENT_LIMIT,
            "/s",
        ),
        Target("run view: p99 delta-to-display latency", rv["latency_ms_p99"], 100.0, "ms"),
        Target(
            "run view: text lost (deltas)", 0.0 if rv["text_intact"] and rv["last_delta_shown"] else 1.0, 0.0
        ),
    ]
    for k in (3, 10):
        cv = feed_columns(k, n // 5, rate)
        summary[f"compare_{k}"] = cv
        sec.row(
            f"{k}-column compare view, {n // 5:,} deltas per column at {rate:,.0f}/s each, all at once",
            f"{cv['messages']} comm msgs (all widgets), max {cv['max_messages_in_1s_window']} in any 1 s, "
            f"latency p50 {cv['latency_ms_p50']:.0f} ms / p99 {cv['latency_ms_p99']:.0f} ms, "
            f"text intact: {cv['text_intact']}",
        )
        sec.targets += [
            Target(
                f"compare {k} cols: msgs in any 1 s window", cv["max_messages_in_1s_window"], SENT_LIMIT, "/s"
            ),
            Target(f"compare {k} cols: p99 delta-to-display latency", cv["latency_ms_p99"], 1000.0, "ms"),
            Target(f"compare {k} cols: text lost (deltas)", 0.0 if cv["text_intact"] else 1.0, 0.0),
        ]
    sec.figures = {"deltas": n, "repetitions": reps, **summary, "samples": results}
    sec.notes.append(
        f"updates/s limit {SENT_LIMIT:.0f} as sent: one budget for the whole frontend (all panels, run "
        f"views and compare columns together): a token bucket of {MAX_RATE:.0f} comm messages per second "
        "with a burst of one; the page's budget is 21 as received (headroom for delivery bunching)"
    )
    return sec
