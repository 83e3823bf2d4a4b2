"""Every recorded OpenAI Responses exchange in ../shared/fixtures, replayed through the adapter.

The SDK talks to an ``httpx2.MockTransport`` that serves the recorded bytes. For each recording:
the events the adapter yields must match the recorded content (summary text per block, answer text,
tool calls, usage numbers), reasoning items must be the raw JSON of ``response.output_item.done``.
Where the recording holds the next request of the same loop, the request the adapter builds from
(history + the continuation it returned) is compared with the recorded one, which the real API
accepted: same reasoning items, byte-identical ``encrypted_content``, same position.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.errors import ProviderAPIError, StreamInterruptedError
from agentlab.neutral.events import (
    DiagnosticEvent,
    ModelResponse,
    ReasoningDeltaEvent,
    ResponseCompletedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
)
from agentlab.neutral.items import (
    AssistantTextItem,
    PortableItem,
    SystemItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import ModelRequest, ReasoningSettings, ToolSpec
from tests.support.cassettes import Exchange, fixture_files, fixtures_dir, load_cassette, load_chunks

pytestmark = pytest.mark.fixtures

OPENAI_CASSETTES = [p.name for p in fixture_files("openai", ".yaml")]


class Server:
    """A recorded-response server: answers each request with the next queued response."""

    def __init__(self, responses: list[httpx2.Response]) -> None:
        self.responses = list(responses)
        self.bodies: list[bytes] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(request.content)
        return self.responses.pop(0)

    @property
    def last_json(self) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(self.bodies[-1])
        return body


def recorded_response(ex: Exchange, request_id: str = "req_replay") -> httpx2.Response:
    """The recorded response as the transport returns it (SSE text raw; JSON as recorded or dumped)."""
    headers = {"x-request-id": ex.response_headers.get("x-request-id", request_id)}
    if ex.response_kind == "sse":
        assert ex.response_text is not None
        headers["content-type"] = "text/event-stream; charset=utf-8"
        return httpx2.Response(ex.status, headers=headers, content=ex.response_text.encode("utf-8"))
    headers["content-type"] = "application/json"
    text = ex.response_text if ex.response_text is not None else json.dumps(ex.response_payload)
    return httpx2.Response(ex.status, headers=headers, content=text.encode("utf-8"))


def adapter_for(model: str, server: Server, **kw: Any) -> OpenAIResponsesAdapter:
    client = openai.AsyncOpenAI(
        api_key="sk-test-not-a-key",
        base_url="https://api.openai.com/v1",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server)),
    )
    return OpenAIResponsesAdapter(model, client=client, max_retries=0, **kw)


async def collect(adapter: OpenAIResponsesAdapter, request: ModelRequest) -> list[Any]:
    return [ev async for ev in adapter.stream(request)]


def completed(events: list[Any]) -> ModelResponse:
    done = [e for e in events if isinstance(e, ResponseCompletedEvent)]
    assert len(done) == 1 and events[-1] is done[0]  # `is` narrows done[0] to events' Any
    response: ModelResponse = done[0].response
    return response


def _content_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [])


def request_from_recorded(rq: dict[str, Any]) -> ModelRequest:
    """The ``ModelRequest`` a user would write for a recorded first request."""
    items: list[PortableItem] = []
    if rq.get("instructions"):
        items.append(SystemItem(text=rq["instructions"]))
    for it in rq["input"]:
        role = it.get("role")
        if role in ("developer", "system"):
            items.append(SystemItem(text=_content_text(it)))
        else:
            assert role == "user", it
            items.append(UserItem(text=_content_text(it)))
    tools = tuple(
        ToolSpec(
            name=t["name"],
            description=t.get("description") or "",
            parameters=t["parameters"],
            strict=t.get("strict", True) is not False,
        )
        for t in rq.get("tools", [])
        if t.get("type", "function") == "function"
    )
    reasoning = rq.get("reasoning") or {}
    return ModelRequest(
        model=rq["model"],
        items=tuple(items),
        tools=tools,
        reasoning=ReasoningSettings(effort=reasoning.get("effort"), summary=reasoning.get("summary")),
        tool_choice=rq.get("tool_choice", "auto"),
        stream=bool(rq.get("stream", False)),
    )


def next_request(
    first: ModelRequest, response: ModelResponse, recorded_next: dict[str, Any], n_first_inputs: int
) -> ModelRequest:
    """Step 2 of the loop: step 1's history + the adapter's output + the new inputs the recording shows."""
    tail: list[PortableItem] = []
    for it in recorded_next["input"][n_first_inputs:]:
        if it.get("type") == "function_call_output":
            tail.append(ToolResultItem(call_id=it["call_id"], output=it["output"]))
        elif it.get("role") == "user":
            tail.append(UserItem(text=_content_text(it)))
        # reasoning / function_call / assistant message items are the model's own output: they come
        # from ``response`` (items + continuation), not from the recording.
    reasoning = recorded_next.get("reasoning") or {}
    return first.model_copy(
        update={
            "items": (*first.items, *response.items, *tail),
            "continuation": response.reasoning,
            "reasoning": ReasoningSettings(effort=reasoning.get("effort"), summary=reasoning.get("summary")),
            "stream": bool(recorded_next.get("stream", False)),
        }
    )


# ---------------------------------------------------------------- what the recording says


class Expected:
    """What one recorded response contains, read from the recording itself (not from the adapter)."""

    def __init__(self, ex: Exchange) -> None:
        self.summary: dict[str, str] = defaultdict(str)
        self.text = ""
        self.output: list[dict[str, Any]] = []
        self.raw_done: list[str] = []
        if ex.response_kind == "sse":
            final = None
            for e in ex.sse_events:
                if e["type"] == "response.reasoning_summary_text.delta":
                    self.summary[f"{e['item_id']}:{e['summary_index']}"] += e["delta"]
                elif e["type"] == "response.output_text.delta":
                    self.text += e["delta"]
                elif e["type"] == "response.output_item.done":
                    self.output.append(e["item"])
                elif e["type"] == "response.completed":
                    final = e["response"]
            assert final is not None
            self.response = final
        else:
            self.response = ex.response_payload
            self.output = list(self.response["output"])
            for item in self.output:
                if item["type"] == "reasoning":
                    for n, part in enumerate(item.get("summary") or []):
                        self.summary[f"{item['id']}:{n}"] += part["text"]
                elif item["type"] == "message":
                    self.text += "".join(p.get("text", "") for p in item["content"])

    def items_of(self, kind: str) -> list[dict[str, Any]]:
        return [i for i in self.output if i["type"] == kind]


def check_response(events: list[Any], ex: Exchange) -> ModelResponse:
    exp = Expected(ex)
    resp = completed(events)

    got_summary: dict[str, str] = defaultdict(str)
    for e in events:
        if isinstance(e, ReasoningDeltaEvent):
            got_summary[e.block] += e.text
    assert dict(got_summary) == dict(exp.summary)
    # The summary deltas agree with the summary in the completed reasoning items.
    for item in exp.items_of("reasoning"):
        for n, part in enumerate(item.get("summary") or []):
            assert got_summary[f"{item['id']}:{n}"] == part["text"]

    assert "".join(e.text for e in events if isinstance(e, TextDeltaEvent)) == exp.text
    assert resp.text == exp.text

    calls = exp.items_of("function_call")
    assert [(c.call_id, c.name, c.arguments) for c in resp.tool_calls] == [
        (c["call_id"], c["name"], c["arguments"]) for c in calls
    ]
    for call in resp.tool_calls:
        streamed = "".join(
            e.arguments_delta
            for e in events
            if isinstance(e, ToolCallDeltaEvent) and e.call_id == call.call_id
        )
        assert streamed == call.arguments
        json.loads(call.arguments)
    assert resp.stop_reason == ("tool_use" if calls else "end_turn")

    # Portable items carry the response id, their output index and the provider's item id.
    output_ids = [o["id"] for o in exp.output]
    for portable in resp.items:
        assert portable.turn_id == exp.response["id"] == resp.response_id
        assert portable.index is not None and output_ids[portable.index] == portable.provider_item_id

    # Reasoning items: the complete item of output_item.done, as raw JSON, in output order.
    rs = exp.items_of("reasoning")
    assert [json.loads(r.unseal(provider="openai", api="responses")) for r in resp.reasoning] == rs
    for r in resp.reasoning:
        assert r.provider == "openai" and r.api == "responses" and r.block_type == "reasoning"
        assert (
            r.turn_id == resp.response_id
            and output_ids[r.index] == json.loads(r.unseal(provider="openai", api="responses"))["id"]
        )
        if ex.response_text is not None:  # raw bytes recorded: the payload is a verbatim slice of them
            assert r.unseal(provider="openai", api="responses").decode() in ex.response_text

    usage = exp.response["usage"]
    assert resp.usage.input_tokens == usage["input_tokens"]
    assert resp.usage.output_tokens == usage["output_tokens"]
    assert resp.usage.cache_read_tokens == usage["input_tokens_details"]["cached_tokens"]
    assert resp.usage.reasoning_tokens == usage["output_tokens_details"]["reasoning_tokens"]
    assert resp.usage.reasoning_source == "reported"
    assert resp.request_id == ex.response_headers.get("x-request-id", "req_replay")
    return resp


# ---------------------------------------------------------------- the replays


def _input_without_system(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in body["input"] if i.get("role") not in ("developer", "system")]


def _norm(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """User messages as (role, text): recordings differ in string vs content-part form only."""
    return [{"role": "user", "text": _content_text(i)} if i.get("role") == "user" else i for i in items]


def _check_first_request(sent: dict[str, Any], recorded: dict[str, Any]) -> None:
    """The adapter's first request says what the recorded one said (and is always stateless)."""
    assert sent["store"] is False and "previous_response_id" not in sent
    assert sent["include"] == ["reasoning.encrypted_content"]
    assert _norm(_input_without_system(sent)) == _norm(_input_without_system(recorded))
    system = [_content_text(i) for i in recorded["input"] if i.get("role") in ("developer", "system")]
    if recorded.get("instructions"):
        system.insert(0, recorded["instructions"])
    assert sent.get("instructions", "") == "\n\n".join(system)
    rec_reasoning = {k: v for k, v in (recorded.get("reasoning") or {}).items() if v is not None}
    assert sent.get("reasoning", {}) == rec_reasoning
    rec_tools = [t for t in recorded.get("tools", []) if t.get("type", "function") == "function"]
    for ours, theirs in zip(sent.get("tools", []), rec_tools, strict=True):
        assert ours["name"] == theirs["name"] and ours["parameters"] == theirs["parameters"]
        # The real API accepted ``strict`` as recorded; the adapter sets it only for qualifying schemas.
        assert ours["strict"] == bool(theirs.get("strict")), theirs["name"]
    assert isinstance(sent["prompt_cache_key"], str) and sent["prompt_cache_key"]


