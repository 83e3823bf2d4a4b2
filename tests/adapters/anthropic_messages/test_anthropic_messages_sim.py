"""End-to-end tool loops against the strict simulated Anthropic endpoint, through the real SDK.

The simulator rejects, with the real API's 400 texts, a latest tool-use turn whose thinking blocks
are missing, modified, re-signed or moved. So every loop that completes here has replayed its
thinking/redacted_thinking blocks exactly. A ``Recording`` transport keeps every request body and
raw response, so the tests also compare what went back with what came in, block by block.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from agentlab import sim
from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.errors import ProviderAPIError
from agentlab.loop.checkpoint import Checkpoint
from agentlab.loop.runner import Run
from agentlab.loop.session import Session
from agentlab.loop.tools import tool
from agentlab.neutral.events import DiagnosticEvent, ModelResponse, ResponseCompletedEvent
from agentlab.neutral.items import PortableItem, SystemItem, ToolCallItem, ToolResultItem, UserItem
from agentlab.neutral.request import CacheHints, ModelRequest, ReasoningSettings
from agentlab.sim.reasoner import MAGIC_REDACTED
from tests.adapters.contract import WEATHER_OPEN as WEATHER

TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny", "Oslo": "-3 C, snow", "Berlin": "11 C"}
THINKING_TYPES = ("thinking", "redacted_thinking")


class Recording(httpx2.AsyncBaseTransport):
    """Wraps a transport; keeps each request body and the raw response body (SSE or JSON)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.responses: list[bytes] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        self.requests.append(json.loads(body))
        self.request_headers.append({k.lower(): v for k, v in request.headers.items()})
        resp = await self.inner.handle_async_request(request)
        raw = await resp.aread()
        self.responses.append(raw)
        return httpx2.Response(resp.status_code, headers=resp.headers, content=raw, request=request)


def _adapter(**sim_kw: Any) -> tuple[AnthropicMessagesAdapter, Recording]:
    rec = Recording(sim.SimTransport(**sim_kw))
    return AnthropicMessagesAdapter(
        "sim-thinker", client=sim.anthropic_client(transport=rec, max_retries=0)
    ), rec


def _response_blocks(raw: bytes) -> list[dict[str, Any]]:
    """Content blocks as the endpoint sent them (streams assembled from their deltas)."""
    text = raw.decode()
    if not text.lstrip().startswith("event:"):
        return list(json.loads(text)["content"])
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        ev = json.loads(line[5:])
        if ev["type"] == "content_block_start":
            blocks[ev["index"]] = dict(ev["content_block"])
            partial[ev["index"]] = ""
        elif ev["type"] == "content_block_delta":
            b, d = blocks[ev["index"]], ev["delta"]
            if d["type"] == "thinking_delta":
                b["thinking"] += d["thinking"]
            elif d["type"] == "signature_delta":
                b["signature"] += d["signature"]
            elif d["type"] == "input_json_delta":
                partial[ev["index"]] += d["partial_json"]
    for i, b in blocks.items():
        if b["type"] == "tool_use":
            b["input"] = json.loads(partial[i] or "{}")
    return [blocks[i] for i in sorted(blocks)]


async def _call(adapter: AnthropicMessagesAdapter, request: ModelRequest) -> tuple[ModelResponse, list[Any]]:
    events = [e async for e in adapter.stream(request)]
    assert isinstance(events[-1], ResponseCompletedEvent)
    return events[-1].response, events


