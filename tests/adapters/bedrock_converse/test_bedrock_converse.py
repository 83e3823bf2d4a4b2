"""The Bedrock Converse adapter's own rules: framing, thinking per family, tags, usage, credentials, logs."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from typing import Any

import pytest

pytest.importorskip("boto3")

from agentlab.adapters.bedrock_converse import BedrockConverseAdapter, ConverseAssembler
from agentlab.adapters.bedrock_converse._errors import in_stream_error
from agentlab.adapters.bedrock_converse._framing import EventStreamFraming, FramingError
from agentlab.adapters.bedrock_converse._usage import usage_from_converse
from agentlab.errors import ConfigError, StreamInterruptedError
from agentlab.neutral.events import ReasoningDeltaEvent, ResponseCompletedEvent
from agentlab.neutral.items import ToolResultItem, UserItem
from agentlab.neutral.request import CacheHints, ModelRequest, ReasoningSettings
from agentlab.sim import bedrock_client
from agentlab.sim.aws.eventstream import encode_event, encode_exception
from tests.adapters.contract import WEATHER_OPEN as WEATHER


def _ask(model: str, **kw: Any) -> ModelRequest:
    return ModelRequest(
        model=model, items=(UserItem(text="Is it warmer in Paris or Rome?"),), tools=(WEATHER,), **kw
    )


def _run(adapter: BedrockConverseAdapter, request: ModelRequest) -> list[Any]:
    async def go() -> list[Any]:
        return [e async for e in adapter.stream(request)]

    return asyncio.run(go())


# ---------------------------------------------------------------- framing


def test_framing_cuts_split_frames_and_keys_events_by_type() -> None:
    frames = encode_event("messageStart", b'{"role":"assistant","p":"ab"}') + encode_event(
        "messageStop", b'{"stopReason":"end_turn"}'
    )
    f = EventStreamFraming()
    out = [e for i in range(0, len(frames), 5) for e in f.chunk_bytes(frames[i : i + 5])]
    assert [json.loads(e) for e in out] == [
        {"messageStart": {"role": "assistant", "p": "ab"}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    assert f.end_bytes() is None


def test_framing_turns_an_exception_message_into_an_in_stream_error() -> None:
    f = EventStreamFraming()
    (data,) = f.chunk_bytes(encode_exception("throttlingException", b'{"message":"slow down"}'))
    asm = ConverseAssembler(model="m", base_url=None, request_id="rid")
    with pytest.raises(StreamInterruptedError) as info:
        asm.feed(data)
    assert info.value.error_type == "throttlingException" and info.value.retryable


@pytest.mark.parametrize("body", [{"message": ""}, {"Message": None}, {}])
def test_an_in_stream_error_without_a_message_says_so_like_the_other_adapters(body: dict[str, Any]) -> None:
    err = in_stream_error({"type": "internalServerException", **body}, "rid")
    assert "the stream reported an error: no message" in str(err)
    assert err.error_type == "internalServerException" and err.request_id == "rid"


@pytest.mark.parametrize("at", [2, 9, -3])
def test_a_corrupted_frame_is_refused_like_botocore_refuses_it(at: int) -> None:
    eventstream = pytest.importorskip("botocore.eventstream")
    frame = bytearray(encode_event("messageStop", b'{"stopReason":"end_turn"}'))
    frame[at] ^= 0x01
    with pytest.raises(FramingError):
        EventStreamFraming().chunk_bytes(bytes(frame))
    buf = eventstream.EventStreamBuffer()
    buf.add_data(bytes(frame))
    with pytest.raises(eventstream.ParserError):
        list(buf)


# ---------------------------------------------------------------- request


@pytest.mark.parametrize(
    ("model", "reasoning", "extra"),
    [
        (
            "us.anthropic.claude-sonnet-4-5-v1:0",
            ReasoningSettings(budget_tokens=2048),
            {"thinking": {"type": "enabled", "budget_tokens": 2048}},
        ),
        (
            "global.anthropic.claude-opus-4-6",
            ReasoningSettings(adaptive=True, effort="high"),
            {"thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}},
        ),
        ("openai.gpt-oss-120b-1:0", ReasoningSettings(effort="xhigh"), {"reasoning_effort": "high"}),
        ("moonshot.kimi-k2-thinking", ReasoningSettings(effort="high"), None),
        ("us.anthropic.claude-sonnet-4-5-v1:0", ReasoningSettings(enabled=False), None),
    ],
)
def test_thinking_is_mapped_per_model_family(model: str, reasoning: ReasoningSettings, extra: Any) -> None:
    adapter = BedrockConverseAdapter(model, client=bedrock_client())
    body = adapter.build(_ask(model, reasoning=reasoning, cache=None)).body
    assert body.get("additionalModelRequestFields") == extra
    if extra and "budget_tokens" in extra.get("thinking", {}):
        assert body["inferenceConfig"]["maxTokens"] > extra["thinking"]["budget_tokens"]


def test_cache_hints_become_cache_points_on_claude_only() -> None:
    claude = BedrockConverseAdapter("sim-bedrock-claude", client=bedrock_client())
    from agentlab.neutral.items import SystemItem

    items = (SystemItem(text="Be brief."), UserItem(text="hi"))
    req = ModelRequest(model="sim-bedrock-claude", items=items, tools=(WEATHER,), cache=CacheHints())
    body = claude.build(req).body
    assert body["system"][-1] == {"cachePoint": {"type": "default"}}
    assert body["toolConfig"]["tools"][-1] == {"cachePoint": {"type": "default"}}
    kimi = BedrockConverseAdapter("sim-bedrock-kimi", client=bedrock_client())
    assert "cachePoint" not in json.dumps(
        kimi.build(req.model_copy(update={"model": "sim-bedrock-kimi"})).body
    )


def test_a_block_from_another_region_is_not_sent_there() -> None:
    """Items are tagged with the endpoint (the region): another region's adapter drops them."""
    east = BedrockConverseAdapter("sim-bedrock-claude", client=bedrock_client())
    first = _ask("sim-bedrock-claude", reasoning=ReasoningSettings(budget_tokens=2048))
    r1 = _run(east, first)[-1].response
    assert r1.reasoning and all(i.base_url == east.base_url for i in r1.reasoning)
    west = BedrockConverseAdapter(
        "sim-bedrock-claude",
        client=bedrock_client(endpoint_url="http://bedrock-runtime.us-west-2.sim.agentlab.local"),
    )
    results = tuple(ToolResultItem(call_id=c.call_id, output="20C") for c in r1.tool_calls)
    second = first.model_copy(
        update={"items": (*first.items, *r1.items, *results), "continuation": r1.reasoning}
    )
    built = west.build(second)
    assert built.reasoning_sent == 0 and built.reasoning_dropped == len(r1.reasoning)
    assert east.build(second).reasoning_sent == len(r1.reasoning)


