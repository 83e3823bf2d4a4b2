"""The simulated Gemini API through the real google-genai SDK: tool loops and the signature rules."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from google.genai import errors, types

from agentlab import sim
from agentlab.sim.gemini import generate as gemini
from tests.sim.helpers import TEMPS

TASK = "Is it warmer in Paris or Rome?"
WEATHER = types.FunctionDeclaration(
    name="get_weather",
    description="Current weather for a city.",
    parameters_json_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


def gclient(**kw: Any) -> Any:
    """The simulator's google-genai client, typed loosely (its response fields are all optional)."""
    return sim.gemini_client(**kw)


def config(**thinking: Any) -> types.GenerateContentConfig:
    return types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[WEATHER])],
        thinking_config=types.ThinkingConfig(**thinking) if thinking else None,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def results(content: types.Content) -> types.Content:
    """The function responses for every call of a model turn, paired by id."""
    parts = []
    for p in content.parts or []:
        if p.function_call is not None:
            city = str((p.function_call.args or {}).get("city"))
            fr = types.FunctionResponse(
                id=p.function_call.id, name=p.function_call.name, response={"result": TEMPS[city]}
            )
            parts.append(types.Part(function_response=fr))
    return types.Content(role="user", parts=parts)


def first_step(client: Any, model: str = "sim-gemini", **thinking: Any) -> list[Any]:
    contents = [user(TASK)]
    r = client.models.generate_content(model=model, contents=contents, config=config(**thinking))
    content = r.candidates[0].content
    return [*contents, content, results(content)]


def refusal(client: Any, contents: list[types.Content]) -> errors.ClientError:
    with pytest.raises(errors.ClientError) as info:
        client.models.generate_content(model="sim-gemini", contents=contents, config=config())
    assert info.value.code == 400 and info.value.status == "INVALID_ARGUMENT"
    return info.value


def test_sync_tool_loop_carries_the_signature_back_and_answers() -> None:
    client = gclient()
    contents = first_step(client, include_thoughts=True)
    parts = contents[1].parts or []
    assert parts[0].thought is True and parts[0].text
    calls = [p for p in parts if p.function_call is not None]
    assert [c.function_call.args for c in calls] == [{"city": "Paris"}, {"city": "Rome"}]
    # parallel calls: only the first carries a signature; Gemini 3 gives ids
    assert calls[0].thought_signature and calls[1].thought_signature is None
    assert all(c.function_call.id and len(c.function_call.id) == 8 for c in calls)
    r = client.models.generate_content(
        model="sim-gemini", contents=contents, config=config(include_thoughts=True)
    )
    assert "Rome" in (r.text or "")
    u = r.usage_metadata
    assert u.thoughts_token_count and u.candidates_token_count and u.prompt_token_count
    assert u.total_token_count == u.prompt_token_count + u.candidates_token_count + u.thoughts_token_count
    # the answer's last part carries a signature too (not required back)
    assert r.candidates[0].content.parts[-1].thought_signature


async def test_async_stream_tool_loop_with_signatures() -> None:
    client = gclient()
    contents = [user(TASK)]
    parts: list[types.Part] = []
    async for chunk in await client.aio.models.generate_content_stream(
        model="sim-gemini", contents=contents, config=config()
    ):
        parts += chunk.candidates[0].content.parts or []
        last = chunk
    assert last.candidates[0].finish_reason == types.FinishReason.STOP
    model_turn = types.Content(
        role="model", parts=[p for p in parts if p.function_call or p.thought_signature]
    )
    contents += [model_turn, results(model_turn)]
    text = ""
    async for chunk in await client.aio.models.generate_content_stream(
        model="sim-gemini", contents=contents, config=config()
    ):
        text += chunk.text or ""
    assert "Rome is warmer" in text


def test_missing_signature_is_refused_with_the_real_text() -> None:
    client = gclient()
    contents = first_step(client)
    for p in contents[1].parts or []:
        p.thought_signature = None
    err = refusal(client, contents)
    assert err.message == gemini.MISSING_SIGNATURE.format(name="get_weather", position=2)
    assert err.message.startswith("Function call is missing a thought_signature in functionCall parts.")


