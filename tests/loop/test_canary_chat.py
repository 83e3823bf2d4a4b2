"""The Chat Completions dialects' reasoning never reaches anything durable.

DeepSeek's and local servers' ``reasoning_content`` is plain text and OpenRouter's ``reasoning_details``
carry text plus secrets (``data``, ``signature``). Each run records the requests it sent (the positive
control: the adapter really carried that reasoning back within the loop) and then looks for every
one of those values in the event log, the memory store, the pickled and JSON-dumped result and a
sweep's results file. The secrets must also be found by the saved-file scan
(``tests/support/opaque.sim_opaque_tokens``), so the notebook/report scans cover them.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

import agentlab as al
from agentlab.adapters.openai_chat._adapter import DeepSeekAdapter, OpenRouterAdapter, VLLMAdapter
from agentlab.records.memory import MemoryStore
from agentlab.sim import chat_client
from agentlab.sweeps import sweep
from tests.support.opaque import RecordingTransport, chat_reasoning_in, sim_opaque_tokens

CASES = [
    ("deepseek:sim-deepseek", DeepSeekAdapter, "deepseek"),
    ("openrouter:sim-router-gemini", OpenRouterAdapter, "openrouter"),
    ("openrouter:sim-router-claude", OpenRouterAdapter, "openrouter"),
    ("openrouter:sim-router-openai", OpenRouterAdapter, "openrouter"),
    ("vllm:sim-local", VLLMAdapter, "local"),
]
TASK = "Is it warmer in Paris or Rome right now?"


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "18 C", "Rome": "24 C"}.get(city, "no data")


@pytest.mark.parametrize(("model", "cls", "dialect"), CASES, ids=[c[0] for c in CASES])
def test_chat_reasoning_never_persists(tmp_path: Path, model: str, cls: type, dialect: str) -> None:
    wire = RecordingTransport()
    adapter = cls(model.split(":", 1)[1], client=chat_client(dialect, transport=wire))
    log = tmp_path / "events.jsonl"
    result = al.Session().start(model, TASK, tools=[get_weather], adapter=adapter, event_log=log).run_sync()
    assert result.status == "completed" and result.steps >= 2
    memory = MemoryStore(tmp_path / "memory.jsonl")
    memory.extend(result.history)

    texts: list[str] = []
    secrets: list[str] = []
    for body in wire.bodies[1:]:
        t, s = chat_reasoning_in(json.loads(body))
        texts += t
        secrets += s
    assert texts or secrets, "positive control: the loop carried reasoning back"
    for secret in secrets:  # the saved-file scan recognises each secret by what it is
        assert sim_opaque_tokens(json.dumps({"saved": secret})) == [secret], model

    saved = "\n".join(
        [
            log.read_text(),
            (tmp_path / "memory.jsonl").read_text(),
            pickle.dumps(result).decode("latin-1"),
            result.usage_frame().to_csv(),
            repr(result),
            str(result.output),
        ]
    )
    assert "reasoning_content" not in saved and "reasoning_details" not in saved
    assert sim_opaque_tokens(saved) == []
    for value in texts + secrets:
        assert value not in saved, model


def test_chat_sweep_results_file_holds_no_reasoning(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    models = [m for m, _, _ in CASES]
    rep = sweep([TASK], models, results=out, tools=[get_weather], repeats=1, progress=None)
    assert rep.status == "completed" and rep.failed == 0, rep
    text = out.read_text()
    assert all(m in text for m in models)  # positive control: every dialect's rows are there
    assert "reasoning_content" not in text and "reasoning_details" not in text
    assert sim_opaque_tokens(text) == []


def test_router_lookalikes_are_not_found() -> None:
    """A forged tag, random bytes of the same length or another simulator's key: not ours."""
    import base64
    import os

    from agentlab.sim.signing import DEFAULT_SECRET, Signer
    from tests.support.opaque import is_sim_router_signature

    sig = Signer(DEFAULT_SECRET).sign_thinking("some reasoning", 0)
    assert is_sim_router_signature(sig)  # the positive control
    raw = bytearray(base64.b64decode(sig))
    raw[-1] ^= 1
    for text in (base64.b64encode(bytes(raw)).decode(), base64.b64encode(os.urandom(len(raw))).decode()):
        assert not is_sim_router_signature(text) and sim_opaque_tokens(text) == []
    assert not is_sim_router_signature(sig, secret=b"another simulator")
