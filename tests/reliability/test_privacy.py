"""Canary scans: after a full session, nothing durable holds reasoning, opaque payloads or API keys.

Canaries, all produced by the real adapters and the simulator (not planted in agentlab's data):

* reasoning: the simulated reasoner's thinking starts with "The user asks: <task>" and the task holds
  a unique token, so that sentence (and every reasoning block streamed to the display hook) exists
  only as reasoning;
* opaque payloads: every ``encrypted_content``, ``signature`` and ``redacted_thinking`` ``data`` the
  simulator handed out, read from the raw response bytes;
* API keys: fake keys (``sk-test-CANARYKEY…``) set in the environment and given to the SDK clients.

Positive controls prove each canary was really there: reasoning reached ``on_event``, opaque payloads
went back verbatim within their loop, the keys reached the wire in the auth headers.

Everything durable is scanned: the JSONL event log, every log record at DEBUG (agentlab's and the SDK
loggers', with tracebacks), the memory store, serialized and pickled checkpoints, pickled and JSON
results and comparisons, usage frames, HTML reprs, exception messages and formatted tracebacks, reprs
of runs/adapters/sessions; and, in the notebook test, the executed notebook with its widget state and
its HTML export.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import pickle
import traceback
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab import sim
from agentlab.errors import ContinuityError, ProviderError
from agentlab.loop.continuation import generation, release_since
from agentlab.neutral.events import ReasoningDeltaEvent, ToolCallEvent
from agentlab.records.memory import MemoryStore
from agentlab.sim.reasoner import MAGIC_REDACTED
from tests.reliability.support import (
    MODELS,
    PROVIDERS,
    TEMPS,
    RecordingTransport,
    get_weather,
    opaque_payloads_on_wire,
)

TOKEN = uuid.uuid4().hex[:16]
OPENAI_KEY = f"sk-test-CANARYKEY{TOKEN}openai"
ANTHROPIC_KEY = f"sk-ant-test-CANARYKEY{TOKEN}anthropic"
LOGGERS = ("", "agentlab", "openai", "anthropic", "httpx", "httpx2", "httpcore")


def task(city_a: str, city_b: str) -> str:
    return f"Is it warmer in {city_a} or {city_b} for trip canary-{TOKEN}?"


@pytest.fixture
def debug_log() -> Iterator[io.StringIO]:
    """Every log record at DEBUG from agentlab and the SDKs, formatted with tracebacks.

    As a user's ``logging.basicConfig(level=logging.DEBUG)`` would write them.
    """
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    old = {n: logging.getLogger(n).level for n in LOGGERS}
    root.addHandler(handler)
    for n in LOGGERS:
        logging.getLogger(n).setLevel(logging.DEBUG)
    try:
        yield buf
    finally:
        root.removeHandler(handler)
        for n, level in old.items():
            logging.getLogger(n).setLevel(level)


def keyed_adapter(provider: str, rec: RecordingTransport, *, max_retries: int = 0) -> Any:
    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter

    if provider == "openai":
        oclient = sim.openai_client(transport=rec, api_key=OPENAI_KEY, max_retries=max_retries)
        return OpenAIResponsesAdapter(MODELS[provider], client=oclient, max_retries=max_retries)
    aclient = sim.anthropic_client(transport=rec, api_key=ANTHROPIC_KEY, max_retries=max_retries)
    return AnthropicMessagesAdapter(MODELS[provider], client=aclient)


class Durable:
    """Everything a session leaves behind, as named blobs to scan."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def add(self, name: str, value: Any) -> None:
        if isinstance(value, bytes):
            data = value
        elif isinstance(value, str):
            data = value.encode()
        else:
            data = repr(value).encode()
        self.blobs[name] = self.blobs.get(name, b"") + data + b"\n"

    def add_exception(self, name: str, exc: BaseException) -> None:
        self.add(name, str(exc))
        self.add(name, repr(exc))
        self.add(name, "".join(traceback.format_exception(exc)))

    def leaks(self, needles: dict[str, str]) -> list[tuple[str, str]]:
        found = []
        for what, needle in needles.items():
            forms = {needle.encode(), json.dumps(needle)[1:-1].encode()}
            for name, blob in self.blobs.items():
                if any(f in blob for f in forms):
                    found.append((what, name))
        return found


