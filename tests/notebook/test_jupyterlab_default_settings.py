"""A notebook saved with JupyterLab's *default* settings keeps every view (issue 33, item 1).

JupyterLab's default is "Save Widget State Automatically" off, so a saved notebook holds no widget
state. A frontend renders the widget mime type of an output first, and without its state draws
"Error displaying widget: model not found" in place of the view, whatever HTML sits beside it. A
finished view must therefore leave an output that renders without a kernel and without widget
state. This test runs a real ``jupyter lab`` with its default widget settings (the only settings
file written turns off news and update checks) in headless Chromium (``tests/support/cdp.py``):

* a compare, a single run, a compare with repeats, a sweep (its progress bar), and a compare
  interrupted (*Kernel › Interrupt*) once two of its three columns had finished;
* JupyterLab saves the notebook; the saved file holds no widget state, and every display output
  of a finished view has a ``text/html`` part and no widget mime type;
* the kernel is shut down and the notebook reopened in a fresh page: every view shows its final
  state (the interrupted compare's two finished columns too), with no "model not found" or other
  widget error; a screenshot of it goes to ``out/screenshots/`` (and ``/work/notes/shots/``);
* ``jupyter nbconvert --to html`` of the saved file, with no kernel, holds the final states.

The machine running this may be shared and loaded: every wait is generous. Skipped, saying why,
without Chromium, JupyterLab or the widget labextensions (failing instead under ``CI=true``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.notebook.test_jupyterlab import (
    _DOM_PROBE,
    _KERNEL_IDLE,
    _PANEL,
    _SETUP,
    Lab,
    _browser,
    _require_lab,
    _run_cell,
    _serving,
    _shot,
)

if TYPE_CHECKING:
    from tests.support.cdp import Page

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SLOW = "+fault=slow:300"  # 300 ms before every delta: this column is still streaming when interrupted
_CELLS = {
    "setup": _SETUP,
    "compare": "cmp = al.compare(TASK, models=THREE, tools=[get_weather])",
    "run": "r = al.run(MODELS['anthropic'], TASK, tools=[get_weather])",
    "repeats": "rep = al.compare(TASK, models=THREE[:2], tools=[get_weather], repeats=2)",
    "sweep": "from agentlab.sweeps import sim_tasks, sim_tools\n"
    "report = al.sweep(sim_tasks()[:2], [MODELS['openai']], results='sweep.jsonl', tools=sim_tools())",
    "interrupted": f"cut = al.compare(TASK, models=[THREE[0], THREE[2], THREE[1] + '{SLOW}'],\n"
    "                tools=[get_weather], reasoning='high')",
}
VIEW_CELLS = ("compare", "run", "repeats", "sweep", "interrupted")


def _notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in _CELLS.values()])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def _open(page: Page, lab: Lab) -> None:
    page.send("Page.navigate", url=f"{lab.url}/lab/tree/views.ipynb?token={lab.token}&reset")
    page.wait_for(f"{_PANEL}?.content?.widgets?.length === {len(_CELLS)}", 180, "the notebook to open")
    page.js(f"jupyterapp.shell.activateById({_PANEL}.id); true")


def _cell_text(index: int) -> str:
    return f"{_PANEL}.content.widgets[{index}].outputArea.node.innerText"


def _interrupt_after_two_columns(page: Page, index: int) -> None:
    """Run the compare with a slowed third column; once the other two show completed, interrupt it."""
    _run_cell(page, index, wait=False)
    two_done = f"(({_cell_text(index)}).match(/· completed/g) || []).length >= 2"
    page.wait_for(two_done, 180, "two columns of the interrupted compare to complete")
    page.pump(0.5)
    page.js(f"{_PANEL}.sessionContext.session.kernel.interrupt().then(() => true)", timeout=60)
    page.wait_for(
        _KERNEL_IDLE + f" && {_PANEL}.content.widgets[{index}].model.executionCount !== null",
        180,
        "the interrupt",
    )


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """Run every cell in a JupyterLab with default settings, save, shut the kernel down, reopen."""
    _require_lab()
    tmp = tmp_path_factory.mktemp("jlab-default")
    root = tmp / "root"
    root.mkdir()
    _notebook(root / "views.ipynb")
    with _serving(tmp, root, save_state=False) as lab:
        browser = _browser(lab, "run", width=1280, height=1300)
        try:
            page = browser.page
            _open(page, lab)
            page.wait_for(_KERNEL_IDLE, 180, "the kernel to start")
            names = list(_CELLS)
            for cell in names[:-1]:
                _run_cell(page, names.index(cell), timeout=300)
            _interrupt_after_two_columns(page, names.index("interrupted"))
            page.pump(1.0)
            lab.found["live_text"] = page.js(_cell_text(names.index("interrupted")))
            page.js(f"{_PANEL}.context.save().then(() => true)", timeout=120)
            page.wait_for(f"!{_PANEL}.context.model.dirty", 120, "the save")
            lab.found["kernel_id"] = page.js(f"{_PANEL}.sessionContext.session.kernel.id")
            page.js(f"{_PANEL}.sessionContext.shutdown().then(() => true)", timeout=120)
            page.wait_for(f"!{_PANEL}.sessionContext.session", 120, "the kernel to shut down")
        finally:
            browser.close()
        lab.found["reopened"] = _reopen(lab)
        yield lab


def _reopen(lab: Lab) -> dict[str, Any]:
    browser = _browser(lab, "reopen", width=1280, height=2200)
    try:
        page = browser.page
        _open(page, lab)
        page.wait_for(_KERNEL_IDLE, 180, "the new kernel")
        page.wait_for(
            f"{_PANEL}.content.node.querySelectorAll('.agentlab-view').length >= 3"
            f" || /model not found|Error displaying widget/.test({_PANEL}.content.node.innerText)",
            180,
            "the views (or their errors)",
        )
        page.pump(3.0)  # a widget output would now have failed to find its model
        dom: dict[str, Any] = page.js(_DOM_PROBE)
        dom["cells"] = [page.js(_cell_text(i)) for i in range(len(_CELLS))]
        dom["kernel_id"] = page.js(f"{_PANEL}.sessionContext.session.kernel.id")
        page.js(f"{_PANEL}.content.widgets[{list(_CELLS).index('compare')}].node.scrollIntoView(); true")
        page.pump(0.5)
        shot = _shot(page, "jupyterlab_reopened_default_settings.png")
        dom["shot"] = str(shot)
    finally:
        browser.close()
    return dom


def _display_outputs(nb: dict[str, Any], name: str) -> list[dict[str, Any]]:
    cell = nb["cells"][list(_CELLS).index(name)]
    return [o for o in cell["outputs"] if o["output_type"] in ("display_data", "execute_result")]


def test_saved_file_holds_static_final_states_and_no_widget_to_restore(saved: Lab) -> None:
    """With the defaults, no widget state is saved: every view's output must not need one."""
    nb = json.loads((saved.root / "views.ipynb").read_text())
    assert (
        not (nb["metadata"].get("widgets") or {}).get(WIDGET_MIME.replace("view", "state"), {}).get("state")
    ), "JupyterLab's defaults saved widget state: this test is not testing the default settings"
    for name in VIEW_CELLS:
        outs = _display_outputs(nb, name)
        assert outs, f"{name}: no view displayed"
        for o in outs:
            assert "text/html" in o["data"], (name, sorted(o["data"]))
            assert WIDGET_MIME not in o["data"], f"{name}: a widget that cannot render without its state"
    plain = "".join(_display_outputs(nb, "interrupted")[0]["data"]["text/plain"])
    assert plain.count("· completed") == 2 and "cancelled" in plain, plain