def test_modified_signature_is_not_valid() -> None:
    client = gclient()
    contents = first_step(client)
    part = (contents[1].parts or [])[0]
    raw = bytearray(part.thought_signature or b"")
    raw[-1] ^= 1
    part.thought_signature = bytes(raw)
    assert refusal(client, contents).message == "Thought signature is not valid."


def test_modified_call_arguments_invalidate_its_signature() -> None:
    client = gclient()
    contents = first_step(client)
    call = (contents[1].parts or [])[0].function_call
    assert call is not None
    call.args = {"city": "Oslo"}
    assert refusal(client, contents).message == "Thought signature is not valid."


def test_moved_signature_is_refused() -> None:
    client = gclient()
    contents = first_step(client)
    parts = contents[1].parts or []
    # onto the second call: the first call now lacks one
    parts[1].thought_signature, parts[0].thought_signature = parts[0].thought_signature, None
    assert str(refusal(client, contents).message).startswith("Function call is missing a thought_signature")
    # the whole turn moved to another position in the contents: the signature no longer fits
    contents = first_step(client)
    moved = [user(TASK), contents[1], results(contents[1]), contents[1], contents[2]]
    assert refusal(client, moved).message == "Thought signature is not valid."


def test_foreign_signature_is_refused() -> None:
    other = gclient(secret=b"another deployment")
    contents = first_step(other)
    assert refusal(gclient(), contents).message == "Thought signature is not valid."


def test_only_the_current_turn_is_validated() -> None:
    client = gclient()
    contents = first_step(client)
    for p in contents[1].parts or []:
        p.thought_signature = None
    r = client.models.generate_content(model="sim-gemini", contents=[*contents, user(TASK)], config=config())
    assert r.function_calls  # an earlier turn without signatures is not checked


def test_documented_skip_sentinel_is_accepted() -> None:
    client = gclient()
    contents = first_step(client)
    (contents[1].parts or [])[0].thought_signature = None
    raw = sim.SimTransport()
    body = {
        "contents": [c.model_dump(mode="json", exclude_none=True) for c in contents],
        "tools": [{"functionDeclarations": [WEATHER.model_dump(mode="json", exclude_none=True)]}],
    }
    body["contents"][1]["parts"][0]["thoughtSignature"] = "skip_thought_signature_validator"
    r = post(raw, "/v1beta/models/sim-gemini:generateContent", body)
    assert r.status_code == 200, r.text


def test_unpaired_function_response_is_refused() -> None:
    client = gclient()
    contents = first_step(client)
    contents[2].parts = (contents[2].parts or [])[:1]
    assert refusal(client, contents).message == gemini.COUNT_MISMATCH


def test_legacy_model_does_not_enforce_signatures_and_gives_no_ids() -> None:
    client = gclient()
    contents = first_step(client, "sim-gemini-legacy")
    calls = [p for p in contents[1].parts or [] if p.function_call]
    assert calls[0].thought_signature and all(c.function_call.id is None for c in calls)
    for c in calls:
        c.thought_signature = None
    r = client.models.generate_content(model="sim-gemini-legacy", contents=contents, config=config())
    # Accepted; without its signatures the model has lost its plan and repeats the batch once
    # (the continuity effect, tests/sim/gemini/test_drop.py).
    assert [c.args for c in r.function_calls or []] == [{"city": "Paris"}, {"city": "Rome"}]


