"""The Gemini request body: signatures back on their parts, thinkingConfig per model, knobs, refusals."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import agentlab
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.events import DiagnosticEvent, ModelResponse, ResponseCompletedEvent
from agentlab.neutral.items import (
    AssistantTextItem,
    ProviderReasoningItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.output import OutputSpec
from agentlab.neutral.request import ModelRequest, ReasoningSettings, ToolSpec
from tests.adapters.google_gemini.gemini_support import SSE, Replay, Served, adapter_on, sse

MODEL = "gemini-3-flash-preview"
TOOLS = (ToolSpec(name="add"), ToolSpec(name="mul"))


def _usage() -> dict[str, int]:
    return {"promptTokenCount": 10, "candidatesTokenCount": 5, "thoughtsTokenCount": 7}


def _respond(parts_per_chunk: list[list[dict[str, Any]]], finish: str = "STOP") -> bytes:
    chunks = []
    for i, parts in enumerate(parts_per_chunk):
        cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if i == len(parts_per_chunk) - 1:
            cand["finishReason"] = finish
        chunks.append({"candidates": [cand], "usageMetadata": _usage(), "responseId": "resp-1"})
    return sse(chunks)


def _run(body: bytes, model: str = MODEL, **req: Any) -> tuple[ModelResponse, list[Any], Any]:
    replay = Replay([Served(200, body, SSE)])
    adapter = adapter_on(replay, model)
    request = ModelRequest(model=model, items=(UserItem(text="q"),), tools=TOOLS, **req)

    async def go() -> list[Any]:
        return [e async for e in adapter.stream(request)]

    events = asyncio.run(go())
    done = events[-1]
    assert isinstance(done, ResponseCompletedEvent)
    return done.response, events, adapter


def _next(adapter: Any, resp: ModelResponse, **req: Any) -> dict[str, Any]:
    calls = [i for i in resp.items if isinstance(i, ToolCallItem)]
    results = [ToolResultItem(call_id=c.call_id, name=c.name, output="3") for c in calls]
    items = (UserItem(text="q"), *resp.items, *results)
    request = ModelRequest(model=adapter.model, items=items, tools=TOOLS, continuation=resp.reasoning, **req)
    built = adapter.build(request)
    body: dict[str, Any] = json.loads(built.body)
    body["_built"] = built
    return body


PARALLEL: list[list[dict[str, Any]]] = [
    [{"text": "thinking about it", "thought": True}],
    [{"functionCall": {"name": "add", "args": {"a": 1}, "id": "abc12345"}, "thoughtSignature": "U0lHMQ=="}],
    [{"functionCall": {"name": "mul", "args": {"b": 2}, "id": "def67890"}}],
    [{"text": ""}],
]


def test_signature_goes_back_on_the_first_call_only_and_thoughts_are_not_sent() -> None:
    resp, events, adapter = _run(_respond(PARALLEL))
    assert [r.block_type for r in resp.reasoning] == ["thought_signature:functionCall"]
    assert resp.reasoning[0].index == 1 and resp.reasoning[0].turn_id == "resp-1"
    body = _next(adapter, resp)
    model_turn = body["contents"][1]
    assert model_turn["role"] == "model"
    assert model_turn["parts"] == [
        {"functionCall": {"name": "add", "args": {"a": 1}, "id": "abc12345"}, "thoughtSignature": "U0lHMQ=="},
        {"functionCall": {"name": "mul", "args": {"b": 2}, "id": "def67890"}},
    ]
    # Both responses in one user content, with the API's ids.
    assert body["contents"][2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"id": "abc12345", "name": "add", "response": {"result": "3"}}},
            {"functionResponse": {"id": "def67890", "name": "mul", "response": {"result": "3"}}},
        ],
    }
    assert body["_built"].reasoning_sent == 1
    # the thought summary was shown, with its part index as the block
    shown = [e for e in events if type(e).__name__ == "ReasoningDeltaEvent"]
    assert [(e.text, e.block) for e in shown] == [("thinking about it", "0")]


def test_invented_call_ids_are_stable_and_never_sent() -> None:
    body = _respond([[{"functionCall": {"name": "add", "args": {}}, "thoughtSignature": "QUJD"}]])
    resp1, _, adapter = _run(body)
    resp2, _, _ = _run(body)
    (call,) = resp1.items
    assert isinstance(call, ToolCallItem) and call.call_id == resp2.items[0].call_id  # type: ignore[union-attr]
    assert call.provider_item_id is None
    sent = _next(adapter, resp1)
    assert "id" not in sent["contents"][1]["parts"][0]["functionCall"]
    assert "id" not in sent["contents"][2]["parts"][0]["functionResponse"]
    assert sent["contents"][1]["parts"][0]["thoughtSignature"] == "QUJD"


def test_streamed_text_signature_on_the_final_empty_part_completes_the_text_part() -> None:
    body = _respond(
        [[{"text": "The answer"}], [{"text": " is 4."}], [{"text": "", "thoughtSignature": "VFhU"}]]
    )
    resp, _, adapter = _run(body)
    (text,) = resp.items
    assert isinstance(text, AssistantTextItem) and text.text == "The answer is 4."
    (sig,) = resp.reasoning
    assert (sig.block_type, sig.index) == ("thought_signature:text", text.index)
    request = ModelRequest(
        model=MODEL, items=(UserItem(text="q"), text, UserItem(text="more")), continuation=resp.reasoning
    )
    sent = json.loads(adapter.build(request).body)
    assert sent["contents"][1]["parts"] == [{"text": "The answer is 4.", "thoughtSignature": "VFhU"}]


def test_a_signature_alone_after_a_call_goes_back_as_its_empty_part_in_place() -> None:
    body = _respond(
        [
            [{"functionCall": {"name": "add", "args": {}}, "thoughtSignature": "QQ=="}],
            [{"text": "", "thoughtSignature": "Qg=="}],
        ]
    )
    resp, _, adapter = _run(body)
    assert [(r.block_type, r.index) for r in resp.reasoning] == [
        ("thought_signature:functionCall", 0),
        ("thought_signature:text", 1),
    ]
    sent = _next(adapter, resp)
    assert sent["contents"][1]["parts"] == [
        {"functionCall": {"name": "add", "args": {}}, "thoughtSignature": "QQ=="},
        {"text": "", "thoughtSignature": "Qg=="},
    ]


def _dropped(built: Any) -> dict[str, int]:
    return {
        d.data["reason"]: d.data["count"]
        for d in built.diagnostics
        if isinstance(d, DiagnosticEvent) and d.code == "reasoning_item_dropped"
    }


def test_signatures_from_another_model_provider_or_endpoint_are_dropped_visibly() -> None:
    body = _respond([[{"functionCall": {"name": "add", "args": {}}, "thoughtSignature": "QQ=="}]])
    resp, _, adapter = _run(body)
    (sig,) = resp.reasoning
    call = resp.items[0]
    foreign = [
        ProviderReasoningItem(
            b'"QQ=="', provider="google", api="generate_content", model="gemini-2.5-pro",
            block_type=sig.block_type, turn_id=sig.turn_id, index=0, base_url=adapter.base_url,
        ),
        ProviderReasoningItem(
            b'"QQ=="', provider="google", api="generate_content", model=MODEL, block_type=sig.block_type,
            turn_id=sig.turn_id, index=0, base_url="https://us-central1-aiplatform.googleapis.com",
        ),
        ProviderReasoningItem(
            b'{"type":"reasoning"}', provider="openai", api="responses", model=MODEL,
            block_type="reasoning", turn_id=sig.turn_id, index=0,
        ),
    ]  # fmt: skip
    results = (ToolResultItem(call_id=call.call_id, name="add", output="1"),)  # type: ignore[union-attr]
    request = ModelRequest(
        model=MODEL, items=(UserItem(text="q"), call, *results), tools=TOOLS, continuation=tuple(foreign)
    )
    built = adapter.build(request)
    assert "thoughtSignature" not in built.body.decode()
    assert _dropped(built) == {"other_origin": 3}
    assert built.reasoning_dropped == 3 and built.reasoning_sent == 0


def test_a_signature_whose_position_now_holds_another_kind_is_not_moved() -> None:
    body = _respond([[{"functionCall": {"name": "add", "args": {}}, "thoughtSignature": "QQ=="}]])
    resp, _, adapter = _run(body)
    (sig,) = resp.reasoning
    text = AssistantTextItem(text="edited", turn_id=sig.turn_id, index=0)
    built = adapter.build(
        ModelRequest(
            model=MODEL, items=(UserItem(text="q"), text, UserItem(text="go")), continuation=resp.reasoning
        )
    )
    assert "thoughtSignature" not in built.body.decode()
    assert _dropped(built) == {"orphaned": 1}
    assert "another kind" in str([d.message for d in built.diagnostics])


def test_orphaned_signatures_are_dropped() -> None:
    body = _respond([[{"functionCall": {"name": "add", "args": {}}, "thoughtSignature": "QQ=="}]])
    resp, _, adapter = _run(body)
    built = adapter.build(ModelRequest(model=MODEL, items=(UserItem(text="q"),), continuation=resp.reasoning))
    assert _dropped(built) == {"orphaned": 1}


@pytest.mark.parametrize(
    ("model", "reasoning", "expected"),
    [
        (
            "gemini-3-pro-preview",
            ReasoningSettings(effort="high"),
            {"thinkingLevel": "HIGH", "includeThoughts": True},
        ),
        (
            "gemini-3-flash-preview",
            ReasoningSettings(effort="minimal", summary=None),
            {"thinkingLevel": "MINIMAL"},
        ),
        ("gemini-3-pro-preview", ReasoningSettings(), {"includeThoughts": True}),
        (
            "gemini-2.5-flash",
            ReasoningSettings(budget_tokens=128),
            {"thinkingBudget": 128, "includeThoughts": True},
        ),
        ("gemini-2.5-flash", ReasoningSettings(enabled=False), {"thinkingBudget": 0}),
        ("gemini-2.5-flash", ReasoningSettings(effort="none"), {"thinkingBudget": 0}),
        ("gemini-2.5-pro", ReasoningSettings(adaptive=True, summary=None), {"thinkingBudget": -1}),
        ("gemini-2.5-pro", ReasoningSettings(effort="low", display="omitted"), {"thinkingBudget": 1024}),
        ("gemini-2.5-flash-lite", ReasoningSettings(effort="minimal", summary=None), {"thinkingBudget": 512}),
        ("gemini-2.0-flash", ReasoningSettings(enabled=False), None),
        ("gemini-3-pro-preview", None, None),
        (
            "sim-gemini",
            ReasoningSettings(effort="medium"),
            {"thinkingLevel": "MEDIUM", "includeThoughts": True},
        ),
        ("sim-gemini-legacy", ReasoningSettings(enabled=False), {"thinkingBudget": 0}),
    ],
)
def test_thinking_config_per_model(model: str, reasoning: ReasoningSettings | None, expected: Any) -> None:
    adapter = adapter_on(Replay([]), model)
    body = json.loads(
        adapter.build(ModelRequest(model=model, items=(UserItem(text="q"),), reasoning=reasoning)).body
    )
    assert body.get("generationConfig", {}).get("thinkingConfig") == expected


@pytest.mark.parametrize(
    ("model", "reasoning", "match"),
    [
        ("gemini-3-pro-preview", ReasoningSettings(enabled=False), "cannot turn thinking off"),
        ("gemini-3-pro-preview", ReasoningSettings(effort="medium"), "not a thinking level"),
        ("gemini-3-pro-preview", ReasoningSettings(effort="xhigh"), "not a thinking level"),
        ("gemini-3-flash-preview", ReasoningSettings(budget_tokens=2048), "takes thinkingLevel"),
        ("gemini-2.5-pro", ReasoningSettings(enabled=False), "cannot turn thinking off"),
        ("gemini-2.5-pro", ReasoningSettings(budget_tokens=64), "128 to 32768"),
        ("gemini-2.5-flash", ReasoningSettings(effort="max"), "no Gemini budget"),
        ("gemini-2.0-flash", ReasoningSettings(effort="high"), "does not think"),
    ],
)
def test_what_a_model_cannot_do_is_refused_before_sending(
    model: str, reasoning: ReasoningSettings, match: str
) -> None:
    replay = Replay([])
    adapter = adapter_on(replay, model)
    request = ModelRequest(model=model, items=(UserItem(text="q"),), reasoning=reasoning)
    with pytest.raises(InvalidSettingsError, match=match):
        adapter.build(request)
    with pytest.raises(InvalidSettingsError, match=match):
        agentlab.get_provider("google").check_request_options(request)
    assert replay.bodies == []


def test_knobs_and_structured_output_map_to_generation_config() -> None:
    adapter = adapter_on(Replay([]), MODEL)
    output = OutputSpec(
        name="answer", json_schema={"type": "object", "properties": {"x": {"type": "integer"}}}
    )
    request = ModelRequest(
        model=MODEL, items=(UserItem(text="q"),), tools=TOOLS, temperature=0.3, top_p=0.9,
        max_output_tokens=512, stop_sequences=("END",), tool_choice="tool:mul", output=output,
        reasoning=None,
    )  # fmt: skip
    body = json.loads(adapter.build(request).body)
    assert body["generationConfig"] == {
        "temperature": 0.3,
        "topP": 0.9,
        "maxOutputTokens": 512,
        "stopSequences": ["END"],
        "responseMimeType": "application/json",
        "responseJsonSchema": output.json_schema,
    }
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["mul"]}}
    assert body["tools"] == [
        {"functionDeclarations": [
            {"name": "add", "description": "", "parametersJsonSchema": {"type": "object", "properties": {}}},
            {"name": "mul", "description": "", "parametersJsonSchema": {"type": "object", "properties": {}}},
        ]}
    ]  # fmt: skip
    for choice, mode in (("auto", "AUTO"), ("required", "ANY"), ("none", "NONE")):
        b = json.loads(adapter.build(request.model_copy(update={"tool_choice": choice})).body)
        assert b["toolConfig"] == {"functionCallingConfig": {"mode": mode}}


@pytest.mark.parametrize(
    ("update", "match"),
    [
        ({"parallel_tool_calls": False}, "parallel tool calls"),
        ({"metadata": {"a": "b"}}, "metadata"),
        ({"user_id": "u1"}, "user_id"),
        ({"service_tier": "flex"}, "service_tier"),
        ({"stop_sequences": ("a", "b", "c", "d", "e", "f")}, "at most 5"),
    ],
)
def test_knobs_gemini_lacks_are_refused_before_sending(update: dict[str, Any], match: str) -> None:
    request = ModelRequest(model=MODEL, items=(UserItem(text="q"),), **update)
    with pytest.raises(InvalidSettingsError, match=match):
        agentlab.get_provider("google").check_request_options(request)
    with pytest.raises(InvalidSettingsError, match=match):
        adapter_on(Replay([]), MODEL).build(request)


def test_system_items_become_the_system_instruction_and_the_url_is_v1beta() -> None:
    replay = Replay([Served(200, _respond([[{"text": "hi"}]]), SSE)])
    adapter = adapter_on(replay, MODEL)
    from agentlab.neutral.items import SystemItem

    request = ModelRequest(model=MODEL, items=(SystemItem(text="be brief"), UserItem(text="q")))

    async def go() -> None:
        async for _ in adapter.stream(request):
            pass

    asyncio.run(go())
    body = replay.last_json
    assert body["systemInstruction"] == {"parts": [{"text": "be brief"}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "q"}]}]
    assert replay.urls[0] == (
        f"https://generativelanguage.googleapis.com/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
    )
    assert replay.headers[0]["x-goog-api-key"].startswith("AIza")
    assert "AIza" not in repr(adapter)


def test_registry_routes_google_models_to_this_adapter() -> None:
    spec = agentlab.get_provider("google")
    assert (spec.api, spec.price_provider, spec.reasoning_block_type) == (
        "generate_content",
        "google",
        "thought_signature",
    )
    assert spec.simulated_model_names() == ("sim-gemini", "sim-gemini-legacy")
    assert spec.adapter_class().__name__ == "GoogleGeminiAdapter"
    assert spec.drop_with_reasoning  # the documented dummy signature makes "drop" possible (_stand_in)


def test_vertex_ai_is_a_second_endpoint_and_signatures_never_cross_endpoints() -> None:
    from tests.adapters.google_gemini.gemini_support import client_on

    body = _respond([[{"functionCall": {"name": "add", "args": {}}, "thoughtSignature": "QQ=="}]])
    vertex_replay = Replay([Served(200, body, SSE)])
    from agentlab.adapters.google_gemini import GoogleGeminiAdapter

    vertex = GoogleGeminiAdapter(MODEL, client=client_on(vertex_replay, vertexai=True), max_retries=0)
    assert vertex.vertexai and "aiplatform" in (vertex.base_url or "")
    request = ModelRequest(model=MODEL, items=(UserItem(text="q"),), tools=TOOLS)

    async def go() -> list[Any]:
        return [e async for e in vertex.stream(request)]

    resp_v = asyncio.run(go())[-1].response
    assert vertex_replay.urls[0].endswith(f"/publishers/google/models/{MODEL}:streamGenerateContent?alt=sse")
    resp_g, _, gemini_api = _run(body)
    # Each endpoint sends back its own signature ...
    assert "QQ==" in json.dumps(_next(vertex, resp_v)["contents"])
    assert "QQ==" in json.dumps(_next(gemini_api, resp_g)["contents"])
    # ... and drops the other's, visibly.
    for adapter, foreign in ((vertex, resp_g), (gemini_api, resp_v)):
        sent = _next(adapter, foreign)
        assert "thoughtSignature" not in json.dumps(sent["contents"])
        assert _dropped(sent["_built"]) == {"other_origin": 1}


def test_a_signature_on_a_thought_part_goes_back_on_an_empty_thought_part_never_with_its_text() -> None:
    body = _respond(
        [[{"text": "secret plan", "thought": True, "thoughtSignature": "VEg="}], [{"text": "ok"}]]
    )
    resp, _, adapter = _run(body)
    assert [(r.block_type, r.index) for r in resp.reasoning] == [("thought_signature:thought", 0)]
    request = ModelRequest(
        model=MODEL,
        items=(UserItem(text="q"), *resp.items, UserItem(text="again")),
        continuation=resp.reasoning,
    )
    sent = json.loads(adapter.build(request).body)
    assert sent["contents"][1]["parts"] == [
        {"text": "", "thought": True, "thoughtSignature": "VEg="},
        {"text": "ok"},
    ]
    assert "secret plan" not in json.dumps(sent)


def test_snake_case_spellings_are_read_too() -> None:
    body = _respond([[{"function_call": {"name": "add", "args": {"a": 1}}, "thought_signature": "U0s="}]])
    resp, _, adapter = _run(body)
    (call,) = resp.items
    assert isinstance(call, ToolCallItem) and call.name == "add"
    sent = _next(adapter, resp)
    assert sent["contents"][1]["parts"][0]["thoughtSignature"] == "U0s="


def test_an_empty_user_text_is_sent_as_the_real_api_accepts_it() -> None:
    """Not refused: a recorded 200 shows the API answering ``{"text": ""}`` beside a system instruction.

    The recording (``_request.EMPTY_TEXT_ACCEPTED``) is pydantic-ai's
    ``test_google_model_empty_user_prompt.yaml``; agentlab used to refuse this before sending.
    """
    from agentlab.adapters.google_gemini._request import EMPTY_TEXT_ACCEPTED
    from agentlab.neutral.items import SystemItem

    assert "test_google_model_empty_user_prompt" in EMPTY_TEXT_ACCEPTED
    adapter = adapter_on(Replay([]), MODEL)
    request = ModelRequest(
        model=MODEL, items=(SystemItem(text="You are a helpful assistant."), UserItem(text=""))
    )
    body = json.loads(adapter.build(request).body)
    assert body["contents"] == [{"role": "user", "parts": [{"text": ""}]}]
    assert body["systemInstruction"] == {"parts": [{"text": "You are a helpful assistant."}]}
    result = agentlab.run("google:sim-gemini", "", system="You are a helpful assistant.")
    assert result.status == "completed" and result.output


def test_the_content_rules_still_refused_name_their_source() -> None:
    adapter = adapter_on(Replay([]), MODEL)
    orphan = ModelRequest(model=MODEL, items=(UserItem(text="q"), ToolResultItem(call_id="c1", output="3")))
    with pytest.raises(InvalidSettingsError, match=r"FunctionResponse\.name is REQUIRED in the Gemini API"):
        adapter.build(orphan)
    from agentlab.neutral.items import SystemItem

    nothing = ModelRequest(model=MODEL, items=(SystemItem(text="only a system prompt"),))
    with pytest.raises(InvalidSettingsError, match="contents is not specified"):
        adapter.build(nothing)


@pytest.mark.parametrize(
    ("model", "refused"), [("gemini-2.5-flash", True), ("gemini-3-flash-preview", False)]
)
def test_tools_beside_output_type_are_refused_before_gemini_3_only(model: str, refused: bool) -> None:
    spec = OutputSpec(name="w", json_schema={"type": "object", "properties": {"a": {"type": "string"}}})
    request = ModelRequest(model=model, items=(UserItem(text="q"),), tools=TOOLS, output=spec)
    adapter = adapter_on(Replay([]), model)
    if refused:
        with pytest.raises(InvalidSettingsError, match="Function calling with a response mime type"):
            agentlab.get_provider("google").check_request_options(request)
        return
    body = json.loads(adapter.build(request).body)
    assert body["tools"] and body["generationConfig"]["responseMimeType"] == "application/json"
