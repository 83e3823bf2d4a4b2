"""OpenAI assistant-message ``phase`` goes back as received, within a loop and across turns.

OpenAI's Responses types (``ResponseOutputMessage.phase``, ``EasyInputMessageParam.phase``) label an
assistant message ``commentary`` (intermediate, e.g. a preamble before tool calls) or
``final_answer``, and ask clients to "preserve and resend phase on all assistant messages" for
gpt-5.3-codex and later ("dropping it can degrade performance"). agentlab keeps it on
``AssistantTextItem.phase``; the OpenAI adapter writes it back, other adapters ignore it.

The response body below is written from those SDK types in the shape of a gpt-5.5 response
(reasoning, a ``commentary`` message, a function call); the recorded gpt-5.5 response the issue
mentions is not among the shared fixtures.
"""

from __future__ import annotations

import json
from typing import Any

import agentlab as al
from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.adapters.openai_responses._request import build_request
from agentlab.adapters.openai_responses._stream import assemble_body
from agentlab.neutral.items import AssistantTextItem, ToolResultItem, UserItem, history_adapter
from agentlab.neutral.request import ModelRequest
from agentlab.sim import anthropic_client, openai_client
from tests.adapters.contract import RecordingTransport

MESSAGE = {
    "id": "msg_0a1b2c3d4e5f60718293a4b5c6d7e8f90112233445566778",
    "type": "message",
    "status": "completed",
    "content": [
        {"type": "output_text", "annotations": [], "logprobs": [], "text": "Let me check both cities."}
    ],
    "phase": "commentary",
    "role": "assistant",
}
CALL = {
    "id": "fc_0a1b2c3d4e5f60718293a4b5c6d7e8f90112233445566779",
    "type": "function_call",
    "status": "completed",
    "arguments": '{"city":"Paris"}',
    "call_id": "call_Q2xpZW50U2lkZUNhbGxJZA00",
    "name": "get_weather",
}
REASONING = {
    "id": "rs_0a1b2c3d4e5f60718293a4b5c6d7e8f90112233445566770",
    "type": "reasoning",
    "encrypted_content": "gAAAAABpZ3B0LTUuNS1zaGFwZWQtb3BhcXVlLWJ5dGVz",
    "summary": [],
}
BODY = {
    "id": "resp_0a1b2c3d4e5f60718293a4b5c6d7e8f90112233445566771",
    "object": "response",
    "created_at": 1764633600,
    "status": "completed",
    "model": "gpt-5.5",
    "output": [REASONING, MESSAGE, CALL],
    "usage": {
        "input_tokens": 120,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 80,
        "output_tokens_details": {"reasoning_tokens": 40},
        "total_tokens": 200,
    },
}
TASK = "Is it warmer in Paris or Rome?"
PREAMBLE = "Before you call tools, write a one-line preamble that says what you will check."


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "18 C, cloudy", "Rome": "24 C, sunny", "Oslo": "-3 C", "Berlin": "11 C"}[city]


def _replayed(history_json: bool) -> list[Any]:
    """The next request's input after the recorded-shape response, within the loop or across turns."""
    _, done = assemble_body(json.dumps(BODY), model="gpt-5.5", base_url=None, request_id=None)
    resp = done.response
    items: tuple[Any, ...] = (UserItem(text=TASK), *resp.items)
    if history_json:  # across turns: the portable history went through its serializer
        items = tuple(history_adapter.validate_json(history_adapter.dump_json(list(items))))
    result = ToolResultItem(call_id=CALL["call_id"], name="get_weather", output="18 C, cloudy")
    request = ModelRequest(
        model="gpt-5.5",
        items=(*items, result),
        continuation=() if history_json else resp.reasoning,
    )
    body = json.loads(build_request(request, model="gpt-5.5", base_url=None).body)
    inputs: list[Any] = body["input"]
    return inputs


def test_recorded_shape_phase_is_kept_on_the_item() -> None:
    _, done = assemble_body(json.dumps(BODY), model="gpt-5.5", base_url=None, request_id=None)
    text = [i for i in done.response.items if isinstance(i, AssistantTextItem)]
    assert [(t.text, t.phase) for t in text] == [("Let me check both cities.", "commentary")]