# Which recordings replayed reasoning in the next request (PROVENANCE: "Replay verified").
REPLAY_VERIFIED = {
    "pydantic-ai__reasoning_tool_loop_nonstream_cached.yaml",
    "pydantic-ai__reasoning_multiturn_nonstream.yaml",
}
# Recorded with store left on and without include: reasoning came back id-only.
STORED_MODE = {"mirascope__reasoning_stored_replay_by_id_stream.yaml"}


@pytest.mark.parametrize("name", OPENAI_CASSETTES)
async def test_replay_recording(name: str) -> None:
    path = fixtures_dir() / "openai" / name
    exchanges = load_cassette(path)
    first = request_from_recorded(exchanges[0].request_json or {})
    server = Server([recorded_response(ex) for ex in exchanges])
    adapter = adapter_for(first.model, server)

    events = await collect(adapter, first)
    _check_first_request(server.last_json, exchanges[0].request_json or {})
    resp = check_response(events, exchanges[0])
    if len(exchanges) == 1:
        return

    recorded_next = exchanges[1].request_json or {}
    n_first = len(exchanges[0].request_json["input"]) if exchanges[0].request_json else 0
    second = next_request(first, resp, recorded_next, n_first)
    events2 = await collect(adapter, second)
    sent = server.last_json
    ours, theirs = _input_without_system(sent), _input_without_system(recorded_next)
    diags = [e for e in events2 if isinstance(e, DiagnosticEvent)]

    if name in REPLAY_VERIFIED:
        # Same items, same order, reasoning verbatim: the exact input the real API accepted.
        assert ours == theirs
        assert not diags and completed(events2).reasoning_items_dropped == 0
    elif name in STORED_MODE:
        # The recording replayed reasoning by id (stored mode). Stateless, that is a 404, so the adapter
        # drops the id-only item, says so, and sends the rest.
        assert [d.data["reason"] for d in diags] == ["no_encrypted_content"]
        assert completed(events2).reasoning_items_dropped == 1
        assert not any(i.get("type") == "reasoning" for i in ours)
        assert [_content_text(i) for i in ours] == [
            _content_text(i) for i in theirs if i.get("type") != "reasoning"
        ]
    else:
        # Recorded without replaying reasoning (accepted too). The adapter replays it: right before the
        # item that followed it, byte-identical encrypted_content, follower with its original id.
        exp = Expected(exchanges[0])
        rs = exp.items_of("reasoning")
        sent_rs = [i for i in ours if i.get("type") == "reasoning"]
        assert sent_rs == rs
        assert _norm([i for i in ours if i.get("type") != "reasoning"]) == _norm(
            [{**i, "id": exp.output[1]["id"]} if i.get("type") == "function_call" else i for i in theirs]
        )
        pos = ours.index(sent_rs[0])
        assert ours[pos + 1]["type"] == exp.output[1]["type"] and ours[pos + 1]["id"] == exp.output[1]["id"]
    # Byte level: every reasoning item sent is the raw text of step 1's output item, verbatim.
    for r in resp.reasoning:
        raw = r.unseal(provider="openai", api="responses")
        if json.loads(raw).get("encrypted_content"):
            assert raw in server.bodies[-1]
    check_response(events2, exchanges[1])
    await adapter.aclose()


