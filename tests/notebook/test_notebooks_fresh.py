"""The shipped notebooks are current: no machine path, no widget repr, no stale money tick; quickstart paced.

``python -m agentlab.notebook.refresh notebooks/`` re-executes them from the current code; the scan
here (the same :func:`stale_outputs` the refresh prints) fails when a saved output went stale.
"""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentlab.notebook.refresh import main, stale_outputs
from agentlab.sweeps.progress import SweepProgress

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _nb(outputs: list[dict[str, Any]], widgets: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "cells": [{"cell_type": "code", "source": "x", "outputs": outputs}],
        "metadata": {"widgets": widgets or {}},
    }


def _display(data: dict[str, Any]) -> dict[str, Any]:
    return {"output_type": "display_data", "data": data, "metadata": {}}


def test_the_scan_finds_each_kind_of_stale_output() -> None:
    stale = _nb(
        [
            {
                "output_type": "stream",
                "name": "stdout",
                "text": ["sweep completed: 108/108 runs in /tmp/tmp_uc3/c.jsonl\n"],
            },
            _display({"text/plain": "HBox(children=(IntProgress(value=0, max=1), HTML(value='')))"}),
            _display({"image/png": "iVBORw0KGgo=", "text/plain": "<Figure> ticks: $0, $0.002000, $0.008000"}),
            _display({"image/svg+xml": ["<svg><text>$0.004000</text>", "</svg>"], "text/plain": "<Figure>"}),
        ],
        widgets={"state": {"m1": {"state": {"value": "saved in /home/someone/runs"}}}},
    )
    found = stale_outputs(stale)
    assert "cell 0: machine path: /tmp/tmp_uc3/c.jsonl" in found
    assert "cell 0: widget repr: HBox(" in found and "cell 0: widget repr: IntProgress(" in found
    assert "cell 0: old money format: $0.008000" in found and "cell 0: old money format: $0.004000" in found
    assert "widget state: machine path: /home/someone/runs" in found
    assert len(found) == 7


def test_the_scan_leaves_current_outputs_alone() -> None:
    fine = _nb(
        [
            # exact amounts in a table are prices, not padded ticks; a URL's path is not a machine's
            _display(
                {
                    "text/html": "<td>$0.002700</td><td>$0.0001588</td><a href='https://x.org/home/a'>",
                    "text/plain": "t",
                }
            ),
            _display(
                {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure> ticks: $0, $0.002, $0.0080, $12.35"}
            ),
            {
                "output_type": "stream",
                "name": "stdout",
                "text": "completed: 108 runs (results: continuity.jsonl)\n",
            },
        ]
    )
    assert stale_outputs(fine) == []


def test_every_shipped_notebook_is_checked() -> None:
    assert [p.stem for p in NOTEBOOKS][:4] == [
        "01_quickstart",
        "02_compare_providers",
        "03_reasoning_costs",
        "04_continuity_value",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_saved_outputs_are_current(path: Path) -> None:
    """Re-execute with ``python -m agentlab.notebook.refresh notebooks/`` when this fails."""
    assert stale_outputs(json.loads(path.read_text(encoding="utf-8"))) == []


def test_the_check_command_exits_nonzero_on_a_stale_notebook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nb = _nb([{"output_type": "stream", "name": "stdout", "text": "in /root/x.jsonl\n"}])
    nb |= {"nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "a.ipynb").write_text(json.dumps(nb))
    assert main([str(tmp_path), "--check"]) == 1
    out = capsys.readouterr().out
    assert "a.ipynb: cell 0: machine path: /root/x.jsonl" in out and "0/1 notebooks current" in out
    assert main([str(tmp_path / "empty"), "--check"]) == 2


def test_sweep_progress_saves_its_line_not_the_widget_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a notebook keeps beside the bar is the progress line, updated to the final one at cell end."""
    import IPython.display

    from agentlab.notebook.progress import WidgetProgress
    from agentlab.notebook.run_view import refresh_displays

    shown: list[dict[str, Any]] = []

    class Handle:
        def update(self, obj: Any, raw: bool = False) -> None:
            shown.append(obj if raw else obj._repr_mimebundle_())

    def display(obj: Any, display_id: bool = False) -> Handle:
        shown.append(obj._repr_mimebundle_())
        return Handle()

    monkeypatch.setattr(IPython.display, "display", display)
    w = WidgetProgress(interval_s=0)
    w.update(SweepProgress(total=10, done=1, running=2))
    assert shown[0]["text/plain"].startswith("sweep 1/10 done")
    assert "application/vnd.jupyter.widget-view+json" in shown[0]
    w.update(SweepProgress(total=10, done=10), final=True)
    del w  # the sweep has returned: nothing of the user's holds its progress bar any more
    gc.collect()
    assert refresh_displays() >= 1  # cell end: the saved output becomes the final line
    assert shown[-1]["text/plain"].startswith("sweep 10/10 done")
    assert "sweep 10/10 done" in shown[-1]["text/html"]
    assert set(shown[-1]) == {"text/plain", "text/html"}  # no widget left that needs its saved state
    assert not any(re.search(r"HBox\(|IntProgress\(", json.dumps(b)) for b in shown)
    assert refresh_displays() == 0  # final: no further updates


def test_quickstart_opens_with_a_paced_run_whose_reasoning_streamed() -> None:
    """Notebook 01's first run streams at reading speed on the simulator (``+tps=``/``+ttft=``)."""
    nb = json.loads(NOTEBOOKS[0].read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    first = next(c for c in code if "al.run(" in "".join(c["source"]) or "al.arun(" in "".join(c["source"]))
    source = "".join(first["source"])
    assert "+tps=120+ttft=400" in source
    view = next(o for o in first["outputs"] if o["output_type"] == "display_data")
    header = "".join(view["data"]["text/plain"]).splitlines()[0]
    assert header.startswith("anthropic:sim-thinker+tps=120+ttft=400 ·") and "completed" in header
    seconds = float(re.findall(r"· (\d+\.\d) s$", header)[0])
    assert seconds >= 1.0  # long enough to watch it stream (unpaced: ~0.2 s)


def test_the_simulator_page_documents_pacing_with_a_runnable_example() -> None:
    page = (ROOT / "docs" / "concepts" / "simulator.md").read_text(encoding="utf-8")
    assert "### Pacing: watch reasoning stream" in page
    section = page.split("### Pacing: watch reasoning stream", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None and "+tps=" in block.group(1) and "+ttft=" in block.group(1)
