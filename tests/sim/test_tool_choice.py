"""``tool_choice`` in the simulator: a forced choice calls a tool (the named one), ``none`` answers.

From the providers' references: OpenAI Responses ``tool_choice`` is ``"auto"`` / ``"required"`` /
``"none"`` or ``{"type": "function", "name": ...}`` (``ToolChoiceFunctionParam``); Anthropic's is
``{"type": "auto" | "any" | "none"}`` or ``{"type": "tool", "name": ...}``, each with
``disable_parallel_tool_use`` (``ToolChoice*Param``). Forced tool use with thinking on is Anthropic's
400; naming a tool the request does not declare is refused with each API's text.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest

import agentlab as al
from agentlab import sim
from agentlab.neutral.items import ToolCallItem
from tests.sim.helpers import ANTHROPIC_WEATHER, OPENAI_WEATHER, POPULATION, TEMPS

TASK = "Is it warmer in Paris or Rome?"
POP_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
OPENAI_POP: dict[str, Any] = {
    "type": "function",
    "name": "get_population",
    "description": "Number of inhabitants of a city.",
    "parameters": POP_SCHEMA,
}
ANTHROPIC_POP: dict[str, Any] = {
    "name": "get_population",
    "description": "Number of inhabitants of a city.",
    "input_schema": POP_SCHEMA,
}
OPENAI_TOOLS: Any = [OPENAI_WEATHER, OPENAI_POP]
ANTHROPIC_TOOLS: Any = [ANTHROPIC_WEATHER, ANTHROPIC_POP]


def _oai_calls(tool_choice: Any, *, task: str = TASK, stream: bool = False, **kw: Any) -> list[Any]:
    client = sim.openai_sync_client(max_retries=0)
    body: dict[str, Any] = {"model": "sim-reasoner", "input": task, "tools": OPENAI_TOOLS, **kw}
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    if stream:
        with client.responses.stream(**body) as st:
            r = st.get_final_response()
    else:
        r = client.responses.create(**body)
    return list(r.output)


def _ant_message(tool_choice: Any, *, task: str = TASK, stream: bool = False, **kw: Any) -> Any:
    client = sim.anthropic_sync_client(max_retries=0)
    body: dict[str, Any] = {
        "model": "sim-thinker",
        "max_tokens": 4000,
        "tools": ANTHROPIC_TOOLS,
        "messages": [{"role": "user", "content": task}],
        **kw,
    }
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    if stream:
        with client.messages.stream(**body) as st:
            return st.get_final_message()
    return client.messages.create(**body)


# ---------------------------------------------------------------- OpenAI Responses


def test_openai_auto_picks_the_best_matching_tool() -> None:
    calls = [o for o in _oai_calls(None) if o.type == "function_call"]
    assert [c.name for c in calls] == ["get_weather", "get_weather"]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_named_function_is_the_one_called(stream: bool) -> None:
    out = _oai_calls({"type": "function", "name": "get_population"}, stream=stream)
    calls = [o for o in out if o.type == "function_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("get_population", {"city": "Paris"}),
        ("get_population", {"city": "Rome"}),
    ]
    assert not [o for o in out if o.type == "message"]


def test_openai_named_function_without_parallel_calls_is_called_once() -> None:
    out = _oai_calls({"type": "function", "name": "get_population"}, parallel_tool_calls=False)
    assert [(o.name, json.loads(o.arguments)) for o in out if o.type == "function_call"] == [
        ("get_population", {"city": "Paris"})
    ]


def test_openai_required_calls_a_tool_even_for_small_talk() -> None:
    out = _oai_calls("required", task="Hello there")
    assert [o.type for o in out if o.type != "reasoning"] == ["function_call"]
    assert _oai_calls("auto", task="Hello there")[-1].type == "message"  # auto answers it directly


def test_openai_none_answers_without_a_tool_call() -> None:
    out = _oai_calls("none")
    assert [o.type for o in out if o.type != "reasoning"] == ["message"]
    arithmetic = _oai_calls("none", task="What is 12 * (3 + 4)?")
    assert arithmetic[-1].type == "message" and arithmetic[-1].content[0].text == "12 * (3 + 4) = 84"


def test_openai_none_still_answers_from_results_already_given() -> None:
    client = sim.openai_sync_client(max_retries=0)
    first = client.responses.create(model="sim-reasoner", input=TASK, tools=OPENAI_TOOLS, store=True)
    results: Any = [
        {
            "type": "function_call_output",
            "call_id": o.call_id,
            "output": TEMPS[json.loads(o.arguments)["city"]],
        }
        for o in first.output
        if o.type == "function_call"
    ]
    nxt = client.responses.create(
        model="sim-reasoner",
        previous_response_id=first.id,
        input=results,
        tools=OPENAI_TOOLS,
        tool_choice="none",
    )
    assert nxt.output_text == "Rome is warmer (24 vs Paris 18)."


def test_openai_naming_an_undeclared_function_is_the_api_400() -> None:
    with pytest.raises(openai.BadRequestError) as e:
        _oai_calls({"type": "function", "name": "get_weathr"})
    assert isinstance(e.value.body, dict)
    assert e.value.body["message"] == "Tool choice 'function' not found in 'tools' parameter."
    assert e.value.body["param"] == "tool_choice"


def test_openai_required_without_tools_is_the_api_400() -> None:
    client = sim.openai_sync_client(max_retries=0)
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model="sim-reasoner", input=TASK, tool_choice="required")
    assert isinstance(e.value.body, dict)
    assert e.value.body["message"] == "Tool choice 'required' must be specified with 'tools' parameter."
    assert e.value.body["param"] == "tool_choice"


def test_openai_allowed_tools_restricts_the_choice() -> None:
    choice = {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "function", "name": "get_population"}],
    }
    calls = [o for o in _oai_calls(choice) if o.type == "function_call"]
    assert calls and {c.name for c in calls} == {"get_population"}


# ---------------------------------------------------------------- Anthropic Messages


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_named_tool_is_the_one_used(stream: bool) -> None:
    m = _ant_message({"type": "tool", "name": "get_population"}, stream=stream)
    assert m.stop_reason == "tool_use"
    assert [(b.type, getattr(b, "name", None), getattr(b, "input", None)) for b in m.content] == [
        ("tool_use", "get_population", {"city": "Paris"}),
        ("tool_use", "get_population", {"city": "Rome"}),
    ]


def test_anthropic_named_tool_with_parallel_use_disabled_is_used_once() -> None:
    m = _ant_message({"type": "tool", "name": "get_population", "disable_parallel_tool_use": True})
    assert [(b.name, b.input) for b in m.content if b.type == "tool_use"] == [
        ("get_population", {"city": "Paris"})
    ]


def test_anthropic_any_uses_a_tool_even_for_small_talk() -> None:
    m = _ant_message({"type": "any"}, task="Hello there")
    assert [b.type for b in m.content] == ["tool_use"] and m.stop_reason == "tool_use"
    assert [b.type for b in _ant_message({"type": "auto"}, task="Hello there").content] == ["text"]


def test_anthropic_none_answers_without_tool_use() -> None:
    m = _ant_message({"type": "none"})
    assert [b.type for b in m.content] == ["text"] and m.stop_reason == "end_turn"
    with_thinking = _ant_message({"type": "none"}, thinking={"type": "enabled", "budget_tokens": 2048})
    assert [b.type for b in with_thinking.content] == ["thinking", "text"]


@pytest.mark.parametrize("choice", [{"type": "any"}, {"type": "tool", "name": "get_population"}])
def test_anthropic_forced_tool_use_with_thinking_is_the_api_400(choice: Any) -> None:
    with pytest.raises(anthropic.BadRequestError) as e:
        _ant_message(choice, thinking={"type": "enabled", "budget_tokens": 2048})
    assert isinstance(e.value.body, dict)
    assert e.value.body["error"]["message"] == "Thinking may not be enabled when tool_choice forces tool use."


def test_anthropic_naming_an_undeclared_tool_is_the_api_400() -> None:
    with pytest.raises(anthropic.BadRequestError) as e:
        _ant_message({"type": "tool", "name": "get_weathr"})
    assert isinstance(e.value.body, dict)
    assert e.value.body["error"]["message"] == "Tool 'get_weathr' not found in provided tools"


def test_anthropic_forced_choice_without_tools_is_the_api_400() -> None:
    client = sim.anthropic_sync_client(max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(
            model="sim-thinker",
            max_tokens=100,
            messages=[{"role": "user", "content": TASK}],
            tool_choice={"type": "any"},
        )
    assert isinstance(e.value.body, dict)
    assert e.value.body["error"]["message"] == "tool_choice may only be specified while providing tools."


# ---------------------------------------------------------------- agentlab end to end


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return TEMPS[city]


@al.tool
def get_population(city: str) -> str:
    """Number of inhabitants of a city."""
    return POPULATION[city]


@pytest.mark.parametrize(
    ("model", "extra"),
    [("openai:sim-reasoner", {}), ("anthropic:sim-thinker", {"reasoning": {"enabled": False}})],
)
def test_run_with_a_named_tool_calls_it_first(model: str, extra: dict[str, Any]) -> None:
    result = al.run(
        model, TASK, tools=[get_weather, get_population], tool_choice="tool:get_population", **extra
    )
    assert result.status == "completed"
    names = [i.name for i in result.history if isinstance(i, ToolCallItem)]
    assert names[:2] == ["get_population", "get_population"]
    # Then the loop asks with "auto" again and the model gets the weather it needs for the answer.
    assert "get_weather" in names[2:] and result.output == "Rome is warmer (24 vs Paris 18)."
