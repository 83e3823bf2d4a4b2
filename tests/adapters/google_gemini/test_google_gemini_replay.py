"""Every Gemini recording in ../shared/fixtures/gemini, replayed through the adapter and the real SDK.

For each interaction the recorded response bytes are served by an ``httpx2.MockTransport`` behind a
``google.genai.Client``; the adapter's events must match the recorded content (thought summaries,
text, calls, usage). For each next step, the request the adapter builds from the portable history +
the previous response's continuation must carry the same thought signatures on the same parts
(content index, part index, kind) as the request the real API accepted: compared as decoded bytes
(pydantic-ai's Python client re-encoded them URL-safe), and sent as the exact strings received.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Literal

import pytest

from agentlab.neutral.events import ReasoningDeltaEvent, ResponseCompletedEvent, TextDeltaEvent
from agentlab.neutral.items import PortableItem, SystemItem, ToolCallItem, ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest, ReasoningSettings, ToolSpec
from tests.adapters.google_gemini.gemini_support import (
    Replay,
    adapter_on,
    served,
    signature_bytes,
    signed_parts,
)
from tests.support.cassettes import Exchange, fixture_files, load_cassette

pytestmark = pytest.mark.fixtures

FILES = fixture_files("gemini")


def _model(ex: Exchange) -> str:
    return ex.url.split("/models/")[1].split(":")[0]


def _reasoning(body: dict[str, Any]) -> ReasoningSettings | None:
    """The neutral settings that give the recorded thinkingConfig (None: none recorded)."""
    tc = (body.get("generationConfig") or {}).get("thinkingConfig")
    if not tc:
        return None
    include = tc.get("includeThoughts", tc.get("include_thoughts"))
    summary: Literal["auto"] | None = "auto" if include else None
    if "thinkingLevel" in tc:
        return ReasoningSettings(effort=tc["thinkingLevel"].lower(), summary=summary)
    return ReasoningSettings(budget_tokens=tc["thinkingBudget"], summary=summary)


def _first_items(body: dict[str, Any]) -> list[PortableItem]:
    items: list[PortableItem] = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    for part in (system or {}).get("parts") or []:
        items.append(SystemItem(text=part["text"]))
    (first,) = body["contents"]
    items += [UserItem(text=p["text"]) for p in first["parts"]]
    return items


def _tools(body: dict[str, Any]) -> tuple[ToolSpec, ...]:
    out = []
    for t in body.get("tools") or []:
        for d in t.get("functionDeclarations") or []:
            params = d.get("parameters") or d.get("parameters_json_schema") or {"type": "object"}
            out.append(ToolSpec(name=d["name"], description=d.get("description", ""), parameters=params))
    return tuple(out)


def _results(body: dict[str, Any], calls: list[ToolCallItem]) -> list[ToolResultItem]:
    """The recorded functionResponses, as tool results paired with the adapter's calls by order."""
    responses = [p["functionResponse"] for p in body["contents"][-1]["parts"]]
    assert [r["name"] for r in responses] == [c.name for c in calls]
    return [
        ToolResultItem(call_id=c.call_id, name=c.name, output=json.dumps(r["response"]))
        for c, r in zip(calls, responses, strict=True)
    ]


