"""The neutral reducer: ``accumulate(snapshot, event) -> snapshot`` for one model call.

Unit behaviour (purity, structure sharing, privacy of the repr, frame dropping), then every recorded
OpenAI Responses and Anthropic Messages response in ``../shared/fixtures``, replayed through the real
adapter (SDK + MockTransport, the adapter's own assembler) into neutral events and folded: the
snapshot must say what the recording says (final text, tool calls and their arguments, usage, stop
reason, reasoning shown).
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.adapters.anthropic_messages._usage import usage_from_anthropic
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.adapters.openai_responses._usage import usage_from_openai
from agentlab.assembly.reducer import EMPTY, CallSnapshot, Chunks, accumulate, fold
from agentlab.errors import PrivacyError
from agentlab.neutral.events import (
    DiagnosticEvent,
    ErrorEvent,
    ModelCallCompletedEvent,
    ModelCallStartedEvent,
    ModelResponse,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    RunStartedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentlab.neutral.items import (
    AssistantTextItem,
    ProviderReasoningItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import ModelRequest
from agentlab.neutral.usage import CallUsage
from tests.support.cassettes import Exchange, fixture_files, fixtures_dir, load_cassette

SECRET = "the-secret-plan-7f3a"


def _call_events() -> list[Any]:
    """One call as a run sees it: start, reasoning in two blocks, text, a tool call, its record."""
    evs: list[Any] = [ModelCallStartedEvent(provider="openai", model="m", run_id="r1", step=1)]
    evs += [
        ReasoningDeltaEvent(text=f"think {i} {SECRET} ", block="a", run_id="r1", step=1) for i in range(5)
    ]
    evs += [ReasoningDeltaEvent(text=f"more {i} ", block="b", run_id="r1", step=1) for i in range(3)]
    evs.append(DiagnosticEvent(code="setting_ignored", message="x", run_id="r1", step=1))
    evs += [TextDeltaEvent(text=f"answer {i} ", run_id="r1", step=1) for i in range(7)]
    pieces = ['{"ci', 'ty": "Pa', 'ris"}']
    evs += [
        ToolCallDeltaEvent(call_id="c1", name="weather", arguments_delta=p, run_id="r1", step=1)
        for p in pieces
    ]
    call = ToolCallItem(call_id="c1", name="weather", arguments='{"city": "Paris"}')
    text = "".join(f"answer {i} " for i in range(7))
    usage = CallUsage(input_tokens=10, output_tokens=30, reasoning_tokens=20, reasoning_source="reported")
    evs.append(
        ModelCallCompletedEvent(
            provider="openai",
            model="m",
            response_id="resp_1",
            stop_reason="tool_use",
            usage=usage,
            cost_usd=0.5,
            latency_s=1.5,
            items=(AssistantTextItem(text=text), call),
            run_id="r1",
            step=1,
        )
    )
    evs.append(ToolCallEvent(call=call, run_id="r1", step=1))
    evs.append(
        ToolResultEvent(
            result=ToolResultItem(call_id="c1", name="weather", output="sunny"),
            duration_s=0.1,
            run_id="r1",
            step=1,
        )
    )
    return evs


def test_fold_builds_the_call_state() -> None:
    s = fold(_call_events())
    assert s.status == "completed" and s.step == 1 and s.run_id == "r1"
    assert s.provider == "openai" and s.response_id == "resp_1" and s.stop_reason == "tool_use"
    assert s.text == "".join(f"answer {i} " for i in range(7)) and s.text_chars == len(s.text)
    reasoning_a = "".join(f"think {i} {SECRET} " for i in range(5))
    assert s.reasoning == reasoning_a + "\n\n" + "".join(f"more {i} " for i in range(3))
    assert (
        s.reasoning_blocks == 2 and s.reasoning_deltas == 8 and s.text_deltas == 7 and s.tool_call_deltas == 3
    )
    (tool,) = s.tool_calls
    assert tool.call_id == "c1" and tool.name == "weather" and tool.complete
    assert tool.arguments == '{"city": "Paris"}' and tool.argument_chars == 17
    assert tool.output == "sunny" and tool.duration_s == 0.1 and not tool.is_error
    assert s.usage is not None and s.usage.reasoning_tokens == 20 and s.cost_usd == 0.5 and s.latency_s == 1.5
    assert s.diagnostics == ("setting_ignored",) and s.events == len(_call_events())


def test_accumulate_is_pure_and_old_snapshots_stay_valid() -> None:
    evs = _call_events()
    snaps = [EMPTY]
    for ev in evs:
        snaps.append(accumulate(snaps[-1], ev))
    assert EMPTY.text == "" and EMPTY.status == "waiting" and EMPTY.events == 0
    # every intermediate snapshot still reads what it read then, read in any order (chains compact)
    for k in (20, 3, 12, 5, 20, 9):
        assert snaps[k].text == "".join(e.text for e in evs[:k] if isinstance(e, TextDeltaEvent))
    assert snaps[6].status == "streaming" and snaps[1].status == "started"
    assert snaps[18].tool_calls[0].arguments == '{"ci' and not snaps[18].tool_calls[0].complete
    with pytest.raises(AttributeError):
        snaps[5].status = "failed"
    assert snaps[5].replace(status="failed").status == "failed" and snaps[5].status == "streaming"


def test_ignored_events_return_the_same_snapshot() -> None:
    s = fold(_call_events()[:4])
    assert accumulate(s, RunStartedEvent(provider="openai", model="m")) is s
    assert accumulate(s, object()) is s
    assert accumulate(None, object()) is EMPTY


def test_response_completed_is_authoritative_and_keeps_no_opaque_state() -> None:
    opaque = ProviderReasoningItem(
        b"{}", provider="openai", api="responses", model="m", block_type="reasoning", turn_id="t", index=0
    )
    response = ModelResponse(
        provider="openai",
        api="responses",
        model="m",
        response_id="resp_9",
        request_id="req_9",
        items=(AssistantTextItem(text="final"), ToolCallItem(call_id="c", name="f", arguments="{}")),
        reasoning=(opaque,),
        stop_reason="tool_use",
        usage=CallUsage(input_tokens=1, output_tokens=2),
    )
    s = fold(
        [
            TextDeltaEvent(text="fin"),
            ToolCallDeltaEvent(call_id="c", name="f", arguments_delta="{"),
            ResponseCompletedEvent(response=response, latency_s=0.2, first_text_s=0.1),
        ]
    )
    assert s.text == "final" and s.tool_calls[0].arguments == "{}" and s.tool_calls[0].complete
    assert s.response_id == "resp_9" and s.request_id == "req_9" and s.first_text_s == 0.1
    assert not any(v is opaque or v is response for v in vars(s).values())


def test_error_marks_the_call_failed() -> None:
    s = fold([TextDeltaEvent(text="a"), ErrorEvent(error_type="RateLimitError", message="x", request_id="q")])
    assert s.status == "failed" and s.done and s.error == "RateLimitError" and s.request_id == "q"


def test_repr_shows_sizes_never_content() -> None:
    s = fold(_call_events())
    shown = [repr(s), str(s), repr(s.tool_calls), repr(s._text), repr(s.tool_calls[0])]
    for text in shown:
        assert SECRET not in text and "answer" not in text and "Paris" not in text and "sunny" not in text
    assert f"text=<{s.text_chars} chars>" in repr(s) and f"reasoning=<{s.reasoning_chars} chars>" in repr(s)
    assert "status='completed'" in repr(s) and "step=1" in repr(s)


def test_snapshots_refuse_to_be_serialized() -> None:
    s = fold(_call_events())
    for obj in (s, s.tool_calls[0], s._reasoning):
        with pytest.raises(PrivacyError):
            pickle.dumps(obj)


def test_text_chains_cost_o1_per_delta() -> None:
    """No quadratic string building: appending never joins; one read joins once and compacts."""
    chain = Chunks(None, "", 0)
    for _ in range(20000):
        chain = chain.add("x")
    assert chain.size == 20000
    prev, _ = chain._link
    assert prev is not None  # not joined yet
    assert chain.text == "x" * 20000
    assert chain._link[0] is None  # compacted: the next read costs the new pieces only
    assert chain.add("y").text == "x" * 20000 + "y"


@pytest.mark.parametrize("k", [1, 2, 3, 7, 50])
def test_dropping_frames_still_ends_on_the_full_fold(k: int) -> None:
    """A view that reads only every k-th snapshot (and the last) shows the full fold at the end."""
    evs = _call_events()
    full = fold(evs)
    snap: CallSnapshot | None = None
    seen: list[str] = []
    for n, ev in enumerate(evs, 1):
        snap = accumulate(snap, ev)
        if n % k == 0:
            seen.append(snap.text)  # a rendered frame reads the text (and compacts the chain)
    assert snap is not None and snap == full and snap.text == full.text and snap.reasoning == full.reasoning
    assert len(seen) == len(evs) // k


# ---------------------------------------------------------------- recorded transcripts


def _served(ex: Exchange, request_id_header: str) -> httpx2.Response:
    headers = {request_id_header: "req_replay"}
    if ex.response_kind == "sse":
        assert ex.response_text is not None
        headers["content-type"] = "text/event-stream; charset=utf-8"
        return httpx2.Response(ex.status, headers=headers, content=ex.response_text.encode("utf-8"))
    headers["content-type"] = "application/json"
    text = ex.response_text if ex.response_text is not None else json.dumps(ex.response_payload)
    return httpx2.Response(ex.status, headers=headers, content=text.encode("utf-8"))


def _transport(responses: list[httpx2.Response]) -> httpx2.AsyncClient:
    queue = list(responses)
    return httpx2.AsyncClient(transport=httpx2.MockTransport(lambda _r: queue.pop(0)))


async def _fold_stream(adapter: Any, request: ModelRequest) -> tuple[CallSnapshot, list[Any]]:
    events = [ev async for ev in adapter.stream(request)]
    return fold(events), events


def _ok(path: Path) -> list[Exchange]:
    return [ex for ex in load_cassette(path) if ex.status == 200]


OPENAI = fixture_files("openai")
ANTHROPIC = fixture_files("anthropic")


def test_recordings_are_there_or_skipped_with_the_reason() -> None:
    root = fixtures_dir()  # skips with "../shared/fixtures not present at ..." when absent
    assert len(OPENAI) == 8 and len(ANTHROPIC) == 13, root


def _openai_expected(ex: Exchange) -> dict[str, Any]:
    if ex.response_kind == "sse":
        final = next(e["response"] for e in ex.sse_events if e["type"] == "response.completed")
        summary: dict[str, str] = {}
        for e in ex.sse_events:
            if e["type"] == "response.reasoning_summary_text.delta":
                key = f"{e['item_id']}:{e['summary_index']}"
                summary[key] = summary.get(key, "") + e["delta"]
    else:
        final = ex.response_payload
        summary = {
            f"{it['id']}:{n}": part["text"]
            for it in final["output"]
            if it["type"] == "reasoning"
            for n, part in enumerate(it.get("summary") or [])
        }
    text = "".join(
        p.get("text", "")
        for it in final["output"]
        if it["type"] == "message"
        for p in it["content"]
        if p.get("type") == "output_text"
    )
    calls = [
        (it["call_id"], it["name"], it["arguments"])
        for it in final["output"]
        if it["type"] == "function_call"
    ]
    return {"text": text, "calls": calls, "usage": final["usage"], "reasoning": "\n\n".join(summary.values())}


@pytest.mark.fixtures
@pytest.mark.parametrize("path", OPENAI, ids=[p.stem for p in OPENAI])
async def test_openai_recordings_fold_to_what_the_recording_says(path: Path) -> None:
    exchanges = _ok(path)
    assert exchanges, path.name
    for ex in exchanges:
        assert ex.request_json is not None
        model = ex.request_json["model"]
        client = openai.AsyncOpenAI(
            api_key="sk-test-not-a-key",
            base_url="https://api.openai.com/v1",
            http_client=_transport([_served(ex, "x-request-id")]),
        )
        adapter = OpenAIResponsesAdapter(model, client=client, max_retries=0)
        request = ModelRequest(model=model, items=(UserItem(text="hi"),), stream=ex.response_kind == "sse")
        snap, events = await _fold_stream(adapter, request)
        exp = _openai_expected(ex)
        assert snap.status == "completed", path.name
        assert snap.text == exp["text"], path.name
        assert [(t.call_id, t.name, t.arguments) for t in snap.tool_calls] == exp["calls"], path.name
        assert all(t.complete for t in snap.tool_calls)
        assert [t.argument_chars for t in snap.tool_calls] == [len(c[2]) for c in exp["calls"]]
        assert snap.usage == usage_from_openai(exp["usage"]), path.name
        assert snap.usage is not None and snap.usage.input_tokens == exp["usage"]["input_tokens"]
        assert snap.usage.output_tokens == exp["usage"]["output_tokens"]
        assert snap.reasoning == exp["reasoning"], path.name
        assert snap.stop_reason == ("tool_use" if exp["calls"] else "end_turn"), path.name
        assert snap.request_id == "req_replay"
        assert snap.text_deltas == sum(isinstance(e, TextDeltaEvent) for e in events)


def _anthropic_expected(ex: Exchange) -> dict[str, Any]:
    if ex.response_kind == "json":
        blocks = list(ex.response_payload["content"])
        usage = dict(ex.response_payload["usage"])
        stop = ex.response_payload["stop_reason"]
    else:
        by_index: dict[int, dict[str, Any]] = {}
        usage = {}
        stop = None
        for e in ex.sse_events:
            if e["type"] == "content_block_start":
                by_index[e["index"]] = {**e["content_block"], "_json": ""}
            elif e["type"] == "content_block_delta":
                b, d = by_index[e["index"]], e["delta"]
                field = {"thinking_delta": "thinking", "text_delta": "text"}.get(d["type"])
                if field:
                    b[field] += d[field]
                elif d["type"] == "input_json_delta":
                    b["_json"] += d["partial_json"]
            elif e["type"] == "message_start":
                usage.update(e["message"]["usage"])
            elif e["type"] == "message_delta":
                usage.update({k: v for k, v in e["usage"].items() if v is not None})
                stop = e["delta"]["stop_reason"]
        blocks = [by_index[i] for i in sorted(by_index)]
        for b in blocks:
            j = b.pop("_json")
            if b["type"] == "tool_use":
                b["input"] = json.loads(j) if j else {}
    return {
        "text": "".join(b["text"] for b in blocks if b["type"] == "text"),
        "calls": [(b["id"], b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"],
        "reasoning": "\n\n".join(b["thinking"] for b in blocks if b["type"] == "thinking" and b["thinking"]),
        "usage": usage,
        "stop": stop,
    }


@pytest.mark.fixtures
@pytest.mark.parametrize("path", ANTHROPIC, ids=[p.stem for p in ANTHROPIC])
async def test_anthropic_recordings_fold_to_what_the_recording_says(path: Path) -> None:
    exchanges = _ok(path)
    assert exchanges, path.name
    for ex in exchanges:
        assert ex.request_json is not None
        model = ex.request_json["model"]
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-test-not-a-key",
            base_url="https://api.anthropic.com",
            max_retries=0,
            http_client=_transport([_served(ex, "request-id")]),
        )
        adapter = AnthropicMessagesAdapter(model, client=client)
        request = ModelRequest(model=model, items=(UserItem(text="hi"),), stream=ex.response_kind == "sse")
        snap, _ = await _fold_stream(adapter, request)
        exp = _anthropic_expected(ex)
        assert snap.status == "completed", path.name
        assert snap.text == exp["text"], path.name
        assert [(t.call_id, t.name, json.loads(t.arguments)) for t in snap.tool_calls] == exp["calls"], (
            path.name
        )
        assert all(t.complete and t.argument_chars == len(t.arguments) for t in snap.tool_calls)
        assert snap.usage == usage_from_anthropic(exp["usage"]), path.name
        assert snap.usage is not None and snap.usage.output_tokens == exp["usage"]["output_tokens"]
        assert snap.reasoning == exp["reasoning"], path.name
        assert snap.stop_reason == exp["stop"], path.name
