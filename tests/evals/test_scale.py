"""evaluate at scale on the in-process simulators: live progress, Ctrl-C that stops, resume, flat state.

A run on an in-process simulator never suspends (no socket, every await completes at once), so a
sweep worker that never yields would do its whole queue in one event-loop step: progress, the
``on_progress`` callback and a Ctrl-C would all land only after the last run. These tests hold the
sweep to live progress and a prompt stop with fast runs, in-process and with a real SIGINT in a
subprocess, and check that the same call then resumes without a request for any finished run.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.evals import includes
from agentlab.sim.transport import SimTransport
from agentlab.sweeps import SweepProgress, read_rows
from tests.support.interrupts import interrupt_when_started, spawn_script

MODEL = "openai:sim-reasoner"


def _data(n: int) -> list[dict[str, Any]]:
    """``n`` arithmetic tasks, each prompt unique, so a request body names the task it is for."""
    return [{"id": f"t{i}", "input": f"What is {i} + {i + 7}?", "target": str(2 * i + 7)} for i in range(n)]


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every request body any in-process simulator answers in this test."""
    seen: list[bytes] = []
    real = SimTransport._respond

    def spy(self: SimTransport, request: Any, body: bytes) -> Any:
        seen.append(body)
        return real(self, request, body)

    monkeypatch.setattr(SimTransport, "_respond", spy)
    return seen


def _lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as f:
        return sum(1 for _ in f)


def test_progress_is_live_with_fast_runs_on_one_provider(tmp_path: Path) -> None:
    out = tmp_path / "eval.jsonl"
    seen: list[tuple[int, int]] = []

    def on_progress(p: SweepProgress) -> None:
        seen.append((p.done, _lines(out)))

    al.evaluate(_data(30), [MODEL], scorers=[includes()], results=out, progress=None,
                concurrency=2, on_progress=on_progress)  # fmt: skip
    assert [d for d, _ in seen] == list(range(1, 31))
    # Each callback runs while the run it reports is the newest in the file (at most the other
    # worker's run landed meanwhile), not after the whole queue was done.
    assert all(d <= rows <= d + 1 for d, rows in seen), seen[:5]


def test_interrupt_with_fast_runs_stops_at_once_and_the_same_call_resumes(
    tmp_path: Path, requests: list[bytes]
) -> None:
    out = tmp_path / "eval.jsonl"
    data = _data(40)

    def stop_after_three(p: SweepProgress) -> None:
        if p.done >= 3:
            raise KeyboardInterrupt

    kw: dict[str, Any] = {"scorers": [includes()], "results": out, "progress": None, "concurrency": 2}
    with pytest.raises(KeyboardInterrupt):
        al.evaluate(data, [MODEL], on_progress=stop_after_three, **kw)
    partial = al.load_eval(out).runs()  # the partial evaluation, in one call
    assert 3 <= len(partial) <= 4 and partial["score_includes"].notna().all()
    assert len(list(read_rows(out))) == len(partial)
    finished = set(partial["task_id"])
    requests.clear()
    res = al.evaluate(data, [MODEL], **kw)
    assert (
        res.report is not None
        and res.report.from_file == len(partial)
        and res.report.ran == 40 - len(partial)
    )
    sent = b"\n".join(requests)
    for t in data:  # no request for a finished run; one for every other
        assert (str(t["input"]).encode() in sent) is (t["id"] not in finished), t["id"]
    assert len(res.runs()) == 40 and len(list(read_rows(out))) == 40


SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys, time
    import agentlab as al
    from agentlab.evals import includes

    mode, results = sys.argv[1], sys.argv[2]
    data = [{"id": f"t{i}", "input": f"What is {i} + {i + 7}?", "target": str(2 * i + 7)} for i in range(400)]

    def on_progress(p):
        if p.done == 1:
            print("STARTED", flush=True)

    def call():
        return al.evaluate(data, ["openai:sim-reasoner"], scorers=[includes()], results=results,
                           concurrency=2, on_progress=on_progress, progress=None)

    try:
        if mode == "plain":
            call()
        else:
            async def main():
                return call()
            asyncio.run(main())
        how = "returned"
    except KeyboardInterrupt:
        how = "KeyboardInterrupt"
    print("RETURNED", json.dumps({"how": how, "t": time.monotonic()}), flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("mode", ["plain", "inside_asyncio_run"])
def test_one_ctrl_c_stops_a_fast_evaluation(mode: str, tmp_path: Path) -> None:
    """A real SIGINT after the first of 400 fast runs: control comes back at once, finished runs stay."""
    results = tmp_path / "eval.jsonl"
    proc = spawn_script(tmp_path, "evaluate.py", SCRIPT, mode, str(results))
    back_s, rep, _ = interrupt_when_started(proc, settle_s=0.0, timeout_s=30.0)
    assert rep["how"] == "KeyboardInterrupt", rep
    assert back_s < 5.0, back_s
    rows = list(read_rows(results))
    assert 1 <= len(rows) < 400 and all(r["scores"]["includes"]["value"] is True for r in rows)
    assert len(al.load_eval(results).runs()) == len(rows)
    res = al.evaluate(_data(400)[:len(rows) + 5], [MODEL], scorers=[includes()], results=results,
                      progress=None)  # fmt: skip
    assert res.report is not None and res.report.from_file == len(rows) and res.report.ran == 5
