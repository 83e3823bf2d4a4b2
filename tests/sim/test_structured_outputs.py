"""Structured outputs in the simulator, driven through the official SDKs' own helpers.

``responses.parse(text_format=Model)`` and ``messages.parse(output_format=Model)`` send a schema and
validate the answer into ``Model``: the simulated model must answer with a JSON document valid
against it (and echo the format in the OpenAI response's ``text`` field), and refuse with the real
API's status, type, ``param`` and text what the real API refuses.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import anthropic
import jsonschema  # type: ignore[import-untyped]
import openai
import pytest
from pydantic import BaseModel, Field

from agentlab import sim
from agentlab.sim.structured import instance


class City(BaseModel):
    name: str
    population: int | None


class Answer(BaseModel):
    """What the task asks."""

    warmer: Literal["Paris", "Rome"]
    explanation: str
    temperature_c: float
    cities: list[City]
    when: str = Field(json_schema_extra={"format": "date"})


@pytest.mark.parametrize("stream", [False, True])
async def test_openai_responses_parse_gets_a_valid_instance(stream: bool) -> None:
    client = sim.openai_client()
    task = "Is it warmer in Paris or Rome?"
    if stream:
        async with client.responses.stream(model="sim-reasoner", input=task, text_format=Answer) as s:
            resp = await s.get_final_response()
    else:
        resp = await client.responses.parse(model="sim-reasoner", input=task, text_format=Answer)
    parsed = resp.output_parsed
    assert isinstance(parsed, Answer)
    assert parsed.cities and parsed.when == "2026-01-01"
    echoed = resp.model_dump()["text"]["format"]  # echoed, not the old {"type": "text"}
    assert (echoed["type"], echoed["name"], echoed["strict"]) == ("json_schema", "Answer", True)


async def test_anthropic_messages_parse_gets_a_valid_instance() -> None:
    client = sim.anthropic_client()
    msg = await client.messages.parse(
        model="sim-thinker",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 1024},
        messages=[{"role": "user", "content": "What is 12 * (3 + 4)?"}],
        output_format=Answer,
    )
    assert isinstance(msg.parsed_output, Answer)
    assert msg.parsed_output.temperature_c == 84  # the last number of the simulated answer
    assert [b.type for b in msg.content] == ["thinking", "text"]


async def test_anthropic_messages_stream_helper_parses_too() -> None:
    client = sim.anthropic_client()
    async with client.messages.stream(
        model="sim-thinker",
        max_tokens=4000,
        messages=[{"role": "user", "content": "What is 12 * (3 + 4)?"}],
        output_format=Answer,
    ) as stream:
        msg = await stream.get_final_message()
    assert isinstance(msg.parsed_output, Answer)


def _body(**kw: Any) -> dict[str, Any]:
    return {"model": "sim-reasoner", "input": "hi", **kw}


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    return {"format": {"type": "json_schema", "name": "answer", "strict": True, "schema": schema}}


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            "Invalid schema for response_format 'answer': In context=(), 'additionalProperties' is "
            "required to be supplied and to be false.",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "required": ["a"],
                "additionalProperties": False,
            },
            "Invalid schema for response_format 'answer': In context=(), 'required' is required to be "
            "supplied and to be an array including every key in properties. Missing 'b'.",
        ),
        (
            {
                "type": "object",
                "properties": {"loc": {"type": "object", "properties": {"city": {"type": "string"}}}},
                "required": ["loc"],
                "additionalProperties": False,
            },
            "Invalid schema for response_format 'answer': In context=('properties', 'loc'), "
            "'additionalProperties' is required to be supplied and to be false.",
        ),
        (
            {
                "type": "object",
                "properties": {"v": {"description": "anything"}},
                "required": ["v"],
                "additionalProperties": False,
            },
            "Invalid schema for response_format 'answer': In context=('properties', 'v'), schema must "
            "have a 'type' key.",
        ),
    ],
)
async def test_openai_refuses_what_strict_mode_refuses(schema: dict[str, Any], message: str) -> None:
    client = sim.openai_client()
    with pytest.raises(openai.BadRequestError) as info:
        await client.responses.create(**_body(text=_strict(schema)))
    err = info.value.body
    assert isinstance(err, dict)
    assert err["message"] == message
    assert (err["type"], err["param"], err["code"]) == (
        "invalid_request_error",
        "text.format.schema",
        "invalid_json_schema",
    )


async def test_openai_json_schema_without_name_is_refused() -> None:
    client = sim.openai_client()
    with pytest.raises(openai.BadRequestError) as info:
        await client.responses.create(
            **_body(text={"format": {"type": "json_schema", "schema": {"type": "object"}}})
        )
    assert isinstance(info.value.body, dict)
    assert info.value.body["param"] == "text.format.name"


async def test_anthropic_refuses_an_open_object_and_a_model_without_structured_outputs() -> None:
    client = sim.anthropic_client()
    open_schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    with pytest.raises(anthropic.BadRequestError) as info:
        kw: dict[str, Any] = {"output_config": {"format": {"type": "json_schema", "schema": open_schema}}}
        await client.messages.create(
            model="sim-thinker", max_tokens=100, messages=[{"role": "user", "content": "hi"}], **kw
        )
    assert (
        "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly "
        "set to false" in str(info.value)
    )
    with pytest.raises(anthropic.BadRequestError, match="does not support"):
        await client.messages.parse(
            model="sim-thinker-legacy",
            max_tokens=100,
            messages=[{"role": "user", "content": "hi"}],
            output_format=Answer,
        )


def test_text_format_text_answers_in_free_text_and_echoes_it() -> None:
    client = sim.openai_sync_client()
    resp = client.responses.create(
        model="sim-reasoner", input="What is 12 * (3 + 4)?", text={"format": {"type": "text"}}
    )
    assert resp.output_text == "12 * (3 + 4) = 84"
    assert resp.model_dump()["text"]["format"] == {"type": "text"}


SCHEMAS: list[dict[str, Any]] = [
    Answer.model_json_schema(),
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 100, "maximum": 200}}},
    {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "number"}, "minItems": 3}}},
    {"type": "object", "properties": {"s": {"type": "string", "maxLength": 4, "minLength": 2}}},
    {"type": "object", "properties": {"e": {"enum": [1, 2, "three"]}, "c": {"const": "fixed"}}},
    {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"child": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}},
            }
        },
    },
    {"type": ["string", "null"]},
    {"allOf": [{"type": "object", "properties": {"a": {"type": "boolean"}}}]},
]


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("answer", ["Rome is warmer (24 vs 18).", "", "The total is 54.5"])
def test_instances_are_valid_and_deterministic(schema: dict[str, Any], answer: str) -> None:
    value = instance(schema, answer)
    jsonschema.validate(value, schema)
    assert instance(schema, answer) == value


# -- Gemini, DeepSeek, OpenRouter, local servers (issue 29, item 10) ----------------------------------


class Weather(BaseModel):
    city: Literal["Paris", "Rome"]
    temp_c: float


@pytest.mark.parametrize("model", ["sim-gemini", "sim-gemini-legacy"])
@pytest.mark.parametrize("field", ["response_schema", "response_json_schema"])
def test_gemini_answers_a_schema_instance_under_application_json(model: str, field: str) -> None:
    """``responseSchema`` (OpenAPI types) or ``responseJsonSchema``, with ``responseMimeType``."""
    from google.genai import types

    schema: Any = Weather if field == "response_schema" else Weather.model_json_schema()
    config = types.GenerateContentConfig(response_mime_type="application/json", **{field: schema})
    r = sim.gemini_client().models.generate_content(
        model=model, contents="Is it warmer in Paris or Rome?", config=config
    )
    assert Weather.model_validate_json(r.text or "")


def test_gemini_json_mode_without_a_schema_and_text_without_the_mime_type() -> None:
    from google.genai import types

    client = sim.gemini_client()
    as_json = client.models.generate_content(
        model="sim-gemini",
        contents="Is it warmer in Paris or Rome?",
        config=types.GenerateContentConfig(response_mime_type="application/json"),
    )
    assert isinstance(json.loads(as_json.text or ""), dict)
    as_text = client.models.generate_content(model="sim-gemini", contents="Is it warmer in Paris or Rome?")
    with pytest.raises(ValueError):
        json.loads(as_text.text or "")


@pytest.mark.parametrize(
    ("dialect", "model"),
    [
        ("openrouter", "sim-router-gemini"),
        ("openrouter", "sim-router-claude"),
        ("openrouter", "sim-router-openai"),
        ("local", "sim-local"),
        ("local", "sim-local-reasoning"),
    ],
)
async def test_chat_dialects_with_json_schema_answer_a_valid_instance(dialect: str, model: str) -> None:
    client = sim.chat_client(dialect)
    r = await client.chat.completions.parse(
        model=model,
        messages=[{"role": "user", "content": "Is it warmer in Paris or Rome?"}],
        response_format=Weather,
    )
    assert isinstance(r.choices[0].message.parsed, Weather)


async def test_deepseek_refuses_json_schema_with_its_real_400_and_takes_json_object() -> None:
    """DeepSeek has JSON mode only (api-docs.deepseek.com/guides/json_mode).

    The 400 body as quoted in llm-exe/llm-exe#662 and UKGovernmentBEIS/inspect_ai#4916.
    """
    client = sim.chat_client("deepseek")
    messages: Any = [{"role": "user", "content": "Is it warmer in Paris or Rome? Answer in json."}]
    with pytest.raises(openai.BadRequestError) as info:
        await client.chat.completions.parse(model="sim-deepseek", messages=messages, response_format=Weather)
    assert info.value.status_code == 400
    assert info.value.body == {
        "message": "This response_format type is unavailable now",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }
    r = await client.chat.completions.create(
        model="sim-deepseek", messages=messages, response_format={"type": "json_object"}
    )
    assert isinstance(json.loads(r.choices[0].message.content or ""), dict)


def test_gemini_25_refuses_tools_beside_a_json_answer_and_gemini_3_takes_both() -> None:
    """The real 400 (quoted in googleapis/python-genai#867); Gemini 3 combines them."""
    from google.genai import errors, types

    config = types.GenerateContentConfig(
        response_mime_type="application/json",
        response_json_schema=Weather.model_json_schema(),
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="get_weather")])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    client = sim.gemini_client()
    with pytest.raises(errors.ClientError) as info:
        client.models.generate_content(model="sim-gemini-legacy", contents="Paris or Rome?", config=config)
    assert info.value.code == 400
    assert (
        info.value.message == "Function calling with a response mime type: 'application/json' is unsupported"
    )
    r = client.models.generate_content(
        model="sim-gemini", contents="Is it warmer in Paris or Rome?", config=config
    )
    assert r.function_calls or Weather.model_validate_json(r.text or "")


async def test_deepseek_json_mode_needs_the_word_json_in_the_prompt() -> None:
    """The JSON Output guide's rule, with the 400 text quoted in vercel/ai#7913."""
    client = sim.chat_client("deepseek")
    with pytest.raises(openai.BadRequestError) as info:
        await client.chat.completions.create(
            model="sim-deepseek",
            messages=[{"role": "user", "content": "Is it warmer in Paris or Rome?"}],
            response_format={"type": "json_object"},
        )
    assert info.value.body == {
        "message": "Prompt must contain the word 'json' in some form to use 'response_format' of type "
        "'json_object'.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }
    r = await client.chat.completions.create(
        model="sim-deepseek",
        messages=[
            {"role": "system", "content": "Reply in JSON."},
            {"role": "user", "content": "Paris or Rome?"},
        ],
        response_format={"type": "json_object"},
    )
    assert isinstance(json.loads(r.choices[0].message.content or ""), dict)
