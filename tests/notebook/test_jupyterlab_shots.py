"""Screenshots issues 32 and 33 ask for, taken in a real JupyterLab, each checked against the page.

Reuses the harness of ``tests/notebook/test_jupyterlab.py`` (its ``jupyter lab`` server with its own
settings, headless Chromium over CDP, JupyterLab's own commands to run cells) on a notebook of its
own and on ``notebooks/05_evaluate_providers.ipynb`` as saved:

* ``compare(..., repeats=3)`` on five simulated models: the header says "5 models × 3 repeats" and
  the page shows five model columns side by side, not fifteen run views
  (``jupyterlab_repeats_5x3.png``);
* the quickstart's paced run (``+tps=120+ttft=400``) shot while it streams: its reasoning panel
  holds text that grows between two samples (``jupyterlab_paced_quickstart.png``; the reasoning text
  is blurred in the PNG, a durable file, as in ``test_jupyterlab.py``);
* notebook 05 opened as saved (no cell run): the task × model matrix, a table with the five model
  columns, and the score-versus-cost frontier chart, a loaded image
  (``jupyterlab_eval_matrix.png``, ``jupyterlab_eval_frontier.png``).

Shots go to ``out/screenshots/`` (copies in ``docs/screenshots/`` are from one run). Skipped, saying
why, without Chromium, JupyterLab or the widget labextensions (failing instead under ``CI=true``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.notebook.test_browser import ROOT
from tests.notebook.test_jupyterlab import (
    _KERNEL_IDLE,
    _PANEL,
    _SETUP,
    Lab,
    _browser,
    _require_lab,
    _run_cell,
    _scroll_to,
    _serving,
    _shot,
)

if TYPE_CHECKING:
    from tests.support.cdp import Page

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

EVAL = "05_evaluate_providers.ipynb"
FIVE = ("openai", "anthropic", "openai_small", "google", "deepseek")
_CELLS = {
    "setup": _SETUP + f"FIVE = [MODELS[k] for k in {FIVE}]\n",
    "repeats": "rep = al.compare(TASK, models=FIVE, tools=[get_weather], repeats=3,\n"
    "                 check=lambda a: '54' in (a or ''))",
    # the quickstart's first run (notebooks/01_quickstart.ipynb): paced so the reasoning can be watched
    "paced": "PACED = MODELS['anthropic'] + '+tps=120+ttft=400'\n"
    "result = al.run(PACED, 'Is it warmer in Paris or Rome?', tools=[get_weather])\nresult",
}


def _notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in _CELLS.values()])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    _require_lab()
    tmp = tmp_path_factory.mktemp("jlab-shots")
    root = tmp / "root"
    root.mkdir()
    _notebook(root / "views.ipynb")
    shutil.copy(ROOT / "notebooks" / EVAL, root / EVAL)
    with _serving(tmp, root) as lab:
        yield lab


def _panel(path: str) -> str:
    return _PANEL.replace("'views.ipynb'", repr(path))


def _open(page: Page, lab: Lab, path: str, cells: int) -> str:
    """Open ``path`` in JupyterLab; the JavaScript expression of its notebook panel."""
    panel = _panel(path)
    page.send("Page.navigate", url=f"{lab.url}/lab/tree/{path}?token={lab.token}&reset")
    page.wait_for(f"{panel}?.content?.widgets?.length === {cells}", 180, f"{path} to open")
    page.js(f"jupyterapp.shell.activateById({panel}.id); true")
    return panel


def _cell(index: int, panel: str = _PANEL) -> str:
    return f"{panel}.content.widgets[{index}].node"


@pytest.fixture(scope="module")
def views(lab: Lab) -> Iterator[Page]:
    """The notebook of this module open in a wide page (five columns side by side), setup cell run."""
    browser = _browser(lab, "views", width=1800, height=1100)
    try:
        page = browser.page
        _open(page, lab, "views.ipynb", len(_CELLS))
        page.wait_for(_KERNEL_IDLE, 120, "the kernel to start")
        _run_cell(page, list(_CELLS).index("setup"), timeout=180)
        yield page
    finally:
        browser.close()


_COMPARE_PROBE = """(() => {
  const node = __CELL__;
  const row = node.querySelector('.agentlab-compare .agentlab-row');
  const cols = row ? [...row.children] : [];
  return {
    text: node.querySelector('.jp-OutputArea')?.innerText ?? '',
    columns: cols.length,
    tops: cols.map((c) => Math.round(c.getBoundingClientRect().top)),
    heads: cols.map((c) => c.querySelector('b')?.innerText ?? ''),
    shown_full_views: [...node.querySelectorAll('.agentlab-row details .agentlab-view')]
      .filter((e) => e.checkVisibility()).length,
    height: Math.round(node.querySelector('.jp-OutputArea').getBoundingClientRect().height),
    closed_runs: [...node.querySelectorAll('.agentlab-row details:not([open])')].length,
  };
})()"""


def test_compare_five_models_three_repeats_shows_five_columns(views: Page) -> None:
    """5 models × 3 repeats: the header says so, one column per model, the 15 runs folded inside them."""
    page, index = views, list(_CELLS).index("repeats")
    _run_cell(page, index, timeout=240)
    page.wait_for(f"!!{_cell(index)}.querySelector('.agentlab-compare .agentlab-row')", 60, "the final state")
    page.pump(1.0)
    _scroll_to(page, index)
    got: dict[str, Any] = page.js(_COMPARE_PROBE.replace("__CELL__", _cell(index)))
    _shot(page, "jupyterlab_repeats_5x3.png")
    shown = {k: v for k, v in got.items() if k != "text"}
    assert "5 models × 3 repeats" in got["text"], got["text"][:800]
    assert "15 models" not in got["text"], got["text"][:800]
    assert got["columns"] == 5, shown
    assert len(set(got["tops"])) == 1, f"the five columns are not side by side: {shown}"
    models = ("sim-reasoner", "sim-thinker", "sim-reasoner-mini", "sim-gemini", "sim-deepseek")
    assert [h.split(":")[-1] for h in got["heads"]] == list(models), shown
    # 15 runs, a line each, their full views folded: not 15 views stacked over screens
    assert got["closed_runs"] == 15 and got["shown_full_views"] == 0, shown
    assert got["text"].count("full run view") == 15 and got["height"] < 400, shown


_REASONING = (
    "(() => {{ const pres = [...{cell}.querySelectorAll('.agentlab-panel pre')];"
    " return {{n: pres.length, chars: pres.reduce((s, p) => s + p.textContent.length, 0)}}; }})()"
)
_RUNNING = "{panel}.content.widgets[{index}].model.executionCount === null"


def test_paced_quickstart_run_streams_its_reasoning(views: Page) -> None:
    """The quickstart's paced run, shot mid-stream: its reasoning panel has text, and it grows."""
    page, index = views, list(_CELLS).index("paced")
    running = _RUNNING.format(panel=_PANEL, index=index)
    probe = _REASONING.format(cell=_cell(index))
    _run_cell(page, index, wait=False)
    first = page.wait_for(
        f"(() => {{ const r = {probe}; return r.chars > 0 ? r : null; }})()", 90, "reasoning"
    )
    page.pump(0.6)
    second = page.js(probe)
    still = page.js(running)
    _scroll_to(page, index)
    # The streamed text is the (simulated) model's reasoning: blurred in the PNG, a durable file.
    style = '<style id="blur">.agentlab-view pre{filter:blur(5px)!important}</style>'
    page.js(f"document.head.insertAdjacentHTML('beforeend', '{style}'); true")
    page.pump(0.2)
    shot_while_running = page.js(running)
    _shot(page, "jupyterlab_paced_quickstart.png")
    page.js("document.getElementById('blur').remove(); true")
    page.wait_for(f"{_KERNEL_IDLE} && !({running})", 120, "the paced run to end")
    assert first["n"] >= 1 and first["chars"] > 0, first
    assert second["chars"] > first["chars"], f"the reasoning panel did not grow: {first} then {second}"
    assert still and shot_while_running, "the run had ended before the samples and the screenshot"


