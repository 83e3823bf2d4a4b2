"""Helpers for the Anthropic adapter tests: serve recorded bytes through the real SDK, capture requests.

``Replay`` is an ``httpx2.MockTransport`` handler that answers the n-th request with the n-th recorded
response (status, headers, body bytes) and keeps every request body it saw, so a test can compare what
the adapter sent with what the real client sent in the recording.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2

from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from tests.support.cassettes import Exchange

SSE = "text/event-stream; charset=utf-8"


def response_bytes(ex: Exchange) -> tuple[bytes, str]:
    """The recorded body as bytes, and its content type (pydantic-ai JSON bodies are re-dumped)."""
    if ex.response_kind == "sse":
        assert ex.response_text is not None
        return ex.response_text.encode("utf-8"), SSE
    if ex.response_text is not None:
        return ex.response_text.encode("utf-8"), "application/json"
    return json.dumps(ex.response_payload).encode("utf-8"), "application/json"


@dataclass
class Served:
    status: int
    body: bytes
    content_type: str
    headers: dict[str, str] = field(default_factory=dict)


def served(ex: Exchange) -> Served:
    body, ctype = response_bytes(ex)
    keep = {k: v for k, v in ex.response_headers.items() if k in ("request-id", "retry-after")}
    return Served(ex.status, body, ctype, keep)


@dataclass
class Replay:
    """MockTransport handler: answers requests in order from ``responses``; records request bodies."""

    responses: Sequence[Served]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)  # the exact bytes each request sent

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        n = len(self.requests)
        self.raw.append(bytes(request.content))
        self.requests.append(json.loads(request.content))
        self.headers.append({k.lower(): v for k, v in request.headers.items()})
        if n >= len(self.responses):
            return httpx2.Response(
                500, json={"type": "error", "error": {"type": "api_error", "message": "no more"}}
            )
        r = self.responses[n]
        return httpx2.Response(
            r.status, content=r.body, headers={"content-type": r.content_type, **r.headers}
        )


def sdk_client(handler: Callable[[httpx2.Request], Any], *, max_retries: int = 0) -> anthropic.AsyncAnthropic:
    """A real SDK client whose HTTP goes to ``handler`` (no network, a fake key)."""
    return anthropic.AsyncAnthropic(
        api_key="sk-ant-test-not-a-key",
        base_url="https://api.anthropic.com",
        max_retries=max_retries,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
    )


def adapter_for(
    model: str,
    handler: Callable[[httpx2.Request], Any],
    *,
    max_retries: int = 0,
    extra_headers: dict[str, str] | None = None,
) -> AnthropicMessagesAdapter:
    client = sdk_client(handler, max_retries=max_retries)
    return AnthropicMessagesAdapter(model, client=client, extra_headers=extra_headers)
