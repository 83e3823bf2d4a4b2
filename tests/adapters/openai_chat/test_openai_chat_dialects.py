"""Kimi (``moonshot:``/``kimi:``), GLM (``zai:``/``glm:``) and xAI Chat (``xai_chat:``): what differs.

Their defaults (base URL, key variable), how the neutral reasoning settings map onto each body
(and what each refuses before sending), Kimi's reasoning_content rule end to end on the strict
simulator, xAI's flat error body and its provider-reported cost. The shared behaviour (events,
continuity, errors by status) is the adapter contract's (``tests/adapters/contract.py``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentlab.adapters import create_adapter
from agentlab.adapters.openai_chat import MoonshotAdapter, XAIChatAdapter, ZAIAdapter
from agentlab.adapters.openai_chat._xai import TICKS_PER_USD
from agentlab.adapters.registry import get_provider
from agentlab.errors import InvalidSettingsError, MissingApiKeyError, ProviderAPIError
from agentlab.neutral.items import ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest, ReasoningSettings
from tests.adapters.contract import WEATHER_OPEN as WEATHER
from tests.adapters.openai_chat.chat_support import Replay, Served, adapter_on, collect, completed


@pytest.mark.parametrize(
    ("spec", "cls", "url", "env"),
    [
        ("moonshot:kimi-k2.5", MoonshotAdapter, "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY"),
        ("kimi:kimi-k2-thinking", MoonshotAdapter, "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY"),
        ("zai:glm-4.7", ZAIAdapter, "https://api.z.ai/api/paas/v4", "ZAI_API_KEY"),
        ("glm:glm-4.7-flash", ZAIAdapter, "https://api.z.ai/api/paas/v4", "ZAI_API_KEY"),
        ("xai_chat:grok-3-mini", XAIChatAdapter, "https://api.x.ai/v1", "XAI_API_KEY"),
    ],
)
def test_model_strings_route_with_their_defaults_and_need_a_key(
    spec: str, cls: type, url: str, env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-secret-0123456789abcdef0123456789"
    monkeypatch.setenv(env, key)
    a = create_adapter(spec)
    assert isinstance(a, cls) and a.base_url == url and key not in repr(a)
    coding = create_adapter(spec, base_url="https://api.z.ai/api/coding/paas/v4", api_key="other")
    assert coding.base_url == "https://api.z.ai/api/coding/paas/v4"
    monkeypatch.delenv(env)
    with pytest.raises(MissingApiKeyError, match=env):
        create_adapter(spec)


def _body(cls: type, model: str, reasoning: ReasoningSettings | None) -> dict[str, Any]:
    adapter = cls(model, api_key="k")
    req = ModelRequest(model=model, items=(UserItem(text="hi"),), reasoning=reasoning)
    get_provider(adapter.provider).check_request_options(req)
    body: dict[str, Any] = json.loads(adapter.build(req).body)
    return {k: v for k, v in body.items() if k in ("thinking", "reasoning_effort", "reasoning")}


@pytest.mark.parametrize(
    ("cls", "model", "reasoning", "fields"),
    [
        (MoonshotAdapter, "kimi-k2.5", None, {}),
        (MoonshotAdapter, "kimi-k2.5", ReasoningSettings(), {"thinking": {"type": "enabled"}}),
        (MoonshotAdapter, "kimi-k2.5", ReasoningSettings(enabled=False), {"thinking": {"type": "disabled"}}),
        (ZAIAdapter, "glm-4.7", ReasoningSettings(), {"thinking": {"type": "enabled"}}),
        (ZAIAdapter, "glm-4.7", ReasoningSettings(effort="none"), {"thinking": {"type": "disabled"}}),
        (XAIChatAdapter, "grok-3-mini", None, {}),
        (XAIChatAdapter, "grok-3-mini", ReasoningSettings(effort="high"), {"reasoning_effort": "high"}),
        (XAIChatAdapter, "grok-3-mini", ReasoningSettings(effort="minimal"), {"reasoning_effort": "low"}),
        (XAIChatAdapter, "grok-4.3", ReasoningSettings(effort="medium"), {"reasoning_effort": "medium"}),
        (XAIChatAdapter, "grok-4.3", ReasoningSettings(enabled=False), {"reasoning_effort": "none"}),
    ],
)  # fmt: skip
def test_reasoning_settings_map_onto_each_dialects_fields(
    cls: type, model: str, reasoning: ReasoningSettings | None, fields: dict[str, Any]
) -> None:
    assert _body(cls, model, reasoning) == fields


@pytest.mark.parametrize(
    ("cls", "model", "reasoning", "needle"),
    [
        (MoonshotAdapter, "kimi-k2.5", ReasoningSettings(effort="high"), "on or off only"),
        (MoonshotAdapter, "kimi-k2.5", ReasoningSettings(budget_tokens=1024), "on or off only"),
        (MoonshotAdapter, "kimi-k2-thinking", ReasoningSettings(enabled=False), "always thinks"),
        (ZAIAdapter, "glm-4.7", ReasoningSettings(effort="high"), "zai_reasoning_effort"),
        (XAIChatAdapter, "grok-3-mini", ReasoningSettings(effort="medium"), "'low' or 'high' only"),
        (XAIChatAdapter, "grok-3-mini", ReasoningSettings(enabled=False), "always reasons"),
        (XAIChatAdapter, "grok-4.3", ReasoningSettings(budget_tokens=1024), "no thinking token budget"),
    ],
)  # fmt: skip
def test_settings_a_dialect_has_no_field_for_are_refused_before_sending(
    cls: type, model: str, reasoning: ReasoningSettings, needle: str
) -> None:
    with pytest.raises(InvalidSettingsError, match=needle) as info:
        _body(cls, model, reasoning)
    assert "\n" not in str(info.value)


def test_drop_is_refused_only_where_the_api_answers_400() -> None:
    kimi = get_provider("moonshot")
    assert kimi.drop_refusal_for("kimi-k2.5") and kimi.drop_refusal_for("kimi-k2-thinking")
    assert kimi.drop_refusal_for("kimi-k2-0905-preview") is None  # no thinking, nothing required
    assert get_provider("zai").drop_refusal_for("glm-4.7") is None
    assert get_provider("xai_chat").drop_refusal_for("grok-3-mini") is None


async def test_kimi_withheld_reasoning_gets_its_400_with_the_fix_named() -> None:
    """``send_reasoning=False`` withholds the loop's reasoning on purpose: the strict host answers 400."""
    adapter = MoonshotAdapter("sim-kimi", send_reasoning=False)
    first = ModelRequest(model="sim-kimi", items=(UserItem(text="Weather in Paris?"),), tools=(WEATHER,))
    r1 = completed(await collect(adapter, first))
    assert r1.stop_reason == "tool_use" and r1.reasoning
    results = tuple(ToolResultItem(call_id=c.call_id, output="18 C") for c in r1.tool_calls)
    history = (*first.items, *r1.items, *results)
    second = first.model_copy(update={"items": history, "continuation": r1.reasoning})
    with pytest.raises(ProviderAPIError) as info:
        await collect(adapter, second)
    err = info.value
    assert err.status == 400 and err.provider == "moonshot"
    assert "reasoning_content is missing in assistant tool call message at index 1" in str(err)
    assert "agentlab: Kimi's thinking mode needs" in str(err) and err.__cause__ is None
    kept = MoonshotAdapter("sim-kimi")  # the default sends it back: accepted
    assert completed(await collect(kept, second)).stop_reason == "end_turn"


