"""Every Anthropic recording in ../shared/fixtures/anthropic, replayed through the adapter and the real SDK.

For each interaction the recorded response bytes are served by an ``httpx2.MockTransport``; the
adapter's events must match the recorded content (per-block thinking text, signatures, text, tool
input, usage, stop reason). For every later interaction of the same conversation, the request the
adapter builds from portable history + the previous responses' continuation must carry the same
thinking/redacted_thinking blocks (identical signatures and data) in the same order and position as
the request the real API accepted. pydantic-ai bodies are parsed JSON (compared as such); raw-text
bodies are compared value by value after ``json.loads`` of the exact text.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from agentlab import usage_from_anthropic
from agentlab.neutral.events import (
    DiagnosticEvent,
    ModelResponse,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
)
from agentlab.neutral.items import PortableItem, ProviderReasoningItem, SystemItem, ToolResultItem, UserItem
from agentlab.neutral.request import CacheHints, ModelRequest, ReasoningSettings, ToolSpec
from tests.adapters.anthropic_messages.anthropic_support import Replay, adapter_for, served
from tests.support.cassettes import Exchange, fixture_files, fixtures_dir, load_cassette

pytestmark = pytest.mark.fixtures

FILES = fixture_files("anthropic")
MULTI = [p for p in FILES if len(load_cassette(p)) > 1] if FILES else []


def _ids(paths: list[Path]) -> list[str]:
    return [p.name.removesuffix(".yaml") for p in paths]


def test_every_anthropic_recording_is_covered() -> None:
    root = fixtures_dir()
    assert len(FILES) == 13, f"expected the 13 Anthropic recordings in {root}, found {len(FILES)}"
    assert len(MULTI) == 9


# ---------------------------------------------------------------- building requests from recordings


def _reasoning(rj: dict[str, Any]) -> ReasoningSettings | None:
    t = rj.get("thinking")
    if not t:
        return None
    if t["type"] == "adaptive":
        return ReasoningSettings(adaptive=True, display=t.get("display"))
    return ReasoningSettings(budget_tokens=t["budget_tokens"], display=t.get("display"))


def _cache(rj: dict[str, Any]) -> CacheHints | None:
    """Reproduce the recorded cache_control placement with agentlab's hints (None: no breakpoints)."""
    for m in rj["messages"]:
        if isinstance(m["content"], list) and any("cache_control" in b for b in m["content"]):
            return CacheHints(system=False, tools=False, history=True)
    return None


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b["text"] for b in content if b.get("type") == "text")


def _request_for(path: Path, n: int, ex: Exchange, responses: list[ModelResponse]) -> ModelRequest:
    """The ModelRequest an agentlab run would make for recorded request ``n`` (0-based).

    Assistant message k of the recorded request is this test's response k (what the adapter made of
    recorded response k); its opaque items go in the continuation.
    """
    rj = ex.request_json
    assert rj is not None
    items: list[PortableItem] = []
    system = rj.get("system")
    if isinstance(system, str):
        items.append(SystemItem(text=system))
    elif system:
        items.extend(SystemItem(text=b["text"]) for b in system)
    assistant_turn = 0
    continuation: list[ProviderReasoningItem] = []
    for m in rj["messages"]:
        if m["role"] == "assistant":
            r = responses[assistant_turn]
            items.extend(r.items)
            continuation.extend(r.reasoning)
            assistant_turn += 1
            continue
        content = m["content"]
        if isinstance(content, str):
            items.append(UserItem(text=content))
            continue
        for b in content:
            if b["type"] == "text":
                items.append(UserItem(text=b["text"]))
            elif b["type"] == "tool_result":
                items.append(
                    ToolResultItem(
                        call_id=b["tool_use_id"],
                        output=_result_text(b["content"]),
                        is_error=bool(b.get("is_error")),
                    )
                )
            else:  # pragma: no cover - not in the recordings
                raise AssertionError(f"{path.name}: unexpected user block {b['type']}")
    assert assistant_turn == n
    tools = tuple(
        ToolSpec(name=t["name"], description=t.get("description", ""), parameters=t["input_schema"])
        for t in rj.get("tools") or []
    )
    tc = rj.get("tool_choice") or {}
    options: dict[str, Any] = {}
    if rj.get("cache_control"):
        options["anthropic_cache_control"] = rj["cache_control"]
    return ModelRequest(
        model=rj["model"],
        items=tuple(items),
        continuation=tuple(continuation),
        tools=tools,
        reasoning=_reasoning(rj),
        max_output_tokens=rj["max_tokens"],
        temperature=rj.get("temperature"),
        cache=_cache(rj),
        parallel_tool_calls=not tc.get("disable_parallel_tool_use", False),
        stream=bool(rj.get("stream")),
        provider_options=options,
    )


# ---------------------------------------------------------------- what the recording says the events hold