@pytest.mark.parametrize(
    ("model", "thinking", "message"),
    [
        ("sim-gemini", {"thinking_budget": 0}, gemini.ONLY_THINKING),
        ("sim-gemini", {"thinking_budget": 100, "thinking_level": "LOW"}, gemini.BOTH_THINKING),
        ("sim-gemini-legacy", {"thinking_level": "LOW"}, gemini.GENERIC_INVALID),
        ("sim-gemini-legacy", {"thinking_budget": 99999}, "The thinking budget (99999) is invalid."),
    ],
)
def test_thinking_settings_a_model_cannot_take_are_refused(
    model: str, thinking: dict[str, Any], message: str
) -> None:
    client = gclient()
    with pytest.raises(errors.ClientError) as info:
        client.models.generate_content(model=model, contents=TASK, config=config(**thinking))
    assert info.value.code == 400 and info.value.message == message


def test_thinking_budget_zero_turns_legacy_thinking_off_and_levels_change_effort() -> None:
    client = gclient()
    off = client.models.generate_content(
        model="sim-gemini-legacy", contents=TASK, config=config(thinking_budget=0)
    )
    assert off.usage_metadata.thoughts_token_count is None
    assert all(p.thought_signature is None for p in off.candidates[0].content.parts or [])
    low = client.models.generate_content(
        model="sim-gemini", contents=TASK, config=config(thinking_level="LOW")
    )
    high = client.models.generate_content(
        model="sim-gemini", contents=TASK, config=config(thinking_level="HIGH")
    )
    assert low.usage_metadata.thoughts_token_count < high.usage_metadata.thoughts_token_count


def test_function_calling_modes() -> None:
    client = gclient()
    cfg = config()
    cfg.tool_config = types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode.NONE)
    )
    r = client.models.generate_content(model="sim-gemini", contents=TASK, config=cfg)
    assert not r.function_calls
    cfg.tool_config = types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=["get_weather"]
        )
    )
    assert client.models.generate_content(model="sim-gemini", contents=TASK, config=cfg).function_calls


def test_count_tokens_models_and_unknown_model() -> None:
    client = gclient()
    r = client.models.generate_content(model="sim-gemini", contents=TASK)
    assert (
        client.models.count_tokens(model="sim-gemini", contents=TASK).total_tokens
        == r.usage_metadata.prompt_token_count
    )
    assert [m.name for m in client.models.list()] == ["models/sim-gemini", "models/sim-gemini-legacy"]
    assert client.models.get(model="sim-gemini").version == "3"
    with pytest.raises(errors.ClientError) as info:
        client.models.generate_content(model="gemini-9-ultra", contents=TASK)
    assert info.value.code == 404 and info.value.status == "NOT_FOUND"


def test_implicit_cache_hits_a_repeated_long_prefix() -> None:
    client = gclient()
    long = " ".join(f"fact{i}" for i in range(1500)) + " " + TASK
    first = client.models.generate_content(model="sim-gemini", contents=long)
    again = client.models.generate_content(model="sim-gemini", contents=long)
    assert first.usage_metadata.cached_content_token_count is None
    assert again.usage_metadata.cached_content_token_count >= 1024


def test_v1beta_and_url_safe_or_standard_signatures() -> None:
    client = gclient(http_options={"api_version": "v1beta"})
    contents = first_step(client)
    r = client.models.generate_content(model="sim-gemini", contents=contents, config=config())
    assert "Rome" in (r.text or "")
    body = {
        "contents": [c.model_dump(mode="json", exclude_none=True) for c in contents],
        "tools": [{"functionDeclarations": [WEATHER.model_dump(mode="json", exclude_none=True)]}],
    }
    sig = (contents[1].parts or [])[0].thought_signature
    assert sig is not None
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        body["contents"][1]["parts"][0]["thought_signature"] = encode(sig).decode()
        assert post(sim.SimTransport(), "/v1beta/models/sim-gemini:generateContent", body).status_code == 200


