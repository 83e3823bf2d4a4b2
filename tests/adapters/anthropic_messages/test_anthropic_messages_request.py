"""Request building: thinking settings, item mapping, verbatim re-interleaving, cache breakpoints.

Also the thinking settings' rules and the documented recovery. Pure (no I/O):
``AnthropicMessagesAdapter.build``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.errors import ConfigError, InvalidSettingsError, MissingApiKeyError
from agentlab.neutral.items import (
    AssistantTextItem,
    PortableItem,
    ProviderReasoningItem,
    SummaryItem,
    SystemItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import CacheHints, ModelRequest, ReasoningSettings, ToolSpec
from tests.adapters.anthropic_messages.anthropic_support import sdk_client

MODEL = "claude-sonnet-4-0"
ADAPTIVE = "claude-sonnet-4-6"  # takes adaptive thinking (MODEL, a Claude 4.0, takes budgeted only)
BASE = "https://api.anthropic.com"
TOOL = ToolSpec(name="get_weather", description="Weather.", parameters={"type": "object", "properties": {}})


def _adapter(model: str = MODEL) -> AnthropicMessagesAdapter:
    return AnthropicMessagesAdapter(model, client=sdk_client(lambda r: None))


def _req(items: tuple[PortableItem, ...] = (UserItem(text="hi"),), **kw: Any) -> ModelRequest:
    kw.setdefault("cache", None)
    kw.setdefault("model", MODEL)
    return ModelRequest(items=items, **kw)


def _body(req: ModelRequest, model: str = MODEL) -> dict[str, Any]:
    return _adapter(model).build(req).body


def _think(turn: str, index: int, text: str = "t", sig: str = "sig", **kw: Any) -> ProviderReasoningItem:
    payload = json.dumps({"type": "thinking", "thinking": text, "signature": sig}).encode()
    opts: dict[str, Any] = {"provider": "anthropic", "api": "messages", "model": MODEL, "base_url": BASE}
    opts.update(kw)
    return ProviderReasoningItem(payload, block_type="thinking", turn_id=turn, index=index, **opts)


def _redacted(turn: str, index: int) -> ProviderReasoningItem:
    payload = b'{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}'
    return ProviderReasoningItem(
        payload,
        provider="anthropic",
        api="messages",
        model=MODEL,
        block_type="redacted_thinking",
        turn_id=turn,
        index=index,
        base_url=BASE,
    )


# ---------------------------------------------------------------- thinking configuration


def test_budget_adaptive_display_and_disabled() -> None:
    assert _body(_req(reasoning=ReasoningSettings(budget_tokens=2000)))["thinking"] == {
        "type": "enabled",
        "budget_tokens": 2000,
    }
    # adaptive thinking needs a model that takes it (claude-sonnet-4-0 answers 400: budgeted only)
    settings = ReasoningSettings(adaptive=True, display="omitted", effort="high")
    adaptive = _req(model=ADAPTIVE, reasoning=settings)
    body = _body(adaptive, model=ADAPTIVE)
    assert body["thinking"] == {"type": "adaptive", "display": "omitted"}
    assert body["output_config"] == {"effort": "high"}
    assert "thinking" not in _body(_req(reasoning=ReasoningSettings(enabled=False)))
    assert "thinking" not in _body(_req(reasoning=None))


def test_effort_picks_a_budget_and_default_max_tokens_leaves_room() -> None:
    body = _body(_req(reasoning=ReasoningSettings(effort="low")))
    assert body["thinking"]["budget_tokens"] == 2048 and body["max_tokens"] == 16000
    high = _body(_req(reasoning=ReasoningSettings(effort="high")))
    assert high["thinking"]["budget_tokens"] == 16384 and high["max_tokens"] == 16384 + 4096


def test_models_the_sdk_steers_to_adaptive_default_to_adaptive() -> None:
    body = _body(_req(model="claude-opus-4-6", reasoning=ReasoningSettings()), model="claude-opus-4-6")
    assert body["thinking"] == {"type": "adaptive"}


def test_interleaved_adds_the_beta_header_only_for_budgeted_thinking() -> None:
    built = _adapter().build(_req(reasoning=ReasoningSettings(budget_tokens=2048, interleaved=True)))
    assert built.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    adaptive = _adapter(ADAPTIVE).build(
        _req(model=ADAPTIVE, reasoning=ReasoningSettings(adaptive=True, interleaved=True))
    )
    assert "anthropic-beta" not in adaptive.headers
    merged = AnthropicMessagesAdapter(
        MODEL, client=sdk_client(lambda r: None), extra_headers={"anthropic-beta": "other-beta"}
    ).build(_req(reasoning=ReasoningSettings(budget_tokens=2048, interleaved=True)))
    assert merged.headers["anthropic-beta"] == "other-beta,interleaved-thinking-2025-05-14"
    with pytest.raises(InvalidSettingsError, match="Claude 4"):
        _body(
            _req(
                model="claude-3-7-sonnet-latest",
                reasoning=ReasoningSettings(budget_tokens=2048, interleaved=True),
            ),
            model="claude-3-7-sonnet-latest",
        )


def test_interleaved_budget_may_exceed_max_tokens() -> None:
    body = _body(
        _req(reasoning=ReasoningSettings(budget_tokens=20000, interleaved=True), max_output_tokens=8000)
    )
    assert body["thinking"]["budget_tokens"] == 20000 and body["max_tokens"] == 8000


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"reasoning": ReasoningSettings(budget_tokens=512)}, "at least 1024"),
        (
            {"reasoning": ReasoningSettings(budget_tokens=4000), "max_output_tokens": 4000},
            "below max_output_tokens",
        ),
        ({"reasoning": ReasoningSettings(budget_tokens=2048), "temperature": 0.5}, "temperature=0.5"),
        ({"reasoning": None, "temperature": 1.5}, "between 0 and 1"),
        (
            {"reasoning": ReasoningSettings(budget_tokens=2048), "provider_options": {"anthropic_top_k": 5}},
            "top_k",
        ),
        (
            {
                "reasoning": ReasoningSettings(budget_tokens=2048),
                "provider_options": {"anthropic_top_p": 0.5},
            },
            "top_p",
        ),
        ({"reasoning": ReasoningSettings(adaptive=True, budget_tokens=2048)}, "not both"),
        ({"reasoning": ReasoningSettings(effort="none")}, "enabled=False"),
        ({"model": ADAPTIVE, "reasoning": ReasoningSettings(adaptive=True, effort="minimal")}, "not offered"),
        ({"reasoning": ReasoningSettings(), "tools": (TOOL,), "tool_choice": "required"}, "forced tool use"),
        ({"provider_options": {"anthropic_messages": []}}, "cannot set"),
    ],
)
def test_settings_the_api_would_reject_fail_before_sending(kw: dict[str, Any], match: str) -> None:
    r = _req(**kw)
    with pytest.raises(InvalidSettingsError, match=match):
        _body(r, model=r.model)


def test_temperature_one_and_top_p_in_range_are_allowed_with_thinking() -> None:
    """On an API version that still has sampling fields (pinned on the adapter)."""
    req = _req(
        reasoning=ReasoningSettings(budget_tokens=2048),
        temperature=1.0,
        provider_options={"anthropic_top_p": 0.96},
    )
    pinned = AnthropicMessagesAdapter(
        MODEL, client=sdk_client(lambda r: None), extra_headers={"anthropic-version": "2023-06-01"}
    )
    body = pinned.build(req).body
    assert body["temperature"] == 1.0 and body["top_p"] == 0.96
    # On the version the SDK sends, sampling fields do not exist: refused before sending.
    with pytest.raises(InvalidSettingsError, match="Extra inputs are not permitted"):
        _body(req)


def test_another_providers_options_are_refused_as_on_openai() -> None:
    """A run is pinned to one provider: an ``openai_*`` knob here would silently do nothing."""
    with pytest.raises(InvalidSettingsError, match="another provider"):
        _body(_req(provider_options={"openai_store": False}))


# ---------------------------------------------------------------- items


def test_items_map_to_system_and_merged_turns() -> None:
    items: tuple[PortableItem, ...] = (
        SystemItem(text="be brief"),
        UserItem(text="a"),
        SummaryItem(text="earlier: b"),
        AssistantTextItem(text="calling", turn_id="m1", index=0),
        ToolCallItem(call_id="t1", name="get_weather", arguments='{"city":"Paris"}', turn_id="m1", index=1),
        ToolCallItem(call_id="t2", name="get_weather", arguments='{"city":"Rome"}', turn_id="m1", index=2),
        ToolResultItem(call_id="t1", output="18 C"),
        ToolResultItem(call_id="t2", output="boom", is_error=True),
    )
    body = _body(_req(items, tools=(TOOL,), parallel_tool_calls=False, reasoning=None))
    assert body["system"] == [{"type": "text", "text": "be brief"}]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "earlier: b"},
    ]
    assert body["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "t1",
        "name": "get_weather",
        "input": {"city": "Paris"},
    }
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "18 C"},
        {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": True},
    ]
    assert body["tools"] == [
        {"name": "get_weather", "description": "Weather.", "input_schema": TOOL.parameters}
    ]
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


def test_tool_results_open_the_user_turn() -> None:
    items: tuple[PortableItem, ...] = (
        UserItem(text="a"),
        ToolCallItem(call_id="t1", name="get_weather", turn_id="m1", index=0),
        UserItem(text="also this"),
        ToolResultItem(call_id="t1", output="x"),
    )
    content = _body(_req(items, reasoning=None))["messages"][2]["content"]
    assert [b["type"] for b in content] == ["tool_result", "text"]


@pytest.mark.parametrize(
    ("items", "match"),
    [
        ((UserItem(text="a"), ToolCallItem(call_id="t1", name="f")), "no ToolResultItem"),
        ((UserItem(text=""),), "empty"),
        ((SystemItem(text="only system"),), "no user or assistant"),
    ],
)
def test_bad_history_is_a_typed_error(items: tuple[PortableItem, ...], match: str) -> None:
    with pytest.raises(InvalidSettingsError, match=match):
        _body(_req(items, reasoning=None))


@pytest.mark.parametrize("arguments", ["{bad", "[1]"])
def test_a_call_with_malformed_arguments_goes_back_with_an_empty_input(arguments: str) -> None:
    """Kept in history (answered with an error result); the API takes only an object as input."""
    items: tuple[PortableItem, ...] = (
        UserItem(text="a"),
        ToolCallItem(call_id="t1", name="f", arguments=arguments, turn_id="m1", index=0),
        ToolResultItem(call_id="t1", output="Error: invalid arguments", is_error=True),
    )
    (use,) = _body(_req(items, reasoning=None))["messages"][1]["content"]
    assert (use["type"], use["id"], use["input"]) == ("tool_use", "t1", {})


# ---------------------------------------------------------------- continuation: verbatim, in place


def test_reasoning_goes_back_at_its_index_inside_its_own_turn() -> None:
    items: tuple[PortableItem, ...] = (
        UserItem(text="q"),
        AssistantTextItem(text="first", turn_id="m1", index=1),
        ToolCallItem(call_id="t1", name="get_weather", turn_id="m1", index=4),
        ToolResultItem(call_id="t1", output="r"),
        AssistantTextItem(text="answer", turn_id="m2", index=1),
        UserItem(text="next"),
    )
    cont = (_think("m1", 3, "c"), _think("m2", 0, "d"), _think("m1", 0, "a"), _redacted("m1", 2))
    built = _adapter().build(_req(items, continuation=cont, reasoning=ReasoningSettings(budget_tokens=2048)))
    msgs = built.body["messages"]
    assert [(b["type"], b.get("thinking") or b.get("text") or b.get("id")) for b in msgs[1]["content"]] == [
        ("thinking", "a"),
        ("text", "first"),
        ("redacted_thinking", None),
        ("thinking", "c"),
        ("tool_use", "t1"),
    ]
    assert msgs[1]["content"][2] == {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
    assert [b["type"] for b in msgs[3]["content"]] == ["thinking", "text"]
    assert built.reasoning_dropped == 0 and not built.diagnostics


def test_payload_is_sent_as_received_with_every_key() -> None:
    payload = b'{"type":"thinking","thinking":"x \\u00e9\\n","signature":"S+/=","future_field":1}'
    item = ProviderReasoningItem(
        payload,
        provider="anthropic",
        api="messages",
        model=MODEL,
        block_type="thinking",
        turn_id="m1",
        index=0,
    )
    items = (UserItem(text="q"), AssistantTextItem(text="a", turn_id="m1", index=1), UserItem(text="n"))
    block = _body(_req(items, continuation=(item,)))["messages"][1]["content"][0]
    assert block == json.loads(payload)


@pytest.mark.parametrize(
    "foreign",
    [
        {"provider": "openai", "api": "responses"},
        {"model": "claude-opus-4-6"},
        {"base_url": "http://sim.agentlab.local"},
    ],
    ids=["other-provider", "other-model", "other-endpoint"],
)
def test_items_made_elsewhere_are_dropped_with_a_diagnostic(foreign: dict[str, Any]) -> None:
    items = (UserItem(text="q"), AssistantTextItem(text="a", turn_id="m1", index=1), UserItem(text="n"))
    built = _adapter().build(_req(items, continuation=(_think("m1", 0, **foreign),)))
    assert built.reasoning_dropped == 1 and [d.code for d in built.diagnostics] == ["reasoning_item_dropped"]
    assert [b["type"] for b in built.body["messages"][1]["content"]] == ["text"]


def test_orphaned_and_trailing_items_are_not_sent() -> None:
    items = (UserItem(text="q"), AssistantTextItem(text="a", turn_id="m1", index=0), UserItem(text="n"))
    built = _adapter().build(_req(items, continuation=(_think("gone", 0), _think("m1", 5))))
    assert built.reasoning_dropped == 2
    assert [d.data for d in built.diagnostics] == [
        {"count": 1, "reason": "orphaned", "provider": "anthropic"},
        {"count": 1, "reason": "trailing", "provider": "anthropic"},
    ]
    assert [b["type"] for b in built.body["messages"][1]["content"]] == ["text"]


# ---------------------------------------------------------------- the documented recovery


def _dangling(with_thinking: bool) -> ModelRequest:
    items: tuple[PortableItem, ...] = (
        UserItem(text="Is it warmer in Paris or Rome?"),
        ToolCallItem(call_id="t1", name="get_weather", arguments='{"city": "Paris"}', turn_id="m1", index=1),
        ToolResultItem(call_id="t1", output="18 C"),
    )
    cont = (_think("m1", 0),) if with_thinking else ()
    return _req(items, continuation=cont, tools=(TOOL,), reasoning=ReasoningSettings(budget_tokens=2048))


def test_dangling_tool_use_without_thinking_becomes_text_and_thinking_stays_on() -> None:
    built = _adapter().build(_dangling(with_thinking=False))
    assert built.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert built.body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": '[called tool get_weather with {"city": "Paris"}]'}],
        },
        {"role": "user", "content": [{"type": "text", "text": "[result of tool get_weather: 18 C]"}]},
    ]
    assert [d.code for d in built.diagnostics] == ["dangling_tool_use"]


def test_live_continuation_needs_no_recovery() -> None:
    built = _adapter().build(_dangling(with_thinking=True))
    assert [b["type"] for b in built.body["messages"][1]["content"]] == ["thinking", "tool_use"]
    assert not built.diagnostics


def test_without_thinking_the_tool_exchange_stays_structured() -> None:
    req = _dangling(with_thinking=False).model_copy(update={"reasoning": None})
    built = _adapter().build(req)
    assert [b["type"] for b in built.body["messages"][1]["content"]] == ["tool_use"]
    assert not built.diagnostics


# ---------------------------------------------------------------- cache breakpoints


def _loop_items() -> tuple[PortableItem, ...]:
    return (
        SystemItem(text="sys"),
        UserItem(text="q"),
        ToolCallItem(call_id="t1", name="get_weather", turn_id="m1", index=1),
        ToolResultItem(call_id="t1", output="r"),
    )


def test_cache_hints_mark_system_last_tool_and_last_message() -> None:
    body = _body(
        _req(
            _loop_items(),
            continuation=(_think("m1", 0),),
            tools=(TOOL, TOOL.model_copy(update={"name": "other"})),
            cache=CacheHints(),
        )
    )
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["tools"][0] and body["tools"][1]["cache_control"] == {
        "type": "ephemeral"
    }
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["messages"][1]["content"][0]  # the thinking block


def test_breakpoint_never_lands_on_a_thinking_block() -> None:
    items = (UserItem(text="q"), AssistantTextItem(text="prefill", turn_id="m1", index=1))
    body = _body(_req(items, continuation=(_think("m1", 0),), cache=CacheHints(system=False, tools=False)))
    blocks = body["messages"][-1]["content"]
    assert [(b["type"], "cache_control" in b) for b in blocks] == [("thinking", False), ("text", True)]


def test_cache_ttls() -> None:
    body = _body(_req(_loop_items(), tools=(TOOL,), cache=CacheHints(ttl="1h"), reasoning=None))
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    built = _adapter().build(_req(_loop_items(), tools=(TOOL,), cache=CacheHints(ttl="24h"), reasoning=None))
    assert built.body["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert [d.code for d in built.diagnostics] == ["cache_hint_adjusted"]
    with pytest.raises(InvalidSettingsError, match="1h ttl must come before"):
        _body(
            _req(
                _loop_items(),
                tools=(TOOL,),
                cache=CacheHints(ttl="5m"),
                provider_options={"anthropic_cache_control": {"type": "ephemeral", "ttl": "1h"}},
            )
        )


def test_at_most_four_breakpoints_counting_the_users() -> None:
    auto = {"anthropic_cache_control": {"type": "ephemeral"}}
    body = _body(_req(_loop_items(), tools=(TOOL,), cache=CacheHints(), provider_options=auto))
    assert body["cache_control"] == {"type": "ephemeral"}
    own_system = {
        **auto,
        "anthropic_system": [
            {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}},
        ],
    }
    with pytest.raises(InvalidSettingsError, match="5 cache breakpoints"):
        _body(_req(_loop_items(), tools=(TOOL,), cache=CacheHints(), provider_options=own_system))


def test_a_tool_parameter_named_cache_control_is_not_a_breakpoint() -> None:
    tool = ToolSpec(
        name="t", parameters={"type": "object", "properties": {"cache_control": {"type": "string"}}}
    )
    body = _body(_req(tools=(tool,), cache=CacheHints(), reasoning=None))
    assert body["tools"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" in body["tools"][0]["input_schema"]["properties"]


# ---------------------------------------------------------------- construction


def test_real_model_without_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(MissingApiKeyError) as info:
        AnthropicMessagesAdapter("claude-sonnet-4-5")
    assert info.value.env_var == "ANTHROPIC_API_KEY"


def test_key_never_shows_in_repr() -> None:
    adapter = AnthropicMessagesAdapter("claude-sonnet-4-5", api_key="sk-ant-secret-123")
    assert "sk-ant-secret-123" not in repr(adapter) and "sk-ant" not in str(adapter)
    assert adapter.base_url == "https://api.anthropic.com"


def test_bad_construction_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        AnthropicMessagesAdapter("", client=sdk_client(lambda r: None))
    with pytest.raises(ConfigError, match="AsyncAnthropic"):
        AnthropicMessagesAdapter(MODEL, client=object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not beside it"):
        AnthropicMessagesAdapter(MODEL, client=sdk_client(lambda r: None), api_key="k")


def test_sim_model_without_client_uses_the_simulator() -> None:
    adapter = AnthropicMessagesAdapter("sim-thinker")
    assert adapter.base_url == "http://sim.agentlab.local"