def _expected_blocks(ex: Exchange) -> dict[int, dict[str, Any]]:
    """Per block index: the block as the API delivered it (streams assembled from deltas)."""
    if ex.response_kind == "json":
        return dict(enumerate(ex.response_payload["content"]))
    blocks: dict[int, dict[str, Any]] = {}
    for ev in ex.sse_events:
        if ev["type"] == "content_block_start":
            blocks[ev["index"]] = {**ev["content_block"], "_json": ""}
        elif ev["type"] == "content_block_delta":
            b, d = blocks[ev["index"]], ev["delta"]
            if d["type"] == "thinking_delta":
                b["thinking"] += d["thinking"]
            elif d["type"] == "signature_delta":
                b["signature"] += d["signature"]
            elif d["type"] == "text_delta":
                b["text"] += d["text"]
            elif d["type"] == "input_json_delta":
                b["_json"] += d["partial_json"]
    for b in blocks.values():
        j = b.pop("_json")
        if b["type"] == "tool_use":
            b["input"] = json.loads(j) if j else {}
    return blocks


def _expected_usage(ex: Exchange) -> dict[str, Any]:
    if ex.response_kind == "json":
        return dict(ex.response_payload["usage"])
    usage: dict[str, Any] = {}
    for ev in ex.sse_events:
        if ev["type"] == "message_start":
            usage.update(ev["message"]["usage"])
        elif ev["type"] == "message_delta":
            usage.update({k: v for k, v in ev["usage"].items() if v is not None})
    return usage


def _stop_reason(ex: Exchange) -> str:
    if ex.response_kind == "json":
        return str(ex.response_payload["stop_reason"])
    return str(next(ev["delta"]["stop_reason"] for ev in ex.sse_events if ev["type"] == "message_delta"))


def _check_events(path: Path, ex: Exchange, events: list[Any]) -> ModelResponse:
    assert isinstance(events[-1], ResponseCompletedEvent), path.name
    assert sum(isinstance(e, ResponseCompletedEvent) for e in events) == 1
    r = events[-1].response
    blocks = _expected_blocks(ex)
    # Display: thinking per block index, answer text, tool-call arguments.
    for index, b in blocks.items():
        if b["type"] == "thinking":
            shown = "".join(
                e.text for e in events if isinstance(e, ReasoningDeltaEvent) and e.block == str(index)
            )
            assert shown == b["thinking"], (path.name, index)
    text = "".join(e.text for e in events if isinstance(e, TextDeltaEvent))
    assert text == "".join(b["text"] for b in blocks.values() if b["type"] == "text"), path.name
    assert r.text == text
    # Continuation: exactly the thinking/redacted blocks, as delivered, at their indexes.
    expected_reasoning = {i: b for i, b in blocks.items() if b["type"] in ("thinking", "redacted_thinking")}
    got = {item.index: json.loads(item.unseal(provider="anthropic", api="messages")) for item in r.reasoning}
    assert got == expected_reasoning, path.name
    assert all(
        item.turn_id == r.response_id and item.block_type == got[item.index]["type"] for item in r.reasoning
    )
    # Portable items: text and tool calls at their block indexes, tool input as delivered.
    for item in r.items:
        assert item.index is not None, path.name
        b = blocks[item.index]
        assert item.turn_id == r.response_id
        if item.kind == "tool_call":
            assert (b["type"], item.call_id, item.name) == ("tool_use", b["id"], b["name"])
            assert json.loads(item.arguments) == b["input"]
            assert item.provider_item_id == b["id"]
            deltas = "".join(
                e.arguments_delta
                for e in events
                if isinstance(e, ToolCallDeltaEvent) and e.call_id == b["id"]
            )
            assert json.loads(deltas or "{}") == b["input"]
        else:
            assert (b["type"], item.text) == ("text", b["text"])
    assert len(r.items) == sum(1 for b in blocks.values() if b["type"] == "tool_use" or b.get("text"))
    assert r.stop_reason == _stop_reason(ex)
    assert r.usage == usage_from_anthropic(_expected_usage(ex))
    if "request-id" in ex.response_headers:
        assert r.request_id == ex.response_headers["request-id"]
    return r


# ---------------------------------------------------------------- comparing the later requests


def _norm_block(b: dict[str, Any]) -> dict[str, Any]:
    """What must match between the recorded request and ours, per block type."""
    t = b["type"]
    if t in ("thinking", "redacted_thinking"):
        return dict(b)  # every key and value, exactly
    if t == "text":
        return {"type": t, "text": b["text"], "cache_control": b.get("cache_control")}
    if t == "tool_use":
        return {"type": t, "id": b["id"], "name": b["name"], "input": b["input"]}
    if t == "tool_result":
        return {
            "type": t,
            "tool_use_id": b["tool_use_id"],
            "content": _result_text(b["content"]),
            "is_error": bool(b.get("is_error")),
            "cache_control": b.get("cache_control"),
        }
    raise AssertionError(f"unexpected block {t}")


