"""Section 12: the first model-call cell of a fresh kernel, under Run All and at reading pace.

Each sample is a new Jupyter kernel (``jupyter_client``; the simulated providers, so no key and no
network). Cell 1 is ``%load_ext agentlab`` and ``import agentlab as al``; cell 2 is the first cell
that calls models: a compare of OpenAI, Anthropic and Gemini (simulated, through their real SDKs) with
its live view. *Run All* sends both cells at once (the kernel starts cell 2 the moment cell 1 ends, as
JupyterLab's Run All does); *reading pace* waits ``PAUSE_S`` seconds after cell 1 before sending
cell 2. Each with the warm-up (``agentlab/notebook/warmup.py``, the default) and without it
(``AGENTLAB_WARMUP=0``). Figure: cell 2's time in the kernel, from its ``execute_input`` to its
``idle`` status (what JupyterLab shows as the cell's time), samples interleaved across the four cases
so load drift hits them alike.

Target (issue 33, item 6): the warm-up never slows a Run All (with it / without it <= 1.1x).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ._util import Section, Target, median

ROOT = Path(__file__).resolve().parents[1]
PAUSE_S = 5.0
CELL1 = "%load_ext agentlab\nimport agentlab as al"
CELL2 = (
    "from agentlab.notebook import choose_models\nMODELS = choose_models()\n"
    "cmp = al.compare('Is it warmer in Paris or Rome?',"
    " models=[MODELS[k] for k in ('openai', 'anthropic', 'google')])"
)


def _cell_time(kc: Any, msg_id: str, timeout: float = 180) -> float:
    """Seconds from ``msg_id``'s ``execute_input`` to its ``idle``, as the iopub messages arrive."""
    started: float | None = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "execute_input":
            started = time.monotonic()
        elif kind == "error":
            raise RuntimeError(f"cell failed: {msg['content']['ename']}: {msg['content']['evalue']}")
        elif kind == "status" and msg["content"]["execution_state"] == "idle" and started is not None:
            return time.monotonic() - started
    raise TimeoutError("the cell did not end")


def _sample(warm: bool, pause_s: float) -> float:
    from jupyter_client.manager import start_new_kernel

    from agentlab.notebook.report import _kernel_env

    env = _kernel_env(False)
    env["AGENTLAB_WARMUP"] = "1" if warm else "0"
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT), env=env)
    try:
        first = kc.execute(CELL1)
        if pause_s:
            _cell_time(kc, first)
            time.sleep(pause_s)
        second = kc.execute(CELL2)  # Run All: queued behind cell 1, started as soon as it ends
        return _cell_time(kc, second)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def run(quick: bool) -> Section:
    sec = Section("first_cell", "13. First model-call cell of a fresh kernel (s): Run All vs reading pace")
    reps = 1 if quick else 4
    pause = 1.0 if quick else PAUSE_S
    cases = {
        "run_all_warm": (True, 0.0),
        "run_all_cold": (False, 0.0),
        "reading_warm": (True, pause),
        "reading_cold": (False, pause),
    }
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(reps):
        for name, (warm, p) in cases.items():  # interleaved, side by side
            samples[name].append(_sample(warm, p))
    fig: dict[str, Any] = {"samples_s": samples, "pause_s": pause, "repetitions": reps}
    fig["loadavg"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else []
    for name, xs in samples.items():
        fig[name] = median(xs)
    ratio = fig["run_all_warm"] / fig["run_all_cold"]
    fig["run_all_warm_over_cold"] = ratio
    sec.figures = fig
    sec.row(
        "Run All (no pause): warm-up on / off",
        f"{fig['run_all_warm']:.2f} s / {fig['run_all_cold']:.2f} s ({ratio:.2f}x)",
    )
    sec.row(
        f"reading pace ({pause:.0f} s pause): warm-up on / off",
        f"{fig['reading_warm']:.2f} s / {fig['reading_cold']:.2f} s "
        f"({fig['reading_warm'] / fig['reading_cold']:.2f}x)",
    )
    sec.targets.append(Target("first cell under Run All: warm-up on / off", ratio, 1.1, "x"))
    return sec
