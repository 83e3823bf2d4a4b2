"""The live widgets in headless Chromium: a panel follows its tail, a reopened notebook shows final states.

* The live text's real view code (``_live_text._ESM``) runs in Chromium against a stand-in model and
  a real DOM: while streaming it follows the tail like a terminal, stops following when the user
  scrolls up (their position survives every redraw), and resumes once they are back at the bottom.
* A notebook with one run and one three-column compare is executed by nbclient (widget state
  stored, as ``make demo`` does), then opened in Chromium through nbconvert and the static widget
  manager, i.e. without a kernel, as a reopened notebook is. Its saved outputs carry the final state
  (``text/plain`` and ``text/html``: status, steps, tool calls, answer, usage), never the placeholder
  of the moment it was displayed; the rendered views say plainly the reasoning was not saved and
  show no toggle that cannot work; at a 1100 px window the three columns fit and nothing overflows.

Screenshots go to ``out/screenshots/`` (and ``/work/notes/shots/`` when that folder exists).
Skipped, saying why, without Chromium or the cached widget JS (failing instead under ``CI=true``).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentlab.notebook._live_text import _ESM
from tests.notebook.test_browser import CHROMIUM, SHOTS, _require_chromium_and_assets, _unavailable

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

NOTES_SHOTS = Path("/work/notes/shots")

_FOLLOW_PAGE = """<!doctype html><html><body style="font-family:sans-serif;width:600px">
<div id="el"></div><div id="result"></div>
<script type="module">
const src = __SRC__;
const mod = await import(URL.createObjectURL(new Blob([src], { type: "text/javascript" })));
const widget = mod.default;
const handlers = {};
const model = {
  on(n, cb) { (handlers[n] ||= []).push(cb); }, off() {}, send() {},
  emit(n, m) { for (const h of handlers[n] || []) h(m, []); },
};
widget.initialize({ model });
const el = document.getElementById("el");
widget.render({ model, el });
const pre = el.querySelector("pre");
let text = "";
const stream = (n) => {
  for (let i = 0; i < n; i++) {
    text += "line " + text.split("\\n").length + " of the reasoning, streamed as it comes\\n";
    const meta = "reasoning ~" + text.length + " tok";
    model.emit("msg:custom", { type: "snapshot", meta, text, streaming: true });
  }
};
const tick = () => new Promise((r) => setTimeout(r, 30));
const atBottom = () => pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 2;
const out = {};
stream(80); await tick();
out.follows = atBottom() && pre.scrollTop > 0;
pre.scrollTop = 40; await tick();              // the user scrolls up to read
stream(20); await tick();
out.kept_position = pre.scrollTop === 40;
out.not_snapped_to_bottom = !atBottom();
pre.scrollTop = pre.scrollHeight; await tick(); // back at the bottom: follows again
stream(20); await tick();
out.resumed = atBottom();
out.tail_visible = pre.textContent.trim().endsWith("streamed as it comes");
document.getElementById("result").textContent = "RESULT" + JSON.stringify(out) + "END";
</script></body></html>"""


def _chromium(url: str, *, width: int = 1280, height: int = 1400, screenshot: Path | None = None) -> str:
    import subprocess

    assert CHROMIUM is not None
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    args += ["--disable-dev-shm-usage", f"--window-size={width},{height}", "--virtual-time-budget=10000"]
    args += ["--allow-file-access-from-files"]
    args += [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    out = subprocess.run([*args, url], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def _result(dom: str) -> dict[str, Any]:
    m = re.search(r"RESULT(\{.*?\})END", dom)
    assert m is not None, f"the page script did not finish: {dom[-1500:]}"
    got: dict[str, Any] = json.loads(m.group(1))
    return got


def _shot(name: str, url: str, **kw: int) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / name
    _chromium(url, screenshot=shot, **kw)
    assert shot.stat().st_size > 5_000
    if NOTES_SHOTS.is_dir():
        shutil.copy(shot, NOTES_SHOTS / name)
    return shot


def test_streaming_panel_follows_its_tail_until_the_user_scrolls_up(tmp_path: Path) -> None:
    if CHROMIUM is None:
        _unavailable("headless Chromium not found (Debian: apt-get install -y chromium)")
    page = tmp_path / "follow.html"
    page.write_text(_FOLLOW_PAGE.replace("__SRC__", json.dumps(_ESM)))
    got = _result(_chromium(page.as_uri()))
    assert got == {
        "follows": True,
        "kept_position": True,
        "not_snapped_to_bottom": True,
        "resumed": True,
        "tail_visible": True,
    }
    _shot("panel_follows_tail.png", page.as_uri(), width=700, height=420)


_NB_CELLS = [
    "%load_ext agentlab\nimport agentlab as al\n"
    "from agentlab.notebook import choose_models\nMODELS = choose_models()\n\n"
    "@al.tool\ndef get_weather(city: str) -> str:\n"
    '    """Current weather for a city."""\n'
    '    return {"Paris": "24 C, sunny", "Rome": "21 C, cloudy"}.get(city, "unknown")\n',
    'r = al.run(MODELS["anthropic"], "Is it warmer in Paris or Rome?", tools=[get_weather])',
    "three = [MODELS[k] for k in ('openai', 'anthropic', 'google')]\n"
    "cmp = al.compare('Is it warmer in Paris or Rome?', models=three, tools=[get_weather])",
]

_PROBE = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const vis = (sel) => [...document.querySelectorAll(sel)].filter((e) => e.offsetParent !== null).length;
  const row = document.querySelector(".agentlab-view > .widget-hbox, .agentlab-row");
  const cols = row ? [...row.children].map((c) => c.getBoundingClientRect()) : [];
  const rowRect = row ? row.getBoundingClientRect() : { right: 0, top: 0 };
  const out = {
    offline_notes: vis(".agentlab-offline"), online_notes: vis(".agentlab-online"),
    toggles: vis(".agentlab-toggle"), columns: cols.length, statics: vis(".agentlab-static"),
    not_saved: document.body.innerText.includes("not saved in the notebook"),
    widget_errors: /model not found|Error displaying widget/.test(document.body.innerText),
    columns_inside: cols.every((c) => c.right <= rowRect.right + 1),
    columns_one_row: cols.every((c) => Math.abs(c.top - cols[0].top) < 2),
    page_overflow: document.scrollingElement.scrollWidth - window.innerWidth,
    overflowing_views: [...document.querySelectorAll(".agentlab-view, .agentlab-panel")]
      .filter((e) => e.scrollWidth > e.clientWidth + 1).length,
  };
  const probe = "<pre id='probe' style='display:none'>RESULT" + JSON.stringify(out) + "END</pre>";
  document.body.insertAdjacentHTML("beforeend", probe);
}, 3000));
</script>"""


