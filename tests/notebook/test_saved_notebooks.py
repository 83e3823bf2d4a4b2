"""The committed notebooks are saved as a user would save them: outputs and widget state, no reasoning."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.opaque import sim_opaque_tokens

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_every_notebook_is_checked() -> None:
    assert {"01_quickstart", "02_compare_providers", "03_reasoning_costs", "05_evaluate_providers"} <= {
        p.stem for p in NOTEBOOKS
    }


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_saved_notebook_holds_no_reasoning_text(
    path: Path, find_reasoning: Callable[[Path | str], list[str]]
) -> None:
    """No simulated reasoning in the sources, outputs or saved widget state of any committed notebook.

    Simulated reasoning means the generic planner phrases (whatever the task) and the quickstart's lines.
    """
    assert find_reasoning(path) == [], f"reasoning text saved in {path.name}"
    nb = json.loads(path.read_text())
    assert any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"), "saved without outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_saved_notebook_holds_no_opaque_item(path: Path) -> None:
    """No thought signature or encrypted reasoning the simulator issued, anywhere (widget state too)."""
    text = path.read_text()
    assert sim_opaque_tokens(text) == [], f"opaque reasoning saved in {path.name}"
    nb = json.loads(text)
    saved = json.dumps([c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"] + [nb["metadata"]])
    fields = ("thoughtSignature", "thought_signature", "encrypted_content", "redacted_thinking")
    for field in (*fields, "reasoning_content", "reasoning_details"):  # + the Chat Completions dialects
        assert field not in saved, f"{field} in the outputs or widget state of {path.name}"


@pytest.mark.parametrize(
    "name",
    [
        "01_quickstart",
        "02_compare_providers",
        "03_reasoning_costs",
        "04_continuity_value",
        "05_evaluate_providers",
    ],
)
def test_every_notebook_ran_gemini_beside_the_others(name: str) -> None:
    """Saved with the outputs of runs on all three providers (the scans above then cover Gemini's too)."""
    nb = json.loads(next(p for p in NOTEBOOKS if p.stem == name).read_text())
    outputs = json.dumps([c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"])
    for model in ("openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"):
        assert model in outputs, f"{name} has no output of {model}"


def test_compare_notebook_ran_the_chat_dialects_beside_the_others() -> None:
    """Notebook 02 compares DeepSeek and OpenRouter next to OpenAI, Anthropic and Gemini (saved outputs)."""
    nb = json.loads(next(p for p in NOTEBOOKS if p.stem == "02_compare_providers").read_text())
    outputs = json.dumps([c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"])
    for model in ("deepseek:sim-deepseek", "openrouter:sim-router-claude"):
        assert model in outputs, f"02_compare_providers has no output of {model}"
    assert "provider_cost_usd" in outputs


def test_quickstart_was_saved_with_its_views_final_states() -> None:
    """The views' saved outputs are their final states, which say the reasoning was not saved.

    Since a finished view's output becomes its static state at cell end (no widget), the outputs
    are what a reader sees, with or without the widget state JupyterLab may also save.
    """
    nb = json.loads((NOTEBOOKS[0]).read_text())
    html = [
        "".join(o["data"]["text/html"])
        for c in nb["cells"]
        for o in c.get("outputs", [])
        if "text/html" in o.get("data", {})
    ]
    assert any("chars of reasoning: not saved in the notebook" in h for h in html)


def test_evaluation_notebook_was_saved_with_every_view() -> None:
    """Notebook 05: five models, three scorers, the matrix, paired tests, frontier, transcript, report.

    Each view is saved as static HTML (or the chart as an image), so it shows without a kernel.
    """
    nb = json.loads(next(p for p in NOTEBOOKS if p.stem == "05_evaluate_providers").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert not [o for c in code for o in c.get("outputs", []) if o["output_type"] == "error"]
    outputs = json.dumps([c.get("outputs") for c in code])
    models = ("openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini", "deepseek:sim-deepseek",
              "openrouter:sim-router-claude", "openai:sim-reasoner-mini")  # fmt: skip
    for model in models:
        assert model in outputs, model
    assert "450 runs ran now, 0 from the file, 0 failed" in outputs  # 30 tasks x 5 models x 3 repeats
    assert outputs.count("agentlab-matrix ") >= 3 and "mean [95% CI]" in outputs  # matrices as HTML
    # the sentences: the planted 55-point gap is found after Holm, the 10-point one is not (30 tasks)
    assert "McNemar exact p < 0.001, Holm p = 0.002" in outputs
    assert "Wilcoxon signed-rank p < 0.001" in outputs
    assert "to detect a 10% gap between" in outputs  # the power analysis
    assert "agentlab-transcript" in outputs and "Reasoning text is not stored" in outputs
    assert "disagree on includes" in outputs and "evaluation.html and runs.csv" in outputs
    frontier = next(c for c in code if "plot_frontier" in "".join(c["source"]))
    assert any("image/png" in o.get("data", {}) for o in frontier["outputs"])
    checked = [c for c in code if "# NBVAL_CHECK_OUTPUT" in "".join(c["source"])]
    assert len(checked) >= 4  # nbval compares these: deterministic on the simulator