async def _loop(
    adapter: AnthropicMessagesAdapter,
    task: str,
    *,
    stream: bool,
    reasoning: ReasoningSettings,
    parallel: bool = True,
    cache: CacheHints | None = None,
    system: str | None = None,
    max_steps: int = 6,
) -> tuple[list[ModelResponse], list[Any]]:
    """A hand-driven tool loop: history + this loop's continuation, as a Run does it."""
    items: list[PortableItem] = [SystemItem(text=system)] if system else []
    items.append(UserItem(text=task))
    continuation: list[Any] = []
    responses: list[ModelResponse] = []
    all_events: list[Any] = []
    for _ in range(max_steps):
        req = ModelRequest(
            model="sim-thinker",
            items=tuple(items),
            continuation=tuple(continuation),
            tools=(WEATHER,),
            reasoning=reasoning,
            max_output_tokens=12000,
            stream=stream,
            parallel_tool_calls=parallel,
            cache=cache,
        )
        resp, events = await _call(adapter, req)
        responses.append(resp)
        all_events.extend(events)
        continuation.extend(resp.reasoning)
        items.extend(resp.items)
        if not resp.tool_calls:
            return responses, all_events
        for c in resp.tool_calls:
            items.append(ToolResultItem(call_id=c.call_id, output=TEMPS[json.loads(c.arguments)["city"]]))
    raise AssertionError("loop did not finish")


def _assistant_turns(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [m["content"] for m in body["messages"] if m["role"] == "assistant"]


def _check_replayed_verbatim(rec: Recording) -> int:
    """Every assistant turn we sent holds the endpoint's blocks for that turn, in order; returns count."""
    checked = 0
    for n in range(1, len(rec.requests)):
        turns = _assistant_turns(rec.requests[n])
        for k, sent in enumerate(turns):
            got = _response_blocks(rec.responses[k])
            want = [
                b if b["type"] in THINKING_TYPES else {key: b[key] for key in ("type", "id", "name", "input")}
                for b in got
                if b["type"] in THINKING_TYPES or b["type"] == "tool_use"
            ]
            have = [
                b if b["type"] in THINKING_TYPES else {key: b[key] for key in ("type", "id", "name", "input")}
                for b in sent
                if b["type"] in THINKING_TYPES or b["type"] == "tool_use"
            ]
            assert have == want, (n, k)
            checked += sum(1 for b in have if b["type"] in THINKING_TYPES)
    return checked


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "nonstream"])
async def test_interleaved_thinking_across_several_tool_calls(stream: bool) -> None:
    adapter, rec = _adapter()
    responses, events = await _loop(
        adapter,
        "Is it warmer in Paris or Rome?",
        stream=stream,
        reasoning=ReasoningSettings(budget_tokens=2048, interleaved=True),
    )
    assert responses[-1].text == "Rome is warmer (24 vs Paris 18)."
    assert all(h.get("anthropic-beta") == "interleaved-thinking-2025-05-14" for h in rec.request_headers)
    # Step 1 is [thinking, tool_use, thinking, tool_use]: a thinking block before each tool call.
    first = _response_blocks(rec.responses[0])
    assert [b["type"] for b in first] == ["thinking", "tool_use", "thinking", "tool_use"]
    assert [i.index for i in responses[0].reasoning] == [0, 2]
    assert [(i.kind, i.index) for i in responses[0].items] == [("tool_call", 1), ("tool_call", 3)]
    # Display deltas keep the two thinking blocks apart.
    assert {e.block for e in events if e.kind == "reasoning_delta" and e.step is None} >= {"0", "2"}
    assert _check_replayed_verbatim(rec) == 2
    assert not [e for e in events if isinstance(e, DiagnosticEvent)]


async def test_interleaved_sequential_tool_calls_over_several_steps() -> None:
    adapter, rec = _adapter()
    responses, _ = await _loop(
        adapter,
        "Is it warmer in Paris or Rome?",
        stream=True,
        reasoning=ReasoningSettings(budget_tokens=2048, interleaved=True),
        parallel=False,
    )
    assert [len(r.tool_calls) for r in responses] == [1, 1, 0]
    assert responses[-1].text == "Rome is warmer (24 vs Paris 18)."
    # Step 3's request carries both earlier turns' thinking, each inside its own assistant turn.
    assert _check_replayed_verbatim(rec) >= 3
    assert [m["role"] for m in rec.requests[2]["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert rec.requests[2]["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "nonstream"])
