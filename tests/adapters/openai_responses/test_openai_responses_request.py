"""Request building for the OpenAI Responses adapter (pure: no I/O).

What matters here is what the real API would reject or silently degrade: a reasoning item sent
without its follower (400), an id-only item under store=false (404), another provider's item, a
temperature on a reasoning model, strict mode on a schema that does not qualify, and a cacheable
prefix that changes between the steps of a loop.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from agentlab.adapters.openai_responses import build_request, strict_schema_ok
from agentlab.adapters.openai_responses._raw import raw_member
from agentlab.adapters.openai_responses._request import SUMMARY_MARKER, prompt_cache_key
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.items import (
    AssistantTextItem,
    ProviderReasoningItem,
    SummaryItem,
    SystemItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import CacheHints, ModelRequest, ReasoningSettings, ToolSpec
from tests.adapters.contract import WEATHER

BASE = "https://api.openai.com/v1"


def body(req: ModelRequest, model: str | None = None) -> dict[str, Any]:
    built = build_request(req, model=model or req.model, base_url=BASE)
    out: dict[str, Any] = json.loads(built.body)
    return out


def rs(
    turn: str, index: int, *, enc: str | None = "gAAAA-enc", model: str = "gpt-5", **kw: Any
) -> ProviderReasoningItem:
    item: dict[str, Any] = {"id": f"rs_{turn}_{index}", "type": "reasoning", "summary": []}
    if enc is not None:
        item["encrypted_content"] = enc
    return ProviderReasoningItem(
        json.dumps(item).encode(),
        provider=kw.pop("provider", "openai"),
        api=kw.pop("api", "responses"),
        model=model,
        block_type="reasoning",
        turn_id=turn,
        index=index,
        base_url=kw.pop("base_url", BASE),
    )


def call(turn: str, index: int, call_id: str, city: str = "Paris") -> ToolCallItem:
    return ToolCallItem(
        call_id=call_id,
        name="get_weather",
        arguments=json.dumps({"city": city}),
        turn_id=turn,
        index=index,
        provider_item_id=f"fc_{turn}_{index}",
    )


def req(*items: Any, continuation: tuple[ProviderReasoningItem, ...] = (), **kw: Any) -> ModelRequest:
    kw.setdefault("model", "gpt-5")
    return ModelRequest(items=tuple(items), continuation=continuation, **kw)


def kinds(b: dict[str, Any]) -> list[str]:
    return [i.get("type") or i["role"] for i in b["input"]]


# ---------------------------------------------------------------- stateless, settings


def test_always_stateless_and_asks_for_encrypted_reasoning() -> None:
    b = body(req(SystemItem(text="sys"), UserItem(text="hi")))
    assert b["store"] is False and b["include"] == ["reasoning.encrypted_content"]
    assert "previous_response_id" not in b and "conversation" not in b
    assert b["instructions"] == "sys" and b["input"] == [{"role": "user", "content": "hi"}]
    assert b["reasoning"] == {"summary": "auto"}


def test_non_reasoning_model_gets_no_reasoning_parameters() -> None:
    b = body(req(UserItem(text="hi"), model="gpt-4o", temperature=0.2))
    assert "reasoning" not in b and "include" not in b and b["temperature"] == 0.2
    with pytest.raises(InvalidSettingsError, match="not a reasoning model"):
        body(req(UserItem(text="hi"), model="gpt-4o", reasoning=ReasoningSettings(effort="high")))


def test_temperature_on_reasoning_model_is_refused_before_sending() -> None:
    with pytest.raises(InvalidSettingsError, match="temperature"):
        body(req(UserItem(text="hi"), temperature=0.5))


@pytest.mark.parametrize(
    ("settings", "model", "expected"),
    [
        (
            ReasoningSettings(effort="high", summary="detailed"),
            "gpt-5",
            {"effort": "high", "summary": "detailed"},
        ),
        (ReasoningSettings(effort="low", summary=None), "gpt-5", {"effort": "low"}),
        (ReasoningSettings(enabled=False), "gpt-5.1", {"effort": "none"}),
    ],
)
def test_reasoning_settings(settings: ReasoningSettings, model: str, expected: dict[str, str]) -> None:
    assert body(req(UserItem(text="q"), model=model, reasoning=settings))["reasoning"] == expected


@pytest.mark.parametrize(
    ("settings", "model", "match"),
    [
        (ReasoningSettings(effort="max"), "gpt-5", "Anthropic"),
        (ReasoningSettings(enabled=False), "gpt-5", "cannot turn reasoning off"),
        (ReasoningSettings(effort="none"), "o3", "does not accept"),
    ],
)
def test_reasoning_settings_the_api_would_reject(settings: ReasoningSettings, model: str, match: str) -> None:
    with pytest.raises(InvalidSettingsError, match=match):
        body(req(UserItem(text="q"), model=model, reasoning=settings))


def test_anthropic_only_reasoning_knobs_are_reported_not_silently_ignored() -> None:
    built = build_request(
        req(UserItem(text="q"), reasoning=ReasoningSettings(budget_tokens=2000, adaptive=True)),
        model="gpt-5",
        base_url=BASE,
    )
    assert sorted(d.data["setting"] for d in built.diagnostics) == ["adaptive", "budget_tokens"]


def test_provider_options_escape_hatch() -> None:
    b = body(
        req(UserItem(text="q"), provider_options={"openai_service_tier": "flex", "openai_include": ["x"]})
    )
    assert b["service_tier"] == "flex" and b["include"] == ["reasoning.encrypted_content", "x"]
    with pytest.raises(InvalidSettingsError, match="another provider"):
        body(req(UserItem(text="q"), provider_options={"anthropic_betas": ["x"]}))
    for owned in ("openai_store", "openai_previous_response_id", "openai_input"):
        with pytest.raises(InvalidSettingsError, match="stateless"):
            body(req(UserItem(text="q"), provider_options={owned: True}))


# ---------------------------------------------------------------- tools


def test_strict_only_for_qualifying_schemas() -> None:
    nested_ok = {
        "type": "object",
        "properties": {
            "a": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}},
                    "required": ["x"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    nested_bad = json.loads(json.dumps(nested_ok))
    del nested_bad["properties"]["a"]["items"]["additionalProperties"]
    optional = {**WEATHER.parameters, "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}}
    assert strict_schema_ok(WEATHER.parameters) and strict_schema_ok(nested_ok)
    assert not strict_schema_ok(nested_bad) and not strict_schema_ok(optional)
    loose = ToolSpec(name="loose", parameters=optional)
    off = ToolSpec(name="off", parameters=WEATHER.parameters, strict=False)
    tools = body(req(UserItem(text="q"), tools=(WEATHER, loose, off)))["tools"]
    assert [(t["name"], t["strict"]) for t in tools] == [
        ("get_weather", True),
        ("loose", False),
        ("off", False),
    ]
    assert tools[0] == {
        "type": "function",
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": WEATHER.parameters,
        "strict": True,
    }


def test_tool_choice_required_needs_tools() -> None:
    with pytest.raises(InvalidSettingsError, match="at least one tool"):
        body(req(UserItem(text="q"), tool_choice="required"))


# ---------------------------------------------------------------- cache hints


def test_prompt_cache_key_is_stable_across_steps_and_depends_on_the_prefix() -> None:
    step1 = req(SystemItem(text="s"), UserItem(text="q"), tools=(WEATHER,))
    step2 = step1.model_copy(
        update={"items": (*step1.items, call("r1", 1, "c1"), ToolResultItem(call_id="c1", output="18 C"))}
    )
    k1, k2 = body(step1)["prompt_cache_key"], body(step2)["prompt_cache_key"]
    assert k1 == k2 and k1.startswith("agentlab-")
    other = req(SystemItem(text="different"), UserItem(text="q"), tools=(WEATHER,))
    assert body(other)["prompt_cache_key"] != k1
    assert body(req(UserItem(text="q"), cache=CacheHints(key="mine")))["prompt_cache_key"] == "mine"
    assert "prompt_cache_key" not in body(req(UserItem(text="q"), cache=None))
    assert "prompt_cache_key" not in body(req(UserItem(text="q"), cache=CacheHints(enabled=False)))
    assert prompt_cache_key("gpt-5", "s", [], CacheHints()) == prompt_cache_key(
        "gpt-5", "s", [], CacheHints()
    )


def test_cache_lifetime_only_where_the_model_takes_it() -> None:
    long = CacheHints(ttl="24h")
    assert body(req(UserItem(text="q"), model="gpt-5.1", cache=long))["prompt_cache_retention"] == "24h"
    assert "prompt_cache_retention" not in body(req(UserItem(text="q"), model="gpt-5.1"))
    for model in ("o3", "sim-reasoner"):
        b = body(req(UserItem(text="q"), model=model, cache=long))
        assert "prompt_cache_retention" not in b and "prompt_cache_options" not in b
    b = body(req(SystemItem(text="sys"), UserItem(text="q"), model="gpt-5.6", cache=long))
    assert b["prompt_cache_options"] == {"ttl": "12h"} and "prompt_cache_retention" not in b
    # Explicit breakpoint at the end of the system prompt (a content block, so not `instructions`).
    assert "instructions" not in b
    assert b["input"][0] == {
        "role": "developer",
        "content": [{"type": "input_text", "text": "sys", "prompt_cache_breakpoint": {"mode": "explicit"}}],
    }


def test_each_step_extends_the_previous_input_byte_for_byte() -> None:
    """The cacheable prefix: step n's input JSON text is a prefix of step n+1's."""
    r1 = rs("r1", 0)
    items1 = (SystemItem(text="s"), UserItem(text="Is it warmer in Paris or Rome?"))
    items2 = (
        *items1,
        call("r1", 1, "c1"),
        call("r1", 2, "c2", "Rome"),
        ToolResultItem(call_id="c1", output="18"),
        ToolResultItem(call_id="c2", output="24"),
    )
    items3 = (*items2, call("r2", 1, "c3", "Oslo"), ToolResultItem(call_id="c3", output="-3"))
    b2 = build_request(req(*items2, continuation=(r1,), tools=(WEATHER,)), model="gpt-5", base_url=BASE).body
    b3 = build_request(
        req(*items3, continuation=(r1, rs("r2", 0)), tools=(WEATHER,)), model="gpt-5", base_url=BASE
    ).body
    in2, in3 = raw_member(b2.decode(), "input"), raw_member(b3.decode(), "input")
    assert in2 is not None and in3 is not None
    assert in3.startswith(in2[:-1] + ",") and len(in3) > len(in2)
    # Everything before the input (model, instructions) is identical too.
    assert b2.split(b'"input":[')[0] == b3.split(b'"input":[')[0]


# ---------------------------------------------------------------- history layout


def test_history_layout() -> None:
    b = body(
        req(
            SystemItem(text="sys"),
            SummaryItem(text="we talked"),
            UserItem(text="q"),
            AssistantTextItem(text="a", turn_id="r0", index=0, provider_item_id="msg_0"),
            SystemItem(text="later note"),
            call("r1", 0, "c1"),
            ToolResultItem(call_id="c1", output="18 C", is_error=False),
        )
    )
    assert b["instructions"] == "sys"
    assert b["input"] == [
        {"role": "user", "content": SUMMARY_MARKER + "we talked"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},  # no reasoning replayed before it: no id needed
        {"role": "developer", "content": "later note"},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "18 C"},
    ]


# ---------------------------------------------------------------- continuation


def test_reasoning_goes_back_verbatim_before_its_follower_with_the_follower_id() -> None:
    # Odd spacing, key order and escapes: any re-serialization would change these bytes.
    raw = (
        b'{ "type":"reasoning", "id":"rs_a",'
        b'"summary":[{"type":"summary_text","text":"caf\\u00e9"}],"encrypted_content":"gAAA+/="  }'
    )
    item = ProviderReasoningItem(
        raw,
        provider="openai",
        api="responses",
        model="gpt-5",
        block_type="reasoning",
        turn_id="r1",
        index=0,
        base_url=BASE,
    )
    r = req(
        UserItem(text="q"),
        call("r1", 1, "c1"),
        ToolResultItem(call_id="c1", output="x"),
        continuation=(item,),
    )
    built = build_request(r, model="gpt-5", base_url=BASE)
    assert raw in built.body and built.reasoning_sent == 1 and not built.diagnostics
    b = json.loads(built.body)
    assert kinds(b) == ["user", "reasoning", "function_call", "function_call_output"]
    assert b["input"][2]["id"] == "fc_r1_1" and b["input"][2]["call_id"] == "c1"


def test_parallel_calls_follow_their_one_reasoning_item() -> None:
    r = req(
        UserItem(text="q"),
        call("r1", 1, "c1"),
        call("r1", 2, "c2", "Rome"),
        ToolResultItem(call_id="c1", output="18"),
        ToolResultItem(call_id="c2", output="24"),
        continuation=(rs("r1", 0),),
    )
    b = body(r)
    assert kinds(b) == [
        "user",
        "reasoning",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert [(i["call_id"], i["id"]) for i in b["input"][2:4]] == [("c1", "fc_r1_1"), ("c2", "fc_r1_2")]


def test_several_turns_reinterleave_at_their_own_positions() -> None:
    r = req(
        UserItem(text="q"),
        call("r1", 1, "c1"),
        ToolResultItem(call_id="c1", output="18"),
        call("r2", 1, "c2", "Rome"),
        ToolResultItem(call_id="c2", output="24"),
        AssistantTextItem(text="Rome", turn_id="r3", index=1, provider_item_id="msg_3"),
        UserItem(text="and Oslo?"),
        continuation=(rs("r3", 0), rs("r1", 0), rs("r2", 0)),  # order of the continuation does not matter
    )
    b = body(r)
    assert [i.get("id") for i in b["input"] if i.get("type") == "reasoning"] == [
        "rs_r1_0",
        "rs_r2_0",
        "rs_r3_0",
    ]
    assert kinds(b) == [
        "user",
        "reasoning",
        "function_call",
        "function_call_output",
        "reasoning",
        "function_call",
        "function_call_output",
        "reasoning",
        "message",
        "user",
    ]
    assert b["input"][8] == {
        "type": "message",
        "role": "assistant",
        "id": "msg_3",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Rome", "annotations": []}],
    }


def test_reasoning_followed_by_reasoning_keeps_the_chain() -> None:
    r = req(UserItem(text="q"), call("r1", 2, "c1"), continuation=(rs("r1", 0), rs("r1", 1)))
    assert [i.get("id") or i["role"] for i in body(r)["input"]] == ["user", "rs_r1_0", "rs_r1_1", "fc_r1_2"]


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        (rs("r1", 0, provider="anthropic", api="messages"), "other_provider"),
        (rs("r1", 0, api="chat"), "other_provider"),
        (rs("r1", 0, model="gpt-5.1"), "other_model"),
        (rs("r1", 0, base_url="http://sim.agentlab.local/v1"), "other_model"),
        (rs("r1", 0, enc=None), "no_encrypted_content"),
        (rs("r1", 0, enc=""), "no_encrypted_content"),
        (rs("gone", 0), "orphaned"),
        (rs("r1", 5), "orphaned"),
    ],
)
def test_unsendable_reasoning_items_are_dropped_with_a_diagnostic(
    item: ProviderReasoningItem, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    r = req(
        UserItem(text="q"),
        call("r1", 1, "c1"),
        ToolResultItem(call_id="c1", output="x"),
        continuation=(item,),
    )
    with caplog.at_level(logging.DEBUG, logger="agentlab.adapters.openai_responses"):
        built = build_request(r, model="gpt-5", base_url=BASE)
    (diag,) = built.diagnostics
    assert diag.code == "reasoning_item_dropped" and diag.data["reason"] == reason
    assert diag.data == {"count": 1, "reason": reason, "provider": "openai"}
    assert "gAAAA" not in diag.model_dump_json()
    assert built.reasoning_dropped == 1 and built.reasoning_sent == 0
    b = json.loads(built.body)
    assert kinds(b) == ["user", "function_call", "function_call_output"]
    assert "id" not in b["input"][1]  # nothing replayed before it: sent without the provider id
    if reason == "other_provider":
        assert "dropping reasoning item" in caplog.text


def test_orphaned_follower_drops_the_whole_chain() -> None:
    r = req(UserItem(text="q"), continuation=(rs("r1", 0), rs("r1", 1)))
    built = build_request(r, model="gpt-5", base_url=BASE)
    assert built.reasoning_dropped == 2
    assert [d.data for d in built.diagnostics] == [{"count": 2, "reason": "orphaned", "provider": "openai"}]


def test_the_same_item_twice_is_sent_once() -> None:
    item = rs("r1", 0)
    b = body(req(UserItem(text="q"), call("r1", 1, "c1"), continuation=(item, item)))
    assert kinds(b).count("reasoning") == 1


def test_model_mismatch_and_bad_payload() -> None:
    bad = ProviderReasoningItem(
        b"not json",
        provider="openai",
        api="responses",
        model="gpt-5",
        block_type="reasoning",
        turn_id="r1",
        index=0,
    )
    built = build_request(
        req(UserItem(text="q"), call("r1", 1, "c1"), continuation=(bad,)), model="gpt-5", base_url=BASE
    )
    assert [d.data["reason"] for d in built.diagnostics] == ["malformed"]


def test_fine_tunes_are_judged_by_their_base_model() -> None:
    from agentlab.adapters.openai_responses._request import is_reasoning_model

    assert is_reasoning_model("ft:gpt-5-mini-2025-08-07:org::abc123")
    assert not is_reasoning_model("ft:gpt-4o-mini-2024-07-18:org::abc123")
