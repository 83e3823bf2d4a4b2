"""Helpers for the Gemini adapter tests: serve recorded (or scripted) bytes through the real google-genai SDK.

``Replay`` is an ``httpx2.MockTransport`` handler answering the n-th request with the n-th served
response and keeping every request (URL, headers, exact body bytes). ``adapter_on`` builds a
``GoogleGeminiAdapter`` on a ``google.genai.Client`` whose async httpx2 client uses that transport,
the way the SDK takes an injected transport (``types.HttpOptions(httpx_async_client=...)``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2
from google import genai
from google.genai import types

from agentlab.adapters.google_gemini import GoogleGeminiAdapter
from tests.support.cassettes import Exchange

SSE = "text/event-stream"
FAKE_KEY = "AIzaSy-test-key-0000000000000000000000"


@dataclass
class Served:
    status: int
    body: bytes
    content_type: str
    headers: dict[str, str] = field(default_factory=dict)


def served(ex: Exchange) -> Served:
    """The recorded response as bytes (pydantic-ai JSON bodies are re-dumped)."""
    if ex.response_kind == "sse":
        assert ex.response_text is not None
        return Served(ex.status, ex.response_text.encode("utf-8"), SSE)
    text = ex.response_text if ex.response_text is not None else json.dumps(ex.response_payload)
    return Served(ex.status, text.encode("utf-8"), "application/json; charset=UTF-8")


def sse(chunks: Sequence[dict[str, Any]]) -> bytes:
    """Chunks framed as the Gemini API frames them: ``data: {...}`` and CRLF CRLF, no [DONE]."""
    return b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)


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


def client_on(handler: Any, **kw: Any) -> genai.Client:
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return genai.Client(api_key=FAKE_KEY, http_options=types.HttpOptions(httpx_async_client=http), **kw)


def adapter_on(handler: Any, model: str, *, max_retries: int = 0) -> GoogleGeminiAdapter:
    return GoogleGeminiAdapter(model, client=client_on(handler), max_retries=max_retries)


def signature_bytes(sig: str) -> bytes:
    """A signature's bytes, whichever base64 alphabet encoded it (the Python SDK re-encodes URL-safe)."""
    return base64.b64decode(sig.replace("-", "+").replace("_", "/"))


def signed_parts(body: dict[str, Any]) -> list[tuple[int, int, str, str]]:
    """(content index, part index, part kind, signature) of every signed part of a request body."""
    out = []
    for ci, content in enumerate(body.get("contents") or []):
        for pi, part in enumerate(content.get("parts") or []):
            sig = part.get("thoughtSignature", part.get("thought_signature"))
            if sig is None:
                continue
            call = part.get("functionCall", part.get("function_call"))
            kind = f"functionCall:{call['name']}" if call else ("thought" if part.get("thought") else "text")
            out.append((ci, pi, kind, sig))
    return out
