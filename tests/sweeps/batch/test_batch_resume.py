"""A batch sweep's driver killed mid-round (SIGKILL), then called again: it finds its batches, resumes.

The simulator runs as its own process on loopback (it outlives the driver, as a provider does); the
driver runs in a child process that is killed once round 2 is submitted. The second call must
cancel the batch the dead driver left running (its answers need the continuations that died with
it), resume every run from its journaled portable checkpoint (``resumed_steps``), finish them all,
and leave no reasoning or opaque payload in anything it wrote.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic  # imported up front: the resume below must start well within one batch's time
import openai
import pytest
from google import genai
from google.genai import types as genai_types

from agentlab.adapters.base import Adapter, ModelRef, create_adapter
from agentlab.sweeps import load_results, sim_tasks, sim_tools, sweep
from agentlab.sweeps.batch.manifest import journal_path, manifest_path
from tests.support import loopback
from tests.support.opaque import sim_opaque_tokens

REPO = Path(__file__).resolve().parents[3]
N_TASKS = 3

DRIVER = """
import sys
import openai, anthropic
from agentlab.adapters.base import create_adapter
from agentlab.sweeps import sim_tasks, sim_tools, sweep

url, model, out = sys.argv[1:4]

def make(ref):
    if ref.provider == "openai":
        return create_adapter(ref, client=openai.AsyncOpenAI(base_url=url + "/v1", api_key="sim-key"))
    if ref.provider == "google":
        from google import genai
        from google.genai import types
        opts = types.HttpOptions(base_url=url)
        return create_adapter(ref, client=genai.Client(api_key="sim-key", http_options=opts))
    return create_adapter(ref, client=anthropic.AsyncAnthropic(base_url=url, api_key="sim-key"))

sweep(sim_tasks()[:{n}], [model], results=out, tools=sim_tools(), progress=None, adapter_factory=make,
      backend="batch", batch={{"poll_s": 0.05, "poll_max_s": 0.2}})
"""


def _factory(url: str) -> Callable[[ModelRef], Adapter]:
    """Adapters on SDK clients of the loopback server, closed with the adapter by the sweep."""

    def make(ref: ModelRef) -> Adapter:
        c: Any
        if ref.provider == "openai":
            c = openai.AsyncOpenAI(base_url=url + "/v1", api_key="sim-key")
        elif ref.provider == "google":
            c = genai.Client(api_key="sim-key", http_options=genai_types.HttpOptions(base_url=url))
        else:
            c = anthropic.AsyncAnthropic(base_url=url, api_key="sim-key")
        a = create_adapter(ref, client=c)
        a._owns_client = True  # type: ignore[attr-defined]  # the sweep closes it, on the sweep's loop
        return a

    return make


def _records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")]


@pytest.mark.parametrize("model", ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"])
def test_a_killed_driver_resumes_from_portable_checkpoints(
    tmp_path: Path, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLAB_SIM_BATCH_SECONDS", "3")
    out = tmp_path / "r.jsonl"
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(DRIVER.format(n=N_TASKS)))
    with loopback.serving() as url:
        child = subprocess.Popen(
            [sys.executable, str(script), url, model, str(out)],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        try:
            while not any(
                r.get("round") == 2 and r["event"] == "submitted" for r in _records(manifest_path(out))
            ):
                assert child.poll() is None, f"driver exited early: {child.stderr.read()[-2000:]!r}"  # type: ignore[union-attr]
                assert time.monotonic() < deadline, "round 2 was never submitted"
                time.sleep(0.02)
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
            child.stderr.close()  # type: ignore[union-attr]
        assert load_results(out).empty  # every run was mid-loop: nothing recorded yet
        recs = _records(manifest_path(out))
        left = [r for r in recs if r.get("round") == 2 and r["event"] == "submitted"]
        assert len(left) == 1 and left[0]["requests"] == N_TASKS

        rep = sweep(sim_tasks()[:N_TASKS], [model], results=out, tools=sim_tools(), progress=None,
                    adapter_factory=_factory(url), backend="batch", batch={"poll_s": 0.05, "poll_max_s": 0.2})

        assert rep.status == "completed" and rep.failed == 0 and rep.ran == N_TASKS

        # The batch the dead driver left is cancelled, then deleted at the provider (it holds the
        # loop's opaque items), and the manifest says so.
        recs = _records(manifest_path(out))
        abandoned = [r for r in recs if r["event"] == "abandoned"]
        assert [r["batch_id"] for r in abandoned] == [left[0]["batch_id"]]
        bid = left[0]["batch_id"]
        assert any(r["event"] == "deleted" and r["batch_id"] == bid for r in recs)
        if model.startswith("openai"):  # a batch object cannot be deleted at OpenAI; its files can
            with openai.OpenAI(base_url=url + "/v1", api_key="sim-key") as oc:
                b = oc.batches.retrieve(bid)
                assert b.status == "cancelled"
                for fid in (b.input_file_id, b.output_file_id, b.error_file_id):
                    if fid:
                        with pytest.raises(openai.NotFoundError):
                            oc.files.retrieve(fid)
        elif model.startswith("anthropic"):
            with anthropic.Anthropic(base_url=url, api_key="sim-key") as ac, pytest.raises(
                anthropic.NotFoundError
            ):
                ac.messages.batches.retrieve(bid)
        else:
            from google.genai import errors as genai_errors

            gc = genai.Client(api_key="sim-key", http_options=genai_types.HttpOptions(base_url=url))
            with pytest.raises(genai_errors.ClientError) as gone:
                gc.batches.get(name=bid)
            assert gone.value.code == 404


    df = load_results(out)
    assert (df["status"] == "completed").all() and df["success"].all()
    assert (df["resumed_steps"] == 1).all() and (df["steps"] >= 2).all()
    for p in tmp_path.rglob("*"):
        if p.is_file() and p != script:
            text = p.read_text("utf-8", "replace")
            assert "The user asks:" not in text, p
            assert sim_opaque_tokens(text) == [], p
            assert "encrypted_content" not in text and '"signature"' not in text, p
    assert journal_path(out).exists()