def test_reopened_with_default_settings_shows_every_final_state(saved: Lab) -> None:
    """Reopened in a fresh page, a new kernel: final states, the interrupted compare's columns, no error."""
    dom = saved.found["reopened"]
    cells = dom.pop("cells")
    assert dom["kernel_id"] != saved.found["kernel_id"], "the executing kernel was not shut down"
    assert dom["widget_placeholders"] == 0 and dom["widget_errors"] == 0, {
        k: dom[k] for k in dom if k != "text"
    }
    by_name = dict(zip(_CELLS, cells, strict=True))
    for name in VIEW_CELLS:
        assert not re.search(r"model not found|Error displaying widget|Loading widget", by_name[name]), name
    assert all(
        f"{m} · completed" in by_name["compare"] for m in ("sim-reasoner", "sim-thinker", "sim-gemini")
    )
    for final in ("Answer", "get_weather", "Σ input", "not saved in the notebook"):
        assert final in by_name["compare"] and final in by_name["run"], (final, by_name["run"][:800])
    assert "2 models × 2 repeats" in by_name["repeats"], by_name["repeats"][:800]
    assert re.search(r"sweep 2/2 done", by_name["sweep"]), by_name["sweep"]
    cut = by_name["interrupted"]
    assert cut.count("· completed") == 2 and "cancelled" in cut and "Answer" in cut, cut[:1500]
    for stale in ("importing", "waiting", "streaming…", "0 steps"):
        assert stale not in "".join(by_name[n] for n in VIEW_CELLS), stale


def test_nbconvert_html_of_the_saved_file_holds_the_final_states(
    saved: Lab, find_reasoning: Callable[[Path | str], list[str]]
) -> None:
    """Kernel-free: nbconvert's HTML of the saved notebook shows how every run ended, and no reasoning."""
    out = saved.tmp / "html"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "nbconvert",
            "--to",
            "html",
            str(saved.root / "views.ipynb"),
            "--output-dir",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    page = (out / "views.html").read_text()
    assert page.count(">completed<") >= 3 + 1 + 2 + 2, "final statuses missing from the HTML"
    assert "cancelled" in page and "sweep 2/2 done" in page and "Answer" in page
    assert WIDGET_MIME not in page and "model not found" not in page
    assert find_reasoning(saved.root / "views.ipynb") == [] and find_reasoning(out / "views.html") == []
