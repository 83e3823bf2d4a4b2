"""Tool table, timeline, export (issue 17).

Frames checked by value, the chart by its artists, the report by a reasoning canary and in headless
Chromium (with a screenshot of the timeline).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection

import agentlab as al
from agentlab.evals.run_tables import TIMELINE_COLUMNS, TOOL_COLUMNS
from agentlab.neutral.events import ReasoningDeltaEvent
from agentlab.testing import ScriptedAdapter, Step

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
CANARY = f"CANARY-{uuid.uuid4().hex}"


@al.tool
def slow_add(a: int, b: int) -> int:
    """Add slowly."""
    time.sleep(0.03)
    return a + b


@al.tool
def boom() -> int:
    """Always fails."""
    raise ValueError("nope")


def _run(
    provider: str = "openai", model: str = "sim-reasoner", seen: list[str] | None = None
) -> al.RunResult:
    steps = [
        Step(reasoning=[CANARY], tool_calls=[("slow_add", {"a": 1, "b": 2}), ("boom", {})]),
        Step(reasoning=["again " + CANARY], tool_calls=[("slow_add", {"a": 3, "b": 4})]),
        Step(text="done: 3 and 7"),
    ]

    def watch(ev: object) -> None:
        if seen is not None and isinstance(ev, ReasoningDeltaEvent):
            seen.append(ev.text)

    return al.run(
        f"{provider}:{model}",
        "add things",
        tools=[slow_add, boom],
        adapter=ScriptedAdapter(steps, provider=provider, model=model),
        on_event=watch,
    )


def _compare() -> al.Comparison:
    from agentlab.sweeps.compare import Comparison, ComparisonEntry

    a, b = _run(), _run("anthropic", "sim-thinker")
    entries = [
        ComparisonEntry(label=f"{r.provider}:{r.model}", model=f"{r.provider}:{r.model}", result=r,
                        error=None, duration_s=0.1, solved=True)
        for r in (a, b)
    ]  # fmt: skip
    return Comparison("add things", entries, wall_s=0.1)


def test_tool_frame_one_row_per_call_with_arguments_duration_error() -> None:
    r = _run()
    df = al.tool_frame(r)
    assert list(df.columns) == list(TOOL_COLUMNS)
    assert {c: str(d) for c, d in df.dtypes.items()} == TOOL_COLUMNS
    assert df["step"].tolist() == [1, 1, 2] and df["tool"].tolist() == ["slow_add", "boom", "slow_add"]
    assert json.loads(df["arguments"].iloc[0]) == {"a": 1, "b": 2}
    assert df["is_error"].tolist() == [False, True, False]
    assert df["error"].iloc[0] is pd.NA and "ValueError" in df["error"].iloc[1]
    assert df["duration_s"].iloc[0] >= 0.03 and df["result_chars"].iloc[0] == 1
    both = al.tool_frame(_compare())
    assert both["label"].unique().tolist() == ["openai:sim-reasoner", "anthropic:sim-thinker"]
    assert len(both) == 6
    assert CANARY not in both.to_csv()


def test_timeline_frame_places_tools_after_their_call_and_side_by_side() -> None:
    df = al.timeline_frame(_run())
    assert list(df.columns) == list(TIMELINE_COLUMNS)
    assert df["kind"].tolist() == ["model", "tool", "tool", "model", "tool", "model"]
    assert set(df["timing"]) == {"recorded"}
    m1, add1, boom1, m2 = (df.iloc[i] for i in range(4))
    assert m1["start_s"] >= 0 and m1["end_s"] == pytest.approx(m1["start_s"] + m1["duration_s"])
    assert add1["start_s"] >= m1["end_s"] and boom1["start_s"] >= m1["end_s"]  # after their call
    assert boom1["start_s"] < add1["end_s"]  # gathered: side by side
    assert m2["start_s"] >= max(add1["end_s"], boom1["end_s"])
    assert bool(boom1["is_error"]) and not math.isnan(m1["first_reasoning_s"])


def test_timeline_frame_of_a_result_without_stamps_is_rebuilt_from_durations() -> None:
    r = _run()
    old = r.model_copy(
        update={
            "calls": tuple(c.model_copy(update={"started_s": None}) for c in r.calls),
            "events": tuple(
                e.model_copy(update={"started_s": None}) if hasattr(e, "started_s") else e for e in r.events
            ),
        }
    )
    df = al.timeline_frame(old)
    assert set(df["timing"]) == {"from durations"}
    m1, add1, boom1, m2 = (df.iloc[i] for i in range(4))
    assert m1["start_s"] == 0 and m1["end_s"] == pytest.approx(m1["duration_s"])
    assert add1["start_s"] == boom1["start_s"] == m1["end_s"]  # gathered: both start at the call's end
    assert m2["start_s"] == pytest.approx(max(add1["end_s"], boom1["end_s"]))
    assert "rebuilt from recorded durations" in al.plot_timeline(old).get_xlabel()
    assert "recorded start times" in al.plot_timeline(r).get_xlabel()


def test_plot_timeline_draws_lanes_per_model() -> None:
    ax = al.plot_timeline(_compare())
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [
        "openai:sim-reasoner · model",
        "openai:sim-reasoner · tools",
        "anthropic:sim-thinker · model",
        "anthropic:sim-thinker · tools",
    ]
    bars = [c for c in ax.collections if isinstance(c, PolyCollection)]
    # per run: 3 model calls + 2 reasoning segments + 3 tool calls
    assert len(bars) == 2 * (3 + 2 + 3)
    legend = ax.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == [
        "model call", "reasoning streaming", "tool call", "tool error",
    ]  # fmt: skip
    assert "seconds" in ax.get_xlabel()
    with pytest.raises(TypeError, match="timeline_frame"):
        from agentlab.render.timeline_chart import plot_timeline

        plot_timeline(_run())


def test_export_csv_and_the_parquet_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cmp = _compare()
    paths = al.export_frames(cmp, tmp_path / "csv", format="csv")
    assert set(paths) == {"usage", "tools", "timeline", "summary", "runs"}
    usage = pd.read_csv(paths["usage"])
    assert len(usage) == 6 and "reasoning_tokens_per_s" in usage.columns
    for p in paths.values():
        assert CANARY not in p.read_text(encoding="utf-8")
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real_find_spec(name, *a)
    )
    with pytest.raises(al.MissingExtraError, match=r"agentlab\[parquet\]") as info:
        al.export_frames(cmp, tmp_path / "pq")
    assert info.value.extra == "parquet" and info.value.package == "pyarrow"
    assert not (tmp_path / "pq").exists()  # nothing written before the error


def test_an_unknown_export_format_is_a_one_line_config_error(tmp_path: Path) -> None:
    with pytest.raises(al.ConfigError, match=r"format must be 'parquet' or 'csv', got 'xlsx'") as info:
        al.export_frames(_run(), tmp_path / "x", format="xlsx")  # type: ignore[arg-type]
    assert "\n" not in str(info.value)
    assert not (tmp_path / "x").exists()


def test_parquet_round_trip(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow", reason="pyarrow is the optional `parquet` extra; not installed here")
    paths = al.export_frames(_compare(), tmp_path)
    usage = pd.read_parquet(paths["usage"])
    assert str(usage["reasoning_tokens"].dtype) == "Int64" and len(usage) == 6
    assert pd.read_parquet(paths["tools"])["tool"].tolist()[:2] == ["slow_add", "boom"]


def test_report_holds_no_reasoning_and_needs_no_kernel(tmp_path: Path) -> None:
    seen: list[str] = []
    _run(seen=seen)
    assert any(CANARY in s for s in seen)  # positive control: the canary streamed as reasoning
    path = al.save_report(_compare(), tmp_path / "report.html")
    text = path.read_text(encoding="utf-8")
    assert CANARY not in text
    import re

    assert "<script" not in text.lower() and "<link" not in text.lower()  # nothing to load or run
    assert re.search(r"(src|href)\s*=\s*[\"']https?:", text) is None
    assert text.count("<svg") == 3  # cost, reasoning per step, timeline
    for needle in ("Tool calls", "Timeline", "slow_add", "prices simulated", "done: 3"):
        assert needle in text, needle


def _chromium(url: str, *args: str) -> str:
    assert CHROMIUM is not None
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--hide-scrollbars", "--window-size=1280,2400", *args, url]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


@pytest.mark.browser
def test_report_in_a_browser_with_timeline_screenshot(tmp_path: Path) -> None:
    if CHROMIUM is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("headless Chromium not found (CI=true)")
        pytest.skip("headless Chromium not found (Debian: apt-get install -y chromium)")
    cmp = _compare()
    page = al.save_report(cmp, tmp_path / "report.html")
    dom = _chromium(page.as_uri(), "--dump-dom")
    assert "Timeline" in dom and dom.count("<svg") >= 3 and CANARY not in dom
    shots = Path(os.environ.get("AGENTLAB_SHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    timeline = tmp_path / "timeline.html"
    from agentlab.render.timeline_chart import chart_svg

    timeline.write_text(f"<html><body>{chart_svg(al.plot_timeline, cmp)}</body></html>", encoding="utf-8")
    shot = shots / "timeline.png"
    _chromium(timeline.as_uri(), f"--screenshot={shot}")
    assert shot.stat().st_size > 5000