async def _full_session(
    tmp_path: Path, durable: Durable, shown: list[str]
) -> tuple[RecordingTransport, list[Any]]:
    """Loops on both providers (redacted thinking included) and the ways a loop can end.

    A provider switch, a loop cut off by the end of its cell, a run failing mid-loop, a tool that raises, and
    a comparison.
    """
    rec = RecordingTransport()
    log = al.EventLog(tmp_path / "events.jsonl")
    adapters = {p: keyed_adapter(p, rec) for p in PROVIDERS}
    runs: list[al.Run] = []

    def on_event(ev: Any) -> None:
        if isinstance(ev, ReasoningDeltaEvent):
            shown.append(ev.text)

    session = al.Session(system="Answer briefly.")

    async def loop(provider: str, text: str, **kw: Any) -> al.Run:
        run = session.start(
            f"{provider}:{MODELS[provider]}", text, tools=[get_weather], adapter=adapters[provider],
            event_log=log, on_event=on_event, **kw,
        )  # fmt: skip
        runs.append(run)
        return run

    await (await loop("openai", task("Paris", "Rome"))).arun()
    await (await loop("anthropic", task("Oslo", "Berlin") + " " + MAGIC_REDACTED)).arun()
    await (await loop("anthropic", task("Rome", "Oslo"), reasoning={"interleaved": True})).arun()
    await (await loop("openai", task("Berlin", "Paris"), reasoning="high")).arun()

    # a loop paused at its tool call, cut off by the end of its cell, then resumed (it goes on from
    # portable items only, or refuses with ContinuityError; either way its message is scanned too)
    gen = generation()
    paused = await loop("openai", task("Paris", "Oslo"))
    events = paused.events()
    async for ev in events:
        if isinstance(ev, ToolCallEvent):
            break
    assert release_since(gen) == 1
    try:
        async for _ in events:
            pass
    except ContinuityError as cut:
        durable.add_exception("exception: continuity", cut)
    await events.aclose()

    # a run failing in the middle of its loop (every request after the first answers 500)
    failing_rec = RecordingTransport(rec.inner, plan=lambda n, _p: "500" if n >= 1 else None)
    for provider in PROVIDERS:
        failing = al.Run(
            f"{provider}:{MODELS[provider]}", task("Rome", "Berlin"), tools=[get_weather],
            adapter=keyed_adapter(provider, failing_rec), event_log=log, on_event=on_event, retries=0,
        )  # fmt: skip
        runs.append(failing)
        with pytest.raises(ProviderError) as failed:
            await failing.arun()
        durable.add_exception(f"exception: {provider} 500", failed.value)

    # a tool that raises with reasoning-adjacent text in its message
    @al.tool(name="get_weather")
    def broken(city: str) -> str:
        """Current weather for a city.

        Args:
            city: City name.
        """
        raise RuntimeError(f"no data for {city}")

    tool_run = al.Run(
        "anthropic:sim-thinker", task("Paris", "Berlin"), tools=[broken], adapter=adapters["anthropic"],
        event_log=log, on_event=on_event,
    )  # fmt: skip
    runs.append(tool_run)
    await tool_run.arun()

    cmp = await al.acompare(
        task("Oslo", "Rome"),
        [f"{p}:{MODELS[p]}" for p in PROVIDERS],
        tools=[get_weather],
        adapters=[adapters[p] for p in PROVIDERS],
        live=False,
        event_log=log,
    )

    # --- everything durable
    memory = MemoryStore(tmp_path / "memory.jsonl")
    for run in runs:
        assert run.result is not None
        memory.extend(run.result.history)
        durable.add("checkpoint json", run.checkpoint.to_json())
        durable.add("checkpoint pickle", pickle.dumps(run.checkpoint))
        durable.add("result pickle", pickle.dumps(run.result))
        durable.add("result json", run.result.model_dump_json())
        durable.add("result html", run.result._repr_html_())
        durable.add("result str", str(run.result))
        durable.add("usage frame", run.result.usage_frame().to_csv())
        durable.add("run repr", repr(run))
        durable.add("checkpoint repr", repr(run.checkpoint))
        durable.add("events repr", repr(run.result.events))
    durable.add("comparison pickle", pickle.dumps(cmp))
    durable.add("comparison repr", repr(cmp) + str(cmp) + cmp._repr_html_())
    durable.add("comparison frames", cmp.usage.to_csv() + cmp.summary().to_csv())
    durable.add("session", repr(session) + repr(session.history) + repr(session.results))
    durable.add(
        "adapters", repr(adapters) + repr(vars(adapters["openai"])) + repr(vars(adapters["anthropic"]))
    )
    durable.add("event log file", (tmp_path / "events.jsonl").read_bytes())
    durable.add("event log records", repr(al.EventLog.read(tmp_path / "events.jsonl")))
    durable.add("memory file", (tmp_path / "memory.jsonl").read_bytes())
    durable.add("memory repr", repr(list(memory)))
    for p in PROVIDERS:
        await adapters[p].client.close() if p == "openai" else await adapters[p]._client.close()
    return rec, [*runs, cmp]