def _norm_messages(messages: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out.append((m["role"], [_norm_block(b) for b in content]))
    return out


def _compare_request(path: Path, ours: dict[str, Any], recorded: dict[str, Any]) -> None:
    assert _norm_messages(ours["messages"]) == _norm_messages(recorded["messages"]), path.name
    for key in ("model", "max_tokens", "thinking", "temperature", "cache_control"):
        assert ours.get(key) == recorded.get(key), (path.name, key)
    rec_system = recorded.get("system")
    if isinstance(rec_system, str):
        rec_system = [{"type": "text", "text": rec_system}]
    assert ours.get("system") == rec_system, path.name
    assert [t["name"] for t in ours.get("tools", [])] == [t["name"] for t in recorded.get("tools") or []]


def _thinking_positions(messages: list[dict[str, Any]]) -> list[tuple[int, int, str]]:
    return [
        (mi, bi, b["type"])
        for mi, m in enumerate(messages)
        if isinstance(m["content"], list)
        for bi, b in enumerate(m["content"])
        if b["type"] in ("thinking", "redacted_thinking")
    ]


async def _run(adapter: Any, request: ModelRequest) -> list[Any]:
    with warnings.catch_warnings():
        # The SDK warns about deprecated model names (claude-sonnet-4-5 in some recordings).
        warnings.filterwarnings("ignore", message="The model '.*' is deprecated", category=DeprecationWarning)
        return [e async for e in adapter.stream(request)]


RECORDED_VERSION = "2023-06-01"


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
async def test_replay_recording(path: Path) -> None:
    exchanges = load_cassette(path)
    replay = Replay([served(ex) for ex in exchanges])
    # The recordings were made at anthropic-version 2023-06-01 (those that kept their headers say so),
    # which still had sampling fields; replay them at that version.
    model = exchanges[0].request_json["model"]  # type: ignore[index]
    adapter = adapter_for(model, replay, extra_headers={"anthropic-version": RECORDED_VERSION})
    responses: list[ModelResponse] = []
    for n, ex in enumerate(exchanges):
        request = _request_for(path, n, ex, responses)
        events = await _run(adapter, request)
        assert not [e for e in events if isinstance(e, DiagnosticEvent)], path.name
        responses.append(_check_events(path, ex, events))
        sent = replay.requests[n]
        assert ex.request_json is not None
        _compare_request(path, sent, ex.request_json)
        assert _thinking_positions(sent["messages"]) == _thinking_positions(ex.request_json["messages"])
        assert sent.get("stream", False) == bool(ex.request_json.get("stream")), path.name
    assert len(replay.requests) == len(exchanges)


@pytest.mark.parametrize("path", MULTI, ids=_ids(MULTI))
async def test_later_requests_carry_signatures_byte_identical(path: Path) -> None:
    """The thinking/redacted blocks we send back equal the recorded request's, key by key, byte by byte."""
    exchanges = load_cassette(path)
    replay = Replay([served(ex) for ex in exchanges])
    # The recordings were made at anthropic-version 2023-06-01 (those that kept their headers say so),
    # which still had sampling fields; replay them at that version.
    model = exchanges[0].request_json["model"]  # type: ignore[index]
    adapter = adapter_for(model, replay, extra_headers={"anthropic-version": RECORDED_VERSION})
    responses: list[ModelResponse] = []
    for n, ex in enumerate(exchanges):
        events = await _run(adapter, _request_for(path, n, ex, responses))
        responses.append(events[-1].response)
        recorded = ex.request_json
        assert recorded is not None
        ours_blocks = [b for _, _, b in _blocks(replay.requests[n]["messages"])]
        rec_blocks = [b for _, _, b in _blocks(recorded["messages"])]
        assert len(ours_blocks) == len(rec_blocks)
        for a, b in zip(ours_blocks, rec_blocks, strict=True):
            for key in ("signature", "data", "thinking"):
                if key in b:
                    assert a[key].encode("utf-8") == b[key].encode("utf-8"), (path.name, n, key)
            assert a == b
        # On the wire: each recorded signature/data string appears verbatim in the bytes we sent.
        sent_bytes = replay.raw[n]
        for b in rec_blocks:
            for key in ("signature", "data"):
                if key in b:
                    assert json.dumps(b[key]).encode("utf-8") in sent_bytes, (path.name, n, key)


def _blocks(messages: list[dict[str, Any]]) -> list[tuple[int, int, dict[str, Any]]]:
    return [
        (mi, bi, b)
        for mi, m in enumerate(messages)
        if isinstance(m["content"], list)
        for bi, b in enumerate(m["content"])
        if b["type"] in ("thinking", "redacted_thinking")
    ]


def test_multi_turn_recordings_replay_some_reasoning() -> None:
    """Guard: the byte-identity test above is not vacuous (8 recordings send reasoning back)."""
    fixtures_dir()
    with_reasoning = [
        p
        for p in MULTI
        if any(_blocks(ex.request_json["messages"]) for ex in load_cassette(p)[1:])  # type: ignore[index]
    ]
    assert len(with_reasoning) == 6, [p.name for p in with_reasoning]
