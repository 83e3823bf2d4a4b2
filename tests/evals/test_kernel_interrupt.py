"""Kernel › Interrupt during ``al.evaluate`` in a real Jupyter kernel keeps every finished run.

The cell runs exactly as a frontend sends it (jupyter_client), with the default progress display,
and the interrupt is a real SIGINT (``interrupt_kernel``) once some runs have landed in the results
file. Then, in the same kernel: the file holds only whole rows, ``load_eval`` reaches every one of
them in one call, and the same call resumes, sending no request for a finished task.
"""

from __future__ import annotations

import gc
import json
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("jupyter_client")

from tests.notebook.test_kernel import Kernel

pytestmark = pytest.mark.kernel

TASKS = 30

SETUP = """
import json
import agentlab as al
from agentlab.evals import includes
from agentlab.sim.transport import SimTransport

SEEN = []
_respond = SimTransport._respond


def _spy(self, request, body):
    SEEN.append(body.decode())
    return _respond(self, request, body)


SimTransport._respond = _spy
DATA = [{{"id": f"t{{i}}", "input": f"What is {{i}} + {{i + 7}}?", "target": str(2 * i + 7)}}
        for i in range({tasks})]
OUT = {out!r}


def call():
    # paced: each run streams for a while, so the interrupt lands with runs in flight
    return al.evaluate(DATA, ["openai:sim-reasoner+ttft=120+tps=400"], scorers=[includes()],
                       results=OUT, concurrency=2)
print("READY")
"""


@pytest.fixture(scope="module")
def kernel() -> Iterator[Kernel]:
    k = Kernel()
    try:
        yield k
    finally:
        k.close()
        with warnings.catch_warnings():  # jupyter_client's own unclosed client sockets, collected here
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _interrupt_after_rows(k: Kernel, path: Path, rows: int, stop: threading.Event) -> None:
    """A real SIGINT to the kernel once ``rows`` rows are in the results file."""
    deadline = time.monotonic() + 120
    while not stop.is_set() and time.monotonic() < deadline:
        if len(_lines(path)) >= rows:
            k.km.interrupt_kernel()
            return
        time.sleep(0.02)


def test_kernel_interrupt_keeps_finished_runs_and_the_same_call_resumes(
    kernel: Kernel, tmp_path: Path
) -> None:
    out = tmp_path / "eval.jsonl"
    assert "READY" in kernel.ok(SETUP.format(tasks=TASKS, out=str(out)), timeout=180).stdout

    stop = threading.Event()
    watcher = threading.Thread(target=_interrupt_after_rows, args=(kernel, out, 3, stop), daemon=True)
    watcher.start()
    try:
        cell = kernel.run("r = call()", timeout=180)
    finally:
        stop.set()
        watcher.join()
    assert cell.error is not None and cell.error["ename"] == "KeyboardInterrupt", cell.stdout

    # Only whole rows: every line parses, and the interrupt came before the queue was done.
    rows = [json.loads(line) for line in _lines(out)]
    finished = {r["task_id"] for r in rows}
    assert 3 <= len(rows) < TASKS, len(rows)

    # One call reaches the partial evaluation, with every finished run and its score.
    part = kernel.ok(
        "part = al.load_eval(OUT).runs()\n"
        "print('PART', json.dumps({'n': len(part), 'tasks': sorted(part['task_id']),"
        " 'scored': int(part['score_includes'].notna().sum())}))"
    )
    seen = json.loads(part.stdout.split("PART ", 1)[1])
    assert seen["n"] == len(rows) and set(seen["tasks"]) == finished and seen["scored"] == len(rows)

    # The same call resumes: no request for a finished task, one run per remaining task.
    again = kernel.ok(
        "SEEN.clear()\nr = call()\nruns = r.runs()\n"
        "print('AGAIN', json.dumps({'n': len(runs), 'bodies': SEEN}))",
        timeout=300,
    )
    res = json.loads(again.stdout.split("AGAIN ", 1)[1])
    assert res["n"] == TASKS
    asked = {t for t in (f"t{i}" for i in range(TASKS)) if any(_prompt(t) in b for b in res["bodies"])}
    assert asked == {f"t{i}" for i in range(TASKS)} - finished
    assert len(_lines(out)) == TASKS


def _prompt(task_id: str) -> str:
    i = int(task_id[1:])
    return f"What is {i} + {i + 7}?"
