"""The committed notebooks are saved as a user would save them: outputs and widget state, no reasoning."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_saved_notebook_holds_no_reasoning_text(path: Path, quickstart_canaries: list[str]) -> None:
    text = html.unescape(path.read_text())
    assert [c for c in quickstart_canaries if c in text] == []
    nb = json.loads(path.read_text())
    assert any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"), "saved without outputs"


def test_quickstart_was_saved_with_its_widget_state() -> None:
    nb = json.loads((NOTEBOOKS[0]).read_text())
    state = nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    values = " ".join(str(m["state"].get("value", "")) for m in state.values())
    assert "not saved in the notebook" in values  # the collapsed panels are what was saved
