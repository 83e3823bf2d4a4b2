"""Claude through the anthropic SDK's Bedrock and Vertex clients: the wire, the rules, the credentials.

The shared scenarios run in the contract suite (``anthropic_bedrock``, ``anthropic_vertex`` cases);
this file checks what the platforms change: the routes and body rules each platform enforces, the
platform-keyed thinking signatures (refused across platforms with each platform's error shape, and
dropped visibly by the adapters), Bedrock's event-stream framing and AWS error shape, and the
credentials checked before anything is sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

import agentlab as al
import agentlab.sim as sim
from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.adapters.anthropic_platforms import AnthropicBedrockAdapter, AnthropicVertexAdapter
from agentlab.adapters.base import create_adapter
from agentlab.errors import ConfigError, ProviderAPIError, StreamInterruptedError
from agentlab.neutral.events import DiagnosticEvent, ModelResponse
from agentlab.neutral.items import ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest, ReasoningSettings
from tests.adapters.contract import WEATHER, RecordingTransport, collect, completed

TASK = "What's the weather in Florence, Italy?"


def bedrock(transport: RecordingTransport, **kw: Any) -> AnthropicBedrockAdapter:
    return AnthropicBedrockAdapter(
        "sim-thinker", client=sim.anthropic_bedrock_client(transport=transport, max_retries=0, **kw)
    )


def vertex(transport: RecordingTransport) -> AnthropicVertexAdapter:
    return AnthropicVertexAdapter("sim-thinker", client=sim.anthropic_vertex_client(transport=transport))


def anthropic_api(transport: RecordingTransport) -> AnthropicMessagesAdapter:
    return AnthropicMessagesAdapter("sim-thinker", client=sim.anthropic_client(transport=transport))


def ask(**kw: Any) -> ModelRequest:
    return ModelRequest(model="sim-thinker", items=(UserItem(text=TASK),), tools=(WEATHER,), **kw)


def then(request: ModelRequest, resp: ModelResponse) -> ModelRequest:
    results = tuple(ToolResultItem(call_id=c.call_id, name=c.name, output="21 C") for c in resp.tool_calls)
    return request.model_copy(
        update={
            "items": (*request.items, *resp.items, *results),
            "continuation": (*request.continuation, *resp.reasoning),
        }
    )


# ---------------------------------------------------------------- the wire each client sends


async def test_bedrock_sends_the_model_in_the_path_and_its_version_and_betas_in_the_body() -> None:
    t = RecordingTransport()
    reasoning = ReasoningSettings(budget_tokens=2048, interleaved=True)
    resp = completed(await collect(bedrock(t), ask(reasoning=reasoning)))
    assert resp.provider == "anthropic_bedrock" and resp.tool_calls
    body = t.last_json
    assert "model" not in body and "stream" not in body
    assert body["anthropic_version"] == "bedrock-2023-05-31"
    assert body["anthropic_beta"] == ["interleaved-thinking-2025-05-14"]
    assert t.headers[-1]["content-type"] == "application/vnd.amazon.eventstream"
    assert resp.request_id == t.headers[-1]["x-amzn-requestid"]
    assert all(r.provider == "anthropic_bedrock" for r in resp.reasoning)


async def test_vertex_sends_its_version_and_streams_sse() -> None:
    t = RecordingTransport()
    resp = completed(await collect(vertex(t), ask()))
    assert resp.provider == "anthropic_vertex" and resp.tool_calls
    body = t.last_json
    assert body["anthropic_version"] == "vertex-2023-10-16" and "model" not in body
    assert t.headers[-1]["content-type"].startswith("text/event-stream")


async def test_a_tool_loop_with_thinking_runs_on_both_platforms_streamed_and_not() -> None:
    for make in (bedrock, vertex):
        for stream in (True, False):
            t = RecordingTransport()
            adapter = make(t)
            first = ask(stream=stream)
            r1 = completed(await collect(adapter, first))
            r2 = completed(await collect(adapter, then(first, r1)))
            assert "21" in r2.text and r2.stop_reason == "end_turn"
            sent = t.last_json["messages"][1]["content"][0]
            assert sent["type"] == "thinking" and sent == json.loads(
                r1.reasoning[0].unseal(provider=adapter.provider, api="messages")
            )


def test_the_sdks_own_bedrock_decoder_reads_the_simulated_event_stream() -> None:
    """The framing is checked by AWS's decoder as the anthropic SDK uses it, not only by agentlab's."""

    async def events() -> list[str]:
        client = sim.anthropic_bedrock_client()
        stream = await client.messages.create(
            model="sim-thinker",
            max_tokens=4000,
            messages=[{"role": "user", "content": "What is 12 * (3 + 4)?"}],
            stream=True,
            extra_body={"anthropic_version": "bedrock-2023-05-31"},
        )
        return [ev.type async for ev in stream]

    import asyncio

    seen = asyncio.run(events())
    assert seen[0] == "message_start" and seen[-1] == "message_stop" and "content_block_delta" in seen


# ---------------------------------------------------------------- the platforms' body rules


def _raw(client: Any, body: dict[str, Any], **kw: Any) -> Any:
    import asyncio

    async def go() -> Any:
        return await client.messages.create(
            max_tokens=3000, messages=[{"role": "user", "content": "hi"}], **body, **kw
        )

    return asyncio.run(go())


def test_bedrock_refuses_a_model_in_the_body_with_its_validation_text() -> None:
    http = httpx2.Client(transport=sim.SimTransport())
    r = http.post(
        "http://sim.agentlab.local/model/sim-thinker/invoke",
        json={"model": "sim-thinker", "anthropic_version": "bedrock-2023-05-31", "max_tokens": 10},
        headers={"authorization": "Bearer k"},
    )
    assert r.status_code == 400 and r.headers["x-amzn-errortype"].startswith("ValidationException:")
    assert r.json() == {
        "message": "Malformed input request: #: extraneous key [model] is not permitted, please reformat "
        "your input and try again."
    }


@pytest.mark.parametrize("platform", ["bedrock", "vertex"])
def test_each_platform_requires_its_own_anthropic_version(platform: str) -> None:
    """The installed SDK defaults ``anthropic_version`` to its own API version: refused there."""
    make = sim.anthropic_bedrock_client if platform == "bedrock" else sim.anthropic_vertex_client
    with pytest.raises(anthropic.BadRequestError) as info:
        _raw(make(max_retries=0), {"model": "sim-thinker"})
    assert "anthropic_version" in str(info.value.body)
    other = "vertex-2023-10-16" if platform == "bedrock" else "bedrock-2023-05-31"
    with pytest.raises(anthropic.BadRequestError):
        _raw(make(max_retries=0), {"model": "sim-thinker"}, extra_body={"anthropic_version": other})


def test_bedrock_takes_a_sigv4_signature_of_the_right_shape_and_refuses_no_credential() -> None:
    pytest.importorskip("boto3")
    signed = sim.anthropic_bedrock_client(
        aws_access_key="AKIDEXAMPLE", aws_secret_key="secret", max_retries=0
    )
    msg = _raw(signed, {"model": "sim-thinker"}, extra_body={"anthropic_version": "bedrock-2023-05-31"})
    assert msg.content
    http = httpx2.Client(transport=sim.SimTransport())
    r = http.post("http://sim.agentlab.local/model/sim-thinker/invoke", json={})
    assert r.status_code == 403 and r.json() == {"message": "Missing Authentication Token"}


# ---------------------------------------------------------------- signatures belong to their platform


async def _signed_turn(adapter: Any) -> tuple[ModelRequest, ModelResponse]:
    first = ask()
    return first, completed(await collect(adapter, first))


@pytest.mark.parametrize(
    ("maker", "sender"), [("bedrock", "anthropic"), ("anthropic", "vertex"), ("vertex", "bedrock")]
)
async def test_the_simulator_refuses_a_thinking_signature_from_another_platform(
    maker: str, sender: str
) -> None:
    """Each platform keys its signatures: the block itself, sent raw, is an invalid signature elsewhere."""
    makers: dict[str, Callable[[RecordingTransport], Any]] = {
        "bedrock": bedrock,
        "vertex": vertex,
        "anthropic": anthropic_api,
    }
    _, r1 = await _signed_turn(makers[maker](RecordingTransport()))
    blocks = [json.loads(r.unseal(provider=r.provider, api="messages")) for r in r1.reasoning]
    calls = [
        {"type": "tool_use", "id": c.call_id, "name": c.name, "input": json.loads(c.arguments)}
        for c in r1.tool_calls
    ]
    results = [{"type": "tool_result", "tool_use_id": c.call_id, "content": "21 C"} for c in r1.tool_calls]
    body = {
        "model": "sim-thinker",
        "tools": [
            {"name": WEATHER.name, "description": WEATHER.description, "input_schema": WEATHER.parameters}
        ],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "messages": [
            {"role": "user", "content": TASK},
            {"role": "assistant", "content": [*blocks, *calls]},
            {"role": "user", "content": results},
        ],
    }
    clients: dict[str, Callable[[], Any]] = {
        "bedrock": lambda: sim.anthropic_bedrock_client(max_retries=0),
        "vertex": lambda: sim.anthropic_vertex_client(max_retries=0),
        "anthropic": lambda: sim.anthropic_client(max_retries=0),
    }
    client = clients[sender]()
    version = {"bedrock": "bedrock-2023-05-31", "vertex": "vertex-2023-10-16"}.get(sender)
    extra = {"extra_body": {"anthropic_version": version}} if version else {}
    with pytest.raises(anthropic.BadRequestError) as info:
        await client.messages.create(max_tokens=4000, **body, **extra)
    text = "messages.1.content.0: Invalid `signature` in `thinking` block"
    if sender == "bedrock":  # an AWS JSON error
        assert info.value.body == {"message": text}
        assert info.value.response.headers["x-amzn-errortype"].startswith("ValidationException:")
    else:
        assert isinstance(info.value.body, dict) and info.value.body["error"]["message"] == text


async def test_a_platform_signed_block_is_dropped_visibly_on_a_switch() -> None:
    """Bedrock's thinking given to Anthropic's adapter (or Vertex's): never sent, counted, said."""
    t = RecordingTransport()
    first, r1 = await _signed_turn(bedrock(t))
    for other in (anthropic_api(RecordingTransport()), vertex(RecordingTransport())):
        built = other.build(then(first, r1))
        assert built.reasoning_dropped == len(r1.reasoning) and built.reasoning_sent == 0
        (note,) = [d for d in built.diagnostics if d.code == "reasoning_item_dropped"]
        assert isinstance(note, DiagnosticEvent) and note.data["reason"] == "other_origin"
        assert all(b.get("type") != "thinking" for m in built.body["messages"] for b in m["content"])


async def test_another_regions_block_is_dropped_too() -> None:
    """The endpoint names the region on Bedrock; a block made in us-east-1 is not sent to eu-west-1."""
    first, r1 = await _signed_turn(bedrock(RecordingTransport()))
    client = sim.anthropic_bedrock_client(
        base_url="http://eu-west-1.sim.agentlab.local", aws_region="eu-west-1"
    )
    built = AnthropicBedrockAdapter("sim-thinker", client=client).build(then(first, r1))
    assert built.reasoning_dropped == len(r1.reasoning)


# ---------------------------------------------------------------- Bedrock's errors and stream failures


async def test_a_bedrock_error_keeps_its_aws_type_and_request_id() -> None:
    adapter = AnthropicBedrockAdapter("sim-nope", client=sim.anthropic_bedrock_client(max_retries=0))
    with pytest.raises(ProviderAPIError) as info:
        await collect(adapter, ModelRequest(model="sim-nope", items=(UserItem(text="hi"),)))
    err = info.value
    assert (err.status, err.error_type, err.provider) == (400, "ValidationException", "anthropic_bedrock")
    assert err.request_id and len(err.request_id) == 36 and "model identifier is invalid" in err.message


async def test_an_exception_inside_a_200_bedrock_stream_is_a_typed_retryable_interruption() -> None:
    adapter = bedrock(RecordingTransport(default_fault="error_chunk"))
    with pytest.raises(StreamInterruptedError) as info:
        await collect(adapter, ask())
    err = info.value
    assert err.error_type == "modelStreamErrorException" and err.retryable
    assert err.provider == "anthropic_bedrock"


# ---------------------------------------------------------------- credentials, before anything is sent


@pytest.fixture
def no_cloud(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AWS or Google credential or location anywhere this process could find one."""
    for name in (
        "AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
        "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "CLOUD_ML_REGION",
        "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_APPLICATION_CREDENTIALS", "GCE_METADATA_HOST",
    ):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))


@pytest.mark.usefixtures("no_cloud")
def test_bedrock_without_a_region_or_credentials_is_a_config_error_naming_what_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigError, match="set AWS_REGION"):
        create_adapter("anthropic_bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    with pytest.raises(ConfigError, match="set AWS_BEARER_TOKEN_BEDROCK") as info:
        create_adapter("anthropic_bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert "\n" not in str(info.value)
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-SECRET")
    adapter = create_adapter("anthropic_bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert adapter.base_url == "https://bedrock-runtime.us-east-1.amazonaws.com"
    assert "SECRET" not in repr(adapter)


@pytest.mark.usefixtures("no_cloud")
def test_vertex_without_a_region_project_or_credentials_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = "anthropic_vertex:claude-sonnet-4-5@20250929"
    with pytest.raises(ConfigError, match="set CLOUD_ML_REGION"):
        create_adapter(model)
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
    with pytest.raises(ConfigError, match="set GOOGLE_APPLICATION_CREDENTIALS"):
        create_adapter(model)
    with pytest.raises(ConfigError, match="set ANTHROPIC_VERTEX_PROJECT_ID"):
        create_adapter(model, api_key="ya29.token-SECRET")
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "my-project")
    adapter = create_adapter(model, api_key="ya29.token-SECRET")
    assert adapter.base_url == "https://us-east5-aiplatform.googleapis.com/v1"
    assert "SECRET" not in repr(adapter)


@pytest.mark.usefixtures("no_cloud")
def test_a_run_on_a_platform_without_credentials_fails_before_anything_is_sent() -> None:
    with pytest.raises(ConfigError, match="AWS_REGION") as info:
        al.run("anthropic_bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0", "hi")
    assert "\n" not in str(info.value)


def test_platform_provider_options_use_the_platforms_prefix() -> None:
    with pytest.raises(al.InvalidSettingsError, match="for another provider"):
        al.Run("anthropic_bedrock:sim-thinker", "hi", provider_options={"anthropic_top_k": 5})
    with pytest.raises(al.InvalidSettingsError, match="for another provider"):
        al.Run("anthropic:sim-thinker", "hi", provider_options={"anthropic_vertex_top_k": 5})
    r = al.run(
        "anthropic_vertex:sim-thinker", "What is 2+2?", provider_options={"anthropic_vertex_metadata": {}}
    )
    assert r.status == "completed"


# ---------------------------------------------------------------- platform model ids, the family's rules


@pytest.mark.parametrize(
    ("platform_id", "anthropic_id"),
    [
        ("us.anthropic.claude-opus-4-7-v1:0", "claude-opus-4-7"),
        ("anthropic.claude-opus-4-6-v1", "claude-opus-4-6"),
        ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929"),
        ("anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet-20250219"),
        ("claude-opus-4-7@20260101", "claude-opus-4-7"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5-20250929"),
    ],
)
def test_a_platform_model_id_gets_its_familys_thinking_rules(platform_id: str, anthropic_id: str) -> None:
    from agentlab.adapters.anthropic_messages import _models

    assert _models.capabilities(platform_id) == _models.capabilities(anthropic_id)
    assert _models.capabilities(platform_id).known


def test_opus_4_7_on_bedrock_gets_adaptive_thinking_as_on_anthropics_api() -> None:
    """Budgeted thinking is refused by Opus 4.7 wherever it runs: the platform id must not hide it."""
    model = "us.anthropic.claude-opus-4-7-v1:0"
    adapter = AnthropicBedrockAdapter(model, client=sim.anthropic_bedrock_client())
    request = ModelRequest(
        model=model, items=(UserItem(text="hi"),), reasoning=ReasoningSettings(effort="high")
    )
    body = adapter.build(request).body
    assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "high"}
    with pytest.raises(al.InvalidSettingsError, match="adaptive thinking only"):
        adapter.build(request.model_copy(update={"reasoning": ReasoningSettings(budget_tokens=2048)}))


def test_each_platform_has_its_own_trace_name_and_price_table() -> None:
    from agentlab.costs.pricing import get_price
    from agentlab.telemetry.attributes import provider_name

    assert provider_name("anthropic_bedrock") == "aws.bedrock"
    assert provider_name("anthropic_vertex") == "gcp.vertex_ai"
    bedrock_price = get_price("anthropic_bedrock", "global.anthropic.claude-haiku-4-5-20251001-v1:0")
    vertex_price = get_price("anthropic_vertex", "claude-sonnet-4-5@20250929")
    assert bedrock_price is not None and vertex_price is not None


def test_botocores_signing_debug_output_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    """SigV4 debug output (botocore logs the canonical request, session token included) is redacted."""
    import logging

    from agentlab.adapters.registry import get_provider

    get_provider("anthropic_bedrock")  # a known provider's loggers are covered from then on
    token = "IQoJb3JpZ2luX2VjEFAaCXVz+ZWFzdC0x/EiKzSecret=="
    with caplog.at_level(logging.DEBUG, logger="botocore.auth"):
        logging.getLogger("botocore.auth").debug(
            "CanonicalRequest:\n%s", f"host:x\nx-amz-security-token:{token}"
        )
    assert "CanonicalRequest" in caplog.text and "EiKzSecret" not in caplog.text


@pytest.mark.parametrize("key", ["anthropic_version", "anthropic_beta"])
def test_the_platform_body_keys_are_agentlabs(key: str) -> None:
    with pytest.raises(al.InvalidSettingsError, match="agentlab builds"):
        al.Run("anthropic_bedrock:sim-thinker", "hi", provider_options={f"anthropic_bedrock_{key}": "x"})


@pytest.mark.usefixtures("no_cloud")
def test_a_bedrock_api_key_needs_no_boto3_when_the_region_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "boto3", None)  # an import of boto3 now fails
    model = "anthropic_bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0"
    with pytest.raises(ConfigError, match="set AWS_REGION"):
        create_adapter(model, api_key="bedrock-api-key-x")
    with pytest.raises(al.MissingExtraError, match="boto3"):
        create_adapter(model, aws_region="us-east-1")
    assert create_adapter(model, api_key="bedrock-api-key-x", aws_region="us-east-1").base_url


def test_a_session_moving_between_platforms_reports_the_thinking_it_drops() -> None:
    """Bedrock's blocks are not carried to Anthropic's API or Vertex; on Bedrock itself none is dropped."""

    @al.tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return {"Paris": "18 C", "Rome": "24 C"}[city]

    dropped = {}
    for second in ("anthropic", "anthropic_vertex", "anthropic_bedrock"):
        s = al.Session()
        first = s.run("anthropic_bedrock:sim-thinker", "Is it warmer in Paris or Rome?", tools=[get_weather])
        again = s.run(f"{second}:sim-thinker", "And in Paris?", tools=[get_weather])
        assert first.status == again.status == "completed"
        dropped[second] = again.usage.reasoning_items_dropped
    assert dropped["anthropic"] == dropped["anthropic_vertex"] > 0 and dropped["anthropic_bedrock"] == 0
