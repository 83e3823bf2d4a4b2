"""The simulated ``cachedContents`` resource, through the real google-genai SDK (``client.caches``)."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import errors, types

from agentlab import sim
from agentlab.sim.core import Simulator
from agentlab.sim.gemini import cache as gemini_cache
from agentlab.sim.transport import SimTransport

BIG = "The reference manual says: " + "alpha beta gamma delta " * 1100  # ~4400 simulated tokens
WEATHER = types.FunctionDeclaration(
    name="get_weather",
    description="Current weather for a city.",
    parameters_json_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


AUTO = types.FunctionCallingConfigMode.AUTO


def pair(**kw: Any) -> tuple[Any, Simulator]:
    simulator = Simulator()
    return sim.gemini_client(transport=SimTransport(simulator=simulator), **kw), simulator


def create(client: Any, model: str = "sim-gemini", **config: Any) -> Any:
    config.setdefault("system_instruction", BIG)
    config.setdefault("tools", [types.Tool(function_declarations=[WEATHER])])
    return client.caches.create(model=model, config=types.CreateCachedContentConfig(**config))


def test_create_answers_the_real_resource_shape() -> None:
    client, _ = pair()
    c = create(client, ttl="300s", display_name="loop")
    assert c.name.startswith("cachedContents/") and len(c.name.split("/")[1]) == 12
    assert c.model == "models/sim-gemini"
    assert c.display_name == "loop"
    assert c.usage_metadata.total_token_count >= 4096
    assert (c.expire_time - c.create_time).total_seconds() == pytest.approx(300, abs=1)
    assert c.update_time == c.create_time


def test_get_list_patch_delete() -> None:
    client, _ = pair()
    names = {create(client).name for _ in range(3)}
    assert client.caches.get(name=next(iter(names))).name in names
    listed = [c.name for c in client.caches.list(config=types.ListCachedContentsConfig(page_size=2))]
    assert set(listed) == names  # the SDK's pager followed nextPageToken
    one = next(iter(names))
    before = client.caches.get(name=one).expire_time
    after = client.caches.update(name=one, config=types.UpdateCachedContentConfig(ttl="7200s")).expire_time
    assert (after - before).total_seconds() > 3000
    client.caches.delete(name=one)
    with pytest.raises(errors.ClientError) as e:
        client.caches.get(name=one)
    assert e.value.code == 403 and e.value.status == "PERMISSION_DENIED"
    assert e.value.message == gemini_cache.NOT_FOUND


def test_too_small_is_the_api_400_with_both_counts() -> None:
    client, _ = pair()
    with pytest.raises(errors.ClientError) as e:
        create(client, system_instruction="short", tools=None)
    assert e.value.code == 400 and e.value.status == "INVALID_ARGUMENT"
    message = e.value.message or ""
    assert message.startswith("Cached content is too small. total_token_count=")
    assert message.endswith("min_total_token_count=4096")


def test_legacy_model_minimum_is_2048() -> None:
    client, _ = pair()
    text = "word " * 2100
    assert create(client, model="sim-gemini-legacy", system_instruction=text).usage_metadata.total_token_count
    with pytest.raises(errors.ClientError, match="min_total_token_count=4096"):
        create(client, system_instruction=text)


def test_expired_and_foreign_caches_are_403() -> None:
    client, simulator = pair()
    c = create(client, ttl="60s")
    other = sim.gemini_client(transport=SimTransport(simulator=simulator), api_key="someone-else")
    with pytest.raises(errors.ClientError) as e:
        other.caches.get(name=c.name)
    assert e.value.code == 403
    assert list(other.caches.list()) == []
    state = gemini_cache.state_of(simulator)
    real_clock = state.clock
    state.clock = lambda: real_clock() + 61
    with pytest.raises(errors.ClientError) as e:
        client.caches.get(name=c.name)
    assert e.value.code == 403


def test_patch_refuses_other_fields_in_the_mask() -> None:
    client, _ = pair()
    c = create(client)
    api = client._api_client
    with pytest.raises(errors.ClientError) as e:
        api.request("patch", f"{c.name}?updateMask=displayName", {"displayName": "x"}, None)
    assert e.value.code == 400


def gen(client: Any, cache: str | None, **config: Any) -> Any:
    return client.models.generate_content(
        model="sim-gemini",
        contents="Is it warmer in Paris or Rome?",
        config=types.GenerateContentConfig(
            cached_content=cache,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            **config,
        ),
    )


def test_generation_with_a_cache_reports_its_tokens_as_cached() -> None:
    client, _ = pair()
    c = create(client)
    r = gen(client, c.name)
    u = r.usage_metadata
    assert u.cached_content_token_count == c.usage_metadata.total_token_count
    assert u.prompt_token_count > u.cached_content_token_count  # the request's own contents on top
    assert r.candidates[0].content.parts[0].function_call.name == "get_weather"  # the cached tools


@pytest.mark.parametrize(
    "field",
    [
        {"system_instruction": "be brief"},
        {"tools": [types.Tool(function_declarations=[WEATHER])]},
        {"tool_config": types.ToolConfig(function_calling_config=types.FunctionCallingConfig(mode=AUTO))},
    ],
)
def test_cached_content_with_system_tools_or_tool_config_is_the_api_400(field: dict[str, Any]) -> None:
    client, _ = pair()
    c = create(client)
    with pytest.raises(errors.ClientError) as e:
        gen(client, c.name, **field)
    assert e.value.code == 400 and e.value.message == gemini_cache.CONFLICT


def test_unknown_cache_in_generation_is_403_and_model_must_match() -> None:
    client, _ = pair()
    with pytest.raises(errors.ClientError) as e:
        gen(client, "cachedContents/doesnotexist")
    assert e.value.code == 403 and e.value.message == gemini_cache.NOT_FOUND
    legacy = create(client, model="sim-gemini-legacy")
    with pytest.raises(errors.ClientError, match="has to be the same"):
        gen(client, legacy.name)