_EVAL_PROBE = """(() => {
  const cells = __PANEL__.content.widgets.map((w) => w.node);
  const matrix = cells.map((n) => n.querySelector('.agentlab-matrix table')).find(Boolean);
  const img = cells.map((n) => n.querySelector('.jp-RenderedImage img')).find(Boolean);
  const at = (e) => e ? cells.findIndex((n) => n.contains(e)) : -1;
  return {
    matrix_cell: at(matrix),
    heads: matrix ? [...matrix.querySelectorAll('thead th')].map((th) => th.innerText) : [],
    rows: matrix ? matrix.querySelectorAll('tbody tr').length : 0,
    chart_cell: at(img),
    chart: img ? {w: img.naturalWidth, h: img.naturalHeight, done: img.complete} : null,
  };
})()"""


def test_notebook_05_matrix_and_frontier_render_in_jupyterlab(lab: Lab) -> None:
    """Notebook 05 as saved: the task × model matrix (a table, a column per model) and the frontier chart."""
    import nbformat

    cells = len(nbformat.read(ROOT / "notebooks" / EVAL, as_version=4).cells)
    browser = _browser(lab, "eval", width=1400, height=1000)
    try:
        page = browser.page
        panel = _open(page, lab, EVAL, cells)
        page.wait_for(f"!!{panel}.content.node.querySelector('.agentlab-matrix table')", 60, "the matrix")
        page.wait_for(
            f"{panel}.content.node.querySelector('.jp-RenderedImage img')?.naturalWidth > 0", 60, "the chart"
        )
        got: dict[str, Any] = page.js(_EVAL_PROBE.replace("__PANEL__", panel))
        for name, key in (("matrix", "matrix_cell"), ("frontier", "chart_cell")):
            page.js(f"{_cell(got[key], panel)}.scrollIntoView({{block: 'start'}}); true")
            page.pump(0.8)
            _shot(page, f"jupyterlab_eval_{name}.png")
    finally:
        browser.close()
    models = {  # the simulated candidates with the notebook's planted skills (ordered by their mean)
        "openai:sim-reasoner+skill=0.95",
        "anthropic:sim-thinker+skill=0.85",
        "google:sim-gemini+skill=0.75",
        "deepseek:sim-deepseek+skill=0.6",
        "openrouter:sim-router-claude+skill=0.4",
    }
    assert got["matrix_cell"] >= 0 and set(got["heads"][1:6]) == models, got
    assert got["rows"] >= 30, got  # thirty tasks (and the per-model totals)
    assert got["chart_cell"] > got["matrix_cell"], got
    assert got["chart"]["done"] and got["chart"]["w"] >= 300 and got["chart"]["h"] >= 200, got
