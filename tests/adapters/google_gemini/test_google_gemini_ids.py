"""Signatures are keyed on their turn and part, never on a call id, and two look-alike turns stay apart.

The issue: "never key signatures on the API id alone". The adapter keys a signature on (turn id, part
index, part kind); the turn id is the API's ``responseId``. A response without one (a proxy that strips
it, an older endpoint) gets a turn id made from its content: two turns with the same call and the
same arguments (a loop polling one tool) must still get different turn ids, or one turn's signature
lands on the other and the current turn goes out without its own (400 "missing a thought_signature").
Signatures are unique per response, so they tell such turns apart.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentlab.neutral.events import ModelResponse
from agentlab.neutral.items import ToolCallItem, ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest, ToolSpec
from tests.adapters.google_gemini.gemini_support import SSE, Replay, Served, adapter_on, sse

MODEL = "gemini-3-flash-preview"
TOOLS = (ToolSpec(name="poll"),)


def _body(sig: str, call_id: str | None = None, response_id: str | None = None) -> bytes:
    call: dict[str, Any] = {"name": "poll", "args": {"job": 7}}
    if call_id is not None:
        call["id"] = call_id
    chunk: dict[str, Any] = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"functionCall": call, "thoughtSignature": sig}]},
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2},
    }
    if response_id is not None:
        chunk["responseId"] = response_id
    return sse([chunk])


def _two_turns(first: bytes, second: bytes) -> tuple[dict[str, Any], Any]:
    replay = Replay([Served(200, first, SSE), Served(200, second, SSE)])
    adapter = adapter_on(replay, MODEL)

    async def step(req: ModelRequest) -> ModelResponse:
        return await _step(adapter, req)

    def results(resp: ModelResponse) -> list[ToolResultItem]:
        calls = [i for i in resp.items if isinstance(i, ToolCallItem)]
        return [ToolResultItem(call_id=c.call_id, name=c.name, output="pending") for c in calls]

    req = ModelRequest(model=MODEL, items=(UserItem(text="wait for job 7"),), tools=TOOLS)
    r1 = asyncio.run(step(req))
    req = req.model_copy(
        update={"items": (*req.items, *r1.items, *results(r1)), "continuation": r1.reasoning}
    )
    r2 = asyncio.run(step(req))
    items = (*req.items, *r2.items, *results(r2))
    built = adapter.build(
        req.model_copy(update={"items": items, "continuation": (*r1.reasoning, *r2.reasoning)})
    )
    body: dict[str, Any] = json.loads(built.body)
    return body, built


def _signatures(body: dict[str, Any]) -> list[tuple[int, str | None]]:
    return [
        (ci, part.get("thoughtSignature"))
        for ci, content in enumerate(body["contents"])
        for part in content["parts"]
        if "functionCall" in part
    ]


def test_look_alike_turns_without_response_ids_keep_their_own_signatures() -> None:
    body, built = _two_turns(_body("QUFBQQ=="), _body("QkJCQg=="))
    assert _signatures(body) == [(1, "QUFBQQ=="), (3, "QkJCQg==")]
    assert built.reasoning_sent == 2 and built.reasoning_dropped == 0


def test_look_alike_turns_without_response_ids_get_distinct_invented_call_ids() -> None:
    """Invented ids are stable (the same bytes give the same id) and still differ between turns."""
    body, _ = _two_turns(_body("QUFBQQ=="), _body("QkJCQg=="))
    again, _ = _two_turns(_body("QUFBQQ=="), _body("QkJCQg=="))
    assert body == again
    replay = Replay([Served(200, _body("QUFBQQ=="), SSE), Served(200, _body("QkJCQg=="), SSE)])
    adapter = adapter_on(replay, MODEL)
    req = ModelRequest(model=MODEL, items=(UserItem(text="wait"),), tools=TOOLS)
    ids = [
        c.call_id
        for _ in range(2)
        for c in asyncio.run(_step(adapter, req)).items
        if isinstance(c, ToolCallItem)
    ]
    assert len(set(ids)) == 2 and all(i.startswith("gc_") for i in ids)


def test_a_repeated_api_call_id_does_not_move_a_signature_between_turns() -> None:
    """The API may reuse a short call id in another turn: signatures follow the turn, not the id."""
    body, built = _two_turns(_body("QUFBQQ==", "c1", "resp-a"), _body("QkJCQg==", "c1", "resp-b"))
    assert _signatures(body) == [(1, "QUFBQQ=="), (3, "QkJCQg==")]
    calls = [p["functionCall"] for c in body["contents"] for p in c["parts"] if "functionCall" in p]
    assert [c.get("id") for c in calls] == ["c1", "c1"]
    assert built.reasoning_sent == 2


async def _step(adapter: Any, request: ModelRequest) -> ModelResponse:
    resp: ModelResponse = [e async for e in adapter.stream(request)][-1].response
    return resp


def _results_of(resp: ModelResponse) -> list[ToolResultItem]:
    calls = [i for i in resp.items if isinstance(i, ToolCallItem)]
    return [ToolResultItem(call_id=c.call_id, name=c.name, output="x") for c in calls]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_signatures_go_back_in_the_alphabet_they_came_in(stream: bool) -> None:
    """Verbatim means verbatim, for URL-safe and standard base64 alike.

    URL-safe (``-_``, as the Python SDK re-encodes) and standard (``+/``) strings each go back exactly
    as received, never normalized to the other alphabet.
    """
    urlsafe, standard = "Cr-_8w_-AAE=", "Cr+/8w/+AAE="
    first, second = _body(urlsafe, response_id="r1"), _body(standard, response_id="r2")
    kind = SSE
    if not stream:  # generateContent: the same chunk as a single JSON body
        first, second = (json.dumps(json.loads(b[6:].strip())).encode() for b in (first, second))
        kind = "application/json"
    replay = Replay([Served(200, first, kind), Served(200, second, kind)])
    adapter = adapter_on(replay, MODEL)
    req = ModelRequest(model=MODEL, items=(UserItem(text="wait"),), tools=TOOLS, stream=stream)
    r1 = asyncio.run(_step(adapter, req))
    req = req.model_copy(
        update={"items": (*req.items, *r1.items, *_results_of(r1)), "continuation": r1.reasoning}
    )
    r2 = asyncio.run(_step(adapter, req))
    assert _signatures(json.loads(replay.bodies[1])) == [(1, urlsafe)]
    items = (*req.items, *r2.items, *_results_of(r2))
    both = (*r1.reasoning, *r2.reasoning)
    built = adapter.build(req.model_copy(update={"items": items, "continuation": both}))
    assert _signatures(json.loads(built.body)) == [(1, urlsafe), (3, standard)]
    assert built.body.count(b"thoughtSignature") == 2
