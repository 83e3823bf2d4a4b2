"""The request knobs on the wire, per provider.

Each lands in the field the API documents, and each rule the API enforces is refused before
sending (``InvalidSettingsError`` from ``build``), naming the knob.

Field names and values are the SDKs' (``openai.types.responses.response_create_params``,
``anthropic.types.message_create_params`` / ``tool_param`` / ``tool_choice_*_param``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentlab.adapters.anthropic_messages import build_request as anthropic_build
from agentlab.adapters.anthropic_messages._request import check_options as anthropic_check
from agentlab.adapters.anthropic_messages._request import count_breakpoints
from agentlab.adapters.openai_responses import build_request as openai_build
from agentlab.adapters.openai_responses._request import check_options as openai_check
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.items import (
    AssistantTextItem,
    SystemItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import ModelRequest, ReasoningSettings, ToolSpec

CLOSED = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
WEATHER = ToolSpec(name="get_weather", description="Weather.", parameters=CLOSED)
OFF = ReasoningSettings(enabled=False)


def _req(model: str, **kw: Any) -> ModelRequest:
    kw.setdefault("items", (UserItem(text="Weather in Paris?"),))
    kw.setdefault("tools", (WEATHER,))
    return ModelRequest(model=model, **kw)


def oa(model: str = "gpt-5", **kw: Any) -> dict[str, Any]:
    req = _req(model, **kw)
    openai_check(req)  # the run's early check and the build agree
    out: dict[str, Any] = json.loads(openai_build(req, model=model, base_url=None).body)
    return out


OLD_API = {"anthropic-version": "2023-06-01"}  # the last Messages version with sampling fields


class _Pinned:
    api_version = "2023-06-01"


def an(model: str = "claude-sonnet-4-5", *, pinned: bool = False, **kw: Any) -> dict[str, Any]:
    req = _req(model, **kw)
    anthropic_check(req, _Pinned() if pinned else None)
    return anthropic_build(req, base_url=None, extra_headers=OLD_API if pinned else None).body


def _refused(build: Any, match: str, **kw: Any) -> None:
    with pytest.raises(InvalidSettingsError, match=match):
        build(**kw)


# ---------------------------------------------------------------- temperature / top_p


def test_openai_sampling_on_a_model_that_takes_it() -> None:
    body = oa("gpt-4.1", temperature=0.3, top_p=0.9, reasoning=None)
    assert (body["temperature"], body["top_p"]) == (0.3, 0.9)


@pytest.mark.parametrize("knob", ["temperature", "top_p"])
def test_openai_sampling_refused_on_reasoning_models(knob: str) -> None:
    for build in (oa, lambda **kw: openai_check(_req("gpt-5", **kw))):
        _refused(build, f"{knob} is not supported by the reasoning model", **{knob: 0.5})


def test_openai_sampling_ranges() -> None:
    _refused(oa, "temperature must be between 0 and 2", model="gpt-4.1", temperature=2.5, reasoning=None)
    _refused(oa, "top_p must be between 0 and 1", model="gpt-4.1", top_p=1.5, reasoning=None)


def test_anthropic_sampling_does_not_exist_on_the_sdks_api_version() -> None:
    """API version 2026-10-21 (what the SDK sends) has no sampling fields: 400 at any value."""
    for knob, value in (("temperature", 1.0), ("top_p", 0.99)):
        _refused(an, f'"{knob}: Extra inputs are not permitted"', reasoning=OFF, **{knob: value})
    _refused(an, "anthropic_top_k", reasoning=OFF, provider_options={"anthropic_top_k": 5})


def test_the_sampling_version_is_the_sdks() -> None:
    """What the SDK sends, read from a client's public ``default_headers`` (not its private constants)."""
    import anthropic

    from agentlab.adapters.anthropic_messages._request import API_VERSION, takes_sampling

    sent = anthropic.AsyncAnthropic(api_key="k").default_headers["anthropic-version"]
    assert sent == API_VERSION
    assert not takes_sampling() and takes_sampling("2023-06-01")


def test_anthropic_sampling_without_thinking_on_the_older_version() -> None:
    body = an(temperature=0.2, top_p=0.8, reasoning=OFF, pinned=True)
    assert (body["temperature"], body["top_p"]) == (0.2, 0.8)
    _refused(an, "temperature must be between 0 and 1", temperature=1.5, reasoning=OFF, pinned=True)


def test_anthropic_sampling_rules_with_thinking() -> None:
    _refused(an, "temperature` may only be set to 1 when thinking is enabled", temperature=0.2, pinned=True)
    _refused(an, "top_p must be between 0.95 and 1", top_p=0.5, pinned=True)
    assert an(top_p=0.97, pinned=True)["top_p"] == 0.97  # allowed with thinking
    assert an(temperature=1, pinned=True)["temperature"] == 1


