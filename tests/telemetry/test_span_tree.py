"""The span tree of a run on each simulated provider: names, parents, timing and GenAI attributes."""

from __future__ import annotations

import json

import pytest
from opentelemetry.trace import SpanKind, StatusCode

import agentlab as al
from tests.telemetry.support import SIM_MODELS, TASK, Traced, attrs, get_weather, messages, trace_id

PROVIDER_NAMES = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "gcp.gemini",
    "deepseek": "deepseek",
}


@pytest.mark.parametrize("model", SIM_MODELS)
def test_run_model_and_tool_spans(spans: Traced, model: str) -> None:
    result = al.run(model, TASK, tools=[get_weather])
    assert result.status == "completed" and result.steps == 2
    root = spans.run_span(result.run_id)
    provider, _, name = model.partition(":")

    assert root.parent is None and root.kind is SpanKind.INTERNAL
    assert root.name == "invoke_agent agentlab"
    a = attrs(root)
    assert a["gen_ai.operation.name"] == "invoke_agent"
    assert a["gen_ai.provider.name"] == PROVIDER_NAMES[provider]
    assert a["agentlab.provider"] == provider
    assert a["gen_ai.request.model"] == name
    assert a["agentlab.status"] == "completed" and a["agentlab.steps"] == 2
    tokens = result.usage.tokens
    assert a["gen_ai.usage.input_tokens"] == tokens.input_tokens
    assert a["gen_ai.usage.output_tokens"] == tokens.output_tokens
    if tokens.reasoning_tokens is None:
        assert "gen_ai.usage.reasoning.output_tokens" not in a
    else:
        assert a["gen_ai.usage.reasoning.output_tokens"] == tokens.reasoning_tokens
    assert a["agentlab.cost_usd"] == pytest.approx(result.usage.cost.total)
    assert root.status.status_code is StatusCode.UNSET

    kids = spans.children(root)
    chats = [s for s in kids if s.name.startswith("chat ")]
    tools = [s for s in kids if s.name.startswith("execute_tool ")]
    assert len(kids) == len(chats) + len(tools)
    assert [s.name for s in chats] == [f"chat {name}"] * result.steps
    calls = [c for ev in result.events if isinstance(ev, al.ToolCallEvent) for c in [ev.call]]
    assert len(tools) == len(calls) >= 1
    assert {attrs(s)["gen_ai.tool.call.id"] for s in tools} == {c.call_id for c in calls}

    for chat, record in zip(chats, result.calls, strict=True):
        c = attrs(chat)
        assert chat.kind is SpanKind.CLIENT
        assert c["gen_ai.operation.name"] == "chat"
        assert c["gen_ai.provider.name"] == PROVIDER_NAMES[provider]
        assert c["gen_ai.response.model"] == record.model
        assert c["gen_ai.usage.input_tokens"] == record.usage.input_tokens
        assert c["gen_ai.usage.output_tokens"] == record.usage.output_tokens
        if record.usage.reasoning_tokens is not None:
            assert c["gen_ai.usage.reasoning.output_tokens"] == record.usage.reasoning_tokens
            assert 0 < record.usage.reasoning_tokens <= record.usage.output_tokens  # type: ignore[operator]
        if record.usage.cache_read_tokens is None:
            assert "gen_ai.usage.cache_read.input_tokens" not in c
        else:
            assert c["gen_ai.usage.cache_read.input_tokens"] == record.usage.cache_read_tokens
        assert c.get("gen_ai.response.id") == record.response_id
        for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
            assert key not in c  # content is opt-in
    assert attrs(chats[0])["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert attrs(chats[1])["gen_ai.response.finish_reasons"] == ("stop",)

    for tool in tools:
        t = attrs(tool)
        assert tool.name == "execute_tool get_weather"
        assert t["gen_ai.operation.name"] == "execute_tool" and t["gen_ai.tool.name"] == "get_weather"
        assert "gen_ai.tool.call.arguments" not in t and "gen_ai.tool.call.result" not in t
        assert tool.status.status_code is StatusCode.UNSET

    # real times: the tree nests, and a step's tools run after its model call and before the next one
    assert root.start_time and root.end_time
    for s in kids:
        assert s.start_time and s.end_time
        assert root.start_time <= s.start_time <= s.end_time <= root.end_time
    assert chats[0].end_time <= min(t.start_time or 0 for t in tools)  # type: ignore[operator]
    assert max(t.end_time or 0 for t in tools) <= chats[1].start_time  # type: ignore[operator]
    assert {trace_id(s) for s in kids} == {trace_id(root)}


def test_content_is_opt_in_and_follows_the_convention(content_spans: Traced) -> None:
    result = al.run("openai:sim-reasoner", TASK, tools=[get_weather])
    root = content_spans.run_span(result.run_id)
    assert messages(root, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": TASK}]}
    ]
    assert messages(root, "gen_ai.output.messages")[0]["parts"][0]["content"] == result.output
    chats = content_spans.named("chat ")
    first_out = messages(chats[0], "gen_ai.output.messages")[0]
    assert first_out["finish_reason"] == "tool_call"
    assert {p["type"] for p in first_out["parts"]} == {"tool_call"}
    second_in = messages(chats[1], "gen_ai.input.messages")
    assert [m["role"] for m in second_in] == ["user", "assistant", "tool"]
    assert all(p["type"] == "tool_call_response" for p in second_in[2]["parts"])
    tool = content_spans.named("execute_tool ")[0]
    t = attrs(tool)
    assert t["gen_ai.tool.call.result"] == get_weather.fn(**json.loads(t["gen_ai.tool.call.arguments"]))
