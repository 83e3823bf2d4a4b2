"""The Responses-dialect recordings in ../shared/fixtures/responses_dialects, replayed through the adapters.

Each recorded response is served by an ``httpx2.MockTransport`` behind the real ``openai`` SDK, to
the dialect's adapter (``create_adapter("<dialect>:<model>", client=...)``); the adapter's events must
match the recorded content, and every later request the adapter builds from the portable history and
the previous responses' continuation must carry the same reasoning state, item by item, as the
request the host accepted: reasoning items with the same id, content, summary and (where the
response had one) ``encrypted_content``, tool calls with the same ``call_id`` s, paired with their
outputs. Where the recorded client sent less reasoning than agentlab does (Azure: none), both
forms are checked: agentlab's default (the items back verbatim) and the recorded one (drop).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentlab.adapters import create_adapter
from agentlab.neutral.events import DiagnosticEvent, ModelResponse, ReasoningDeltaEvent
from agentlab.neutral.items import (
    AssistantTextItem,
    PortableItem,
    SystemItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import ModelRequest, ReasoningSettings, ToolSpec
from tests.adapters.openai_chat.chat_support import Replay, Served, client_on, collect, completed, served
from tests.support.cassettes import fixtures_dir, load_cassette, load_chunks, to_sse

pytestmark = pytest.mark.fixtures

DIR = "responses_dialects"


def _path(name: str) -> Path:
    return fixtures_dir() / DIR / name


def _adapter(model_string: str, replay: Replay, base_url: str) -> Any:
    return create_adapter(model_string, client=client_on(replay, base_url), max_retries=0)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p["text"] for p in content)


def _first_items(body: dict[str, Any]) -> list[PortableItem]:
    out: list[PortableItem] = []
    if body.get("instructions"):
        out.append(SystemItem(text=body["instructions"]))
    for m in body["input"]:
        role = m.get("role")
        out.append(
            SystemItem(text=_text(m["content"]))
            if role in ("system", "developer")
            else UserItem(text=_text(m["content"]))
        )
    return out


def _tools(body: dict[str, Any]) -> tuple[ToolSpec, ...]:
    return tuple(
        ToolSpec(
            name=t["name"],
            description=t.get("description") or "",
            parameters=t["parameters"],
            strict=t.get("strict"),
        )
        for t in body.get("tools") or []
    )


def _results(body: dict[str, Any], calls: list[ToolCallItem]) -> list[ToolResultItem]:
    """The recorded outputs, as results of the adapter's calls (matched by the ids the host accepted)."""
    outputs = {i["call_id"]: i["output"] for i in body["input"] if i.get("type") == "function_call_output"}
    return [ToolResultItem(call_id=c.call_id, name=c.name, output=outputs[c.call_id]) for c in calls]


