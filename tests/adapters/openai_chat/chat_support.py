"""Chat Completions adapter test helpers: recorded (or scripted) bytes served through the real ``openai`` SDK.

``Replay`` is an ``httpx2.MockTransport`` handler answering the n-th request with the n-th served
response and keeping every request (URL, headers, exact body bytes); ``adapter_on`` builds a dialect's
adapter on an ``openai.AsyncOpenAI`` whose httpx2 client uses that transport.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai

from agentlab.adapters.openai_chat._adapter import ChatCompletionsAdapter
from agentlab.neutral.events import ModelResponse, ResponseCompletedEvent
from agentlab.neutral.request import ModelRequest
from tests.support.cassettes import Exchange

SSE = "text/event-stream"
FAKE_KEY = "sk-or-v1-test-key-0000000000000000000000"


@dataclass
class Served:
    status: int
    body: bytes
    content_type: str
    headers: dict[str, str] = field(default_factory=dict)


def served(ex: Exchange) -> Served:
    """The recorded response as bytes (SSE bodies raw; JSON bodies as recorded)."""
    if ex.response_kind == "sse":
        assert ex.response_text is not None
        return Served(ex.status, ex.response_text.encode("utf-8"), SSE)
    text = ex.response_text if ex.response_text is not None else json.dumps(ex.response_payload)
    return Served(ex.status, text.encode("utf-8"), "application/json")


def sse(chunks: Sequence[dict[str, Any]], *, done: bool = True) -> bytes:
    """Chunks framed as Chat Completions servers frame them: ``data: {...}`` + blank line, then [DONE]."""
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


@dataclass
class Replay:
    """MockTransport handler: answers requests in order from ``responses``; records every request."""

    responses: Sequence[Served]
    urls: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        n = len(self.bodies)
        self.urls.append(str(request.url))
        self.headers.append(dict(request.headers))
        self.bodies.append(bytes(request.content))
        r = self.responses[min(n, len(self.responses) - 1)]
        return httpx2.Response(
            r.status, content=r.body, headers={"content-type": r.content_type, **r.headers}
        )

    @property
    def last_json(self) -> Any:
        return json.loads(self.bodies[-1])


def client_on(handler: Any, base_url: str) -> openai.AsyncOpenAI:
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return openai.AsyncOpenAI(api_key=FAKE_KEY, base_url=base_url, http_client=http)


def adapter_on(
    cls: type[ChatCompletionsAdapter], handler: Any, model: str, base_url: str, **kw: Any
) -> ChatCompletionsAdapter:
    kw.setdefault("max_retries", 0)
    return cls(model, client=client_on(handler, base_url), **kw)


async def collect(adapter: ChatCompletionsAdapter, request: ModelRequest) -> list[Any]:
    return [ev async for ev in adapter.stream(request)]


def completed(events: list[Any]) -> ModelResponse:
    done = [e for e in events if isinstance(e, ResponseCompletedEvent)]
    assert len(done) == 1 and events[-1] is done[0]
    response: ModelResponse = done[0].response
    return response