async def test_replay_vercel_store_false_nonstream_body() -> None:
    path = fixtures_dir() / "openai" / "vercel-ai__store_false_encrypted_reasoning_final.json"
    text = path.read_text(encoding="utf-8")
    ex = Exchange("POST", "", None, None, 200, "json", json.loads(text), text, {"x-request-id": "req_v"})
    server = Server([recorded_response(ex)])
    adapter = adapter_for("gpt-5-mini", server)
    req = ModelRequest(model="gpt-5-mini", items=(UserItem(text="hi"),), stream=False)
    resp = check_response(await collect(adapter, req), ex)
    # Pretty-printed body: the payload is still the verbatim slice (whitespace and all).
    (payload,) = (r.unseal(provider="openai", api="responses") for r in resp.reasoning)
    assert b"\n" in payload and payload.decode() in text
    assert server.last_json["stream"] is False


async def test_hosted_tool_items_are_reported_not_kept() -> None:
    path = fixtures_dir() / "openai" / "pydantic-ai__reasoning_summary_hosted_tool_stream_cached.yaml"
    (ex,) = load_cassette(path)
    server = Server([recorded_response(ex)])
    adapter = adapter_for("gpt-5", server)
    events = await collect(adapter, ModelRequest(model="gpt-5", items=(UserItem(text="x"),)))
    hosted = [o for o in Expected(ex).output if o["type"] not in ("reasoning", "message", "function_call")]
    diags = [
        e for e in events
        if isinstance(e, DiagnosticEvent) and e.code == "unsupported_content" and e.data["where"] == "item"
    ]  # fmt: skip
    # One diagnostic per kind per call (the forward-compatibility policy of every adapter).
    assert hosted and [d.data["type"] for d in diags] == sorted({o["type"] for o in hosted})
    assert completed(events).usage.cache_read_tokens == 3200


