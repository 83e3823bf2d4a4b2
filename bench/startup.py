"""Section 3: start-up in fresh interpreters.

Each figure is the median over runs of the wall time of one statement in a new ``python`` process
(interpreter start-up itself excluded): ``import pydantic``, ``import openai``, ``import anthropic``,
``import agentlab``; and the first reasoning-panel render (``ReasoningPanel()`` + one delta + its
frontend update, imports included) against the same for a bare ``ipywidgets.HTML``. The modules
``import agentlab`` leaves loaded are checked for SDKs, pandas, matplotlib and ipywidgets.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ._util import Section, Target, median

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("openai", "anthropic", "httpx2", "pandas", "matplotlib", "ipywidgets", "IPython", "pydantic")

SNIPPETS = {
    "import pydantic": "import pydantic",
    "import openai": "import openai",
    "import anthropic": "import anthropic",
    "import agentlab": "import agentlab",
    "first panel render": (
        "import agentlab\n"
        "from agentlab.notebook.panel import ReasoningPanel\n"
        "p = ReasoningPanel()\n"
        "p.append('thinking')\n"
        "p._flush()\n"
        "p._repr_mimebundle_()"
    ),
    "ipywidgets.HTML render": (
        "import ipywidgets\nw = ipywidgets.HTML('x')\nw.value = 'thinking'\nw._repr_mimebundle_()"
    ),
}

_PROBE = """
import json, sys, time
t0 = time.perf_counter()
exec(compile({code!r}, "<bench>", "exec"))
dt = time.perf_counter() - t0
print(json.dumps({{"s": dt, "loaded": [m for m in {heavy!r} if m in sys.modules]}}))
"""


def _once(code: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(code=code, heavy=HEAVY)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "AGENTLAB_NO_WIDGETS": "1", "PYTHONDONTWRITEBYTECODE": "0"},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def run(quick: bool) -> Section:
    sec = Section("startup", "3. Start-up (fresh interpreters, wall ms)")
    reps = 1 if quick else 7
    samples: dict[str, list[float]] = {k: [] for k in SNIPPETS}
    loaded: dict[str, list[str]] = {}
    for i in range(reps + (0 if quick else 1)):
        for name, code in SNIPPETS.items():  # interleaved; the first pass warms page cache and bytecode
            r = _once(code)
            loaded[name] = list(r["loaded"])  # type: ignore[call-overload]
            if quick or i > 0:
                samples[name].append(float(r["s"]) * 1000)  # type: ignore[arg-type]
    ms = {k: median(v) for k, v in samples.items()}
    sec.figures = {"ms": ms, "samples_ms": samples, "loaded_by": loaded, "repetitions": reps}
    for name, v in ms.items():
        sec.row(name, f"{v:.0f} ms")
    heavy = [m for m in loaded["import agentlab"] if m != "pydantic"]
    sec.row(
        "modules loaded by `import agentlab`",
        ", ".join(loaded["import agentlab"]) or "none of " + ", ".join(HEAVY),
    )
    sec.targets.append(
        Target(
            "`import agentlab` vs `import pydantic` + 50 ms",
            ms["import agentlab"],
            ms["import pydantic"] + 50,
            "ms",
        )
    )
    sec.targets.append(
        Target("SDK/pandas/matplotlib/ipywidgets modules after `import agentlab`", float(len(heavy)), 0.0, "")
    )
    sec.figures["first_render_vs_ipywidgets_html"] = ms["first panel render"] / ms["ipywidgets.HTML render"]
    return sec
