"""Every Bedrock Converse recording in ../shared/fixtures/bedrock, replayed through agentlab and boto3.

Each recorded answer is served to boto3's real ``bedrock-runtime`` client (botocore's
``before-send`` hook returns the recorded status, headers and body bytes; the ConverseStream body is
the recorded AWS binary event stream, frame for frame). The adapter's events must match the recorded
content. For every later interaction, the request agentlab builds from portable history and the
previous answers' continuation must carry the same ``reasoningContent`` blocks (``reasoningText``
text and signature, or ``redactedContent``), at the same positions and in the same order among the
text and ``toolUse`` blocks, as the request the real service accepted (compared as parsed JSON).
"""

from __future__ import annotations

import asyncio
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from agentlab.neutral.events import ModelResponse, ReasoningDeltaEvent, ResponseCompletedEvent
from agentlab.neutral.items import PortableItem, SystemItem, ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest, ReasoningSettings, ToolSpec
from tests.support.cassettes import fixture_files, fixtures_dir

pytest.importorskip("boto3")
pytestmark = pytest.mark.fixtures

MULTI = fixture_files("bedrock", ".yaml") + fixture_files("bedrock", ".yaml.gz")


@dataclass
class Turn:
    url: str
    request: dict[str, Any]
    status: int
    headers: dict[str, str]
    body: bytes


