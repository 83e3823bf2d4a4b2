"""The simulated Converse protocol through boto3's real client: answers, framing, rules, faults, auth."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

botocore = pytest.importorskip("botocore")
from botocore.exceptions import ClientError, EventStreamError  # type: ignore[import-untyped]  # noqa: E402

from agentlab.sim import Simulator  # noqa: E402
from agentlab.sim.app import handle  # noqa: E402
from agentlab.sim.bedrock.client import bedrock_client  # noqa: E402
from agentlab.sim.bedrock.rules import NO_REASONING_TEXT  # noqa: E402

WEATHER = {
    "toolSpec": {
        "name": "get_weather",
        "description": "Current temperature of a city",
        "inputSchema": {
            "json": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        },
    }
}
THINK = {"thinking": {"type": "enabled", "budget_tokens": 2048}}
TEMPS = {"Paris": "20C", "Rome": "25C"}


def _ask(client: Any, model: str, messages: list[dict[str, Any]], stream: bool = False, **kw: Any) -> Any:
    call = client.converse_stream if stream else client.converse
    return call(
        modelId=model,
        messages=messages,
        toolConfig={"tools": [WEATHER]},
        inferenceConfig={"maxTokens": 4000},
        **kw,
    )


def _results(message: dict[str, Any]) -> dict[str, Any]:
    uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
    return {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": u["toolUseId"], "content": [{"text": TEMPS[u["input"]["city"]]}]}}
            for u in uses
        ],
    }


def _first_turn(client: Any, model: str = "sim-bedrock-claude", **kw: Any) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "Is it warmer in Paris or Rome?"}]}]
    r = _ask(client, model, msgs, **kw)
    assert r["stopReason"] == "tool_use"
    msgs += [r["output"]["message"], _results(r["output"]["message"])]
    return msgs


def test_claude_tool_loop_with_signed_reasoning_streams_through_boto3() -> None:
    client = bedrock_client()
    msgs = _first_turn(client, additionalModelRequestFields=THINK)
    assert "signature" in msgs[1]["content"][0]["reasoningContent"]["reasoningText"]
    events = list(
        _ask(client, "sim-bedrock-claude", msgs, stream=True, additionalModelRequestFields=THINK)["stream"]
    )
    kinds = [next(iter(e)) for e in events]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    text = "".join(
        e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e
    )
    assert text.startswith("Rome is warmer")
    sigs = [
        e
        for e in events
        if "signature" in e.get("contentBlockDelta", {}).get("delta", {}).get("reasoningContent", {})
    ]
    assert len(sigs) == 1
    usage = events[-1]["metadata"]["usage"]
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]


def _refusal(client: Any, msgs: list[dict[str, Any]], model: str = "sim-bedrock-claude") -> ClientError:
    with pytest.raises(ClientError) as info:
        _ask(client, model, msgs, additionalModelRequestFields=THINK if "claude" in model else {})
    err = info.value
    assert err.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert err.response["Error"]["Code"] == "ValidationException"
    return err


def test_modified_signature_is_refused_with_the_real_text() -> None:
    client = bedrock_client()
    msgs = _first_turn(client, additionalModelRequestFields=THINK)
    rt = msgs[1]["content"][0]["reasoningContent"]["reasoningText"]
    rt["signature"] = rt["signature"][:-8] + "AAAAAAA="
    err = _refusal(client, msgs)
    assert err.response["Error"]["Message"] == (
        "The model returned the following errors: messages.1.content.0: "
        "Invalid `signature` in `thinking` block"
    )


def test_modified_reasoning_text_cannot_be_modified() -> None:
    client = bedrock_client()
    msgs = _first_turn(client, additionalModelRequestFields=THINK)
    msgs[1]["content"][0]["reasoningContent"]["reasoningText"]["text"] += " "
    assert "cannot be modified" in _refusal(client, msgs).response["Error"]["Message"]


@pytest.mark.parametrize("how", ["reordered", "missing"])
def test_reordered_or_missing_reasoning_block_is_refused(how: str) -> None:
    client = bedrock_client()
    msgs = _first_turn(client, additionalModelRequestFields=THINK)
    content = msgs[1]["content"]
    msgs[1]["content"] = content[1:] + content[:1] if how == "reordered" else content[1:]
    message = _refusal(client, msgs).response["Error"]["Message"]
    assert message.startswith(
        "The model returned the following errors: messages.1.content.0.type: Expected `thinking` or "
        "`redacted_thinking`, but found `tool_use`."
    )


def test_anthropic_signature_is_not_valid_on_bedrock() -> None:
    client = bedrock_client()
    msgs = _first_turn(client, additionalModelRequestFields=THINK)
    sim = Simulator()
    rt = msgs[1]["content"][0]["reasoningContent"]["reasoningText"]
    rt["signature"] = sim.signer.sign_thinking(rt["text"], 0)
    assert "Invalid `signature`" in _refusal(client, msgs).response["Error"]["Message"]


def test_openai_on_bedrock_returns_redacted_only_and_refuses_reasoning_text() -> None:
    client = bedrock_client()
    msgs = _first_turn(client, "sim-bedrock-openai")
    block = msgs[1]["content"][0]["reasoningContent"]
    assert set(block) == {"redactedContent"} and block["redactedContent"].startswith(b"rsn_")
    assert _ask(client, "sim-bedrock-openai", msgs)["stopReason"] == "end_turn"
    bad = copy.deepcopy(msgs)
    bad[1]["content"][0] = {"reasoningContent": {"reasoningText": {"text": "my plan"}}}
    assert _refusal(client, bad, "sim-bedrock-openai").response["Error"]["Message"] == NO_REASONING_TEXT


def test_kimi_returns_unsigned_reasoning_text_and_takes_it_back() -> None:
    client = bedrock_client()
    msgs = _first_turn(client, "sim-bedrock-kimi")
    assert set(msgs[1]["content"][0]["reasoningContent"]["reasoningText"]) == {"text"}
    assert _ask(client, "sim-bedrock-kimi", msgs)["stopReason"] == "end_turn"


def test_error_inside_a_200_stream_is_an_event_stream_error() -> None:
    client = bedrock_client()
    msgs = [{"role": "user", "content": [{"text": "Is it warmer in Paris or Rome?"}]}]
    r = _ask(
        client, "sim-bedrock-claude+fault=error_chunk", msgs, stream=True, additionalModelRequestFields=THINK
    )
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 200
    with pytest.raises(EventStreamError) as info:
        list(r["stream"])
    assert info.value.response["Error"]["Code"] == "modelStreamErrorException"


def test_throttling_fault_is_a_throttling_exception() -> None:
    from botocore.config import Config  # type: ignore[import-untyped]

    client = bedrock_client(config=Config(retries={"max_attempts": 1, "mode": "standard"}))
    with pytest.raises(ClientError) as info:
        _ask(client, "sim-bedrock-claude+fault=429", [{"role": "user", "content": [{"text": "hi"}]}])
    assert info.value.response["Error"]["Code"] == "ThrottlingException"
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429


def _raw(headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps({"messages": [{"role": "user", "content": [{"text": "hi"}]}]}).encode()
    status, out, chunks = handle(Simulator(), "POST", "/model/sim-bedrock-claude/converse", headers, body)
    return status, out, b"".join(c for c in chunks if isinstance(c, bytes))


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({}, "MissingAuthenticationTokenException"),
        ({"authorization": "AWS4-HMAC-SHA256 nonsense"}, "IncompleteSignatureException"),
        (
            {
                "authorization": "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE0/20260101/us-east-1/bedrock/"
                "aws4_request, "
                "SignedHeaders=host;x-amz-date, Signature=" + "0" * 64
            },
            "IncompleteSignatureException",
        ),
    ],
)
def test_credentials_are_checked_for_shape(headers: dict[str, str], code: str) -> None:
    status, out, _ = _raw(headers)
    assert status == 403 and out["x-amzn-errortype"].startswith(code + ":")


def test_bearer_token_is_accepted() -> None:
    status, _, body = _raw({"authorization": "Bearer bedrock-api-key-sim"})
    assert status == 200 and json.loads(body)["stopReason"] == "end_turn"


def test_stream_payloads_carry_random_length_padding() -> None:
    eventstream = pytest.importorskip("botocore.eventstream")
    body = json.dumps({"messages": [{"role": "user", "content": [{"text": "What is 2 + 3?"}]}]}).encode()
    status, out, chunks = handle(
        Simulator(), "POST", "/model/sim-bedrock-kimi/converse-stream", {"authorization": "Bearer k"}, body
    )
    assert status == 200 and out["content-type"] == "application/vnd.amazon.eventstream"
    buf = eventstream.EventStreamBuffer()
    buf.add_data(b"".join(c for c in chunks if isinstance(c, bytes)))
    pads = {len(json.loads(m.payload)["p"]) for m in buf}
    assert len(pads) > 3 and all(2 <= n <= 61 for n in pads)


def test_the_served_stream_is_delivered_frame_by_frame() -> None:
    """Over a socket the binary stream goes out as a stream (no content-length, each frame flushed)."""
    import http.client
    from urllib.parse import urlsplit

    from tests.support.loopback import serving

    body = json.dumps({"messages": [{"role": "user", "content": [{"text": "What is 2 + 3?"}]}]})
    with serving() as url:
        conn = http.client.HTTPConnection(urlsplit(url).netloc, timeout=30)
        headers = {"authorization": "Bearer k", "content-type": "application/json"}
        conn.request("POST", "/model/sim-bedrock-kimi/converse-stream", body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
    assert resp.status == 200 and resp.getheader("content-length") is None
    assert resp.getheader("content-type") == "application/vnd.amazon.eventstream"
    eventstream = pytest.importorskip("botocore.eventstream")
    buf = eventstream.EventStreamBuffer()
    buf.add_data(data)
    assert [m.headers[":event-type"] for m in buf][-1] == "metadata"