# ---------------------------------------------------------------- answers


def test_usage_is_normalised_and_reasoning_tokens_stay_unknown() -> None:
    u = usage_from_converse(
        {
            "inputTokens": 10,
            "outputTokens": 7,
            "totalTokens": 47,
            "cacheReadInputTokens": 20,
            "cacheWriteInputTokens": 10,
        }
    )
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens) == (40, 20, 10, 7)
    assert u.reasoning_tokens is None and u.reasoning_source == "unknown"
    assert usage_from_converse({}).input_tokens is None


def test_openai_on_bedrock_redacted_content_round_trips_as_bytes() -> None:
    adapter = BedrockConverseAdapter("sim-bedrock-openai", client=bedrock_client())
    first = _ask("sim-bedrock-openai")
    events = _run(adapter, first)
    r1 = events[-1].response
    assert not [e for e in events if isinstance(e, ReasoningDeltaEvent)]  # opaque: nothing to show
    (item,) = r1.reasoning
    assert item.block_type == "redactedContent"
    results = tuple(
        ToolResultItem(
            call_id=c.call_id, output={"Paris": "20C", "Rome": "25C"}[json.loads(c.arguments)["city"]]
        )
        for c in r1.tool_calls
    )
    second = first.model_copy(
        update={"items": (*first.items, *r1.items, *results), "continuation": r1.reasoning}
    )
    done = _run(adapter, second)[-1]
    assert isinstance(done, ResponseCompletedEvent) and "Rome" in done.response.text


# ---------------------------------------------------------------- credentials and logs


def test_missing_credentials_are_a_config_error_naming_what_to_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_BEARER_TOKEN_BEDROCK",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(ConfigError) as info:
        BedrockConverseAdapter("us.anthropic.claude-sonnet-4-5-v1:0", region_name="us-east-1")
    assert "AWS_BEARER_TOKEN_BEDROCK" in str(info.value) and "AWS_ACCESS_KEY_ID" in str(info.value)


def test_a_bearer_token_is_enough(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "ABSKbedrockapikeyforthetest0123456789==")
    adapter = BedrockConverseAdapter("us.anthropic.claude-sonnet-4-5-v1:0", region_name="eu-west-1")
    assert adapter.base_url == "https://bedrock-runtime.eu-west-1.amazonaws.com"
    assert "ABSK" not in repr(adapter)