async def test_omitted_redacted_thinking_turn_is_replayed_exactly(stream: bool) -> None:
    adapter, rec = _adapter()
    responses, events = await _loop(
        adapter,
        f"{MAGIC_REDACTED} Is it warmer in Paris or Rome?",
        stream=stream,
        reasoning=ReasoningSettings(budget_tokens=2048, display="omitted"),
        parallel=False,
    )
    first = _response_blocks(rec.responses[0])
    assert [b["type"] for b in first] == ["thinking", "redacted_thinking", "thinking", "tool_use"]
    assert first[0]["thinking"] == "" and first[0]["signature"]
    # Omitted display: no display text at all (one "not displayed" marker per thinking block), yet
    # every block is in the continuation.
    markers = [e for e in events if e.kind == "reasoning_delta"]
    assert all(e.omitted and not e.text for e in markers) and len(markers) >= 2
    assert [(i.block_type, i.index) for i in responses[0].reasoning] == [
        ("thinking", 0),
        ("redacted_thinking", 1),
        ("thinking", 2),
    ]
    sent = _assistant_turns(rec.requests[1])[0]
    assert sent == [first[0], first[1], first[2], {k: first[3][k] for k in ("type", "id", "name", "input")}]
    assert responses[-1].text == "Rome is warmer (24 vs Paris 18)."
    assert _check_replayed_verbatim(rec) >= 3


async def test_parallel_tool_results_go_back_in_one_user_turn() -> None:
    adapter, rec = _adapter()
    responses, _ = await _loop(
        adapter,
        "Is it warmer in Paris or Rome?",
        stream=True,
        reasoning=ReasoningSettings(budget_tokens=1024),
    )
    assert len(responses[0].tool_calls) == 2
    last_user = rec.requests[1]["messages"][-1]
    assert last_user["role"] == "user"
    assert [b["type"] for b in last_user["content"]] == ["tool_result", "tool_result"]
    assert {b["tool_use_id"] for b in last_user["content"]} == {c.call_id for c in responses[0].tool_calls}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "nonstream"])
async def test_cache_hints_give_a_cache_hit_on_the_second_step(stream: bool) -> None:
    adapter, rec = _adapter()
    system = "You answer weather questions. " + " ".join(
        f"Rule {i}: be precise and brief." for i in range(300)
    )
    responses, _ = await _loop(
        adapter,
        "Is it warmer in Paris or Rome?",
        stream=stream,
        reasoning=ReasoningSettings(budget_tokens=1024),
        cache=CacheHints(),
        system=system,
    )
    first, second = responses[0].usage, responses[1].usage
    assert first.cache_read_tokens == 0 and (first.cache_write_tokens or 0) > 1024
    # Step 2 reads the prefix step 1 wrote (at least tools + system) and writes its own tail.
    assert second.cache_read_tokens is not None and first.cache_write_tokens is not None
    assert 1024 < second.cache_read_tokens <= first.cache_write_tokens
    assert (second.cache_write_tokens or 0) > 0
    assert second.input_tokens is not None and second.input_tokens > second.cache_read_tokens
    body = rec.requests[1]
    assert len([b for b in _marks(body)]) == 3
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    thinking = [b for m in body["messages"] for b in m["content"] if b["type"] in THINKING_TYPES]
    assert thinking and all("cache_control" not in b for b in thinking)


async def test_without_cache_hints_nothing_is_cached() -> None:
    adapter, rec = _adapter()
    system = "You answer weather questions. " + " ".join(
        f"Rule {i}: be precise and brief." for i in range(300)
    )
    responses, _ = await _loop(
        adapter,
        "Is it warmer in Paris or Rome?",
        stream=True,
        reasoning=ReasoningSettings(budget_tokens=1024),
        cache=None,
        system=system,
    )
    assert [(r.usage.cache_read_tokens, r.usage.cache_write_tokens) for r in responses] == [(0, 0)] * 2
    assert not _marks(rec.requests[1])


def _marks(body: dict[str, Any]) -> list[Any]:
    from agentlab.adapters.anthropic_messages._request import count_breakpoints

    return count_breakpoints(body)


