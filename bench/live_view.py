"""Section 11: what the live view costs what it measures, in a real kernel, with and without the view.

A Jupyter kernel (``jupyter_client`` + ``ipykernel``: the widget comms are real, their messages go
to this process, which reads them as a page would) runs a 15-run compare (5 simulated providers x 3
repeats) whose tool sleeps 10 ms, alternately with the live view (the default in a kernel) and
without it (``live=False``), so load drift hits both alike. Per sample: the compare's wall time
inside the cell, the cell's time from ``execute_request`` to its reply as the client sees it (the
cell-end collapse and the saved-output update included), and the median of the tool's recorded
durations (``ToolResultEvent.duration_s``, what the usage frame and the timeline show).

Targets (issue 33, item 3): with the view, the compare's wall time within 1.15x of the view-less
one, and the 10 ms tool's recorded median within 5 ms of the view-less figure.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ._util import Section, Target, median

ROOT = Path(__file__).resolve().parents[1]
MODELS = [
    "openai:sim-reasoner",
    "anthropic:sim-thinker",
    "google:sim-gemini",
    "deepseek:sim-deepseek",
    "openrouter:sim-router-claude",
]
REPEATS = 3
TOOL_S = 0.010

_SETUP = f"""
import json, statistics, time, warnings
import agentlab as al
from agentlab.neutral.events import ToolResultEvent
MODELS = {MODELS!r}
TASK = 'What is the total of the temperatures in Paris, Rome and Oslo?'

@al.tool
def get_weather(city: str) -> str:
    '''Current weather for a city.'''
    time.sleep({TOOL_S})
    return {{"Paris": "24 C", "Rome": "21 C", "Oslo": "9 C"}}.get(city, "unknown")

def sample(live):
    t0 = time.perf_counter()
    c = al.compare(TASK, models=MODELS, tools=[get_weather], repeats={REPEATS}, live=live)
    wall = time.perf_counter() - t0
    durs = [e.duration_s for en in c.entries if en.result is not None for e in en.result.events
            if isinstance(e, ToolResultEvent) and e.duration_s is not None]
    ok = all(en.status == 'completed' for en in c.entries)
    print('BENCH ' + json.dumps({{'wall_s': wall, 'tool_median_s': statistics.median(durs),
                                 'tools': len(durs), 'runs': len(c.entries), 'ok': ok}}), flush=True)

_ = al.compare(TASK, models=MODELS, tools=[get_weather], live=False)  # SDKs imported, simulators up
"""


def _cell(kc: Any, code: str, timeout: float = 300) -> tuple[float, list[str], int]:
    """Execute ``code``; returns seconds to its reply, its stdout lines and the comm messages seen."""
    out: list[str] = []
    comms = 0

    def hook(msg: dict[str, Any]) -> None:
        nonlocal comms
        kind = msg["msg_type"]
        if kind == "stream":
            out.extend(msg["content"]["text"].splitlines())
        elif kind == "comm_msg":
            comms += 1
        elif kind == "error":
            out.append("ERROR " + msg["content"]["ename"] + ": " + msg["content"]["evalue"])

    t0 = time.perf_counter()
    reply = kc.execute_interactive(code, timeout=timeout, output_hook=hook)
    dt = time.perf_counter() - t0
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"bench cell failed: {out[-5:]}")
    return dt, out, comms


def _sample(kc: Any, live: bool) -> dict[str, Any]:
    dt, out, comms = _cell(kc, f"sample({None if live else False})")
    line = next(x for x in out if x.startswith("BENCH "))
    got: dict[str, Any] = json.loads(line[len("BENCH ") :])
    if not got["ok"]:
        raise RuntimeError(f"a run did not complete: {got}")
    got["cell_s"] = dt
    got["comm_msgs"] = comms
    return got


def run(quick: bool) -> Section:
    from jupyter_client.manager import start_new_kernel

    from agentlab.notebook.report import _kernel_env

    sec = Section("live_view", "12. The live view's cost to what it measures (real kernel, 15-run compare)")
    reps = 2 if quick else 7
    env = _kernel_env(False)  # the simulated providers, widgets on
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT), env=env)
    samples: dict[str, list[dict[str, Any]]] = {"view": [], "no_view": []}
    try:
        _cell(kc, _SETUP)
        _sample(kc, True)  # the view's own first-use costs (ipywidgets import, the flusher thread)
        for _ in range(reps):
            for mode in ("view", "no_view"):  # interleaved: drift hits both alike
                samples[mode].append(_sample(kc, mode == "view"))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    fig: dict[str, Any] = {"samples": samples, "repetitions": reps, "tool_sleep_s": TOOL_S}
    for mode, rs in samples.items():
        for k in ("wall_s", "cell_s", "tool_median_s", "comm_msgs"):
            fig[f"{mode}_{k}"] = median([r[k] for r in rs])
    ratio = fig["view_wall_s"] / fig["no_view_wall_s"]
    cell_ratio = fig["view_cell_s"] / fig["no_view_cell_s"]
    tool_diff_ms = (fig["view_tool_median_s"] - fig["no_view_tool_median_s"]) * 1000
    fig |= {"wall_ratio": ratio, "cell_ratio": cell_ratio, "tool_median_diff_ms": tool_diff_ms}
    sec.figures = fig
    shape = f"{len(MODELS)} models x {REPEATS} repeats"
    sec.row(
        f"compare wall, {shape}: view / no view",
        f"{fig['view_wall_s']:.2f} s / {fig['no_view_wall_s']:.2f} s ({ratio:.2f}x); whole cell "
        f"{fig['view_cell_s']:.2f} s / {fig['no_view_cell_s']:.2f} s ({cell_ratio:.2f}x); "
        f"{fig['view_comm_msgs']:.0f} comm messages",
    )
    sec.row(
        f"{TOOL_S * 1000:.0f} ms tool, recorded median: view / no view",
        f"{fig['view_tool_median_s'] * 1000:.1f} ms / {fig['no_view_tool_median_s'] * 1000:.1f} ms "
        f"({tool_diff_ms:+.1f} ms)",
    )
    sec.targets.append(Target("live view: compare wall / view-less wall", ratio, 1.15, "x"))
    sec.targets.append(Target("live view: 10 ms tool's recorded median - view-less", tool_diff_ms, 5.0, "ms"))
    return sec