def _replay(path: Path) -> None:
    exchanges = load_cassette(path)
    first, second = exchanges[0].request_json, exchanges[1].request_json
    assert first is not None and second is not None
    model = _model(exchanges[0])
    replay = Replay([served(ex) for ex in exchanges])
    adapter = adapter_on(replay, model)
    stream = exchanges[0].response_kind == "sse"
    base = ModelRequest(
        model=model, items=tuple(_first_items(first)), tools=_tools(first),
        reasoning=_reasoning(first), stream=stream, cache=None,
    )  # fmt: skip

    async def step(req: ModelRequest) -> tuple[list[Any], Any]:
        events = [e async for e in adapter.stream(req)]
        done = events[-1]
        assert isinstance(done, ResponseCompletedEvent)
        return events, done.response

    events1, resp1 = asyncio.run(step(base))
    sent1 = json.loads(replay.bodies[0])
    assert sent1.get("generationConfig", {}).get("thinkingConfig") == (
        first.get("generationConfig") or {}
    ).get("thinkingConfig"), "the neutral settings did not give the recorded thinkingConfig"
    assert replay.urls[0].endswith(exchanges[0].url.split("googleapis.com")[1])
    calls = [i for i in resp1.items if isinstance(i, ToolCallItem)]
    assert calls and resp1.stop_reason == "tool_use"
    assert resp1.reasoning, "the signature of response 1 was not kept"

    history = (*base.items, *resp1.items, *_results(second, calls))
    next_req = base.model_copy(update={"items": history, "continuation": resp1.reasoning})
    built = adapter.build(next_req)
    ours = json.loads(built.body)
    theirs_signed = signed_parts(second)
    ours_signed = signed_parts(ours)
    assert [(c, p, k) for c, p, k, _ in ours_signed] == [(c, p, k) for c, p, k, _ in theirs_signed]
    for (_, _, _, mine), (_, _, _, recorded) in zip(ours_signed, theirs_signed, strict=True):
        assert signature_bytes(mine) == signature_bytes(recorded)
    # Verbatim: the exact strings the API sent in response 1 (standard base64), not re-encoded.
    received = [s for _, _, _, s in signed_parts({"contents": [_response_content(exchanges[0])]})]
    assert [s for _, _, _, s in ours_signed] == received
    assert built.reasoning_sent == len(received) and built.reasoning_dropped == 0
    # No thought summary goes back (the recorded client omitted them and the API accepted it).
    assert not any(p.get("thought") for c in ours["contents"] for p in c["parts"])
    # The API's call ids go back on the call and its response; invented ones are never sent.
    for ours_c, theirs_c in zip(ours["contents"], second["contents"], strict=True):
        assert ours_c["role"] == theirs_c["role"]
        for mp, tp in zip(ours_c["parts"], theirs_c["parts"], strict=True):
            for key in ("functionCall", "functionResponse"):
                if key in tp and not tp[key].get("id", "").startswith(("pyd_ai_", "1")):
                    assert mp[key].get("id") == tp[key].get("id")
                elif key in tp:
                    assert "id" not in mp[key]

    _events2, resp2 = asyncio.run(step(next_req.model_copy(update={"continuation": resp1.reasoning})))
    assert resp2.stop_reason == "end_turn"
    assert "".join(i.text for i in resp2.items if hasattr(i, "text")) == _answer_text(exchanges[1])
    usage = _last_usage(exchanges[1])
    assert resp2.usage.input_tokens == usage["promptTokenCount"]
    assert resp2.usage.output_tokens == usage.get("candidatesTokenCount", 0) + usage.get(
        "thoughtsTokenCount", 0
    )
    thoughts = [e for e in events1 if isinstance(e, ReasoningDeltaEvent)]
    texts = [e for e in events1 if isinstance(e, TextDeltaEvent)]
    assert "".join(e.text for e in thoughts) == _thought_text(exchanges[0])
    assert not texts or all(e.text for e in texts)


def _chunks(ex: Exchange) -> list[dict[str, Any]]:
    return ex.sse_events if ex.response_kind == "sse" else [ex.response_payload]


def _response_content(ex: Exchange) -> dict[str, Any]:
    parts = [p for c in _chunks(ex) for p in c["candidates"][0]["content"].get("parts", [])]
    return {"role": "model", "parts": parts}


def _answer_text(ex: Exchange) -> str:
    return "".join(p.get("text", "") for p in _response_content(ex)["parts"] if not p.get("thought"))


def _thought_text(ex: Exchange) -> str:
    return "".join(p.get("text", "") for p in _response_content(ex)["parts"] if p.get("thought"))


def _last_usage(ex: Exchange) -> dict[str, Any]:
    usage: dict[str, Any] = _chunks(ex)[-1]["usageMetadata"]
    return usage


def test_every_gemini_recording_is_covered() -> None:
    if not FILES:
        pytest.skip("../shared/fixtures/gemini is absent (the recordings are read at test time)")
    assert len(FILES) == 5
    assert all(len(load_cassette(p)) == 2 for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=[p.name.removesuffix(".yaml") for p in FILES])
def test_recorded_tool_loop_replays_with_the_same_signatures_on_the_same_parts(path: Path) -> None:
    _replay(path)