def _reasoning_state(inputs: list[dict[str, Any]], produced: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each reasoning item of ``inputs`` as the replay check compares it (PROVENANCE: "Replay verified")."""
    had_token = {o["id"] for o in produced if o.get("encrypted_content")}
    out = []
    for i in inputs:
        if i.get("type") == "reasoning":
            state = {k: i.get(k) for k in ("id", "content", "summary")}
            if i["id"] in had_token:
                state["encrypted_content"] = i.get("encrypted_content")
            out.append(state)
    return out


def _calls(inputs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (i["type"], i["call_id"])
        for i in inputs
        if i.get("type") in ("function_call", "function_call_output")
    ]


def _next(request: ModelRequest, resp: ModelResponse, extra: Sequence[PortableItem]) -> ModelRequest:
    return request.model_copy(
        update={
            "items": (*request.items, *resp.items, *extra),
            "continuation": (*request.continuation, *resp.reasoning),
        }
    )


def _run(adapter: Any, request: ModelRequest) -> tuple[list[Any], ModelResponse]:
    events = asyncio.run(collect(adapter, request))
    return events, completed(events)


# ------------------------------------------------------------------ DeepSeek (replay verified)


def test_deepseek_responses_reasoning_text_tool_loop() -> None:
    exchanges = load_cassette(
        _path("pydantic-ai__deepseek_responses_reasoning_text_tool_loop_nonstream.yaml")
    )
    first, second = (ex.request_json for ex in exchanges)
    assert first is not None and second is not None
    replay = Replay([served(ex) for ex in exchanges])
    adapter = _adapter(f"deepseek_responses:{first['model']}", replay, "https://api.deepseek.com")
    base = ModelRequest(
        model=first["model"], items=tuple(_first_items(first)), tools=_tools(first), stream=False, cache=None
    )
    events, r1 = _run(adapter, base)
    sent1 = json.loads(replay.bodies[0])
    assert replay.urls[0] == exchanges[0].url == "https://api.deepseek.com/responses"
    assert "include" not in sent1  # encrypted_content is a reference there: never asked for
    assert sent1["input"] == first["input"] and sent1["tools"] == first["tools"]
    produced = exchanges[0].response_payload["output"]
    shown = "".join(e.text for e in events if isinstance(e, ReasoningDeltaEvent))
    assert shown == produced[0]["content"][0]["text"]
    (call,) = r1.tool_calls
    assert call.call_id == produced[1]["call_id"] and r1.stop_reason == "tool_use"
    assert r1.usage.reasoning_tokens == 18 and r1.usage.cache_read_tokens == 256

    step2 = _next(base, r1, _results(second, [call]))
    ours = json.loads(adapter.build(step2).body)["input"]
    assert _reasoning_state(ours, produced) == _reasoning_state(second["input"], produced) != []
    assert [i.get("type", "message") for i in ours] == [i.get("type", "message") for i in second["input"]]
    assert _calls(ours) == _calls(second["input"])
    assert not any("id" in i for i in ours if i.get("type") == "function_call")  # as recorded

    _, r2 = _run(adapter, step2)
    assert json.loads(replay.bodies[1])["input"] == ours
    answer = exchanges[1].response_payload["output"][0]
    assert r2.text == answer["content"][0]["text"] and r2.stop_reason == "end_turn"
    (msg,) = r2.items
    assert isinstance(msg, AssistantTextItem) and msg.phase == "final_answer"


# ------------------------------------------------------------------ Bedrock Mantle (call_0 reused)


def test_mantle_reused_call_ids_are_scoped_as_the_host_accepted() -> None:
    exchanges = load_cassette(
        _path("pydantic-ai__bedrock_mantle_responses_reused_call_ids_4step_nonstream.yaml")
    )
    bodies = [ex.request_json for ex in exchanges]
    first = bodies[0]
    assert first is not None
    replay = Replay([served(ex) for ex in exchanges])
    base_url = exchanges[0].url.removesuffix("/responses")
    adapter = _adapter(f"mantle:{first['model']}", replay, base_url)
    request = ModelRequest(
        model=first["model"], items=tuple(_first_items(first)), tools=_tools(first), stream=False, cache=None
    )
    for n in range(3):  # three tool-loop steps: call_0, call_0, then the answer
        _, resp = _run(adapter, request)
        sent = json.loads(replay.bodies[n])
        assert (
            sent["include"] == ["reasoning.encrypted_content"]
            and sent["instructions"] == first["instructions"]
        )
        assert replay.urls[n] == exchanges[n].url
        recorded_next = bodies[n + 1]
        assert recorded_next is not None
        if resp.stop_reason != "tool_use":
            break
        (call,) = resp.tool_calls
        assert call.call_id == f"{resp.response_id}:call_0"  # unique within the loop, as recorded
        request = _next(request, resp, _results(recorded_next, [call]))
        ours = json.loads(adapter.build(request).body)["input"]
        assert _calls(ours) == _calls(recorded_next["input"])
        assert _reasoning_state(ours, []) == _reasoning_state(recorded_next["input"], []) == []
    assert n == 2 and resp.stop_reason == "end_turn"
    (msg,) = resp.items
    assert isinstance(msg, AssistantTextItem) and msg.phase == "final_answer"
    assert resp.usage.cache_write_tokens == 0  # Mantle reports writes (0 here): known, not assumed

    # Step 4: the answer back with its phase, a new user turn; the response's rsn_ reasoning is kept.
    last = bodies[3]
    assert last is not None
    follow = UserItem(text=_text(last["input"][-1]["content"]))
    step4 = request.model_copy(
        update={"items": (*request.items, *resp.items, follow), "tools": (), "continuation": ()}
    )
    ours = json.loads(adapter.build(step4).body)["input"]
    assert [i.get("phase") for i in ours if i.get("role") == "assistant"] == ["final_answer"]
    assert _calls(ours) == _calls(last["input"])
    _, r4 = _run(adapter.__class__(adapter.model, client=adapter.client, max_retries=0), step4)
    produced = exchanges[3].response_payload["output"]
    (item,) = r4.reasoning
    payload = json.loads(item.unseal(provider="mantle", api="responses"))
    assert payload == produced[0] and payload["encrypted_content"].startswith("rsn_")
    assert r4.text == "OK" and r4.usage.reasoning_tokens == 10


# ------------------------------------------------------------------ Azure OpenAI (store: false, stream)


def _azure(replay: Replay, model: str) -> Any:
    return _adapter(
        f"azure:{model}", replay, "https://fantasy-playground-resource.openai.azure.com/openai/v1"
    )


def test_azure_stream_tool_loop() -> None:
    exchanges = load_cassette(
        _path("fantasy__azure_responses_store_false_encrypted_reasoning_tool_loop_stream.yaml")
    )
    first, second = (ex.request_json for ex in exchanges)
    assert first is not None and second is not None
    replay = Replay([served(ex) for ex in exchanges])
    adapter = _azure(replay, first["model"])
    base = ModelRequest(
        model=first["model"], items=tuple(_first_items(first)), tools=_tools(first), stream=True, cache=None,
        reasoning=ReasoningSettings(**first["reasoning"]),
    )  # fmt: skip
    events, r1 = _run(adapter, base)
    assert not [e for e in events if isinstance(e, DiagnosticEvent)]  # content_filters are extra fields
    sent1 = json.loads(replay.bodies[0])
    assert replay.urls[0] == exchanges[0].url
    for key in ("store", "include", "reasoning", "stream", "tool_choice"):
        assert sent1[key] == first[key], key
    final = exchanges[0].sse_events[-1]["response"]
    done = [e["item"] for e in exchanges[0].sse_events if e["type"] == "response.output_item.done"]
    (item,) = r1.reasoning
    assert json.loads(item.unseal(provider="azure", api="responses")) == done[0]  # the done copy, verbatim
    (call,) = r1.tool_calls
    assert call.call_id == final["output"][1]["call_id"]

    # agentlab's default: the reasoning item goes back verbatim before its call.
    step2 = _next(base, r1, _results(second, [call]))
    ours = json.loads(adapter.build(step2).body)["input"]
    assert [i for i in ours if i.get("type") == "reasoning"] == [done[0]]
    assert _calls(ours) == _calls(second["input"])
    # The recorded client sent none of it (and was accepted): the same state with nothing carried.
    dropped = json.loads(adapter.build(step2.model_copy(update={"continuation": ()})).body)["input"]
    assert (
        _reasoning_state(dropped, final["output"]) == _reasoning_state(second["input"], final["output"]) == []
    )
    assert [i for i in dropped if i.get("type") == "function_call"] == [
        i for i in second["input"] if i.get("type") == "function_call"
    ]
    _, r2 = _run(adapter, step2)
    answer = exchanges[1].sse_events[-1]["response"]["output"][-1]
    assert r2.text == answer["content"][0]["text"] and r2.stop_reason == "end_turn"


def test_azure_null_encrypted_content_is_never_sent_as_state() -> None:
    """Derived from the recording: the same stream with ``encrypted_content: null`` (reported for Azure)."""
    exchanges = load_cassette(
        _path("fantasy__azure_responses_store_false_encrypted_reasoning_tool_loop_stream.yaml")
    )
    first, second = (ex.request_json for ex in exchanges)
    assert first is not None and second is not None
    events = []
    for e in exchanges[0].sse_events:
        e = json.loads(json.dumps(e))
        items = [e.get("item")] + ((e.get("response") or {}).get("output") or [])
        for it in items:
            if isinstance(it, dict) and it.get("type") == "reasoning":
                it["encrypted_content"] = None
        events.append(e)
    replay = Replay([Served(200, to_sse(events), "text/event-stream")])
    adapter = _azure(replay, first["model"])
    base = ModelRequest(
        model=first["model"], items=tuple(_first_items(first)), tools=_tools(first), stream=True
    )
    _, r1 = _run(adapter, base)
    (call,) = r1.tool_calls
    built = adapter.build(_next(base, r1, _results(second, [call])))
    ours = json.loads(built.body)["input"]
    assert not [i for i in ours if i.get("type") == "reasoning"]
    assert built.reasoning_dropped == 1
    (note,) = [d for d in built.diagnostics if d.code == "reasoning_item_dropped"]
    assert note.data["reason"] == "no_encrypted_content" and note.data["provider"] == "azure"


# ------------------------------------------------------------------ xAI (response only)


def test_xai_stream_items_from_response_completed() -> None:
    (events,) = load_chunks(
        _path("vercel-ai__xai_responses_store_false_encrypted_reasoning_stream.chunks.txt")
    )
    final = events[-1]["response"]
    # The completed response is the copy xAI's rule names: make the output_item.done copy differ from it
    # (as Azure's re-encrypted tokens do), so taking the wrong one shows.
    served_events = json.loads(json.dumps(events))
    for e in served_events:
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "reasoning":
            e["item"]["encrypted_content"] = "stale-copy"
    replay = Replay([Served(200, to_sse(served_events), "text/event-stream")])
    adapter = _adapter(f"xai:{final['model']}", replay, "https://api.x.ai/v1")
    request = ModelRequest(model=final["model"], items=(UserItem(text="Sonoran food?"),), stream=True)
    evs, resp = _run(adapter, request)
    sent = json.loads(replay.bodies[0])
    assert sent["store"] is False and sent["include"] == ["reasoning.encrypted_content"]
    assert replay.urls[0] == "https://api.x.ai/v1/responses"
    (item,) = resp.reasoning
    assert json.loads(item.unseal(provider="xai", api="responses")) == final["output"][0]
    shown = "".join(e.text for e in evs if isinstance(e, ReasoningDeltaEvent))
    assert shown == final["output"][0]["summary"][0]["text"]
    assert resp.text == final["output"][1]["content"][0]["text"]
    u = final["usage"]
    assert (resp.usage.input_tokens, resp.usage.output_tokens, resp.usage.reasoning_tokens) == (
        u["input_tokens"], u["output_tokens"], u["output_tokens_details"]["reasoning_tokens"],
    )  # fmt: skip
    assert resp.usage.total_tokens == u["total_tokens"]
    assert resp.provider_cost_usd is None  # this recording has no cost_in_usd_ticks: unknown, never 0

    # Next turn: every output item back in order, the reasoning item verbatim before its message.
    nxt = request.model_copy(
        update={
            "items": (*request.items, *resp.items, UserItem(text="More?")),
            "continuation": resp.reasoning,
        }
    )
    ours = json.loads(adapter.build(nxt).body)["input"]
    assert [i.get("type", "message") for i in ours] == ["message", "reasoning", "message", "message"]
    assert ours[1] == final["output"][0]
    assert (ours[2]["id"], ours[2]["content"][0]["text"]) == (final["output"][1]["id"], resp.text)


# ------------------------------------------------------------------ usage that adds up


def _recorded_usages() -> list[tuple[str, dict[str, Any]]]:
    """(provider, usage) of every recorded response in the folder, read by the dialect it belongs to."""
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted((fixtures_dir() / DIR).iterdir()):
        provider = next(p for k, p in _BY_FILE.items() if k in path.name)
        if path.name.endswith(".chunks.txt"):
            finals = [g[-1]["response"] for g in load_chunks(path)]
        else:
            finals = [
                ex.sse_events[-1]["response"] if ex.response_kind == "sse" else ex.response_payload
                for ex in load_cassette(path)
            ]
        out += [(provider, f["usage"]) for f in finals]
    return out


_BY_FILE = {"deepseek": "deepseek_responses", "azure": "azure", "mantle": "mantle", "xai": "xai"}


def test_every_recorded_usage_adds_up() -> None:
    """Reasoning is part of output and input + output is the reported total, on every dialect."""
    from agentlab.adapters.registry import get_provider

    usages = _recorded_usages()
    assert {p for p, _ in usages} == set(_BY_FILE.values()) and len(usages) == 9
    for provider, raw in usages:
        u = get_provider(provider).normalize_usage(raw)
        assert u.total_tokens == raw["total_tokens"], provider
        assert u.reasoning_tokens is not None and u.output_tokens is not None
        assert 0 <= u.reasoning_tokens <= u.output_tokens, provider
        assert u.cache_read_tokens == raw["input_tokens_details"]["cached_tokens"] <= (u.input_tokens or 0)
        assert (u.cache_write_tokens is None) is (
            provider == "mantle" and "cache_write_tokens" not in raw["input_tokens_details"]
        )
