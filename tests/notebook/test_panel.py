"""The reasoning panel: bounded frontend traffic, no lost text, nothing left to save at cell end."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from agentlab.neutral.events import ReasoningDeltaEvent, TextDeltaEvent
from agentlab.notebook._coalesce import MAX_RATE, wait_idle
from agentlab.notebook.panel import ReasoningPanel, collapse_panels

CANARY = "CANARY-7f3a-REASONING"


def _updates(messages: list[dict[str, Any]], model_id: str) -> list[dict[str, Any]]:
    return [m for m in messages if m["comm_id"] == model_id and m["data"].get("method") == "update"]


def _snapshots(messages: list[dict[str, Any]], panel: ReasoningPanel) -> list[dict[str, Any]]:
    """The snapshots the panel's live text was sent (custom messages: what the page shows)."""
    assert panel._live is not None
    comm_id = panel._live.comm.comm_id
    return [
        m["data"]["content"]
        for m in messages
        if m["comm_id"] == comm_id and m["data"].get("method") == "custom"
    ]


def _feed(panel: ReasoningPanel, n: int, *, pause_every: int = 0, pause_s: float = 0.0) -> list[str]:
    pieces = [f"tok{i} " for i in range(n)]
    for i, piece in enumerate(pieces):
        panel.feed(ReasoningDeltaEvent(text=piece, block="0", step=1))
        if pause_every and i % pause_every == pause_every - 1:
            time.sleep(pause_s)
    return pieces


def _record(name: str, data: dict[str, Any]) -> None:
    out = Path(__file__).resolve().parents[2] / "out" / "measurements"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(data, indent=2))


def test_5000_fast_deltas_send_few_messages_and_lose_no_text(comm_messages: list[dict[str, Any]]) -> None:
    panel = ReasoningPanel("r", live_chars=10**9)  # show everything live, so completeness is visible
    t0 = time.monotonic()
    pieces = _feed(panel, 5000)
    panel.end()
    assert wait_idle()  # end() rendered at once; its frontend update goes out within the budget
    elapsed = time.monotonic() - t0
    frames = _snapshots(comm_messages, panel)
    bound = elapsed * MAX_RATE + 1  # the process-wide token bucket: burst of one, then MAX_RATE/s
    _record(
        "panel_5000_fast",
        {
            "deltas": 5000,
            "elapsed_s": round(elapsed, 4),
            "text_frames": len(frames),
            "bound": bound,
            "all_comm_messages": len(comm_messages),
        },
    )
    print(f"5,000 deltas in {elapsed:.3f} s -> {len(frames)} text frames ({len(comm_messages)} comm msgs)")
    assert len(comm_messages) <= bound + 1  # every message of the panel's widgets, + the end's header
    assert len(comm_messages) < 50  # a per-delta widget would have sent 5,000
    assert panel.text == "".join(pieces)
    last = frames[-1]["text"]
    assert "tok0 " in last and "tok4999 " in last  # the final frame holds all of it


def test_rate_stays_bounded_while_deltas_trickle(comm_messages: list[dict[str, Any]]) -> None:
    panel = ReasoningPanel("r", live_chars=10**9)
    t0 = time.monotonic()
    pieces = _feed(panel, 5000, pause_every=25, pause_s=0.004)  # ~200 bursts over ~1 s
    panel.end()
    assert wait_idle()
    elapsed = time.monotonic() - t0
    frames = _snapshots(comm_messages, panel)
    rate = len(comm_messages) / elapsed
    _record(
        "panel_5000_trickle",
        {
            "deltas": 5000,
            "elapsed_s": round(elapsed, 3),
            "text_frames": len(frames),
            "all_comm_messages": len(comm_messages),
            "messages_per_s": round(rate, 1),
        },
    )
    print(
        f"5,000 deltas over {elapsed:.2f} s -> {len(frames)} text frames, "
        f"{len(comm_messages)} msgs ({rate:.1f}/s)"
    )
    assert elapsed > 0.5
    assert len(comm_messages) <= elapsed * MAX_RATE + 1
    assert len(frames) >= 5  # it did stream while deltas arrived, not only at the end
    assert panel.text == "".join(pieces)
    assert "tok4999 " in frames[-1]["text"]


