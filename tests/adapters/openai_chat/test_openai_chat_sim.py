"""Tool loops per dialect against the strict simulated profiles (``agentlab.sim`` Chat Completions hosts).

* DeepSeek: within a loop the ``reasoning_content`` goes back and is accepted; across runs of a
  ``Session`` (continuation released) the earlier tool exchange is sent as plain text, which the strict
  profile accepts, while the same history sent as tool calls without their reasoning gets the real 400.
* OpenRouter: the Gemini-backed model accepts the loop only with its ``reasoning_details`` back
  unchanged; ``drop`` is refused for it and runs for the OpenAI-backed one.
* Local: lenient; reasoning goes back by default, and ``send_reasoning=False`` still completes.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import openai
import pytest

import agentlab as al
from agentlab.adapters.openai_chat import DeepSeekAdapter, OpenRouterAdapter, VLLMAdapter
from agentlab.adapters.openai_chat._adapter import ChatCompletionsAdapter
from agentlab.errors import ConfigError, ProviderAPIError
from agentlab.neutral.events import ModelCallCompletedEvent
from agentlab.neutral.items import ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest
from agentlab.sim import chat_client
from tests.adapters.contract import WEATHER_OPEN as WEATHER
from tests.adapters.contract import RecordingTransport, collect, completed


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"21 C in {city}"


def _adapter(
    cls: type[ChatCompletionsAdapter], dialect: str, model: str, **kw: Any
) -> tuple[Any, RecordingTransport]:
    far = RecordingTransport()
    return cls(model, client=chat_client(dialect, transport=far), max_retries=0, **kw), far


def _loop(adapter: Any, model: str, *, keep: bool = True) -> tuple[Any, Any, ModelRequest]:
    first = ModelRequest(
        model=model, items=(UserItem(text="What's the weather in Florence, Italy?"),), tools=(WEATHER,)
    )
    r1 = completed(asyncio.run(collect(adapter, first)))
    assert r1.stop_reason == "tool_use" and r1.reasoning
    results = [ToolResultItem(call_id=c.call_id, name=c.name, output="21 C, clear") for c in r1.tool_calls]
    step2 = first.model_copy(
        update={"items": (*first.items, *r1.items, *results), "continuation": r1.reasoning if keep else ()}
    )
    return r1, asyncio.run(collect(adapter, step2)), step2


def test_deepseek_loop_sends_reasoning_content_back_and_the_strict_profile_accepts_it() -> None:
    adapter, far = _adapter(DeepSeekAdapter, "deepseek", "sim-deepseek")
    r1, events, _ = _loop(adapter, "sim-deepseek")
    assert completed(events).stop_reason == "end_turn"
    sent = json.loads(far.bodies[1])["messages"][1]
    assert sent["tool_calls"] and sent["reasoning_content"] == json.loads(
        r1.reasoning[0].unseal(provider="deepseek", api="chat_completions")
    )


def test_deepseek_rejects_a_tool_call_turn_without_reasoning_content_with_the_real_400() -> None:
    adapter, far = _adapter(DeepSeekAdapter, "deepseek", "sim-deepseek")
    _loop(adapter, "sim-deepseek")
    body = json.loads(far.bodies[1])
    del body["messages"][1]["reasoning_content"]  # what a client that drops it would send
    with pytest.raises(openai.BadRequestError) as info:
        asyncio.run(adapter.client.post("/chat/completions", cast_to=httpx2.Response, body=body))
    assert "must be passed back" in str(info.value.body)


def test_deepseek_session_across_runs_sends_the_earlier_exchange_as_text_and_is_accepted() -> None:
    far = RecordingTransport()
    adapter = DeepSeekAdapter("sim-deepseek", client=chat_client("deepseek", transport=far), max_retries=0)
    session = al.Session()
    r1 = session.run(
        "deepseek:sim-deepseek",
        "What's the weather in Florence, Italy?",
        tools=[get_weather],
        adapter=adapter,
    )
    r1.raise_for_status()
    assert [c.stop_reason for c in r1.calls] == ["tool_use", "end_turn"]
    r2 = session.run("deepseek:sim-deepseek", "And what about Paris?", tools=[get_weather], adapter=adapter)
    r2.raise_for_status()  # the strict profile accepted every request of run 2
    first_of_run2 = json.loads(far.bodies[len(r1.calls)])["messages"]
    assert not any(m.get("tool_calls") and "reasoning_content" not in m for m in first_of_run2)
    assert any("[called tool get_weather with" in (m.get("content") or "") for m in first_of_run2)
    assert any(getattr(e, "code", None) == "dangling_tool_use" for e in r2.events)
    # Run 2's own tool calls (if any) went back with their reasoning_content, as within any loop.
    for body in far.bodies[len(r1.calls) + 1 :]:
        for m in json.loads(body)["messages"]:
            if m.get("tool_calls"):
                assert "reasoning_content" in m


def test_openrouter_gemini_loop_needs_its_reasoning_details_back() -> None:
    adapter, far = _adapter(OpenRouterAdapter, "openrouter", "sim-router-gemini")
    r1, events, _ = _loop(adapter, "sim-router-gemini")
    assert completed(events).stop_reason == "end_turn"
    details = json.loads(far.bodies[1])["messages"][1]["reasoning_details"]
    assert details == [
        json.loads(i.unseal(provider="openrouter", api="chat_completions")) for i in r1.reasoning
    ]
    adapter2, _ = _adapter(OpenRouterAdapter, "openrouter", "sim-router-gemini")
    with pytest.raises(ProviderAPIError, match="Gemini models require OpenRouter reasoning details"):
        _loop(adapter2, "sim-router-gemini", keep=False)


def test_openrouter_drop_is_refused_for_gemini_and_runs_for_openai_backed_models() -> None:
    with pytest.raises(ConfigError, match="reasoning_details"):
        al.Run("openrouter:sim-router-gemini", "hi", continuation_policy="drop")
    far = RecordingTransport()
    adapter = OpenRouterAdapter(
        "sim-router-openai", client=chat_client("openrouter", transport=far), max_retries=0
    )
    result = al.run_sync(
        al.Run("openrouter:sim-router-openai", "What's the weather in Florence, Italy?", tools=[get_weather],
               adapter=adapter, continuation_policy="drop").arun()
    )  # fmt: skip
    result.raise_for_status()
    assert not any("reasoning_details" in m for b in far.bodies for m in json.loads(b)["messages"])


@pytest.mark.parametrize("send", [True, False])
def test_local_loop_is_lenient_and_sends_reasoning_back_by_default(send: bool) -> None:
    adapter, far = _adapter(VLLMAdapter, "local", "sim-local", send_reasoning=send)
    _, events, _ = _loop(adapter, "sim-local")
    resp = completed(events)
    # accepted either way; without its reasoning the model lost its plan and may ask for the tool again
    assert resp.stop_reason == "end_turn" if send else resp.stop_reason in ("end_turn", "tool_use")
    assert resp.usage.reasoning_source == "unknown" and resp.usage.reasoning_tokens is None
    assert ("reasoning_content" in json.loads(far.bodies[1])["messages"][1]) is send


@pytest.mark.parametrize("model", ["sim-router-gemini", "sim-router-claude"])
def test_openrouter_session_across_runs_is_accepted_without_the_earlier_loops_details(model: str) -> None:
    far = RecordingTransport()
    adapter = OpenRouterAdapter(model, client=chat_client("openrouter", transport=far), max_retries=0)
    session = al.Session()
    r1 = session.run(
        f"openrouter:{model}", "What's the weather in Florence, Italy?", tools=[get_weather], adapter=adapter
    )
    r1.raise_for_status()
    r2 = session.run(f"openrouter:{model}", "And what about Paris?", tools=[get_weather], adapter=adapter)
    r2.raise_for_status()
    earlier = json.loads(far.bodies[len(r1.calls)])["messages"]
    assert any(m.get("tool_calls") and "reasoning_details" not in m for m in earlier)
    # OpenRouter's own cost figure is kept on each call record beside agentlab's computed one
    calls = [e for e in r1.events if isinstance(e, ModelCallCompletedEvent)]
    assert calls and all(e.provider_cost_usd and e.provider_cost_usd > 0 for e in calls)
    assert all(e.cost_usd is not None for e in calls)


def test_deepseek_send_reasoning_false_gets_deepseeks_400_at_step_two_not_a_step_limit() -> None:
    """Withheld reasoning is not lost reasoning: the loop's own tool calls stay tool calls.

    Rewriting them as text (the recovery for an earlier run's exchange) hid every tool result from
    the model, and the run spent all its steps calling the tool again (issue 29, item 11).
    """
    far = RecordingTransport()
    adapter = DeepSeekAdapter(
        "sim-deepseek", client=chat_client("deepseek", transport=far), max_retries=0, send_reasoning=False
    )
    with pytest.raises(ProviderAPIError) as info:
        al.run("deepseek:sim-deepseek", "What's the weather in Florence, Italy?", tools=[get_weather],
               adapter=adapter, max_steps=5)  # fmt: skip
    message = str(info.value)
    assert "The `reasoning_content` in the thinking mode must be passed back to the API." in message
    assert "send_reasoning" in message and "\n" not in message
    assert len(far.bodies) == 2
    sent = json.loads(far.bodies[1])["messages"]
    assert any(m.get("tool_calls") and "reasoning_content" not in m for m in sent)
    assert not any("[called tool" in (m.get("content") or "") for m in sent)