@pytest.mark.parametrize("stream", [True, False])
def test_botocore_debug_logs_carry_no_secret_and_no_reasoning(stream: bool) -> None:
    root = logging.getLogger()
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        client = bedrock_client(
            aws_access_key_id="ASIAEXAMPLE123456789",
            aws_secret_access_key="secret-access-key-0123456789abcdefgh",
            aws_session_token="FwoGZXIvYXdzEJr//////////wEaDsessiontokensecret0123456789",
        )
        adapter = BedrockConverseAdapter("sim-bedrock-claude", client=client)
        events = _run(
            adapter,
            _ask("sim-bedrock-claude", reasoning=ReasoningSettings(budget_tokens=2048), stream=stream),
        )
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
    out = buf.getvalue()
    assert "Sending http request" in out  # botocore did log the request
    thought = "".join(e.text for e in events if isinstance(e, ReasoningDeltaEvent))
    assert thought
    signature = json.loads(events[-1].response.reasoning[0].unseal(provider="bedrock", api="converse"))
    for secret in (
        "secret-access-key",
        "sessiontokensecret",
        "ASIAEXAMPLE123456789",
        thought[:40],
        signature["reasoningContent"]["reasoningText"]["signature"][:24],
    ):
        assert secret not in out, secret


# ---------------------------------------------------------------- errors through the adapter


def test_an_error_inside_a_200_stream_is_a_typed_interruption() -> None:
    adapter = BedrockConverseAdapter("sim-bedrock-claude+fault=error_chunk", client=bedrock_client())
    shown: list[Any] = []

    async def go() -> None:
        async for e in adapter.stream(_ask("sim-bedrock-claude+fault=error_chunk")):
            shown.append(e)

    with pytest.raises(StreamInterruptedError) as info:
        asyncio.run(go())
    assert info.value.error_type == "modelStreamErrorException" and info.value.retryable
    assert shown and not any(isinstance(e, ResponseCompletedEvent) for e in shown)


def test_a_modified_reasoning_block_is_the_services_validation_exception() -> None:
    from agentlab.errors import ProviderAPIError
    from agentlab.neutral.items import ProviderReasoningItem

    adapter = BedrockConverseAdapter("sim-bedrock-claude", client=bedrock_client(), max_retries=0)
    first = _ask("sim-bedrock-claude", reasoning=ReasoningSettings(budget_tokens=2048))
    r1 = _run(adapter, first)[-1].response
    (item,) = r1.reasoning
    block = json.loads(item.unseal(provider="bedrock", api="converse"))
    block["reasoningContent"]["reasoningText"]["text"] += " (edited)"
    edited = ProviderReasoningItem(
        json.dumps(block).encode(), provider="bedrock", api="converse", model=item.model,
        block_type=item.block_type, turn_id=item.turn_id, index=item.index, base_url=item.base_url,
    )  # fmt: skip
    results = tuple(ToolResultItem(call_id=c.call_id, output="20C") for c in r1.tool_calls)
    second = first.model_copy(
        update={"items": (*first.items, *r1.items, *results), "continuation": (edited,)}
    )
    with pytest.raises(ProviderAPIError) as info:
        _run(adapter, second)
    err = info.value
    assert (err.status, err.error_type) == (400, "ValidationException")
    assert "cannot be modified" in err.message and "(edited)" not in str(err)


def test_a_lost_continuation_goes_back_as_text_with_thinking_on() -> None:
    """A tool-use turn whose reasoning is gone (released) is sent as text: Claude would refuse it."""
    adapter = BedrockConverseAdapter("sim-bedrock-claude", client=bedrock_client())
    first = _ask("sim-bedrock-claude", reasoning=ReasoningSettings(budget_tokens=2048))
    r1 = _run(adapter, first)[-1].response
    results = tuple(
        ToolResultItem(
            call_id=c.call_id, output={"Paris": "20C", "Rome": "25C"}[json.loads(c.arguments)["city"]]
        )
        for c in r1.tool_calls
    )
    items = (*first.items, *r1.items, *results)
    second = first.model_copy(update={"items": items, "continuation_released": True})
    body = adapter.build(second).body
    assert "toolUse" not in json.dumps(body["messages"])
    events = _run(adapter, second)
    assert [e.code for e in events if getattr(e, "kind", "") == "diagnostic"] == ["dangling_tool_use"]
    assert "Rome" in events[-1].response.text