def _load(path: Path) -> list[Turn]:
    import yaml

    raw = path.read_bytes()
    doc = yaml.safe_load(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    if "interactions" in doc:  # pydantic-ai: raw request text, parsed response body
        pairs = [(i["request"], i["response"]) for i in doc["interactions"]]
    else:  # langchain-aws: parallel requests/responses lists, bodies as bytes
        pairs = list(zip(doc["requests"], doc["responses"], strict=True))
    turns = []
    for req, resp in pairs:
        body = req["body"]
        request = json.loads(body.decode() if isinstance(body, bytes) else body)
        if "parsed_body" in resp:
            out, ctype = json.dumps(resp["parsed_body"]).encode(), "application/json"
        else:
            out = resp["body"]["string"]
            stream = req["uri"].endswith("/converse-stream")
            ctype = "application/vnd.amazon.eventstream" if stream else "application/json"
        turns.append(Turn(req["uri"], request, int(resp["status"]["code"]), {"content-type": ctype}, out))
    return turns


def test_every_bedrock_recording_is_covered() -> None:
    fixtures_dir()
    assert len(MULTI) == 3, f"expected the 3 multi-step Converse recordings, found {len(MULTI)}"


class Served:
    """boto3's client answered from the recording, in order; keeps every body botocore sent."""

    def __init__(self, turns: list[Turn]) -> None:
        import boto3  # type: ignore[import-untyped]

        self.turns = turns
        self.sent: list[dict[str, Any]] = []
        host = urlsplit(turns[0].url)
        region = host.netloc.split(".")[1]
        self.client = boto3.client(
            "bedrock-runtime", region_name=region, endpoint_url=f"{host.scheme}://{host.netloc}",
            aws_access_key_id="AKIAREPLAY0000000000", aws_secret_access_key="replay",
        )  # fmt: skip
        self.client.meta.events.register_first("before-send.bedrock-runtime", self._answer)

    def _answer(self, request: Any, **_: Any) -> Any:
        from botocore.awsrequest import AWSResponse  # type: ignore[import-untyped]

        from agentlab.sim.bedrock.client import _Raw

        turn = self.turns[len(self.sent)]
        self.sent.append(json.loads(request.body))
        assert unquote(urlsplit(str(request.url)).path) == unquote(urlsplit(turn.url).path)
        frames = _split_frames(turn.body) if "eventstream" in turn.headers["content-type"] else [turn.body]
        return AWSResponse(str(request.url), turn.status, turn.headers, _Raw(SimpleNamespace(stream=frames)))


def _split_frames(body: bytes) -> list[bytes]:
    """One event-stream message per chunk, as the service sends them."""
    out, i = [], 0
    while i < len(body):
        total = int.from_bytes(body[i : i + 4], "big")
        out.append(body[i : i + total])
        i += total
    return out


def _reasoning(extra: dict[str, Any]) -> ReasoningSettings | None:
    t = extra.get("thinking")
    if not t:
        return None
    if t["type"] == "adaptive":
        return ReasoningSettings(adaptive=True, display=t.get("display"))
    return ReasoningSettings(budget_tokens=t["budget_tokens"], display=t.get("display"))


def _tools(request: dict[str, Any]) -> tuple[ToolSpec, ...]:
    specs = [t["toolSpec"] for t in (request.get("toolConfig") or {}).get("tools", []) if "toolSpec" in t]
    return tuple(
        ToolSpec(name=s["name"], description=s.get("description", ""), parameters=s["inputSchema"]["json"])
        for s in specs
    )


def _items(request: dict[str, Any], responses: list[ModelResponse]) -> tuple[PortableItem, ...]:
    """Portable history for recorded request ``request``: assistant turn k is this test's response k."""
    items: list[PortableItem] = [SystemItem(text=b["text"]) for b in request.get("system") or []]
    k = 0
    for m in request["messages"]:
        if m["role"] == "assistant":
            items.extend(responses[k].items)
            k += 1
            continue
        for b in m["content"]:
            if "text" in b:
                items.append(UserItem(text=b["text"]))
            elif "toolResult" in b:
                r = b["toolResult"]
                text = "".join(c.get("text", "") for c in r["content"])
                items.append(
                    ToolResultItem(call_id=r["toolUseId"], output=text, is_error=r.get("status") == "error")
                )
    return tuple(items)


def _request(turn: Turn, responses: list[ModelResponse], model: str) -> ModelRequest:
    rj = turn.request
    return ModelRequest(
        model=model,
        items=_items(rj, responses),
        continuation=tuple(r for resp in responses for r in resp.reasoning),
        tools=_tools(rj),
        reasoning=_reasoning(rj.get("additionalModelRequestFields") or {}),
        max_output_tokens=(rj.get("inferenceConfig") or {}).get("maxTokens"),
        cache=None,
        stream=turn.url.endswith("/converse-stream"),
    )


def _assistant_blocks(request: dict[str, Any]) -> list[list[Any]]:
    """Each assistant message as (kind, reasoning block or None) per content block."""
    return [
        [(next(iter(b)), b if "reasoningContent" in b else None) for b in m["content"]]
        for m in request["messages"]
        if m["role"] == "assistant"
    ]


async def _replay(path: Path) -> tuple[list[ModelResponse], list[list[Any]], Served]:
    from agentlab.adapters.bedrock_converse import BedrockConverseAdapter

    turns = _load(path)
    served = Served(turns)
    model = unquote(urlsplit(turns[0].url).path.split("/")[2])
    adapter = BedrockConverseAdapter(model, client=served.client)
    responses: list[ModelResponse] = []
    deltas: list[list[Any]] = []
    for turn in turns:
        events = [e async for e in adapter.stream(_request(turn, responses, model))]
        done = events[-1]
        assert isinstance(done, ResponseCompletedEvent)
        responses.append(done.response)
        deltas.append([e for e in events if isinstance(e, ReasoningDeltaEvent)])
    return responses, deltas, served


@pytest.mark.parametrize("path", MULTI, ids=[p.name.split(".")[0] for p in MULTI])
def test_later_requests_carry_the_recorded_reasoning_blocks(path: Path) -> None:
    responses, _, served = asyncio.run(_replay(path))
    turns = _load(path)
    assert len(served.sent) == len(turns)
    for n in range(1, len(turns)):
        assert _assistant_blocks(served.sent[n]) == _assistant_blocks(turns[n].request), (path.name, n)
    for resp in responses:
        for item in resp.reasoning:
            assert (item.provider, item.api) == ("bedrock", "converse")
            assert item.base_url is not None and urlsplit(turns[0].url).netloc in item.base_url


@pytest.mark.parametrize("path", MULTI, ids=[p.name.split(".")[0] for p in MULTI])
def test_recorded_answers_map_onto_agentlab(path: Path) -> None:
    responses, deltas, _ = asyncio.run(_replay(path))
    for turn, resp, shown in zip(_load(path), responses, deltas, strict=True):
        if "output" in (answer := _json_or_none(turn.body)):
            content = answer["output"]["message"]["content"]
            texts = "".join(b.get("text", "") for b in content)
            assert resp.text == texts
            assert len(resp.reasoning) == sum("reasoningContent" in b for b in content)
            usage = answer["usage"]
            assert resp.usage.output_tokens == usage["outputTokens"]
            assert resp.usage.input_tokens == usage["inputTokens"] + usage.get(
                "cacheReadInputTokens", 0
            ) + usage.get("cacheWriteInputTokens", 0)
        else:  # the event stream: its reasoning text was shown as it came
            assert shown and resp.reasoning and resp.text
        assert resp.usage.reasoning_tokens is None and resp.usage.reasoning_source == "unknown"


def _json_or_none(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def test_the_decoded_stream_sample_maps_onto_one_signed_reasoning_block() -> None:
    from agentlab.adapters.bedrock_converse import ConverseAssembler

    files = fixture_files("bedrock", ".chunks.txt")
    if not files:
        fixtures_dir()
        pytest.skip("the Vercel chunk file is absent")
    (path,) = files
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    asm = ConverseAssembler(
        model="us.anthropic.claude", base_url="https://bedrock-runtime.us-east-1.amazonaws.com"
    )
    shown = "".join(getattr(e, "text", "") for line in lines if (e := asm.feed(line)) is not None)
    (done,) = [e for e in asm.finish() if isinstance(e, ResponseCompletedEvent)]
    resp = done.response
    (item,) = resp.reasoning
    block = json.loads(item.unseal(provider="bedrock", api="converse"))["reasoningContent"]["reasoningText"]
    events = [json.loads(line) for line in lines]
    deltas = [e["contentBlockDelta"]["delta"] for e in events if "contentBlockDelta" in e]
    assert block["text"] == "".join(
        d["reasoningContent"].get("text", "") for d in deltas if "reasoningContent" in d
    )
    assert block["signature"] == next(
        d["reasoningContent"]["signature"] for d in deltas if "signature" in d.get("reasoningContent", {})
    )
    assert shown.endswith(resp.text) and resp.stop_reason == "end_turn"
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (51, 94)