def test_live_view_shows_only_the_tail_but_keeps_all_text_in_memory(
    comm_messages: list[dict[str, Any]],
) -> None:
    panel = ReasoningPanel("r", live_chars=100)
    panel.append("A" * 1000 + "TAIL-END", block="0")
    assert wait_idle()
    frame = _snapshots(comm_messages, panel)[-1]
    assert frame["text"].endswith("TAIL-END") and len(frame["text"]) == 100
    assert "earlier chars in kernel memory" in frame["meta"]
    assert len(panel.text) == 1008


def test_collapse_clears_synced_text_but_kernel_keeps_it(comm_messages: list[dict[str, Any]]) -> None:
    panel = ReasoningPanel("r")
    panel.feed(ReasoningDeltaEvent(text=f"thinking about {CANARY} ", block="0", step=1))
    panel.feed(TextDeltaEvent(text="answer text", step=1))
    panel.end()
    assert wait_idle()
    assert CANARY in _snapshots(comm_messages, panel)[-1]["text"]  # shown while the cell runs
    assert CANARY not in panel._body.value  # ... but never as synced state
    assert panel.collapse()
    assert panel._live is None  # the live text is closed at cell end
    assert "not saved in the notebook" in panel._body.value
    assert CANARY in panel.text
    # On demand: the toggle reads the text back from kernel memory into a new live text ...
    panel.show()
    assert CANARY in _snapshots(comm_messages, panel)[-1]["text"]
    assert CANARY not in panel._body.value
    # ... and the next cell end hides it again.
    assert collapse_panels() >= 1
    assert panel._live is None
    # The last state each widget synced (what nbclient/JupyterLab would save) holds no canary.
    last: dict[str, dict[str, Any]] = {}
    for m in comm_messages:
        state = m["data"].get("state") if isinstance(m["data"], dict) else None
        if state:
            last.setdefault(m["comm_id"], {}).update(state)
    assert CANARY not in json.dumps(last)
    assert CANARY not in repr(panel) and CANARY not in panel._repr_mimebundle_()["text/plain"]


def test_keep_option_keeps_text_in_the_collapsed_panel(comm_messages: list[dict[str, Any]]) -> None:
    panel = ReasoningPanel("r", keep_text=True)
    panel.append(f"kept {CANARY}")
    panel.collapse()
    assert CANARY in panel._body.value and "<details>" in panel._body.value


def test_keep_option_from_environment(monkeypatch: Any) -> None:
    from agentlab.notebook.panel import PanelOptions

    monkeypatch.setitem(os.environ, "AGENTLAB_KEEP_REASONING", "1")
    assert PanelOptions().keep_reasoning is True
    monkeypatch.setitem(os.environ, "AGENTLAB_KEEP_REASONING", "0")
    assert PanelOptions().keep_reasoning is False


def test_reported_usage_replaces_estimates(comm_messages: list[dict[str, Any]]) -> None:
    from agentlab.neutral.usage import CallUsage

    panel = ReasoningPanel("r")
    panel.append("x" * 400, step=2)
    panel.end()
    assert "~100" in panel._body.value and "step 2" in panel._body.value  # final counters: synced
    panel.set_usage(CallUsage(input_tokens=10, output_tokens=1500, reasoning_tokens=1234))
    panel.end()
    assert "reasoning 1,234 tok" in panel._body.value and "text 266 tok" in panel._body.value


def test_collapse_wins_against_a_concurrent_flush(comm_messages: list[dict[str, Any]]) -> None:
    """Deltas still arriving from a worker thread while the cell ends: the last synced state is collapsed."""
    import threading

    for _ in range(20):
        panel = ReasoningPanel("r", flush_interval=0.0)  # flush as often as possible: widen the race window
        stop = threading.Event()

        def stream(p: ReasoningPanel = panel, s: threading.Event = stop) -> None:
            while not s.is_set():
                p.append(f"{CANARY} ")

        t = threading.Thread(target=stream)
        t.start()
        time.sleep(0.01)
        panel.collapse()
        time.sleep(0.01)
        stop.set()
        t.join()
        time.sleep(0.05)  # let any pending flush land
        assert panel._live is None and CANARY not in panel._body.value
