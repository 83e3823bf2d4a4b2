"""The Responses dialects (openai_responses/_dialect.py): model strings, keys, what each host is sent."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import openai
import pytest

from agentlab.adapters import create_adapter
from agentlab.adapters.registry import get_provider
from agentlab.errors import InvalidSettingsError, MissingApiKeyError
from agentlab.neutral.items import ProviderReasoningItem, ToolCallItem, ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest
from tests.adapters.contract import WEATHER
from tests.adapters.openai_chat.chat_support import Replay, Served, client_on, collect, completed

DIALECTS = {
    "xai": ("XAIAdapter", "https://api.x.ai/v1", "XAI_API_KEY"),
    "deepseek_responses": ("DeepSeekResponsesAdapter", "https://api.deepseek.com", "DEEPSEEK_API_KEY"),
    "azure": ("AzureAdapter", None, "AZURE_OPENAI_API_KEY"),
    "mantle": (
        "MantleAdapter",
        "https://bedrock-mantle.us-east-1.api.aws/openai/v1",
        "AWS_BEARER_TOKEN_BEDROCK",
    ),
    "vllm_responses": ("VLLMResponsesAdapter", "http://localhost:8000/v1", None),
    "ollama_responses": ("OllamaResponsesAdapter", "http://localhost:11434/v1", None),
    "lmstudio_responses": ("LMStudioResponsesAdapter", "http://localhost:1234/v1", None),
}


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_model_strings_route_with_base_url_and_key(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cls, default_url, env = DIALECTS[name]
    spec = get_provider(name)
    assert (spec.api, spec.api_key_env, spec.adapter.rsplit(":", 1)[1]) == ("responses", env, cls)
    a = create_adapter(
        f"{name}:some-model", base_url="https://example.test/v1", api_key="sk-secret-1234567890"
    )
    assert (type(a).__name__, a.provider, a.base_url) == (cls, name, "https://example.test/v1")
    assert "sk-secret" not in repr(a)
    if env is not None:
        monkeypatch.delenv(env, raising=False)
    if default_url is None:
        with pytest.raises(InvalidSettingsError, match="base_url"):
            create_adapter(f"{name}:some-model", api_key="k")
    elif env is not None:
        with pytest.raises(MissingApiKeyError, match=env):
            create_adapter(f"{name}:some-model")
        monkeypatch.setenv(env, "sk-env-key-000")
        assert create_adapter(f"{name}:some-model").base_url == default_url
    else:  # local servers need no key
        assert create_adapter(f"{name}:some-model").base_url == default_url


def _body(usage: dict[str, Any] | None = None) -> bytes:
    return json.dumps(
        {
            "id": "resp_1", "status": "completed",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "tok",
                 "content": [{"type": "reasoning_text", "text": "plan"}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_0", "name": "get_weather",
                 "arguments": '{"city": "Paris"}', "status": "completed"},
            ],
            "usage": usage or {"input_tokens": 10, "output_tokens": 5},
        }
    ).encode()  # fmt: skip


def _loop(name: str, model: str = "m-1") -> tuple[Replay, dict[str, Any], Any]:
    """One tool call answered by a host, then the request agentlab builds after it (body, response)."""
    replay = Replay([Served(200, _body(), "application/json")])
    client = client_on(replay, "https://host.test/v1")
    a: Any = create_adapter(f"{name}:{model}", client=client, max_retries=0)
    req = ModelRequest(model=model, items=(UserItem(text="Paris?"),), tools=(WEATHER,), stream=False)
    r = completed(asyncio.run(collect(a, req)))
    results = [ToolResultItem(call_id=c.call_id, name=c.name, output="18 C") for c in r.tool_calls]
    nxt = req.model_copy(update={"items": (*req.items, *r.items, *results), "continuation": r.reasoning})
    return replay, json.loads(a.build(nxt).body), r


@pytest.mark.parametrize("name", ["vllm_responses", "ollama_responses", "lmstudio_responses"])
def test_local_servers_are_never_sent_encrypted_content(name: str) -> None:
    replay, body, r = _loop(name)
    first = json.loads(replay.bodies[0])
    assert "include" not in first and "include" not in body
    (reasoning,) = [i for i in body["input"] if i.get("type") == "reasoning"]
    assert "encrypted_content" not in reasoning and reasoning["content"] == [
        {"type": "reasoning_text", "text": "plan"}
    ]
    assert ("store" in first) is (name != "ollama_responses")  # Ollama lists no store field
    assert r.usage.reasoning_tokens is None and r.usage.cache_read_tokens is None  # unreported: unknown


def test_local_items_without_a_token_go_back_byte_for_byte() -> None:
    raw = b'{"type": "reasoning",  "id": "rs_9", "summary": [], '
    raw += b'"content": [{"type": "reasoning_text", "text": "p"}]}'
    item = ProviderReasoningItem(
        raw, provider="vllm_responses", api="responses", model="m-1", block_type="reasoning",
        turn_id="resp_9", index=0,
    )  # fmt: skip
    call = ToolCallItem(call_id="c9", name="get_weather", arguments="{}", turn_id="resp_9", index=1)
    a: Any = create_adapter("vllm_responses:m-1", client=client_on(Replay([]), "http://localhost:8000/v1"))
    items = (UserItem(text="Paris?"), call, ToolResultItem(call_id="c9", name="get_weather", output="18 C"))
    built = a.build(ModelRequest(model="m-1", items=items, tools=(WEATHER,), continuation=(item,)))
    assert raw in built.body and built.reasoning_sent == 1


def test_deepseek_responses_is_never_asked_for_a_reference_and_replays_its_text() -> None:
    replay, body, _ = _loop("deepseek_responses", "deepseek-v4-flash")
    assert "include" not in json.loads(replay.bodies[0]) and json.loads(replay.bodies[0])["store"] is False
    reasoning, call, _out = body["input"][1:]
    assert reasoning["content"][0]["text"] == "plan" and "id" not in call


def test_mantle_scopes_reused_call_ids_for_the_call_and_its_result() -> None:
    _, body, r = _loop("mantle", "openai.gpt-5.5")
    (call,) = r.tool_calls
    assert isinstance(call, ToolCallItem) and call.call_id == "resp_1:call_0"
    assert [(i["type"], i["call_id"]) for i in body["input"] if "call_id" in i] == [
        ("function_call", "resp_1:call_0"), ("function_call_output", "resp_1:call_0"),
    ]  # fmt: skip
    assert body["include"] == ["reasoning.encrypted_content"] and body["store"] is False


@pytest.mark.parametrize("name", ["xai", "azure"])
def test_hosted_dialects_send_store_false_and_their_items_back(name: str) -> None:
    _, body, _ = _loop(name, "gpt-5-mini")
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["input"][1]["encrypted_content"] == "tok"


def test_xai_cost_in_ticks_is_the_provider_cost() -> None:
    usage = {"input_tokens": 10, "output_tokens": 5, "cost_in_usd_ticks": 123_456_789}
    replay = Replay([Served(200, _body(usage), "application/json")])
    a: Any = create_adapter("xai:grok-4", client=client_on(replay, "https://api.x.ai/v1"), max_retries=0)
    r = completed(
        asyncio.run(collect(a, ModelRequest(model="grok-4", items=(UserItem(text="hi"),), stream=False)))
    )
    assert r.provider_cost_usd == pytest.approx(0.0123456789)


def test_an_item_of_another_dialect_is_not_sent() -> None:
    foreign = ProviderReasoningItem(
        json.dumps({"type": "reasoning", "id": "rs_x", "summary": [], "encrypted_content": "t"}).encode(),
        provider="azure", api="responses", model="grok-4", block_type="reasoning", turn_id="resp_1", index=0,
    )  # fmt: skip
    a: Any = create_adapter("xai:grok-4", client=client_on(Replay([]), "https://api.x.ai/v1"))
    req = ModelRequest(model="grok-4", items=(UserItem(text="hi"),), continuation=(foreign,))
    built = a.build(req)
    assert built.reasoning_dropped == 1 and b"rs_x" not in built.body
    assert built.diagnostics[0].data == {"count": 1, "reason": "other_provider", "provider": "xai"}


def test_the_sdk_client_must_be_openais() -> None:
    with pytest.raises(InvalidSettingsError):
        create_adapter("xai:grok-4", client=httpx2.AsyncClient())
    adapter: Any = create_adapter("xai:grok-4", api_key="k")
    assert isinstance(adapter.client, openai.AsyncOpenAI)
