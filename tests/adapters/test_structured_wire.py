"""``output_type`` on the wire: what each adapter sends for a structured answer (pure: no I/O).

The references are the providers' own SDK helpers: ``responses.parse(text_format=Model)`` sends
``openai.lib._parsing._responses.type_to_text_format_param(Model)``, and
``messages.parse(output_format=Model)`` sends ``anthropic.lib._parse._transform``'s
``to_json_output_format(Model)``; agentlab must send the same bytes for the same type, and refuse
before sending what the API would answer with a 400.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from agentlab.adapters.anthropic_messages._request import build_request as anthropic_build
from agentlab.adapters.openai_responses import build_request as openai_build
from agentlab.errors import ConfigError, InvalidSettingsError
from agentlab.loop.output import structured_output
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest, ReasoningSettings


class Place(BaseModel):
    name: str
    country: str | None = None


class Forecast(BaseModel):
    """A forecast."""

    city: Literal["Paris", "Rome"]
    temp_c: float = Field(ge=-90, le=60, description="Temperature")
    places: list[Place]
    tags: list[str] = Field(default_factory=list, min_length=2)


class Open(BaseModel):
    scores: dict[str, int]


def _request(output_type: Any, model: str, **kw: Any) -> ModelRequest:
    so = structured_output(output_type)
    return ModelRequest(model=model, items=(UserItem(text="hi"),), output=so.spec if so else None, **kw)


def openai_body(output_type: Any, model: str = "gpt-5.1", **kw: Any) -> dict[str, Any]:
    built = openai_build(_request(output_type, model, **kw), model=model, base_url=None)
    out: dict[str, Any] = json.loads(built.body)
    return out


def anthropic_body(output_type: Any, model: str = "claude-sonnet-4-5", **kw: Any) -> dict[str, Any]:
    return anthropic_build(_request(output_type, model, **kw), base_url=None).body


@pytest.mark.parametrize("model", [Forecast, Place])
def test_openai_text_format_is_what_the_sdk_helper_sends(model: type[BaseModel]) -> None:
    from openai.lib._parsing._responses import type_to_text_format_param

    assert openai_body(model)["text"] == {"format": type_to_text_format_param(model)}


@pytest.mark.parametrize("model", [Forecast, Place])
def test_anthropic_output_format_is_what_the_sdk_helper_sends(model: type[BaseModel]) -> None:
    from anthropic.lib._parse._transform import to_json_output_format

    assert anthropic_body(model)["output_config"] == {"format": to_json_output_format(model)}


def test_no_output_type_sends_no_format() -> None:
    assert "text" not in openai_body(None)
    assert "output_config" not in anthropic_body(None)


def test_anthropic_format_joins_adaptive_effort_in_one_output_config() -> None:
    body = anthropic_body(
        Place, model="claude-opus-4-6", reasoning=ReasoningSettings(adaptive=True, effort="high")
    )
    assert body["output_config"]["effort"] == "high"
    assert body["output_config"]["format"]["type"] == "json_schema"


def test_openai_text_option_keeps_verbosity_and_refuses_a_second_format() -> None:
    body = openai_body(Place, provider_options={"openai_text": {"verbosity": "low"}})
    assert body["text"]["verbosity"] == "low" and body["text"]["format"]["name"] == "Place"
    with pytest.raises(InvalidSettingsError, match="openai_text"):
        openai_body(Place, provider_options={"openai_text": {"format": {"type": "text"}}})


def test_anthropic_output_config_option_with_a_format_is_refused() -> None:
    fmt = {"format": {"type": "json_schema", "schema": {"type": "object"}}}
    with pytest.raises(InvalidSettingsError, match="anthropic_output_config"):
        anthropic_body(Place, provider_options={"anthropic_output_config": fmt})


def test_openai_refuses_a_type_strict_mode_cannot_take() -> None:
    # dict[str, int] is an object with free keys: strict mode answers 400; refused before sending.
    with pytest.raises(InvalidSettingsError, match=r"context=\('properties', 'scores'\)"):
        openai_body(Open)
    # the same type is fine where it can be sent unconstrained
    loose = {"name": "open", "schema": Open.model_json_schema(), "strict": False}
    assert openai_body(loose)["text"]["format"]["strict"] is False


def test_a_description_goes_to_openai_only() -> None:
    schema = {**Place.model_json_schema(), "additionalProperties": False, "required": ["name", "country"]}
    given = {"name": "answer", "description": "The verdict.", "schema": schema}
    assert openai_body(given)["text"]["format"]["description"] == "The verdict."
    assert "description" not in anthropic_body(given)["output_config"]["format"]


def test_hand_written_schemas_are_sent_as_written_or_refused() -> None:
    closed = {
        "name": "answer",
        "schema": {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"],
            "additionalProperties": False,
        },
    }
    assert openai_body(closed)["text"]["format"]["schema"] == closed["schema"]
    assert anthropic_body(closed)["output_config"]["format"]["schema"] == closed["schema"]
    open_schema = {"title": "answer", "type": "object", "properties": {"a": {"type": "string"}}}
    with pytest.raises(InvalidSettingsError, match="not closed"):
        openai_body(open_schema)
    with pytest.raises(InvalidSettingsError, match="not closed"):
        anthropic_body(open_schema)


@pytest.mark.parametrize(
    "bad",
    [
        int,
        {"type": "object"},  # no name
        {"name": "has space", "schema": {"type": "object"}},
        {"name": "x", "schema": {"type": "object"}, "extra": 1},
        {"name": "x", "schema": {"type": "object"}, "strict": "yes"},
    ],
)
def test_output_type_mistakes_are_config_errors(bad: Any) -> None:
    with pytest.raises(ConfigError):
        structured_output(bad)


def test_request_repr_names_the_output_not_its_schema() -> None:
    text = repr(_request(Forecast, "gpt-5.1"))
    assert "name='Forecast'" in text and "temp_c" not in text