# ---------------------------------------------------------------- tool_choice / parallel


@pytest.mark.parametrize(
    ("choice", "openai_wire", "anthropic_wire"),
    [
        ("auto", "auto", {"type": "auto"}),
        ("required", "required", {"type": "any"}),
        ("none", "none", {"type": "none"}),
        (
            "tool:get_weather",
            {"type": "function", "name": "get_weather"},
            {"type": "tool", "name": "get_weather"},
        ),
    ],
)
def test_tool_choice_mapping(choice: str, openai_wire: Any, anthropic_wire: Any) -> None:
    assert oa(tool_choice=choice)["tool_choice"] == openai_wire
    assert an(tool_choice=choice, reasoning=OFF)["tool_choice"] == anthropic_wire


def test_named_tool_choice_must_name_a_tool_of_the_request() -> None:
    with pytest.raises(ValueError, match="names no tool of this request"):
        _req("gpt-5", tool_choice="tool:nope")
    with pytest.raises(ValueError, match="tool_choice must be"):
        _req("gpt-5", tool_choice="any")


@pytest.mark.parametrize("choice", ["required", "tool:get_weather"])
def test_anthropic_forced_tool_use_refused_with_thinking(choice: str) -> None:
    _refused(an, "Thinking may not be enabled when tool_choice forces tool use", tool_choice=choice)
    _refused(
        lambda **kw: anthropic_check(_req("claude-sonnet-4-5", **kw)), "forced tool use", tool_choice=choice
    )


def test_parallel_tool_calls() -> None:
    assert oa(parallel_tool_calls=False)["parallel_tool_calls"] is False
    assert an(parallel_tool_calls=False)["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    choice = an(parallel_tool_calls=False, tool_choice="tool:get_weather", reasoning=OFF)["tool_choice"]
    assert choice == {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}


# ---------------------------------------------------------------- stream


def test_stream_false_on_the_wire() -> None:
    assert oa(stream=False)["stream"] is False
    assert "stream" not in an(stream=False)  # the Anthropic adapter passes stream to the SDK call itself


# ---------------------------------------------------------------- stop / metadata / user / tier


def test_stop_sequences() -> None:
    assert an(stop_sequences=("END", "###"))["stop_sequences"] == ["END", "###"]
    _refused(oa, "stop_sequences: the Responses API has no stop sequences", stop_sequences=("END",))


def test_metadata_and_user_id() -> None:
    body = oa(metadata={"experiment": "e1"}, user_id="u-9f2")
    assert body["metadata"] == {"experiment": "e1"}
    assert body["safety_identifier"] == "u-9f2"
    assert "user" not in body  # deprecated in favour of safety_identifier
    assert an(user_id="u-9f2")["metadata"] == {"user_id": "u-9f2"}
    assert an(metadata={"user_id": "u-1"})["metadata"] == {"user_id": "u-1"}
    _refused(an, "metadata takes only user_id", metadata={"experiment": "e1"})
    _refused(oa, "metadata takes at most 16 pairs", metadata={f"k{i}": "v" for i in range(17)})
    _refused(oa, "at most 128 characters", user_id="x" * 129)


def test_service_tier() -> None:
    assert oa(service_tier="flex")["service_tier"] == "flex"
    assert an(service_tier="standard_only")["service_tier"] == "standard_only"
    _refused(oa, "service_tier 'standard_only' is not offered", service_tier="standard_only")
    _refused(an, "service_tier 'flex' is not offered", service_tier="flex")


def test_unset_knobs_send_nothing() -> None:
    """Defaults leave the body as it was (the golden wire digests hold this for every shape)."""
    body = oa()
    for key in ("temperature", "top_p", "metadata", "safety_identifier", "service_tier"):
        assert key not in body
    abody = an()
    for key in ("temperature", "top_p", "metadata", "service_tier", "stop_sequences"):
        assert key not in abody
    assert "strict" not in abody["tools"][0]


# ---------------------------------------------------------------- strict


def test_strict_per_tool() -> None:
    open_schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    auto_open = ToolSpec(name="t", parameters=open_schema)
    assert oa(tools=(auto_open,))["tools"][0]["strict"] is False  # does not qualify: sent non-strict
    assert oa(tools=(WEATHER,))["tools"][0]["strict"] is True  # qualifies
    off = ToolSpec(name="t", parameters=CLOSED, strict=False)
    assert oa(tools=(off,))["tools"][0]["strict"] is False
    forced = ToolSpec(name="loose", parameters=open_schema, strict=True)
    _refused(
        oa,
        r"tool 'loose' asks for strict mode.*parameters: additionalProperties must be false",
        tools=(forced,),
    )
    on = ToolSpec(name="t", parameters=CLOSED, strict=True)
    assert an(tools=(on,))["tools"][0]["strict"] is True
    _refused(an, "tool 'loose' asks for strict mode", tools=(forced,))


def test_strict_names_the_nested_field() -> None:
    schema = {
        "type": "object",
        "properties": {
            "where": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "additionalProperties": False,
            }
        },
        "required": ["where"],
        "additionalProperties": False,
    }
    _refused(
        oa,
        r"parameters\.properties\.where: every property must be required; not required: \['city'\]",
        tools=(ToolSpec(name="t", parameters=schema, strict=True),),
    )


