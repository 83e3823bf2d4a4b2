"""Everything from outside is escaped in every HTML agentlab renders.

Outside means model names, error texts, tool names/arguments/outputs, task text, answers; the HTML is
``_repr_html_`` of results, usage and comparisons, styled usage frames, and the live run/compare views.

A provider error that echoes a model name, a tool that returns a web page, or a model that calls a
"tool" named like a tag must not inject markup into a notebook's output (nor into its saved HTML).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import agentlab as al
from agentlab.errors import ProviderServerError
from agentlab.sweeps.compare import Comparison, ComparisonEntry
from agentlab.testing import ScriptedAdapter, Step

XSS = "<script>alert(1)</script><img src=x onerror=alert(2)>"
_TAG = re.compile(r"<\s*(script|img)\b", re.IGNORECASE)


def assert_inert(fragment: str) -> None:
    """No hostile tag survived, and the text is still there (escaped, not dropped)."""
    assert not _TAG.search(fragment), fragment
    assert "&lt;script&gt;" in fragment or "&lt;img" in fragment, fragment


def _result(**kw: Any) -> al.RunResult:
    base: dict[str, Any] = dict(run_id="run_x", provider="openai", model="sim-reasoner", status="completed")
    return al.RunResult(**{**base, **kw})


@pytest.mark.parametrize(
    "kw",
    [
        {"model": XSS},
        {"status": "failed", "error": XSS, "error_type": "ProviderAPIError"},
        {"status": "failed", "error": "x", "error_type": XSS},
        {"output": XSS},
    ],
    ids=["model", "error", "error_type", "output"],
)
def test_run_result_html_escapes_what_came_from_outside(kw: dict[str, Any]) -> None:
    html = _result(**kw)._repr_html_()
    assert_inert(html)


def test_comparison_html_escapes_labels_errors_answers_and_task() -> None:
    ok = _result(output=XSS)
    bad = _result(status="failed", error=XSS)
    cmp = Comparison(
        XSS,
        [
            ComparisonEntry(XSS, XSS, ok, None, 0.1, True),
            ComparisonEntry("openai:sim-reasoner#2", "openai:sim-reasoner", bad, XSS, 0.2, None),
            ComparisonEntry("x", "y", None, XSS, 0.0, None),
        ],
        0.3,
    )
    html = cmp._repr_html_()
    assert not _TAG.search(html), html
    assert html.count("&lt;script&gt;") >= 4


def test_styled_usage_frame_escapes_text_cells_and_index() -> None:
    from agentlab.notebook.display import style_usage_frame

    ad = ScriptedAdapter([Step(text="x")], model="sim-reasoner")
    r = al.run("openai:sim-reasoner", "hi", adapter=ad)
    df = r.usage_frame()
    df["model"] = XSS
    assert_inert(style_usage_frame(df).to_html())
    grouped = df.groupby("model")[["input_tokens"]].sum()
    assert_inert(style_usage_frame(grouped).to_html())


def _hostile_run(on_event: Any) -> al.RunResult:
    """A model that calls hostile tools, then fails with hostile text.

    It calls an unknown "tool" named like a tag, with hostile arguments, then a tool whose output is hostile,
    then an error echoing hostile text.
    """

    @al.tool(name="fetch")
    def fetch(url: str) -> str:
        """Fetch a page."""
        return XSS

    steps = [
        Step(text=XSS, tool_calls=[(XSS, {"q": XSS}), ("fetch", {"url": XSS})]),
        Step(error=ProviderServerError(XSS, provider="openai", status=500)),
    ]
    ad = ScriptedAdapter(steps)
    run = al.Run("openai:sim-reasoner", XSS, tools=[fetch], adapter=ad, on_event=on_event, retries=0)
    with pytest.raises(ProviderServerError):
        run.run_sync()
    assert run.result is not None
    return run.result


def test_run_view_escapes_tool_names_arguments_outputs_errors_and_text() -> None:
    from agentlab.notebook.run_view import RunView

    view = RunView(XSS)
    result = _hostile_run(view.on_event)
    view.finish()
    parts = [view._header.value, view._footer.value]
    view.panels  # noqa: B018 - makes the steps' widgets
    for st in view._steps.values():
        assert st.title is not None and st.tools_html is not None
        parts += [st.title.value, st.tools_html.value]
    for p in parts:
        assert not _TAG.search(p), p
    assert "&lt;script&gt;" in "".join(parts)
    assert_inert(result._repr_html_())


def test_compare_view_escapes_titles_and_task() -> None:
    from agentlab.notebook.run_view import CompareView

    view = CompareView([XSS, "openai:sim-reasoner"], task=XSS)
    html = [c.value for c in view.children if hasattr(c, "value")]
    for col in view.columns:
        html.append(col._render_header())  # columns build their widgets lazily, at first render
    assert html and all(not _TAG.search(h) for h in html), html
    assert "&lt;script&gt;" in "".join(html)


def test_money_tables_are_not_typeset_as_maths_and_identical_runs_have_no_noise() -> None:
    """JupyterLab's MathJax sets ``$a ± $b`` as maths unless told not to; a 0 spread reads ``± $0``."""
    import pandas as pd

    from agentlab.render.html_tables import fields_html, fmt_usd, table_html
    from agentlab.sweeps.comparison_frames import _pm

    t = table_html(["cost"], [["$0.003579 ± $0"]])
    assert "tex2jax_ignore" in t and "mathjax_ignore" in t
    assert "tex2jax_ignore" in fields_html([("cost", "$1 ± $2")])
    m = 0.006662
    row = pd.Series({"cost_mean": m, "cost_ci_low": m - 2.6e-19, "cost_ci_high": m + 2.6e-19})
    assert _pm(row, "cost", fmt_usd) == "$0.006662 ± $0"
    row = pd.Series({"cost_mean": 0.006, "cost_ci_low": 0.004, "cost_ci_high": 0.008})
    assert _pm(row, "cost", fmt_usd) == "$0.006000 [$0.004000–$0.008000]"  # bootstrap: not symmetric
