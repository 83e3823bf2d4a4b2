"""The live text's view code, run in Node against a stand-in model and DOM.

It must draw the snapshots it is sent (as text, never parsed as HTML), ask the kernel when it has
none, and never write anything into the model (whose state is what a save keeps). Skipped, saying
why, where Node is missing; under CI (``CI=true``, where ``.ci/run`` needs npm and so Node) it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentlab.notebook._live_text import _ESM

DRIVER = r"""
import widget from "./view.mjs";

function fakeModel() {
  const handlers = {};
  return {
    sent: [], sets: 0,
    on(name, cb) { (handlers[name] ||= []).push(cb); },
    off(name, cb) { handlers[name] = (handlers[name] || []).filter((h) => h !== cb); },
    emit(name, msg) { for (const h of handlers[name] || []) h(msg, []); },
    send(msg) { this.sent.push(msg); },
    set() { this.sets += 1; }, save_changes() { this.sets += 1; },
    get(k) { return undefined; },
  };
}
function node(tag) {
  return {
    tag, children: [], style: { cssText: "", display: "" }, textContent: "", scrollTop: 0, scrollHeight: 9,
    classList: { add() {} }, clientHeight: 9,
    append(...c) { this.children.push(...c); },
    set innerHTML(v) { throw new Error("innerHTML"); },
  };
}
globalThis.document = { createElement: node };

const model = fakeModel();
widget.initialize({ model });
const el = node("div");
const cleanup = widget.render({ model, el });
const asked = JSON.stringify(model.sent);
model.emit("msg:custom", { type: "snapshot", meta: "m", text: "<b>CANARY</b>", streaming: true });
const [meta, pre] = el.children;
const el2 = node("div");
widget.render({ model, el: el2 });  // a second view: draws the cached snapshot at once
cleanup();
console.log(JSON.stringify({ asked, meta: meta.textContent, text: pre.textContent, sets: model.sets,
  second: el2.children[1].textContent, asked_again: model.sent.length }));
"""


def test_view_draws_snapshots_as_text_and_never_touches_model_state(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("node not found (CI=true: .ci/run needs npm, hence node)")
        pytest.skip("node not found: the live text's JavaScript is not run")
    (tmp_path / "view.mjs").write_text(_ESM)
    (tmp_path / "driver.mjs").write_text(DRIVER)
    out = subprocess.run([node, "driver.mjs"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["asked"] == json.dumps([{"type": "ready"}]).replace(" ", "")  # no snapshot yet: asks once
    assert got["text"] == "<b>CANARY</b>" and got["meta"] == "m"  # textContent, not HTML
    assert got["second"] == "<b>CANARY</b>" and got["asked_again"] == 1
    assert got["sets"] == 0  # nothing written into the model
