"""Provider boundaries as properties, over random sessions (hypothesis).

A session interleaves tool loops on both providers (real adapters, real SDKs, the strict simulator
behind a request-recording transport), with interruptions (a loop paused mid-way at a tool call, then
either resumed or cut off by the end of its notebook "cell") and compactions (older history replaced
by a summary). After every operation and over every recorded request:

1. no request carries an opaque item of the other provider (nor one its own provider never issued);
2. within a tool loop, each request carries exactly the opaque items received earlier in that loop,
   byte-identical and in order (none with ``continuation_policy="drop"``, none at a loop's start);
3. after a loop ends, or its cell ends, no checkpoint holds a continuation and none is live;
4. the strict simulated endpoints never answer 400 (or anything but 200) to agentlab.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentlab as al
from agentlab.loop.continuation import generation, release_since
from agentlab.neutral.events import ModelCallStartedEvent, ToolCallEvent
from agentlab.neutral.items import SummaryItem, UserItem
from agentlab.sim.reasoner import MAGIC_REDACTED
from tests.reliability.support import (
    MODELS,
    PROVIDERS,
    TASK,
    Exchange,
    RecordingTransport,
    close_adapter,
    get_weather,
    make_adapter,
)

TASKS = (
    TASK,
    "Is it colder in Oslo or Berlin?",
    "What's the weather in Berlin?",
    "What is 12 * (3 + 4)?",  # no tool fits: answered in one call
    f"Is it warmer in Paris or Oslo? {MAGIC_REDACTED}",  # Anthropic: redacted_thinking blocks
)
REASONING: tuple[Any, ...] = (None, "high", {"interleaved": True}, "low")

# ---------------------------------------------------------------- what went over the wire


def _sse_objects(ex: Exchange) -> list[dict[str, Any]]:
    out = []
    for line in ex.text.splitlines():
        if line.startswith("data:"):
            try:
                obj = json.loads(line[5:])
            except ValueError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


def received_opaque(ex: Exchange) -> list[dict[str, Any]]:
    """The complete opaque blocks one streamed response handed out, in output order."""
    blocks: dict[int, dict[str, Any]] = {}
    if ex.path.endswith("/responses"):
        for ev in _sse_objects(ex):
            if ev.get("type") == "response.output_item.done" and ev["item"].get("type") == "reasoning":
                blocks[ev["output_index"]] = ev["item"]
        return [blocks[i] for i in sorted(blocks)]
    for ev in _sse_objects(ex):
        t = ev.get("type")
        if t == "content_block_start" and ev["content_block"]["type"] in ("thinking", "redacted_thinking"):
            blocks[ev["index"]] = dict(ev["content_block"])
        elif t == "content_block_delta" and ev["index"] in blocks:
            d = ev["delta"]
            if d["type"] == "thinking_delta":
                blocks[ev["index"]]["thinking"] += d["thinking"]
            elif d["type"] == "signature_delta":
                blocks[ev["index"]]["signature"] = blocks[ev["index"]].get("signature", "") + d["signature"]
    return [blocks[i] for i in sorted(blocks)]


def sent_opaque(ex: Exchange) -> list[dict[str, Any]]:
    """The opaque blocks one request carried, in order."""
    body = ex.json
    if ex.path.endswith("/responses"):
        return [i for i in body.get("input", []) if isinstance(i, dict) and i.get("type") == "reasoning"]
    out = []
    for m in body.get("messages", []):
        if isinstance(m.get("content"), list):
            out += [b for b in m["content"] if b.get("type") in ("thinking", "redacted_thinking")]
    return out


def _key(block: dict[str, Any]) -> str:
    return str(block.get("encrypted_content") or block.get("signature") or block.get("data"))


FOREIGN_MARKERS = {
    "openai": ('"type":"thinking"', '"type":"redacted_thinking"', '"signature"'),
    "anthropic": ('"type":"reasoning"', '"encrypted_content"'),
}


# ---------------------------------------------------------------- the session driver


@dataclass
class Loop:
    run: al.Run
    provider: str
    policy: str
    exchanges: tuple[int, int] = (0, 0)
    released_at: int | None = None  # exchange count when the cell cut the loop off


@dataclass
class World:
    rec: RecordingTransport
    adapters: dict[str, Any]
    session: al.Session = field(default_factory=al.Session)
    loops: list[Loop] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)

    def count(self, key: str, n: int = 1) -> None:
        self.stats[key] = self.stats.get(key, 0) + n

    def start(self, provider: str, task: str, reasoning: Any, policy: str) -> Loop:
        kw: dict[str, Any] = {"continuation_policy": policy}
        if reasoning is not None and not (provider == "openai" and isinstance(reasoning, dict)):
            kw["reasoning"] = reasoning
        if provider == "anthropic" and policy == "drop":  # the API needs thinking back: ablate it off
            kw["reasoning"] = {"enabled": False}
        run = self.session.start(
            f"{provider}:{MODELS[provider]}", task, tools=[get_weather], adapter=self.adapters[provider], **kw
        )
        loop = Loop(run, provider, policy)
        self.loops.append(loop)
        return loop


async def op_run(w: World, provider: str, task: str, reasoning: Any, policy: str) -> None:
    loop = w.start(provider, task, reasoning, policy)
    a = len(w.rec.exchanges)
    result = await loop.run.arun()
    loop.exchanges = (a, len(w.rec.exchanges))
    assert result.status == "completed", result.error


async def op_pause(
    w: World, provider: str, task: str, reasoning: Any, policy: str, cell_ends_first: bool, at: str
) -> None:
    """A loop paused mid-way (a notebook cell interrupted), then resumed.

    It pauses at its first tool call or at the start of its second model call, and is resumed in the same
    cell, or cut off by the cell's end (the extension releases its continuation) and resumed afterwards. After
    the release no request may carry the released items: the resumed loop goes on from portable items only.
    """
    gen = generation()  # the cell starts
    loop = w.start(provider, task, reasoning, policy)
    a = len(w.rec.exchanges)
    events = loop.run.events()
    paused = False
    async for ev in events:
        if (at == "tool_call" and isinstance(ev, ToolCallEvent)) or (
            at == "call_start" and isinstance(ev, ModelCallStartedEvent) and ev.step == 2
        ):
            paused = True
            break  # suspended, not closed: the loop is live, its continuation held
    if not paused:  # no tool call in this task: the loop simply ended
        await events.aclose()
        loop.exchanges = (a, len(w.rec.exchanges))
        return
    held = loop.run.checkpoint.provider_continuation
    assert held is not None
    if policy == "verbatim" and sent_or_received(w, a):
        assert len(held) >= 1
    if cell_ends_first:
        release_since(gen)  # what the notebook extension does at cell end
        loop.released_at = len(w.rec.exchanges)
        assert loop.run.checkpoint.provider_continuation is None and held.released
        async for _ in events:  # it goes on from portable items only, no provider 400
            pass
        assert loop.run.result is not None and loop.run.result.status == "completed"
        w.count(f"cut_off_{provider}")
    else:
        async for _ in events:
            pass
        assert loop.run.result is not None and loop.run.result.status == "completed"
        assert release_since(gen) == 0, "the finished loop had already released its continuation"
        w.count(f"resumed_{provider}")
    await events.aclose()
    loop.exchanges = (a, len(w.rec.exchanges))


def sent_or_received(w: World, start: int) -> bool:
    return any(received_opaque(ex) for ex in w.rec.exchanges[start:])


def op_compact(w: World) -> None:
    """Replace everything before the last user turn with a summary (portable text)."""
    h = w.session.history
    users = [i for i, it in enumerate(h) if isinstance(it, UserItem)]
    if len(users) < 2:
        return
    w.session.history = (
        SummaryItem(text=f"Summary: {users[-1]} earlier turns about the weather."),
        *h[users[-1] :],
    )


def check_world(w: World) -> None:
    rec = w.rec
    w.stats = {k: v for k, v in w.stats.items() if not k.startswith(("verbatim_", "redacted"))}
    # 4. the strict endpoints accepted every request
    assert all(s == 200 for s in rec.statuses), [
        (e.path, e.status, e.text[:200]) for e in rec.exchanges if e.status != 200
    ]
    issued: dict[str, set[str]] = {"openai": set(), "anthropic": set()}
    for ex in rec.exchanges:
        prov = "openai" if ex.path.endswith("/responses") else "anthropic"
        for b in received_opaque(ex):
            issued[prov].add(_key(b))
    for ex in rec.exchanges:
        prov = "openai" if ex.path.endswith("/responses") else "anthropic"
        other = "anthropic" if prov == "openai" else "openai"
        # 1. nothing of the other provider, nothing its own provider never issued
        body = ex.body.decode()
        compact = json.dumps(ex.json, separators=(",", ":"))
        assert not any(m in compact for m in FOREIGN_MARKERS[prov]), f"{prov} request carries a foreign block"
        for b in sent_opaque(ex):
            assert _key(b) in issued[prov] and _key(b) not in issued[other]
        assert not any(k in body for k in issued[other])
    # 2. within each loop: exactly the loop's earlier opaque blocks, byte-identical, in order
    for loop in w.loops:
        first, end = loop.exchanges
        got: list[dict[str, Any]] = []
        for n, ex in enumerate(rec.exchanges[first:end], start=first):
            if n == loop.released_at:
                got = []  # released at cell end: nothing received before may be sent again
            sent = sent_opaque(ex)
            if loop.policy == "drop":
                assert sent == []
            else:
                assert sent == got, (
                    f"{loop.provider}: sent {[_key(x)[:9] for x in sent]}, held {[_key(x)[:9] for x in got]}"
                )
                if loop.provider == "openai":  # the very bytes received, not a re-serialization
                    for blk in got:
                        raw = json.dumps(blk, separators=(",", ":"), ensure_ascii=False).encode()
                        assert raw in ex.body
            if sent:
                w.count(f"verbatim_{loop.provider}", len(sent))
                w.count("redacted_sent", sum(blk.get("type") == "redacted_thinking" for blk in sent))
            got += received_opaque(ex)
    # 3. nothing live after a loop or a cell ended
    ids = {lp.run.run_id for lp in w.loops}
    assert not [c for c in al.live_continuations() if c.run_id in ids]
    for lp in w.loops:
        assert lp.run.checkpoint.provider_continuation is None


OPS = st.one_of(
    st.tuples(
        st.just("run"),
        st.sampled_from(PROVIDERS),
        st.sampled_from(TASKS),
        st.sampled_from(REASONING),
        st.sampled_from(("verbatim", "verbatim", "drop")),
    ),
    st.tuples(
        st.just("pause"),
        st.sampled_from(PROVIDERS),
        st.sampled_from(TASKS[:3]),
        st.sampled_from(REASONING),
        st.just("verbatim"),
        st.booleans(),
        st.sampled_from(("tool_call", "call_start")),
    ),
    st.tuples(st.just("compact")),
)


async def play(ops: list[tuple[Any, ...]]) -> dict[str, int]:
    rec = RecordingTransport()
    adapters = {p: make_adapter(p, rec) for p in PROVIDERS}
    w = World(rec, adapters)
    try:
        for op in ops:
            if op[0] == "run":
                await op_run(w, *op[1:])
            elif op[0] == "pause":
                await op_pause(w, *op[1:])
            else:
                op_compact(w)
            check_world(w)
    finally:
        for a in adapters.values():
            await close_adapter(a)
    return w.stats


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OPS, min_size=1, max_size=6))
def test_random_sessions_respect_provider_boundaries(ops: list[tuple[Any, ...]]) -> None:
    asyncio.run(play(ops))


def test_a_fixed_session_covering_every_operation() -> None:
    """The same properties on one session that surely hits each case.

    The cases: switches both ways, both pause outcomes on both providers, compaction, drop policy, redacted
    and interleaved thinking.
    """
    ops: list[tuple[Any, ...]] = [
        ("run", "anthropic", TASKS[4], {"interleaved": True}, "verbatim"),
        ("run", "openai", TASK, "high", "verbatim"),
        ("pause", "anthropic", TASKS[1], None, "verbatim", True, "tool_call"),
        ("pause", "openai", TASKS[1], None, "verbatim", True, "call_start"),
        ("compact",),
        ("pause", "openai", TASKS[2], None, "verbatim", False, "tool_call"),
        ("pause", "anthropic", TASKS[2], "high", "verbatim", False, "call_start"),
        ("pause", "anthropic", TASK, None, "verbatim", True, "call_start"),
        ("pause", "openai", TASK, None, "verbatim", True, "tool_call"),
        ("run", "openai", TASKS[1], None, "drop"),
        ("run", "anthropic", TASK, None, "verbatim"),
    ]
    stats = asyncio.run(play(ops))
    # the properties were exercised, not vacuously true
    for key in ("verbatim_openai", "verbatim_anthropic", "redacted_sent"):
        assert stats.get(key, 0) >= 1, stats
    for key, n in (
        ("cut_off_openai", 2),
        ("cut_off_anthropic", 2),
        ("resumed_openai", 1),
        ("resumed_anthropic", 1),
    ):
        assert stats.get(key) == n, stats
