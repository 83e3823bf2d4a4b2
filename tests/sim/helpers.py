"""Shared helpers for the simulator tests: tool specs, fake tool implementations, loop drivers."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import openai

# Plain wire JSON (the simulator's raw-body tests post them as they are). `strict` is left out of the
# OpenAI tool, as the API allows; the SDK's FunctionToolParam marks it required, so SDK calls taking
# these ignore the mismatch.
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
OPENAI_WEATHER: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": WEATHER_SCHEMA,
}
ANTHROPIC_WEATHER: dict[str, Any] = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "input_schema": WEATHER_SCHEMA,
}
TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny", "Oslo": "-3 C, snow", "Berlin": "11 C"}
POPULATION = {"Paris": "2,102,650", "Rome": "2,748,109", "Berlin": "3,596,999"}


def weather(city: str) -> str:
    return TEMPS[city]


def openai_outputs(output: list[Any]) -> list[dict[str, Any]]:
    """Response output items as the client sends them back (complete copies, verbatim)."""
    return [o.model_dump(exclude_none=True) for o in output]


def openai_tool_results(output: list[Any], impl: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for o in output:
        if o.type == "function_call":
            args = json.loads(o.arguments)
            out.append({"type": "function_call_output", "call_id": o.call_id, "output": impl[o.name](**args)})
    return out


def anthropic_tool_results(content: list[Any], impl: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "tool_result", "tool_use_id": b.id, "content": impl[b.name](**b.input)}
        for b in content
        if b.type == "tool_use"
    ]


#: What the SDKs send on every request and the simulator requires, as the real APIs do: a key
#: (OpenAI ``Authorization``, Anthropic ``x-api-key``) and Anthropic's ``anthropic-version``.
SDK_HEADERS = {"authorization": "Bearer sim-test-key", "x-api-key": "sim-test-key"}
ANTHROPIC_VERSION = {"anthropic-version": "2023-06-01"}


def raw_post(transport: Any, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    """POST JSON straight through the transport (no SDK), to see the exact status, headers and body.

    The headers every SDK sends (a key; ``anthropic-version`` on Anthropic paths) go first, so a test
    sees the rule it is about, not a missing key; ``headers`` add to or override them.
    """
    import httpx2

    base = "http://sim.agentlab.local"
    sent = {**SDK_HEADERS, **(ANTHROPIC_VERSION if "/messages" in path else {}), **(headers or {})}
    with httpx2.Client(transport=transport, base_url=base) as client:
        return client.post(path, json=body, headers=sent)


def load_error_fixture(name: str) -> Any:
    """A quoted or recorded error body from ../shared/fixtures/errors (skips when absent)."""
    from tests.support.cassettes import fixtures_dir

    return json.loads((fixtures_dir() / "errors" / name).read_text(encoding="utf-8"))


def assert_dropped_body(exc: BaseException) -> None:
    """A body read that failed, in either documented SDK shape.

    Up to anthropic 2.16 (and older openai releases) the transport's ``httpx2.ReadError`` reached the
    caller bare; from anthropic 2.17 the SDKs wrap it in their ``APIConnectionError`` with the read
    error as its cause. Either is a dropped body; a timeout or any other cause is not.
    """
    wrappers = (anthropic.APIConnectionError, openai.APIConnectionError)
    timeouts = (anthropic.APITimeoutError, openai.APITimeoutError)
    if isinstance(exc, wrappers) and not isinstance(exc, timeouts):
        exc = exc.__cause__ if exc.__cause__ is not None else exc
    assert isinstance(exc, httpx2.ReadError), f"not a dropped body: {type(exc).__name__}"