async def test_xai_flat_error_body_keeps_its_message() -> None:
    """The xAI API answers ``{"code": <status text>, "error": <message>}``, with no error object."""
    body = {"code": "Some requested entity was not found",
            "error": "The model grok-9 does not exist or your team does not have access to it."}  # fmt: skip
    replay = Replay([Served(404, json.dumps(body).encode(), "application/json")])
    adapter = adapter_on(XAIChatAdapter, replay, "grok-9", "https://api.x.ai/v1")
    with pytest.raises(ProviderAPIError) as info:
        await collect(adapter, ModelRequest(model="grok-9", items=(UserItem(text="hi"),)))
    assert info.value.status == 404 and "does not exist or your team" in str(info.value)
    assert info.value.error_type == "Some requested entity was not found"


async def test_xai_cost_in_ticks_is_kept_as_the_provider_reported_cost() -> None:
    adapter = XAIChatAdapter("sim-xai-chat")
    req = ModelRequest(model="sim-xai-chat", items=(UserItem(text="2+2?"),))
    resp = completed(await collect(adapter, req))
    u = resp.usage
    assert u.output_tokens is not None and u.reasoning_tokens is not None and u.input_tokens is not None
    cached = u.cache_read_tokens or 0
    ticks = (u.input_tokens - cached) * 3000 + cached * 750 + u.output_tokens * 5000
    assert resp.provider_cost_usd == pytest.approx(ticks / TICKS_PER_USD)


def test_real_models_are_priced_under_the_price_librarys_provider_ids() -> None:
    assert get_provider("xai_chat").price_provider == "x-ai"
    assert get_provider("moonshot").price_provider == "moonshotai"
    assert get_provider("zai").price_provider == "zai"
