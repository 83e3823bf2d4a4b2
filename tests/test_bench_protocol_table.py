"""The per-protocol table of the Performance page is generated from the stored run (issue 34).

One row per protocol agentlab speaks, read from ``bench/results.json``'s sections (socket figures),
never typed in: a figure that changes in the results changes in the table, and a protocol without
figures has no row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.__main__ import protocol_table, stamped_table

ROOT = Path(__file__).resolve().parents[1]


def _sse(floor: float, adapter: float, run: float) -> dict[str, Any]:
    return {"us_per_event": {"floor": 9.0, "floor_httpx_sync": floor, "adapter": adapter, "run_step": run}}


def _results() -> dict[str, Any]:
    socket = {
        "openai": _sse(10.0, 9.5, 10.0),
        "xai": _sse(10.0, 11.0, 11.0),
        "gemini": _sse(20.0, 19.0, 20.0),
    }
    return {
        "sections": [
            {"name": "adapter_overhead", "figures": {"deliveries": {"socket": socket}}},
            {"name": "adapter_chat", "figures": {"deliveries": {"socket": _sse(8.0, 8.0, 8.4)}}},
            {"name": "bedrock", "figures": {"us_per_event": {"floor": 12.0, "sdk": 25.0, "adapter": 6.0}}},
            {"name": "peers", "error": "boom"},
        ]
    }


def test_one_row_per_protocol_with_its_figures_and_ratios() -> None:
    rows = protocol_table(_results()).splitlines()
    assert "| OpenAI Responses | 10.0 µs | 9.0 µs | 9.5 µs | 0.95x | 10.0 µs | 1.05x |" in rows
    assert "| Responses, xAI dialect | 10.0 µs | 9.0 µs | 11.0 µs | 1.10x | 11.0 µs | 1.00x |" in rows
    assert (
        "| Chat Completions (DeepSeek dialect) | 8.0 µs | 9.0 µs | 8.0 µs | 1.00x | 8.4 µs | 1.05x |" in rows
    )
    assert "| Bedrock Converse (binary event stream) | 12.0 µs | n/a | 6.0 µs | 0.50x | n/a | n/a |" in rows
    assert not any(r.startswith("| Anthropic") for r in rows)  # no figures stored: no row


def test_the_stored_run_renders_and_the_page_shows_it() -> None:
    results = json.loads((ROOT / "bench" / "results.json").read_text(encoding="utf-8"))
    table = protocol_table(results)
    assert table.count("\n| ") >= 4
    assert table in stamped_table(results)


def test_rows_measured_apart_from_the_stored_run_say_when_and_under_what_load() -> None:
    results = _results()
    stamp = {
        "started_utc": "2026-12-07T04:22:48+00:00",
        "command": "python -m bench --only adapters --merge",
        "loadavg_before": [0.5, 0.6, 0.7],
        "loadavg_after": [1.0, 1.1, 1.2],
    }
    assert "measured 20" not in protocol_table(results)  # all from the stored run: its stamp stands
    results["sections"][0]["measured"] = stamp
    note = protocol_table(results).splitlines()[-1]
    assert "Sections adapter_overhead measured 2026-12-07T04:22:48+00:00" in note
    assert "[0.5, 0.6, 0.7] / [1.0, 1.1, 1.2]" in note and "adapter_chat" not in note


def test_ratios_are_the_median_of_paired_runs_ratios_with_their_quartiles() -> None:
    from bench.adapters import extra_targets, paired_ratios

    # The floor's second run was slowed (the bimodal runs of a shared machine): a ratio of the medians
    # reads 12/13 = 0.92x, the paired runs' ratios 1.0 for every pair but that one.
    samples = {"floor_httpx_sync": [12.0, 24.0, 13.0, 12.5], "adapter": [12.0, 12.0, 13.0, 12.5]}
    samples["run_step"] = [x * 1.05 for x in samples["adapter"]]
    paired = paired_ratios(samples)
    assert paired["adapter/floor_httpx_sync"]["median"] == 1.0
    assert paired["adapter/floor_httpx_sync"]["q1"] < 1.0 == paired["adapter/floor_httpx_sync"]["q3"]
    assert round(paired["run_step/adapter"]["median"], 6) == 1.05
    targets = {t.name: t.value for t in extra_targets("x", {"paired_ratios": paired})}
    assert targets == {
        "x: adapter / sync httpx2 floor": 1.0,
        "x: run step / adapter": paired["run_step/adapter"]["median"],
    }
    results = _results()
    results["sections"][0]["figures"]["deliveries"]["socket"]["openai"]["paired_ratios"] = paired
    rows = protocol_table(results).splitlines()
    assert (
        "| OpenAI Responses | 10.0 µs | 9.0 µs | 9.5 µs | 1.00x (0.88-1.00) | 10.0 µs | 1.05x (1.05-1.05) |"
        in rows
    )