@pytest.fixture(scope="module")
def reopened(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, object], Path]:
    _require_chromium_and_assets()
    import nbformat

    from agentlab.notebook import report

    tmp = tmp_path_factory.mktemp("reopen")
    src = tmp / "reopen.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in _NB_CELLS])
    nbformat.write(nb, src)
    executed = report._execute(src, report._kernel_env(False), timeout=300)
    static = tmp / "_static"
    assets = report.fetch_widget_assets(static, fetch=False)
    assert assets is not None, "widget assets were cached but not copied"
    body = report._export_html(executed, assets).replace("</body>", _PROBE + "</body>")
    page = tmp / "reopen.html"
    page.write_text(body)
    return {"nb": executed}, page


def _outputs(nb: object, cell: int) -> list[dict[str, object]]:
    return [o for o in nb.cells[cell].outputs if o.get("output_type") == "display_data"]  # type: ignore[attr-defined]


def test_saved_outputs_hold_the_final_state_not_the_placeholder(
    reopened: tuple[dict[str, object], Path],
) -> None:
    nb = reopened[0]["nb"]
    for cell in (1, 2):
        outs = _outputs(nb, cell)
        assert len(outs) == 1, f"cell {cell}: one view displayed, got {len(outs)}"
        data = outs[0]["data"]
        assert isinstance(data, dict)
        plain, page = data["text/plain"], data.get("text/html", "")
        for stale in ("importing", "waiting", "streaming", "0 steps"):
            assert stale not in plain and stale not in page, f"cell {cell}: placeholder {stale!r} saved"
        assert "completed" in plain and "Answer" in plain and "get_weather" in plain and "Σ input" in plain
        assert "completed" in page and "Answer" in page and "not saved in the notebook" in page
    plain = _outputs(nb, 2)[0]["data"]["text/plain"]  # type: ignore[index]
    assert all(f"{m} · completed" in plain for m in ("sim-reasoner", "sim-thinker", "sim-gemini")), plain


def test_reopened_notebook_renders_final_state_and_says_reasoning_was_not_saved(
    reopened: tuple[dict[str, object], Path],
) -> None:
    page = reopened[1]
    got = _result(_chromium(page.as_uri(), width=1100, height=3000))
    # the views' static final states (cell end), which need no widget state: they say so plainly
    assert got["statics"] >= 4 and got["not_saved"] and got["online_notes"] == 0, got
    assert not got["widget_errors"], got
    assert got["toggles"] == 0, got  # no "Show reasoning" that could not work without the kernel
    assert got["columns"] == 3 and got["columns_inside"] and got["columns_one_row"], got
    assert got["page_overflow"] <= 0 and got["overflowing_views"] == 0, got
    _shot("reopened_saved_notebook.png", page.as_uri(), width=1100, height=2200)
