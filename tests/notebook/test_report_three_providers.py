"""The demo report's compare page: five providers side by side, and nothing opaque or private saved.

The five are the three native APIs and the Chat Completions dialects DeepSeek and OpenRouter.

Builds the report page of ``02_compare_providers`` as ``make demo`` does (nbclient, widget state
stored, offline: no widget JS fetched) without a browser, so it runs where Chromium is missing
(``test_browser.py`` renders the same report and skips there).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.opaque import sim_opaque_tokens

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

MODELS = (
    "openai:sim-reasoner",
    "anthropic:sim-thinker",
    "google:sim-gemini",
    "deepseek:sim-deepseek",
    "openrouter:sim-router-claude",
)
COMPARE = "02_compare_providers"


@pytest.fixture(scope="module")
def report(shipped_reports: dict[str, Any]) -> object:
    """The demo report (every shipped notebook, built once per session: tests/notebook/conftest.py)."""
    return shipped_reports["default"]


def _compare(report: Any) -> tuple[Path, Path, str]:
    """The compare notebook's saved file, its page, and its section of the index page."""
    (nb,) = [p for p in report.notebooks if p.stem == COMPARE]
    (page,) = [p for p in report.html if p.stem == COMPARE]
    sections = report.index.read_text().split('<section class="notebook">')
    (section,) = [s for s in sections if f"{COMPARE}.html" in s]
    return nb, page, section


def _text(t: Any) -> str:
    return "".join(t) if isinstance(t, list) else str(t)


def _outputs(nb: Path) -> list[dict[str, Any]]:
    cells = json.loads(nb.read_text())["cells"]
    return [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]


def test_the_compare_page_has_three_provider_columns(report: object) -> None:
    from agentlab.notebook.report import Report

    assert isinstance(report, Report)
    nb, page, index_section = _compare(report)
    text = json.dumps(_outputs(nb))
    assert all(m in text for m in MODELS)
    # The live view's saved output is its static final state (no widget left that needs its saved
    # state), one column per model (not a placeholder).
    widget = "application/vnd.jupyter.widget-view+json"
    views = [
        o["data"] for o in _outputs(nb) if "agentlab-static" in _text(o.get("data", {}).get("text/html", ""))
    ]
    assert views and not any(widget in d for d in views)
    plain = next(_text(d["text/plain"]) for d in views if all(m in _text(d["text/plain"]) for m in MODELS))
    assert all(f"{m} · completed" in plain for m in MODELS), plain
    stdout = [_text(o["text"]) for o in _outputs(nb) if o.get("name") == "stdout"]
    answers = next(t for t in stdout if "steps" in t)
    lines = [ln for ln in answers.splitlines() if ln.strip()]
    assert [ln.split()[0] for ln in lines] == list(MODELS)
    assert all("54" in ln for ln in lines)  # every provider solved it
    html = page.read_text()
    for model in MODELS:
        assert model in html
    assert index_section.count("<img") >= 2  # the compare's cost and reasoning charts


def test_the_report_saves_no_opaque_item_or_reasoning(
    report: object, find_reasoning: Callable[[Path | str], list[str]]
) -> None:
    from agentlab.notebook.report import Report

    assert isinstance(report, Report)
    for path in [*report.notebooks, *report.html, report.index]:
        assert sim_opaque_tokens(path.read_text()) == [], f"opaque item in {path.name}"
        assert find_reasoning(path) == [], f"reasoning text in {path.name}"
