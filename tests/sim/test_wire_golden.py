"""Every reply of the wire corpus is byte-identical to the one recorded before the simulator's refactor.

The digests in ``wire_golden.json`` were recorded from the simulator as it answered before its
request handling was split into named steps and its protocols moved into one registry table. A
deliberate change of the simulator's wire behaviour re-records them with
``AGENTLAB_RECORD_WIRE_GOLDEN=1 python -m pytest tests/sim/test_wire_golden.py`` (and says why in
the commit); any other difference is a regression.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.sim.wire_corpus import run_corpus

GOLDEN = Path(__file__).with_name("wire_golden.json")


def test_every_reply_is_byte_identical_to_the_recording() -> None:
    got = run_corpus()
    if os.environ.get("AGENTLAB_RECORD_WIRE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(got, indent=1) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert list(got) == list(want)
    changed = [name for name in want if got[name] != want[name]]
    assert changed == []


def test_the_corpus_reaches_success_and_every_error_status() -> None:
    """The corpus is only a guard if it walks both the happy paths and the refusals."""
    statuses = {case["status"] for case in run_corpus().values()}
    assert {200, 400, 404, 429, 500, 503, 529} <= statuses