async def test_usage_reports_thinking_tokens_or_unknown() -> None:
    adapter, _ = _adapter()
    req = ModelRequest(model="sim-thinker", items=(UserItem(text="What is 12 * (3 + 4)?"),))
    resp, _ = await _call(adapter, req)
    assert resp.usage.reasoning_source == "reported" and (resp.usage.reasoning_tokens or 0) > 0
    assert resp.usage.output_tokens is not None and resp.usage.output_tokens > resp.usage.reasoning_tokens  # type: ignore[operator]
    legacy = AnthropicMessagesAdapter("sim-thinker-legacy", client=sim.anthropic_client())
    resp2, _ = await _call(legacy, req.model_copy(update={"model": "sim-thinker-legacy"}))
    assert resp2.reasoning  # it did think...
    assert (
        resp2.usage.reasoning_tokens is None and resp2.usage.reasoning_source == "unknown"
    )  # ...count unknown


# ---------------------------------------------------------------- the documented recovery


def _dangling_history(responses: list[ModelResponse], task: str) -> tuple[PortableItem, ...]:
    items: list[PortableItem] = [UserItem(text=task), *responses[0].items]
    for c in responses[0].tool_calls:
        items.append(ToolResultItem(call_id=c.call_id, output=TEMPS[json.loads(c.arguments)["city"]]))
    return tuple(items)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "nonstream"])
async def test_restored_checkpoint_takes_the_documented_recovery(stream: bool) -> None:
    task = "Is it warmer in Paris or Rome?"
    adapter, rec = _adapter()
    reasoning = ReasoningSettings(budget_tokens=2048)
    step1, _ = await _call(
        adapter,
        ModelRequest(
            model="sim-thinker", items=(UserItem(text=task),), tools=(WEATHER,), reasoning=reasoning
        ),
    )
    assert step1.tool_calls and step1.reasoning
    cp = Checkpoint(
        run_id="r1", provider="anthropic", model="sim-thinker", history=_dangling_history([step1], task)
    )
    restored = Checkpoint.from_json(cp.to_json())
    assert restored.provider_continuation is None
    req = ModelRequest(
        model="sim-thinker", items=restored.history, tools=(WEATHER,), reasoning=reasoning, stream=stream
    )

    # Without the recovery the strict endpoint refuses exactly as the real API does.
    plain = AnthropicMessagesAdapter("sim-thinker", client=sim.anthropic_client(max_retries=0))
    body = plain.build(req.model_copy(update={"reasoning": ReasoningSettings(enabled=False)})).body
    body["thinking"] = {"type": "enabled", "budget_tokens": 2048}
    with pytest.raises(ProviderAPIError) as info:
        await _raw_create(plain, body)
    assert info.value.status == 400 and "must start with a thinking block" in info.value.message

    resp, events = await _call(adapter, req)
    diags = [e for e in events if isinstance(e, DiagnosticEvent)]
    assert [d.code for d in diags] == ["dangling_tool_use"]
    assert sorted(diags[0].data["tool_calls"]) == sorted(c.call_id for c in step1.tool_calls)
    sent = rec.requests[-1]
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}  # thinking stayed on
    assert not [b for m in sent["messages"] for b in m["content"] if b["type"] in ("tool_use", "tool_result")]
    texts = [b["text"] for m in sent["messages"] for b in m["content"]]
    for c in step1.tool_calls:  # nothing of the exchange was lost: calls and results are in the text
        assert any(c.name in t and json.loads(c.arguments)["city"] in t for t in texts)
    assert any(t == "[result of tool get_weather: 18 C, cloudy]" for t in texts)
    # Accepted, the model thought again, and it read the written-out exchange: a correct answer
    # without calling the tools again.
    assert resp.reasoning and resp.stop_reason == "end_turn" and not resp.tool_calls
    assert "Rome" in resp.text and "24" in resp.text


async def _raw_create(adapter: AnthropicMessagesAdapter, body: dict[str, Any]) -> None:
    from agentlab.adapters.anthropic_messages._errors import translate

    try:
        await adapter._client.messages.create(
            **{k: body[k] for k in ("model", "max_tokens", "messages", "thinking", "tools")}
        )
    except Exception as exc:
        raise translate(exc) from exc


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return TEMPS.get(city, f"no weather data for {city}")