# ---------------------------------------------------------------- recorded failures


def _errors(name: str) -> Path:
    return fixtures_dir() / "errors" / name


async def test_in_stream_error_event_is_stream_interrupted_with_type_and_message() -> None:
    (group,) = load_chunks(_errors("vercel-ai__openai_responses_in_stream_error_event.chunks.txt"))
    from tests.support.cassettes import to_sse

    server = Server(
        [httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=to_sse(group))]
    )
    adapter = adapter_for("gpt-5-nano", server)
    seen: list[Any] = []
    with pytest.raises(StreamInterruptedError) as info:
        async for ev in adapter.stream(ModelRequest(model="gpt-5-nano", items=(UserItem(text="x"),))):
            seen.append(ev)
    assert not any(isinstance(e, ResponseCompletedEvent) for e in seen)
    err = info.value
    assert err.provider == "openai" and err.error_type == "insufficient_quota"
    assert "exceeded your current quota" in err.message
    assert err.code == "insufficient_quota"


@pytest.mark.parametrize(
    ("name", "status", "etype", "code", "needle"),
    [
        (
            "mirascope__openai_responses_400_model_not_found.yaml",
            400,
            "invalid_request_error",
            "model_not_found",
            "does not exist",
        ),
        (
            "mirascope__openai_responses_401_invalid_api_key.yaml",
            401,
            "invalid_request_error",
            "invalid_api_key",
            "Incorrect API key",
        ),
        (
            "pydantic-ai__openai_400_invalid_temperature_stream_request.yaml",
            400,
            "invalid_request_error",
            "decimal_below_min_value",
            "temperature",
        ),
    ],
)
async def test_recorded_http_errors_map_to_provider_api_error(
    name: str, status: int, etype: str, code: str, needle: str
) -> None:
    ex = load_cassette(_errors(name))[0]
    server = Server([recorded_response(ex)])
    adapter = adapter_for("gpt-4o", server)
    with pytest.raises(ProviderAPIError) as info:
        await collect(adapter, ModelRequest(model="gpt-4o", items=(UserItem(text="x"),)))
    err = info.value
    assert (err.status, err.error_type, err.code) == (status, etype, code)
    assert needle in err.message
    assert err.request_id == ex.response_headers.get("x-request-id", "req_replay")
    assert "sk-test-not-a-key" not in str(err) and "sk-test-not-a-key" not in repr(err)


