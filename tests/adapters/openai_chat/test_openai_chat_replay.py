"""Every Chat Completions recording in ../shared/fixtures/chat_completions, replayed through the adapters.

For each multi-step recording the recorded responses are served by an ``httpx2.MockTransport`` behind
the real ``openai`` SDK; the adapter's events must match the recorded content (reasoning text, answer,
calls, usage), and the next request the adapter builds from the portable history + the previous
response's continuation must carry the same reasoning state on the same messages as the request the
real API accepted: ``reasoning_details`` (compared as objects: key order aside, merged by index from
the stream) or ``reasoning_content`` (the joined deltas). The DeepSeek stream (response only) and the
error bodies (DeepSeek, OpenRouter, the in-stream error) replay too.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentlab.adapters.openai_chat import (
    ChatAdapter,
    DeepSeekAdapter,
    LlamaCppAdapter,
    OpenRouterAdapter,
    XAIChatAdapter,
    ZAIAdapter,
)
from agentlab.adapters.openai_chat._adapter import ChatCompletionsAdapter
from agentlab.errors import ProviderAPIError, StreamInterruptedError
from agentlab.neutral.events import DiagnosticEvent, ReasoningDeltaEvent, TextDeltaEvent
from agentlab.neutral.items import PortableItem, SystemItem, ToolCallItem, ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest, ReasoningSettings, ToolSpec
from tests.adapters.openai_chat.chat_support import (
    SSE,
    Replay,
    Served,
    adapter_on,
    collect,
    completed,
    served,
)
from tests.support.cassettes import Exchange, fixture_files, fixtures_dir, load_cassette

pytestmark = pytest.mark.fixtures

FILES = fixture_files("chat_completions", "")
LOOPS = [p for p in FILES if p.suffix == ".yaml"]


def _dialect(ex: Exchange) -> tuple[type[ChatCompletionsAdapter], str]:
    base_url = ex.url.split("?")[0].removesuffix("/chat/completions")
    if "openrouter.ai" in ex.url:
        return OpenRouterAdapter, "https://openrouter.ai/api/v1"
    if "localhost:8080" in ex.url:
        return LlamaCppAdapter, "http://localhost:8080/v1"
    if "api.x.ai" in ex.url:
        return XAIChatAdapter, base_url
    if "api.z.ai" in ex.url:  # the coding plan's endpoint, given as base_url
        return ZAIAdapter, base_url
    # Any other server (Kimi through Avian, an OpenRouter-style host, not Moonshot): the generic
    # ``chat:`` dialect, pointed at the recorded endpoint, which must echo ``reasoning_content`` back
    # under the name it arrived with.
    return ChatAdapter, base_url


def _reasoning(
    cls: type[ChatCompletionsAdapter], body: dict[str, Any]
) -> tuple[ReasoningSettings | None, dict[str, Any]]:
    """The neutral settings (and provider options) that give the recorded reasoning fields.

    GLM documents no effort level (its dialect refuses one), so the recorded ``reasoning_effort``
    goes as the provider option it names.
    """
    if "reasoning" in body:
        return ReasoningSettings(effort=body["reasoning"]["effort"]), {}
    if "reasoning_effort" in body and cls is ZAIAdapter:
        return None, {"zai_reasoning_effort": body["reasoning_effort"]}
    if "reasoning_effort" in body:
        return ReasoningSettings(effort=body["reasoning_effort"]), {}
    return None, {}


def _first_items(body: dict[str, Any]) -> list[PortableItem]:
    out: list[PortableItem] = []
    for m in body["messages"]:
        out.append(SystemItem(text=m["content"]) if m["role"] == "system" else UserItem(text=m["content"]))
    return out


def _tools(body: dict[str, Any]) -> tuple[ToolSpec, ...]:
    return tuple(
        ToolSpec(
            name=t["function"]["name"],
            description=t["function"].get("description", ""),
            parameters=t["function"]["parameters"],
            strict=t["function"].get("strict"),
        )
        for t in body.get("tools") or []
    )


def _results(body: dict[str, Any], calls: list[ToolCallItem]) -> list[ToolResultItem]:
    """The recorded tool messages, as results of the adapter's calls (matched by the API's ids)."""
    tool_msgs = [m for m in body["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == [c.call_id for c in calls]
    return [
        ToolResultItem(call_id=c.call_id, name=c.name, output=m["content"])
        for c, m in zip(calls, tool_msgs, strict=True)
    ]


_STATE = ("reasoning_details", "reasoning_content")


def _state(msg: dict[str, Any]) -> dict[str, Any]:
    return {k: msg[k] for k in _STATE if k in msg}


def _replay(path: Path) -> None:
    exchanges = load_cassette(path)
    first, second = exchanges[0].request_json, exchanges[1].request_json
    assert first is not None and second is not None
    cls, base_url = _dialect(exchanges[0])
    replay = Replay([served(ex) for ex in exchanges])
    adapter = adapter_on(cls, replay, first["model"], base_url)
    reasoning, options = _reasoning(cls, first)
    base = ModelRequest(
        model=first["model"], items=tuple(_first_items(first)), tools=_tools(first),
        reasoning=reasoning, provider_options=options, stream=bool(first.get("stream")), cache=None,
        max_output_tokens=first.get("max_tokens"),
    )  # fmt: skip
    events1 = asyncio.run(collect(adapter, base))
    resp1 = completed(events1)
    sent1 = json.loads(replay.bodies[0])
    assert replay.urls[0] == exchanges[0].url
    assert sent1["messages"] == first["messages"]
    for key in ("reasoning", "reasoning_effort", "stream_options", "tool_choice", "max_tokens"):
        assert sent1.get(key) == first.get(key), key
    calls = [i for i in resp1.items if isinstance(i, ToolCallItem)]
    assert calls and resp1.stop_reason == "tool_use"
    assert resp1.reasoning, "the reasoning of response 1 was not kept"

    history = (*base.items, *resp1.items, *_results(second, calls))
    step2 = base.model_copy(update={"items": history, "continuation": resp1.reasoning})
    built = adapter.build(step2)
    ours = json.loads(built.body)
    assert [m["role"] for m in ours["messages"]] == [m["role"] for m in second["messages"]]
    for mine, recorded in zip(ours["messages"], second["messages"], strict=True):
        assert _state(mine) == _state(recorded), f"reasoning state differs on a {recorded['role']} message"
        assert [c["id"] for c in mine.get("tool_calls", [])] == [
            c["id"] for c in recorded.get("tool_calls", [])
        ]
        assert mine.get("tool_call_id") == recorded.get("tool_call_id")
    assert any(_state(m) for m in ours["messages"])
    assert built.reasoning_sent == len(resp1.reasoning) and built.reasoning_dropped == 0

    events2 = asyncio.run(collect(adapter, step2))
    resp2 = completed(events2)
    assert json.loads(replay.bodies[1])["messages"] == ours["messages"]
    assert resp2.stop_reason == "end_turn"
    assert resp2.text == _answer(exchanges[1])
    usage = _usage(exchanges[1])
    assert resp2.usage.input_tokens == usage["prompt_tokens"]
    # Billed output is what the total holds beyond the prompt, on every host: xAI's completion_tokens
    # leave the reasoning out (its total adds it), the others' include it.
    assert resp2.usage.output_tokens == usage["total_tokens"] - usage["prompt_tokens"]
    if cls is XAIChatAdapter:  # xAI's own billed figure, in 10^-10 USD
        assert resp2.provider_cost_usd == usage["cost_in_usd_ticks"] / 10**10
    shown = "".join(e.text for e in events1 if isinstance(e, ReasoningDeltaEvent))
    assert shown == _reasoning_text(exchanges[0])


def _messages(ex: Exchange) -> list[dict[str, Any]]:
    if ex.response_kind == "sse":
        return [c["choices"][0]["delta"] for c in ex.sse_events if c.get("choices")]
    return [ex.response_payload["choices"][0]["message"]]


def _answer(ex: Exchange) -> str:
    return "".join(m.get("content") or "" for m in _messages(ex))


def _reasoning_text(ex: Exchange) -> str:
    out = []
    for m in _messages(ex):
        text = m.get("reasoning_content") or m.get("reasoning")
        if not text:
            text = "".join(d.get("text") or "" for d in m.get("reasoning_details") or [])
        out.append(text or "")
    return "".join(out)


def _usage(ex: Exchange) -> dict[str, Any]:
    if ex.response_kind == "sse":
        usage: dict[str, Any] = [c for c in ex.sse_events if c.get("usage")][-1]["usage"]
        return usage
    found: dict[str, Any] = ex.response_payload["usage"]
    return found


def test_every_chat_completions_recording_is_covered() -> None:
    if not FILES:
        pytest.skip("../shared/fixtures/chat_completions is absent (the recordings are read at test time)")
    # Every cassette is a two-step tool loop, replayed by the parametrized test below (a new one is
    # covered as it arrives); every other recording has a test of its own, named here.
    assert LOOPS and all(len(load_cassette(p)) == 2 for p in LOOPS)
    assert {p.name for p in FILES if p.suffix != ".yaml"} == {DEEPSEEK_CHUNKS}


@pytest.mark.parametrize("path", LOOPS, ids=[p.name.removesuffix(".yaml") for p in LOOPS])
def test_recorded_tool_loop_replays_with_the_same_reasoning_on_the_same_messages(path: Path) -> None:
    _replay(path)


DEEPSEEK_CHUNKS = "vercel-ai__deepseek_reasoner_reasoning_content_tool_call_stream.chunks.txt"


def _deepseek_chunks() -> list[dict[str, Any]]:
    path = fixtures_dir() / "chat_completions" / DEEPSEEK_CHUNKS
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_deepseek_stream_replays_and_its_reasoning_content_goes_back_on_the_tool_call_message() -> None:
    chunks = _deepseek_chunks()
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)  # no [DONE], as recorded
    replay = Replay([Served(200, body, SSE)])
    adapter = adapter_on(DeepSeekAdapter, replay, "deepseek-reasoner", "https://api.deepseek.com")
    req = ModelRequest(
        model="deepseek-reasoner", items=(UserItem(text="What is the weather?"),),
        tools=(ToolSpec(name="weather"),), cache=None,
    )  # fmt: skip
    events = asyncio.run(collect(adapter, req))
    resp = completed(events)
    joined = "".join(c["choices"][0]["delta"].get("reasoning_content") or "" for c in chunks)
    assert joined and "".join(e.text for e in events if isinstance(e, ReasoningDeltaEvent)) == joined
    assert not [e for e in events if isinstance(e, TextDeltaEvent)]
    (call,) = [i for i in resp.items if isinstance(i, ToolCallItem)]
    args = "".join(
        tc["function"].get("arguments") or ""
        for c in chunks
        for tc in c["choices"][0]["delta"].get("tool_calls") or []
    )
    assert call.call_id.startswith("call_00_") and call.arguments == args and json.loads(args)
    assert resp.stop_reason == "tool_use"
    u = resp.usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (339, 320, 83, 39)
    assert u.reasoning_source == "reported"
    sent = json.loads(replay.bodies[0])
    assert sent["thinking"] == {"type": "enabled"} and sent["stream_options"] == {"include_usage": True}
    (item,) = resp.reasoning
    assert item.provider == "deepseek" and item.block_type == "reasoning_content"
    step2 = req.model_copy(
        update={
            "items": (*req.items, *resp.items, ToolResultItem(call_id=call.call_id, output="40 C")),
            "continuation": resp.reasoning,
        }
    )
    msgs = json.loads(adapter.build(step2).body)["messages"]
    assert msgs[1]["role"] == "assistant" and msgs[1]["reasoning_content"] == joined
    assert msgs[1]["tool_calls"][0]["id"] == call.call_id and msgs[2]["role"] == "tool"


def _error_body(name: str) -> bytes:
    raw = json.loads((fixtures_dir() / "errors" / name).read_text(encoding="utf-8"))
    if name.endswith(".error_object.json"):
        raw = {"error": raw}
    return json.dumps(raw).encode()


@pytest.mark.parametrize(
    ("name", "cls", "needle", "etype"),
    [
        ("issue__deepseek_400_reasoning_content_must_be_passed_back.json", DeepSeekAdapter,
         "must be passed back", "invalid_request_error"),
        ("issue__deepseek_400_missing_reasoning_content_field.json", DeepSeekAdapter,
         "Missing `reasoning_content` field", "invalid_request_error"),
        ("issue__openrouter_400_gemini_reasoning_details_required.error_object.json", OpenRouterAdapter,
         "Gemini models require OpenRouter reasoning details", None),
        ("issue__openrouter_400_gemini_thought_signature_not_valid.json", OpenRouterAdapter,
         "Thought signature is not valid", None),
    ],
)  # fmt: skip
def test_recorded_error_bodies_become_typed_errors_naming_the_rule(
    name: str, cls: type[ChatCompletionsAdapter], needle: str, etype: str | None
) -> None:
    replay = Replay([Served(400, _error_body(name), "application/json")])
    model = "deepseek-reasoner" if cls is DeepSeekAdapter else "google/gemini-3-pro-preview"
    adapter = adapter_on(cls, replay, model, "https://example.invalid/v1")
    req = ModelRequest(model=model, items=(UserItem(text="hi"),), cache=None)
    with pytest.raises(ProviderAPIError) as info:
        asyncio.run(collect(adapter, req))
    err = info.value
    assert err.status == 400 and err.provider == cls.provider and needle in str(err)
    assert err.error_type == etype and err.__cause__ is None and err.__context__ is None
    if cls is OpenRouterAdapter:
        assert err.code == "400" and "upstream Google" in str(err)
        assert "user_2q" not in str(err)


def test_openrouter_in_stream_error_chunk_is_a_typed_interruption_after_the_reasoning_shown() -> None:
    (ex,) = load_cassette(
        fixtures_dir() / "errors" / "pydantic-ai__openrouter_in_stream_error_chunk_reasoning_details.yaml"
    )
    replay = Replay([served(ex)])
    adapter = adapter_on(OpenRouterAdapter, replay, "minimax/minimax-m2:free", "https://openrouter.ai/api/v1")
    req = ModelRequest(model="minimax/minimax-m2:free", items=(UserItem(text="Hello there"),), cache=None)
    seen: list[Any] = []

    async def run() -> None:
        async for ev in adapter.stream(req):
            seen.append(ev)

    with pytest.raises(StreamInterruptedError) as info:
        asyncio.run(run())
    assert "Token limit reached" in str(info.value) and info.value.code == "400"
    assert (
        "".join(e.text for e in seen if isinstance(e, ReasoningDeltaEvent))
        == "We need to respond to a greeting. The user"
    )
    assert not [e for e in seen if not isinstance(e, ReasoningDeltaEvent | DiagnosticEvent)]