async def test_run_checkpoint_restored_mid_loop_finishes_without_a_400() -> None:
    """A Run stopped after step 1 (history ends in tool results), saved, restored in a new Run."""
    task = "Is it warmer in Paris or Rome?"
    first = Run(
        "anthropic:sim-thinker", task, tools=[get_weather], max_steps=1, reasoning={"budget_tokens": 2048}
    )
    r1 = await first.arun()
    assert r1.status == "step_limit"
    saved = first.checkpoint.to_json()
    assert "signature" not in saved and "thinking" not in json.loads(saved)["history"][1]
    restored = Checkpoint.from_json(saved)
    assert isinstance(restored.history[-1], ToolResultItem) and isinstance(restored.history[1], ToolCallItem)

    adapter, rec = _adapter()
    second = Run(
        "anthropic:sim-thinker",
        None,
        tools=[get_weather],
        session=Session(history=restored.history),
        adapter=adapter,
        reasoning={"budget_tokens": 2048},
    )
    seen: list[Any] = [ev async for ev in second.events()]
    assert second.result is not None and second.result.status == "completed", second.result
    assert any(isinstance(e, DiagnosticEvent) and e.code == "dangling_tool_use" for e in seen)
    assert all(body["thinking"]["type"] == "enabled" for body in rec.requests)
    # Later steps of the resumed loop have a live continuation again: no further recovery needed.
    recoveries = [e for e in seen if isinstance(e, DiagnosticEvent) and e.code == "dangling_tool_use"]
    assert len(recoveries) == 1
    # The restored exchange was understood: one more call answers it, no tool is called again.
    assert len(rec.requests) == 1 and second.result.output and "Rome" in second.result.output


async def test_run_live_loop_replays_continuation_without_recovery() -> None:
    """The same loop run live (one Run) sends its thinking back and needs no recovery."""
    adapter, rec = _adapter()
    run = Run(
        "anthropic:sim-thinker",
        "Is it warmer in Paris or Rome?",
        tools=[get_weather],
        adapter=adapter,
        reasoning={"budget_tokens": 2048, "interleaved": True},
    )
    seen = [ev async for ev in run.events()]
    assert run.result is not None and run.result.output == "Rome is warmer (24 vs Paris 18)."
    assert not [e for e in seen if isinstance(e, DiagnosticEvent)]
    assert _check_replayed_verbatim(rec) == 2


async def test_stream_cut_mid_loop_leaves_the_checkpoint_at_the_last_step() -> None:
    """Step 2's stream is cut every time: the run fails typed, history ends with step 1's results."""
    from agentlab.errors import StreamInterruptedError

    inner = sim.SimTransport()
    rec = Recording(inner)
    adapter = AnthropicMessagesAdapter(
        "sim-thinker", client=sim.anthropic_client(transport=rec, max_retries=0)
    )
    run = Run(
        "anthropic:sim-thinker",
        "Is it warmer in Paris or Rome?",
        tools=[get_weather],
        adapter=adapter,
        reasoning={"budget_tokens": 2048},
        retries=1,
        retry_delay=0,
    )
    seen: list[Any] = []

    async def events() -> None:
        async for ev in run.events():
            seen.append(ev)
            if ev.kind == "tool_result" and len([e for e in seen if e.kind == "tool_result"]) == 2:
                inner.simulator.default_fault = "cut"

    with pytest.raises(StreamInterruptedError):
        await events()
    history = run.checkpoint.history
    assert isinstance(history[-1], ToolResultItem) and run.checkpoint.step == 1
    assert len(rec.requests) == 2  # step 1, step 2; a cut answer is not retried
    assert run.result is not None and run.result.status == "failed"


async def test_interleaved_budget_above_max_tokens_is_accepted_end_to_end() -> None:
    """The adapter lets an interleaved budget exceed max_tokens (it spans the turn).

    The strict endpoint must agree, or the user gets a 400 the adapter promised to prevent.
    """
    r = await Run(
        "anthropic:sim-thinker",
        "Is it warmer in Paris or Rome?",
        tools=[get_weather],
        reasoning=ReasoningSettings(budget_tokens=8192, interleaved=True),
        max_output_tokens=4096,
    ).arun()
    assert r.status == "completed" and r.output and "Rome" in r.output