# ---------------------------------------------------------------- cache marks on history items


def _history_with_marked_call() -> tuple[Any, ...]:
    return (
        SystemItem(text="Be brief."),
        UserItem(text="Weather in Paris and Rome?"),
        ToolCallItem(
            call_id="toolu_1", name="get_weather", arguments='{"city":"Paris"}', cache_breakpoint=True
        ),
        ToolResultItem(call_id="toolu_1", output="18 C"),
        AssistantTextItem(text="Paris is 18 C."),
        UserItem(text="And Rome?"),
    )


def test_anthropic_cache_mark_on_a_middle_tool_use_block() -> None:
    body = an(items=_history_with_marked_call(), reasoning=OFF)
    tool_use = body["messages"][1]["content"][0]
    assert tool_use["type"] == "tool_use" and tool_use["cache_control"] == {"type": "ephemeral"}
    assert "__agentlab_cache_mark" not in json.dumps(body)


def test_anthropic_cache_marks_fit_in_four_breakpoints() -> None:
    items = tuple(
        it.model_copy(update={"cache_breakpoint": True}) if isinstance(it, UserItem | ToolResultItem) else it
        for it in _history_with_marked_call()
    )  # 4 item marks, plus the hints' system and tools (the history hint falls on a marked block)
    built = anthropic_build(_req("claude-sonnet-4-5", items=items, reasoning=OFF), base_url=None)

    assert len(count_breakpoints(built.body)) == 4
    adjusted = [d for d in built.diagnostics if d.code == "cache_hint_adjusted"]
    assert len(adjusted) == 1 and adjusted[0].data["requested"] == "6" and adjusted[0].data["sent"] == "4"
    # the item marks are the ones kept
    marked = [b for m in built.body["messages"] for b in m["content"] if "cache_control" in b]
    assert [b["type"] for b in marked] == ["text", "tool_use", "tool_result", "text"]


def test_anthropic_cache_marks_not_sent_when_caching_is_off() -> None:
    built = anthropic_build(
        _req("claude-sonnet-4-5", items=_history_with_marked_call(), reasoning=OFF, cache=None), base_url=None
    )
    assert "cache_control" not in json.dumps(built.body)
    assert [d.data["setting"] for d in built.diagnostics if d.code == "setting_ignored"] == [
        "cache_breakpoint"
    ]


def test_openai_cache_marks_explicit_where_supported() -> None:
    items = (
        UserItem(text="Weather?", cache_breakpoint=True),
        ToolCallItem(call_id="call_1", name="get_weather", arguments="{}", cache_breakpoint=True),
        ToolResultItem(call_id="call_1", output="18 C", cache_breakpoint=True),
    )
    req = _req("gpt-5.6", items=items)
    built = openai_build(req, model="gpt-5.6", base_url=None)
    inputs = json.loads(built.body)["input"]
    mark = {"mode": "explicit"}
    assert inputs[0]["content"][0]["prompt_cache_breakpoint"] == mark
    assert "prompt_cache_breakpoint" not in json.dumps(inputs[1])  # a function_call has no input content
    assert inputs[2]["output"][0] == {"type": "input_text", "text": "18 C", "prompt_cache_breakpoint": mark}
    ignored = [d for d in built.diagnostics if d.code == "setting_ignored"]
    assert len(ignored) == 1 and "tool_call item" in ignored[0].message


def test_openai_cache_marks_ignored_with_a_diagnostic_elsewhere() -> None:
    req = _req("gpt-5", items=(UserItem(text="Weather?", cache_breakpoint=True),))
    built = openai_build(req, model="gpt-5", base_url=None)
    assert "prompt_cache_breakpoint" not in built.body.decode()
    [d] = [d for d in built.diagnostics if d.code == "setting_ignored"]
    assert d.data["setting"] == "cache_breakpoint" and "no explicit cache breakpoints" in d.message


def test_cache_mark_is_left_out_of_dumps_when_unset() -> None:
    assert "cache_breakpoint" not in UserItem(text="x").model_dump_json()
    assert UserItem.model_validate_json(
        UserItem(text="x", cache_breakpoint=True).model_dump_json()
    ).cache_breakpoint