def test_canary_scan_after_a_full_session(
    tmp_path: Path, debug_log: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    durable = Durable()
    shown: list[str] = []
    rec, _keep = asyncio.run(_full_session(tmp_path, durable, shown))
    durable.add("debug log", debug_log.getvalue())

    # --- positive controls: each canary really flowed
    reasoning = "".join(shown)
    marker = f"The user asks: {task('Paris', 'Rome')}"
    assert marker in reasoning, "the reasoning canary reached the display hook"
    opaque = opaque_payloads_on_wire(rec.exchanges)
    assert len(opaque) >= 10
    sent_back = [p for p in opaque if any(p.encode() in e.body for e in rec.exchanges)]
    assert len(sent_back) >= 5, "opaque payloads went back verbatim within their loops"
    assert any(e.headers.get("authorization") == f"Bearer {OPENAI_KEY}" for e in rec.exchanges)
    assert any(
        ANTHROPIC_KEY in (e.headers.get("x-api-key", "") + e.headers.get("authorization", ""))
        for e in rec.exchanges
    )
    assert len(debug_log.getvalue().splitlines()) > 20, "DEBUG logging really captured records"
    assert any(
        n.startswith("openai") or n.startswith("anthropic") for n in _logger_names(debug_log.getvalue())
    )

    # --- nothing durable holds any of them
    needles: dict[str, str] = {"reasoning marker": "The user asks:", "reasoning canary": marker}
    blocks = [b for b in _reasoning_sentences(reasoning) if len(b) >= 40]
    assert len(blocks) >= 5
    needles.update({f"reasoning sentence {i}": b for i, b in enumerate(blocks)})
    needles.update({f"opaque {i}": p[:40] for i, p in enumerate(opaque)})
    needles.update(
        {"openai key": OPENAI_KEY, "anthropic key": ANTHROPIC_KEY, "key fragment": f"CANARYKEY{TOKEN}"}
    )
    leaks = durable.leaks(needles)
    assert not leaks, f"canaries found in durable output: {sorted(set(leaks))[:20]}"


def _logger_names(text: str) -> set[str]:
    return {line.split(" ", 1)[0] for line in text.splitlines() if line}


def _reasoning_sentences(text: str) -> list[str]:
    """Reasoning sentences that are reasoning only (not the task, an answer or a tool output)."""
    import re

    out = []
    for s in re.split(r"(?<=[.!?])\s+|\n+", text):
        s = s.strip()
        if not s or any(v in s and len(s) <= len(v) + 5 for v in TEMPS.values()):
            continue
        if s.startswith(("So:", "**")) or "is warmer (" in s or "is colder (" in s:
            continue  # carries the final answer, which is portable
        if "I could not read a number" in s or s.startswith("Rome") or s.startswith("Oslo"):
            continue
        out.append(s)
    return out


def test_api_keys_never_in_reprs_errors_or_logs(
    debug_log: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys given to adapters never show in a repr, an error message or a log line.

    Whether given directly or through the environment; a failing real-model request (no network here) names no
    key either.
    """
    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    durable = Durable()
    adapters: list[al.Adapter] = [
        OpenAIResponsesAdapter(
            "gpt-5.1", api_key=OPENAI_KEY, base_url="http://127.0.0.1:9/v1", max_retries=0
        ),
        OpenAIResponsesAdapter("gpt-5.1", base_url="http://127.0.0.1:9/v1", max_retries=0),
        AnthropicMessagesAdapter(
            "claude-sonnet-4-5", api_key=ANTHROPIC_KEY, base_url="http://127.0.0.1:9", max_retries=0
        ),
        AnthropicMessagesAdapter("claude-sonnet-4-5", base_url="http://127.0.0.1:9", max_retries=0),
    ]
    for a in adapters:
        durable.add("adapter repr", repr(a) + str(a))
        run = al.Run(f"{a.provider}:{a.model}", "Is it warmer in Paris or Rome?", adapter=a, retries=0)
        durable.add("run repr", repr(run))
        with pytest.raises(ProviderError) as info:  # port 9 (discard) refuses: a connection error
            asyncio.run(run.arun())
        durable.add_exception("connection error", info.value)
        assert run.result is not None
        durable.add("result", run.result.model_dump_json() + repr(run.result.events))
    # an error message that quotes a key (e.g. a provider echoing a header) is redacted before it is recorded
    err = al.errors.ProviderAPIError(f"bad key {OPENAI_KEY}", provider="openai", status=401)
    run = al.Run("openai:sim-reasoner", "What is 2 + 3?", adapter=_raising_adapter(err), retries=0)
    with pytest.raises(al.errors.ProviderAPIError):
        asyncio.run(run.arun())
    assert run.result is not None
    durable.add(
        "error record", run.result.model_dump_json() + repr(run.result.events) + (run.result.error or "")
    )
    durable.add("debug log", debug_log.getvalue())
    leaks = durable.leaks({"openai key": OPENAI_KEY, "anthropic key": ANTHROPIC_KEY})
    assert not leaks, leaks
    assert "[REDACTED]" in (run.result.error or "")


def _raising_adapter(err: Exception) -> Any:
    from agentlab.testing import ScriptedAdapter, Step

    return ScriptedAdapter([Step(error=err)])


# ---------------------------------------------------------------- a notebook, executed and exported


def _notebook(side: Path, events: Path, memory: Path) -> Any:
    import nbformat

    setup = f"""
import json, logging, os
import agentlab as al
from agentlab import sim
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.neutral.events import ReasoningDeltaEvent
from tests.reliability.support import RecordingTransport, get_weather, opaque_payloads_on_wire

logging.basicConfig(level=logging.DEBUG)  # DEBUG lines land in the saved outputs
for name in ("agentlab", "openai", "anthropic", "httpx", "httpx2"):
    logging.getLogger(name).setLevel(logging.DEBUG)
# keys assembled at run time, so that the notebook's *source* never holds them: any copy in the
# saved file or the HTML is then a leak from an output
os.environ["OPENAI_API_KEY"] = "sk-test-" + "CANARY" + "KEY" + {TOKEN!r} + "openai"
os.environ["ANTHROPIC_API_KEY"] = "sk-ant-test-" + "CANARY" + "KEY" + {TOKEN!r} + "anthropic"
rec = RecordingTransport()
oa = OpenAIResponsesAdapter(
    "sim-reasoner", client=sim.openai_client(transport=rec, api_key=os.environ["OPENAI_API_KEY"])
)
aa = AnthropicMessagesAdapter(
    "sim-thinker", client=sim.anthropic_client(transport=rec, api_key=os.environ["ANTHROPIC_API_KEY"])
)
log = al.EventLog({str(events)!r})
shown = []
def keep(ev):
    if isinstance(ev, ReasoningDeltaEvent):
        shown.append(ev.text)
oa, aa
"""
    cells = [
        nbformat.v4.new_code_cell("%load_ext agentlab"),
        nbformat.v4.new_code_cell(setup),
        nbformat.v4.new_code_cell(
            f"r1 = al.run('openai:sim-reasoner', {task('Paris', 'Rome')!r}, tools=[get_weather], adapter=oa,"
            " event_log=log, on_event=keep)\nr1"
        ),
        nbformat.v4.new_code_cell(
            f"r2 = al.run('anthropic:sim-thinker', {task('Oslo', 'Berlin') + ' ' + MAGIC_REDACTED!r},"
            " tools=[get_weather], adapter=aa, event_log=log, on_event=keep)\nr2"
        ),
        nbformat.v4.new_code_cell(
            f"cmp = al.compare({task('Rome', 'Oslo')!r},"
            " models=['openai:sim-reasoner', 'anthropic:sim-thinker'],"
            " tools=[get_weather], adapters=[oa, aa], event_log=log)\ncmp"
        ),
        nbformat.v4.new_code_cell(
            "cmp.plot_costs()\nr1.usage_frame()",
        ),
        nbformat.v4.new_code_cell(
            "bad = RecordingTransport(rec.inner, plan=lambda n, _p: '500' if n >= 1 else None)\n"
            "ob = OpenAIResponsesAdapter('sim-reasoner', client=sim.openai_client(transport=bad,"
            " api_key=os.environ['OPENAI_API_KEY']), max_retries=0)\n"
            f"al.run('openai:sim-reasoner', {task('Berlin', 'Rome')!r}, tools=[get_weather], adapter=ob,"
            " retries=0, event_log=log)",
            metadata={"tags": ["raises-exception"]},
        ),
        nbformat.v4.new_code_cell(
            f"mem = al.MemoryStore({str(memory)!r})\n"
            "for r in (r1, r2, *cmp.results.values()):\n    mem.extend(r.history)\n"
            f"with open({str(side)!r}, 'w') as f:\n"
            "    json.dump({'opaque': opaque_payloads_on_wire(rec.exchanges + bad.exchanges),"
            " 'reasoning': ''.join(shown)}, f)\n"
            "len(mem)"
        ),
    ]
    return nbformat.v4.new_notebook(cells=cells, metadata={"title": "canary"})


@pytest.mark.kernel
def test_canary_scan_of_an_executed_notebook_and_its_html(tmp_path: Path) -> None:
    import nbformat

    from agentlab.notebook.report import build_report

    src = tmp_path / "src"
    src.mkdir()
    side, events, memory = tmp_path / "side.json", tmp_path / "events.jsonl", tmp_path / "memory.jsonl"
    nbformat.write(_notebook(side, events, memory), src / "canary.ipynb")
    report = build_report(tmp_path / "out", notebooks_dir=src, names=["canary"], timeout=120)

    # --- positive controls, from inside the kernel
    seen = json.loads(side.read_text())
    assert f"The user asks: {task('Paris', 'Rome')}" in seen["reasoning"]
    assert len(seen["opaque"]) >= 6
    saved = report.notebooks[0].read_text()
    nb = json.loads(saved)
    assert "application/vnd.jupyter.widget-state+json" in nb["metadata"].get("widgets", {}), (
        "widget state saved"
    )
    outputs = json.dumps([c.get("outputs", []) for c in nb["cells"]])
    assert "ProviderServerError" in outputs and "DEBUG" in outputs, "the error and DEBUG logs are in the file"
    assert "Rome is warmer" in outputs, "results were displayed"

    durable = Durable()
    durable.add("saved notebook (outputs + widget state)", saved)
    durable.add("html export", report.html[0].read_bytes())
    durable.add("report index", report.index.read_bytes())
    durable.add("event log file", events.read_bytes())
    durable.add("memory file", memory.read_bytes())
    needles: dict[str, str] = {
        "reasoning marker": "The user asks:",
        "openai key": OPENAI_KEY,
        "anthropic key": ANTHROPIC_KEY,
        "key fragment": f"CANARYKEY{TOKEN}",
    }
    blocks = [b for b in _reasoning_sentences(seen["reasoning"]) if len(b) >= 40]
    assert len(blocks) >= 5
    needles.update({f"reasoning sentence {i}": b for i, b in enumerate(blocks)})
    needles.update({f"opaque {i}": p[:40] for i, p in enumerate(seen["opaque"])})
    assert OPENAI_KEY not in json.dumps([c["source"] for c in nb["cells"]]), "the source never holds a key"
    leaks = durable.leaks(needles)
    assert not leaks, f"canaries found: {sorted(set(leaks))[:20]}"
