"""Chat Completions adapters on scripted wire bytes: stream assembly, request builder, continuity rules.

Each test is a behaviour of the issue's "Across all" and per-dialect lists: tool calls streamed by
index (parallel calls), ``reasoning_details`` merged by index, OpenRouter comment lines and cost,
DeepSeek's recovery for earlier tool exchanges, local usage without reasoning tokens, settings mapped
per dialect, typed construction errors, and no key in any repr.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentlab.adapters import create_adapter
from agentlab.adapters.openai_chat import (
    ChatAdapter,
    DeepSeekAdapter,
    LlamaCppAdapter,
    OllamaAdapter,
    OpenRouterAdapter,
    VLLMAdapter,
)
from agentlab.adapters.openai_chat._details import DetailsMerger
from agentlab.adapters.registry import get_provider
from agentlab.errors import InvalidSettingsError, MissingApiKeyError, ProviderAPIError, StreamInterruptedError
from agentlab.neutral.events import DiagnosticEvent, ReasoningDeltaEvent, TextDeltaEvent
from agentlab.neutral.items import (
    AssistantTextItem,
    ProviderReasoningItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import ModelRequest, ReasoningSettings, ToolSpec
from tests.adapters.openai_chat.chat_support import SSE, Replay, Served, adapter_on, collect, completed, sse

W = ToolSpec(name="weather")
ON = {"type": "enabled"}
BUDGET = {"reasoning": {"max_tokens": 2000, "exclude": True}}


def _chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **top,
    }


def _run(cls: Any, body: bytes, model: str = "m", **req: Any) -> tuple[list[Any], Replay]:
    replay = Replay([Served(200, body, SSE)])
    adapter = adapter_on(cls, replay, model, "http://localhost:9/v1")
    request = ModelRequest(model=model, items=(UserItem(text="hi"),), tools=(W,), cache=None, **req)
    return asyncio.run(collect(adapter, request)), replay


def test_parallel_tool_calls_streamed_by_index_interleaved() -> None:
    chunks = [
        _chunk(
            {
                "role": "assistant",
                "tool_calls": [{"index": 0, "id": "c0", "function": {"name": "weather", "arguments": ""}}],
            }
        ),
        _chunk(
            {
                "tool_calls": [
                    {"index": 1, "id": "c1", "function": {"name": "weather", "arguments": '{"city":'}}
                ]
            }
        ),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Rome"}'}}]}),
        _chunk({"tool_calls": [{"index": 1, "function": {"arguments": '"Paris"}'}}]}),
        _chunk({}, "tool_calls"),
    ]
    events, _ = _run(VLLMAdapter, sse(chunks))
    resp = completed(events)
    calls = [i for i in resp.items if isinstance(i, ToolCallItem)]
    assert [(c.call_id, c.arguments, c.index) for c in calls] == [
        ("c0", '{"city":"Rome"}', 1), ("c1", '{"city":"Paris"}', 2)
    ]  # fmt: skip
    assert resp.stop_reason == "tool_use" and all(c.turn_id == "gen-1" for c in calls)
    assert resp.usage.reasoning_tokens is None and resp.usage.reasoning_source == "unknown"


def test_reasoning_details_pieces_merge_by_index_text_concatenated_last_signature() -> None:
    m = DetailsMerger()
    assert m.add([{"type": "reasoning.text", "text": "a", "index": 0, "format": None}]) == "a"
    m.add([{"type": "reasoning.text", "text": "b", "index": 0, "format": "anthropic-claude-v1"}])
    m.add(
        [
            {"type": "reasoning.text", "signature": "S1", "index": 0},
            {"type": "reasoning.encrypted", "data": "D", "index": 1},
        ]
    )
    m.add(
        [
            {"type": "reasoning.text", "signature": "S2", "index": 0, "text": ""},
            {"type": "reasoning.encrypted", "data": None, "id": "x", "index": 1},
        ]
    )
    assert m.items == [
        {
            "type": "reasoning.text",
            "text": "ab",
            "index": 0,
            "format": "anthropic-claude-v1",
            "signature": "S2",
        },
        {"type": "reasoning.encrypted", "data": "D", "index": 1, "id": "x"},
    ]


def test_openrouter_stream_comments_details_items_and_reported_cost() -> None:
    details = [{"type": "reasoning.text", "text": "think", "format": "anthropic-claude-v1", "index": 0}]
    chunks = [
        _chunk({"role": "assistant", "content": "", "reasoning": "think", "reasoning_details": details}),
        _chunk({"reasoning_details": [{"type": "reasoning.text", "signature": "SIG", "index": 0}]}),
        _chunk({"content": "Hello"}, "stop"),
        {"id": "gen-1", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 7, "cost": 0.0012,
         "prompt_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 2},
         "completion_tokens_details": {"reasoning_tokens": 5}}},
    ]  # fmt: skip
    body = b": OPENROUTER PROCESSING\n\n" + sse(chunks).replace(
        b"\n\ndata", b"\n\n: OPENROUTER PROCESSING\n\ndata", 1
    )
    events, replay = _run(OpenRouterAdapter, body, model="anthropic/claude-sonnet-4.5")
    resp = completed(events)
    assert [e.text for e in events if isinstance(e, ReasoningDeltaEvent)] == ["think"]
    assert [e.text for e in events if isinstance(e, TextDeltaEvent)] == ["Hello"]
    (item,) = resp.reasoning
    assert item.block_type == "reasoning_details" and item.provider == "openrouter"
    assert json.loads(item.unseal(provider="openrouter", api="chat_completions")) == {
        **details[0],
        "text": "think",
        "signature": "SIG",
    }
    u = resp.usage
    assert (
        u.input_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.output_tokens,
        u.reasoning_tokens,
    ) == (10, 4, 2, 7, 5)
    assert resp.provider_cost_usd == 0.0012 and not [e for e in events if isinstance(e, DiagnosticEvent)]
    assert "user" not in replay.last_json and "usage" not in replay.last_json


def test_stream_cut_before_finish_reason_is_interrupted() -> None:
    with pytest.raises(StreamInterruptedError, match="finish_reason"):
        _run(LlamaCppAdapter, sse([_chunk({"content": "par"})], done=False))


def _turn(
    model: str, provider: str, block: str, payload: Any, base_url: str = "http://localhost:9/v1"
) -> tuple[tuple[Any, ...], ProviderReasoningItem]:
    items = (
        UserItem(text="weather?"),
        ToolCallItem(call_id="c1", name="weather", arguments='{"city":"Rome"}', turn_id="t1", index=1),
        ToolResultItem(call_id="c1", name="weather", output="24 C"),
    )
    opaque = ProviderReasoningItem(
        json.dumps(payload).encode(), provider=provider, api="chat_completions", model=model,
        block_type=block, turn_id="t1", index=0, base_url=base_url,
    )  # fmt: skip
    return items, opaque


def _build(cls: Any, model: str, items: Any, continuation: Any = (), **kw: Any) -> Any:
    adapter = adapter_on(cls, Replay([]), model, "http://localhost:9/v1", **kw)
    return adapter.build(
        ModelRequest(model=model, items=items, continuation=continuation, tools=(W,), cache=None)
    )


def test_deepseek_sends_reasoning_content_back_on_its_tool_call_message_within_the_loop() -> None:
    items, opaque = _turn("deepseek-chat", "deepseek", "reasoning_content", "I will call weather.")
    built = _build(DeepSeekAdapter, "deepseek-chat", items, (opaque,))
    msgs = json.loads(built.body)["messages"]
    fn = {"name": "weather", "arguments": '{"city":"Rome"}'}
    assert msgs[1] == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "I will call weather.",
        "tool_calls": [{"id": "c1", "type": "function", "function": fn}],
    }
    assert msgs[2] == {"role": "tool", "tool_call_id": "c1", "content": "24 C"}
    assert built.reasoning_sent == 1 and not built.diagnostics


def test_deepseek_earlier_tool_exchange_without_reasoning_is_sent_as_text_with_a_diagnostic() -> None:
    items, _ = _turn("deepseek-chat", "deepseek", "reasoning_content", "x")
    built = _build(
        DeepSeekAdapter,
        "deepseek-chat",
        (*items, AssistantTextItem(text="24 C in Rome.", turn_id="t2", index=0), UserItem(text="and Paris?")),
    )
    msgs = json.loads(built.body)["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    assert msgs[1] == {"role": "assistant", "content": '[called tool weather with {"city":"Rome"}]'}
    assert msgs[2] == {"role": "user", "content": "[result of tool weather: 24 C]"}
    assert not any("tool_calls" in m or m["role"] == "tool" for m in msgs)
    (diag,) = built.diagnostics
    assert diag.code == "dangling_tool_use" and diag.data["tool_calls"] == ["c1"]
    # thinking off: DeepSeek has no rule, the exchange goes as is
    off = DeepSeekAdapter(
        "deepseek-chat", client=adapter_on(DeepSeekAdapter, Replay([]), "m", "http://x/v1").client
    )
    req = ModelRequest(
        model="deepseek-chat", items=items, reasoning=ReasoningSettings(enabled=False), cache=None
    )
    body = json.loads(off.build(req).body)
    assert body["thinking"] == {"type": "disabled"} and body["messages"][1]["tool_calls"]


def test_local_default_sends_reasoning_back_and_the_setting_turns_it_off_visibly() -> None:
    items, opaque = _turn("gpt-oss", "llamacpp", "reasoning", "thinking text")
    msgs = json.loads(_build(LlamaCppAdapter, "gpt-oss", items, (opaque,)).body)["messages"]
    assert msgs[1]["reasoning"] == "thinking text" and "reasoning_content" not in msgs[1]
    built = _build(LlamaCppAdapter, "gpt-oss", items, (opaque,), send_reasoning=False)
    assert "reasoning" not in json.loads(built.body)["messages"][1]
    assert built.reasoning_dropped == 1 and built.diagnostics[0].data["reason"] == "policy_drop"


def test_items_of_another_provider_model_or_endpoint_are_dropped_and_counted() -> None:
    items, opaque = _turn("deepseek-chat", "vllm", "reasoning_content", "x")
    built = _build(DeepSeekAdapter, "deepseek-chat", items, (opaque,))
    assert built.reasoning_dropped == 1 and built.reasoning_sent == 0
    codes = sorted(d.code for d in built.diagnostics)
    assert codes == ["dangling_tool_use", "reasoning_item_dropped"]
    items, opaque = _turn(
        "google/gemini-3",
        "openrouter",
        "reasoning_details",
        {"type": "reasoning.encrypted", "data": "D", "index": 0},
        base_url="https://elsewhere/v1",
    )
    assert _build(OpenRouterAdapter, "google/gemini-3", items, (opaque,)).reasoning_dropped == 1


@pytest.mark.parametrize(
    ("cls", "settings", "fields"),
    [
        (DeepSeekAdapter, ReasoningSettings(effort="medium"), {"thinking": ON, "reasoning_effort": "high"}),
        (DeepSeekAdapter, ReasoningSettings(effort="max"), {"thinking": ON, "reasoning_effort": "max"}),
        (DeepSeekAdapter, ReasoningSettings(enabled=False), {"thinking": {"type": "disabled"}}),
        (OpenRouterAdapter, ReasoningSettings(effort="low"), {"reasoning": {"effort": "low"}}),
        (OpenRouterAdapter, ReasoningSettings(budget_tokens=2000, display="omitted"), BUDGET),
        (OpenRouterAdapter, ReasoningSettings(enabled=False), {"reasoning": {"enabled": False}}),
        (VLLMAdapter, ReasoningSettings(effort="high"), {"reasoning_effort": "high"}),
        (VLLMAdapter, ReasoningSettings(enabled=False), {"chat_template_kwargs": {"enable_thinking": False}}),
        (OllamaAdapter, ReasoningSettings(enabled=False), {"reasoning_effort": "none"}),
    ],
)  # fmt: skip
def test_neutral_reasoning_settings_map_per_dialect(
    cls: Any, settings: ReasoningSettings, fields: dict[str, Any]
) -> None:
    adapter = adapter_on(cls, Replay([]), "m", "http://localhost:9/v1")
    body = json.loads(
        adapter.build(
            ModelRequest(model="m", items=(UserItem(text="hi"),), reasoning=settings, cache=None)
        ).body
    )
    assert {k: body[k] for k in fields} == fields
    for other in {"thinking", "reasoning", "reasoning_effort", "chat_template_kwargs"} - set(fields):
        assert other not in body


def test_a_budget_deepseek_has_no_field_for_is_refused_before_sending() -> None:
    req = ModelRequest(
        model="deepseek-chat", items=(UserItem(text="hi"),), reasoning=ReasoningSettings(budget_tokens=100)
    )
    with pytest.raises(InvalidSettingsError, match="budget_tokens"):
        get_provider("deepseek").check_request_options(req)


def test_construction_typed_errors_and_no_key_in_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidSettingsError, match="base_url"):
        ChatAdapter("my-model")
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(MissingApiKeyError):
        DeepSeekAdapter("deepseek-chat")
    key = "sk-secret-0123456789abcdef0123456789"
    a = create_adapter("openrouter:openai/gpt-5", api_key=key)
    assert key not in repr(a) and "openrouter.ai/api/v1" in repr(a)
    local = create_adapter("chat:qwen3", base_url="http://127.0.0.1:1234/v1")
    assert isinstance(local, ChatAdapter) and local.base_url == "http://127.0.0.1:1234/v1"
    assert create_adapter("ollama:qwen3").base_url == "http://localhost:11434/v1"


def test_openrouter_drop_rule_follows_the_backing_model() -> None:
    spec = get_provider("openrouter")
    assert spec.drop_refusal_for("google/gemini-3-pro-preview") is not None
    assert spec.drop_refusal_for("anthropic/claude-sonnet-4.5") is not None
    assert spec.drop_refusal_for("openai/gpt-5.1") is None
    assert get_provider("deepseek").drop_refusal_for("deepseek-chat") is not None
    assert get_provider("vllm").drop_refusal_for("qwen3") is None


async def test_a_flat_error_body_keeps_its_message_on_the_generic_dialect() -> None:
    """xAI-style ``{"code": <status text>, "error": <message>}`` (no error object) behind ``chat:``.

    The SDK keeps only the ``error`` string as the exception's body; the message and the status text
    are what name the problem, so both survive into the typed error.
    """
    body = {"code": "Some requested entity was not found",
            "error": "The model grok-9 does not exist or your team does not have access to it."}  # fmt: skip
    replay = Replay([Served(404, json.dumps(body).encode(), "application/json")])
    adapter = adapter_on(ChatAdapter, replay, "grok-9", "https://api.x.ai/v1")
    with pytest.raises(ProviderAPIError) as info:
        await collect(adapter, ModelRequest(model="grok-9", items=(UserItem(text="hi"),)))
    assert info.value.status == 404 and "does not exist or your team" in str(info.value)
    assert info.value.error_type == "Some requested entity was not found"


async def test_zai_request_id_beside_the_completion_is_a_known_field() -> None:
    """Z.AI's bodies carry ``request_id`` (the recorded GLM loop): no "unsupported" note for it."""
    body = {
        "choices": [{"finish_reason": "stop", "index": 0,
                     "message": {"content": "4", "reasoning_content": "2+2", "role": "assistant"}}],
        "created": 1773349533, "id": "20260313050530749b24d800d742e4", "model": "glm-4.7-flash",
        "object": "chat.completion", "request_id": "20260313050530749b24d800d742e4",
        "usage": {"completion_tokens": 3, "prompt_tokens": 5, "total_tokens": 8},
    }  # fmt: skip
    replay = Replay([Served(200, json.dumps(body).encode(), "application/json")])
    adapter = adapter_on(ChatAdapter, replay, "glm-4.7-flash", "https://api.z.ai/api/paas/v4")
    req = ModelRequest(model="glm-4.7-flash", items=(UserItem(text="2+2?"),), stream=False)
    events = await collect(adapter, req)
    assert completed(events).text == "4"
    assert not [e for e in events if isinstance(e, DiagnosticEvent)]