@pytest.mark.parametrize(
    ("name", "status", "code"),
    [
        ("issue__openai_invalid_encrypted_content.json", 400, "invalid_encrypted_content"),
        ("issue__openai_reasoning_item_not_found_store_false.error_object.json", 404, None),
        ("vercel-ai__openai_400_temperature_unsupported_reasoning_model.json", 400, None),
    ],
)
async def test_quoted_error_bodies_map_to_provider_api_error(
    name: str, status: int, code: str | None
) -> None:
    body = json.loads(_errors(name).read_text())
    if "error" not in body:  # a quoted body may hold only the inner object
        body = {"error": body}
    server = Server([httpx2.Response(status, json=body, headers={"x-request-id": "req_q"})])
    adapter = adapter_for("gpt-4o", server)
    with pytest.raises(ProviderAPIError) as info:
        await collect(adapter, ModelRequest(model="gpt-4o", items=(UserItem(text="x"),)))
    assert info.value.status == status and info.value.error_type == "invalid_request_error"
    assert info.value.code == code
    assert info.value.message == body["error"]["message"] and info.value.request_id == "req_q"


async def test_edited_follower_drops_reasoning_instead_of_the_recorded_400() -> None:
    """A reasoning item whose follower was edited is dropped, not sent to a 400.

    The recording sent a reasoning item followed by an edited assistant message and got 400 "...provided
    without its required following item". The adapter sees the follower is gone (the edited text is not the
    response's item) and drops the reasoning item instead; the recorded 400, served anyway, maps to a typed
    error carrying that message.
    """
    exchanges = load_cassette(_errors("pydantic-ai__openai_400_reasoning_without_following_item.yaml"))
    first = request_from_recorded(exchanges[0].request_json or {})
    server = Server([recorded_response(ex) for ex in exchanges])
    adapter = adapter_for(first.model, server)
    resp = check_response(await collect(adapter, first), exchanges[0])
    assert len(resp.reasoning) == 1

    edited = AssistantTextItem(text="The meaning of life is 42")  # no turn_id: not the model's item
    second = first.model_copy(
        update={
            "items": (*first.items, edited, UserItem(text="Anything to add?")),
            "continuation": resp.reasoning,
        }
    )
    with pytest.raises(ProviderAPIError) as info:
        events: list[Any] = []
        async for ev in adapter.stream(second):
            events.append(ev)
    (diag,) = events
    assert isinstance(diag, DiagnosticEvent) and diag.data["reason"] == "orphaned"
    sent = server.last_json
    assert [i.get("type", "message") for i in sent["input"]] == ["message", "message", "message"]
    assert not any(i.get("type") == "reasoning" for i in sent["input"])
    assert "required following item" in info.value.message and info.value.status == 400


def test_every_openai_recording_is_covered() -> None:
    fixtures_dir()
    assert len(OPENAI_CASSETTES) == 8
    assert [p.name for p in fixture_files("openai", ".json")] == [
        "vercel-ai__store_false_encrypted_reasoning_final.json"
    ]


def test_tool_calls_round_trip_to_tool_results() -> None:
    # Guard for the helper itself: function_call_output becomes a ToolResultItem with the same call id.
    req = next_request(
        ModelRequest(model="gpt-5", items=(UserItem(text="q"),)),
        ModelResponse(
            provider="openai",
            api="responses",
            model="gpt-5",
            items=(ToolCallItem(call_id="c1", name="f", turn_id="r", index=1),),
        ),
        {
            "input": [
                {"role": "user", "content": "q"},
                {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            ]
        },
        1,
    )
    assert req.items[-1] == ToolResultItem(call_id="c1", output="ok")
