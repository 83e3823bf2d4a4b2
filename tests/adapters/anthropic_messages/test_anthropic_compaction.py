"""Anthropic server-side compaction: ``compaction`` content blocks are opaque provider state for one loop.

With ``provider_options={"anthropic_context_management": {"edits": [{"type": "compact_20260112",
...}]}}`` (and the ``compact-2026-01-12`` beta, added by the adapter) a turn over the trigger opens
with a ``compaction`` block that replaces the context before it. Within the loop it goes back
verbatim, first in its turn (the continuity guard holds it to that); it is never persisted; a
provider switch drops it visibly; its summary is billed as output. The simulator does the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.errors import ContinuityViolation
from agentlab.neutral.continuity import opaque_slots
from agentlab.neutral.events import DiagnosticEvent, ResponseCompletedEvent
from agentlab.neutral.items import history_adapter
from agentlab.sim import anthropic_client
from tests.adapters.contract import RecordingTransport

TASK = "Is it warmer in Paris or Rome?"
COMPACT = {
    "anthropic_context_management": {
        "edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50}}]
    }
}


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "18 C", "Rome": "24 C"}.get(city, "20 C")


class Recording(RecordingTransport):
    """The simulator's transport, keeping each request's headers and JSON body."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[dict[str, str], dict[str, Any]]] = []

    async def handle_async_request(self, request: Any) -> Any:
        self.sent.append((dict(request.headers), json.loads(await request.aread())))
        return await super().handle_async_request(request)


def _adapter() -> tuple[Any, Recording]:
    rec = Recording()
    return AnthropicMessagesAdapter("sim-thinker", client=anthropic_client(transport=rec, max_retries=0)), rec


async def _run(stream: bool = True, **kw: Any) -> tuple[al.RunResult, list[Any], Recording]:
    adapter, rec = _adapter()
    seen: list[Any] = []
    r = await al.arun(
        "anthropic:sim-thinker",
        TASK,
        tools=[get_weather],
        adapter=adapter,
        on_event=seen.append,
        stream=stream,
        **kw,
    )
    return r, [e.response for e in seen if isinstance(e, ResponseCompletedEvent)], rec


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "nonstream"])
async def test_a_compacting_loop_sends_its_compaction_block_back_first_and_verbatim(stream: bool) -> None:
    r, responses, rec = await _run(stream, provider_options=COMPACT)
    assert r.status == "completed"
    first = responses[0]
    assert [(i.block_type, i.index) for i in first.reasoning] == [("compaction", 0), ("thinking", 1)]
    headers, body = rec.sent[1]
    assert "compact-2026-01-12" in headers["anthropic-beta"]
    turn = next(m for m in body["messages"] if m["role"] == "assistant")["content"]
    received = [json.loads(i.unseal(provider="anthropic", api="messages")) for i in first.reasoning]
    assert turn[:2] == received and turn[0]["type"] == "compaction" and turn[0]["content"]


async def test_the_compaction_summary_is_counted_in_usage() -> None:
    plain, _, _ = await _run()
    compacted, _, _ = await _run(provider_options=COMPACT)
    out_plain, out_compacted = plain.calls[0].usage.output_tokens, compacted.calls[0].usage.output_tokens
    assert out_plain is not None and out_compacted is not None and out_compacted > out_plain
    assert compacted.calls[0].usage.reasoning_tokens == plain.calls[0].usage.reasoning_tokens


async def test_the_simulator_takes_the_compaction_block_in_place_of_the_context_before_it() -> None:
    client = anthropic_client()
    long = "background " * 400
    base: Any = [
        {"role": "user", "content": long},
        {"role": "assistant", "content": [{"type": "text", "text": "noted"}]},
        {"role": "user", "content": "and now?"},
    ]
    compacted: Any = [
        {"role": "user", "content": long},
        {"role": "assistant", "content": [{"type": "compaction", "content": "The user gave background."}]},
        {"role": "user", "content": "and now?"},
    ]
    n_full = (await client.messages.count_tokens(model="sim-thinker", messages=base)).input_tokens
    n_compacted = (await client.messages.count_tokens(model="sim-thinker", messages=compacted)).input_tokens
    assert n_compacted < n_full / 4


async def test_a_changed_compaction_block_is_refused_before_sending() -> None:
    adapter, rec = _adapter()
    build = adapter.build

    def changing(request: al.ModelRequest) -> Any:
        built = build(request)
        for container, key in opaque_slots(built.body, adapter.continuity_layout):
            if container[key]["type"] == "compaction":
                container[key] = {**container[key], "content": container[key]["content"] + " (edited)"}
        return built

    adapter.build = changing
    with pytest.raises(ContinuityViolation, match=r"anthropic compaction item .* is modified") as info:
        await al.arun(
            "anthropic:sim-thinker", TASK, tools=[get_weather], adapter=adapter, provider_options=COMPACT
        )
    assert (info.value.kind, info.value.index) == ("compaction", 0)
    assert len(rec.sent) == 1


async def test_compaction_blocks_are_never_persisted_and_a_switch_drops_them(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    session = al.Session()
    adapter, _ = _adapter()
    seen: list[Any] = []
    r1 = await session.arun(
        "anthropic:sim-thinker",
        TASK,
        tools=[get_weather],
        adapter=adapter,
        provider_options=COMPACT,
        on_event=seen.append,
        event_log=log,
    )
    done = [e.response for e in seen if isinstance(e, ResponseCompletedEvent)]
    summaries = [
        json.loads(i.unseal(provider="anthropic", api="messages"))["content"]
        for resp in done for i in resp.reasoning if i.block_type == "compaction"
    ]  # fmt: skip
    assert r1.status == "completed" and summaries
    for text in (
        log.read_text(),
        r1.model_dump_json(),
        r1.usage_frame().to_json(),
        history_adapter.dump_json(list(session.history)).decode(),
    ):
        assert not any(s in text for s in summaries)
    held = sum(len(resp.reasoning) for resp in done)
    r2 = await session.arun("openai:sim-reasoner", "And which is colder?")
    drops = [e for e in r2.events if isinstance(e, DiagnosticEvent) and e.code == "reasoning_item_dropped"]
    assert drops and drops[0].data == {"count": held, "reason": "provider_switch", "provider": "openai"}