def post(transport: Any, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    import httpx2

    with httpx2.Client(transport=transport, base_url=sim.GEMINI_BASE_URL) as c:
        return c.post(path, json=body, headers={"x-goog-api-key": "k", **(headers or {})})


EMPTY_USER_PROMPT = {  # pydantic/pydantic-ai test_google_model_empty_user_prompt.yaml: the API answered 200
    "contents": [{"parts": [{"text": ""}], "role": "user"}],
    "generationConfig": {"responseModalities": ["TEXT"]},
    "systemInstruction": {"parts": [{"text": "You are a helpful assistant."}], "role": "user"},
}
EMPTY_MODEL_TEXT = {  # pydantic/pydantic-ai test_google_model_empty_assistant_response.yaml: 200
    "contents": [
        {"parts": [{"text": "Hi"}], "role": "user"},
        {"parts": [{"text": ""}], "role": "model"},
        {"parts": [{"text": "Was your previous response empty?"}], "role": "user"},
    ],
    "generationConfig": {"responseModalities": ["TEXT"]},
}


@pytest.mark.parametrize("body", [EMPTY_USER_PROMPT, EMPTY_MODEL_TEXT], ids=["user", "model"])
def test_empty_text_parts_the_real_api_answered_are_answered(body: dict[str, Any]) -> None:
    r = post(sim.SimTransport(), "/v1beta/models/sim-gemini-legacy:generateContent", body)
    assert r.status_code == 200, r.text
    assert r.json()["candidates"][0]["content"]["parts"]


ONEOF = "required oneof field 'data' must have one initialized field\n"


@pytest.mark.parametrize(
    ("contents", "system", "message"),
    [
        (
            [{"role": "user", "parts": []}],
            None,
            "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.\n",
        ),
        (
            [{"role": "user", "parts": [{"text": "q"}]}, {"role": "model", "parts": [{"thought": True}]}],
            None,
            "* GenerateContentRequest.contents[1].parts[0].data: " + ONEOF,
        ),
        (
            [{"role": "user", "parts": [{"text": "q"}]}],
            {"parts": [{}]},
            "* GenerateContentRequest.system_instruction.parts[0].data: " + ONEOF,
        ),
    ],
    ids=["no-parts", "part-without-data", "system-part-without-data"],
)
def test_contents_without_parts_or_parts_without_data_get_the_real_400(
    contents: list[Any], system: Any, message: str
) -> None:
    body: dict[str, Any] = {"contents": contents}
    if system is not None:
        body["systemInstruction"] = system
    r = post(sim.SimTransport(), "/v1beta/models/sim-gemini:generateContent", body)
    assert r.status_code == 400
    assert r.json()["error"] == {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}


def test_a_signature_that_is_not_base64_is_refused_quoting_it_as_the_api_does() -> None:
    """Google's JSON parser refuses a non-base64 ``thoughtSignature`` before any rule, and quotes it.

    The wording is the one reported against the live API (one line per refused value, with a
    ``google.rpc.BadRequest`` violation naming the field), so a client's error handling meets the
    quoted value here as it does in production.
    """
    client = gclient()
    contents = first_step(client)
    body = {
        "contents": [c.model_dump(mode="json", exclude_none=True) for c in contents],
        "tools": [{"functionDeclarations": [WEATHER.model_dump(mode="json", exclude_none=True)]}],
    }
    body["contents"][1]["parts"][0]["thought_signature"] = "not base64: cnyGEMsig!"
    body["contents"][0]["parts"][0]["thoughtSignature"] = "A" * 5  # 5 characters: no base64 length
    resp = post(sim.SimTransport(), "/v1beta/models/sim-gemini:generateContent", body)
    assert resp.status_code == 400
    err = resp.json()["error"]
    assert err["status"] == "INVALID_ARGUMENT"
    assert err["message"].split("\n") == [
        "Invalid value at 'contents[0].parts[0].thought_signature' (TYPE_BYTES), "
        'Base64 decoding failed for "AAAAA"',
        "Invalid value at 'contents[1].parts[0].thought_signature' (TYPE_BYTES), "
        'Base64 decoding failed for "not base64: cnyGEMsig!"',
    ]
    fields = [v["field"] for v in err["details"][0]["fieldViolations"]]
    assert fields == ["contents[0].parts[0].thought_signature", "contents[1].parts[0].thought_signature"]