def test_next_request_in_the_loop_sends_the_message_back_verbatim_with_phase() -> None:
    inputs = _replayed(history_json=False)
    assert [i.get("type") for i in inputs] == [
        None,
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
    ]
    sent = inputs[2]
    assert sent["phase"] == "commentary"
    assert sent["id"] == MESSAGE["id"] and sent["status"] == "completed"
    assert sent["content"] == [
        {"type": "output_text", "text": "Let me check both cities.", "annotations": []}
    ]
    assert inputs[1] == REASONING  # the reasoning item itself, byte for byte as received


def test_next_turn_sends_phase_on_the_portable_message() -> None:
    inputs = _replayed(history_json=True)
    message = inputs[1]
    assert message == {"role": "assistant", "content": "Let me check both cities.", "phase": "commentary"}


def _bodies(transport: RecordingTransport) -> list[dict[str, Any]]:
    return [json.loads(b) for b in transport.bodies]


def _assistant_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in body["input"] if i.get("role") == "assistant"]


async def test_sim_reasoner_preamble_is_commentary_and_goes_back_within_the_loop() -> None:
    transport = RecordingTransport()
    adapter = OpenAIResponsesAdapter("sim-reasoner", client=openai_client(transport=transport), max_retries=0)
    result = await al.arun("openai:sim-reasoner", TASK, tools=[get_weather], system=PREAMBLE, adapter=adapter)
    assert result.output == "Rome is warmer (24 vs Paris 18)."  # the answer, without the preamble
    first, second = _bodies(transport)
    assert _assistant_messages(first) == []
    (preamble,) = _assistant_messages(second)
    assert preamble["phase"] == "commentary" and preamble["id"].startswith("msg_")
    assert "x-sim-phase-missing" not in transport.headers[-1]
    assert transport.headers[-1]["x-sim-plan"] == "known"  # the reasoning item found its follower


async def test_session_sends_final_answer_phase_on_the_next_turn() -> None:
    transport = RecordingTransport()
    adapter = OpenAIResponsesAdapter("sim-reasoner", client=openai_client(transport=transport), max_retries=0)
    session = al.Session()
    await session.arun("openai:sim-reasoner", "What is 2 + 2 * 10?", adapter=adapter)
    await session.arun("openai:sim-reasoner", "What is 12 * (3 + 4)?", adapter=adapter)
    (answer,) = _assistant_messages(_bodies(transport)[-1])
    assert answer == {"role": "assistant", "content": "2 + 2 * 10 = 22", "phase": "final_answer"}
    assert "x-sim-phase-missing" not in transport.headers[-1]


async def test_provider_switch_keeps_phase_in_history_and_anthropic_ignores_it() -> None:
    """Phase is OpenAI's label: Anthropic is not sent it, and back on OpenAI it goes out again."""
    oai = RecordingTransport()
    ant = RecordingTransport()
    openai_adapter = OpenAIResponsesAdapter(
        "sim-reasoner", client=openai_client(transport=oai), max_retries=0
    )
    anthropic_adapter = AnthropicMessagesAdapter(
        "sim-thinker", client=anthropic_client(transport=ant), max_retries=0
    )
    session = al.Session()
    await session.arun("openai:sim-reasoner", "What is 2 + 2 * 10?", adapter=openai_adapter)
    await session.arun("anthropic:sim-thinker", "What is 12 * (3 + 4)?", adapter=anthropic_adapter)
    assert "phase" not in ant.bodies[-1].decode()
    await session.arun("openai:sim-reasoner", "What is 2 + 2?", adapter=openai_adapter)
    messages = _assistant_messages(_bodies(oai)[-1])
    assert [m.get("phase") for m in messages] == ["final_answer", None]  # Claude's answer has none
    assert oai.headers[-1]["x-sim-phase-missing"] == "1"  # the simulator notes it; the API accepts it


async def test_sim_reasoner_mini_labels_no_phase() -> None:
    transport = RecordingTransport()
    adapter = OpenAIResponsesAdapter(
        "sim-reasoner-mini", client=openai_client(transport=transport), max_retries=0
    )
    session = al.Session()
    await session.arun("openai:sim-reasoner-mini", "What is 2 + 2 * 10?", adapter=adapter)
    await session.arun("openai:sim-reasoner-mini", "What is 12 * (3 + 4)?", adapter=adapter)
    (answer,) = _assistant_messages(_bodies(transport)[-1])
    assert "phase" not in answer
