r"""A scripted Gemini far side for the shared adapter contract, until the simulator serves Gemini.

An ``httpx2.MockTransport`` handler speaking the Gemini API's wire format as the recordings in
``../shared/fixtures/gemini`` show it: ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse``
(``data: {chunk}`` events separated by ``\r\n\r\n``, no ``[DONE]``, ``usageMetadata`` on every chunk,
``finishReason`` on the last, a thought-summary part first, the signature on the first functionCall
part or on a final empty text part) and ``:generateContent`` (one body of the same shape). Error
answers use Google's envelope ``{"error": {"code", "message", "status"}}``.

It answers the contract's questions from a script (arithmetic, the weather tool, one or two cities)
and is strict where the real API is: a follow-up whose first functionCall lost its signature gets
the API's 400 text. Faults are switched on like the simulator's (``default_fault="429"``,
``"429x1"``, ``"500"``, ``"529"``, ``"cut"``, ``"reset"``, ``"malformed"``, ``"unknown_event"``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx2

from tests.adapters.google_gemini.gemini_support import sse

MODELS = ("sim-gemini", "sim-gemini-legacy")
WEATHER = {"paris": "18 C, cloudy", "rome": "24 C, sunny", "florence, italy": "21 C, clear"}
MISSING = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to "
    "work correctly, and missing thought_signature may lead to degraded model performance. Additional "
    "data, function call `default_api:{name}` , position {pos}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
_PATH = re.compile(r"/v1beta/models/(?P<model>[^:]+):(?P<method>streamGenerateContent|generateContent)$")


def _sig(*parts: str) -> str:
    return base64.b64encode(hashlib.sha256("|".join(parts).encode()).digest() * 2).decode()


def _error(code: int, status: str, message: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    body = {"error": {"code": code, "message": message, "status": status}}
    return httpx2.Response(code, json=body, headers={"x-request-id": "req_s", **(headers or {})})


class GeminiScripted:
    """Answers Gemini requests from a script; records every request body (``bodies``)."""

    def __init__(self, *, default_fault: str | None = None, retry_after_ms: int = 1000) -> None:
        self.bodies: list[bytes] = []
        self.retry_after_ms = retry_after_ms
        fault, _, times = (default_fault or "").partition("x")
        self.fault = fault or None
        self.left = int(times) if times else -1
        self.turn = 0

    @property
    def last_json(self) -> Any:
        return json.loads(self.bodies[-1])

    def _take(self) -> str | None:
        if self.fault is None or self.left == 0:
            return None
        self.left -= 1
        return self.fault

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        self.bodies.append(body)
        m = _PATH.search(request.url.path)
        if m is None:
            return _error(404, "NOT_FOUND", f"no route for {request.url.path}")
        fault = self._take()
        if fault == "429":
            retry = f"{self.retry_after_ms / 1000:g}"
            return _error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted.", {"retry-after": retry})
        if fault in ("500", "529"):
            return _error(int(fault), "INTERNAL" if fault == "500" else "UNAVAILABLE", f"fault {fault}")
        model = m.group("model")
        if model not in MODELS:
            text = f"models/{model} is not found for API version v1beta, or is not supported for "
            text += "generateContent."
            return _error(404, "NOT_FOUND", text)
        req = json.loads(body)
        problem = _check_signatures(req)
        if problem is not None:
            return _error(400, "INVALID_ARGUMENT", problem)
        self.turn += 1
        chunks = self._answer(req, model)
        if m.group("method") == "generateContent":
            return httpx2.Response(200, json=_merge(chunks), headers={"x-request-id": f"req_{self.turn}"})
        return self._stream(chunks, fault)

    def _stream(self, chunks: list[dict[str, Any]], fault: str | None) -> httpx2.Response:
        raw = [sse([c]) for c in chunks]
        if fault == "unknown_event":
            raw.insert(1, sse([{"simUnknownEvent": {"x": 1}}]))
        if fault == "malformed":
            raw.insert(1, b"data: {not json\r\n\r\n")
        if fault == "cut":
            raw = raw[:-1]

        async def body() -> AsyncIterator[bytes]:
            for i, piece in enumerate(raw):
                if fault == "reset" and i == 1:
                    raise httpx2.ReadError("connection reset by peer")
                yield piece

        headers = {"content-type": "text/event-stream", "x-request-id": f"req_{self.turn}"}
        return httpx2.Response(200, content=body(), headers=headers)

    def _answer(self, req: dict[str, Any], model: str) -> list[dict[str, Any]]:
        last = req["contents"][-1]["parts"]
        rid = f"resp_{self.turn}"
        results = [p["functionResponse"] for p in last if "functionResponse" in p]
        question = " ".join(p.get("text", "") for p in last)
        if results:
            cities = [r["response"].get("result", "") for r in results]
            text = "Rome is warmer." if len(results) > 1 else f"It is {cities[0]}."
            return _text_answer(rid, model, "Reading the tool results.", text)
        tools = any(t.get("functionDeclarations") for t in req.get("tools") or [])
        if tools and "weather" in question.lower():
            return _calls(rid, model, ["Florence, Italy"])
        if tools and "Paris" in question:
            return _calls(rid, model, ["Paris", "Rome"])
        return _text_answer(rid, model, "Computing 3 + 4 = 7, then 12 * 7.", "12 * (3 + 4) = 84.")


def _usage(prompt: int, out: int, thoughts: int) -> dict[str, int]:
    return {"promptTokenCount": prompt, "candidatesTokenCount": out, "thoughtsTokenCount": thoughts,
            "totalTokenCount": prompt + out + thoughts}  # fmt: skip


def _chunk(rid: str, model: str, parts: list[dict[str, Any]], finish: bool = False) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        cand["finishReason"] = "STOP"
    return {
        "candidates": [cand],
        "usageMetadata": _usage(20, 8, 12),
        "modelVersion": model,
        "responseId": rid,
    }


def _text_answer(rid: str, model: str, thought: str, text: str) -> list[dict[str, Any]]:
    return [
        _chunk(rid, model, [{"text": thought, "thought": True}]),
        _chunk(rid, model, [{"text": text}]),
        _chunk(rid, model, [{"text": "", "thoughtSignature": _sig(rid, text)}], finish=True),
    ]


def _calls(rid: str, model: str, cities: list[str]) -> list[dict[str, Any]]:
    out = [_chunk(rid, model, [{"text": "I should call the weather tool.", "thought": True}])]
    for i, city in enumerate(cities):
        part: dict[str, Any] = {
            "functionCall": {"name": "get_weather", "args": {"city": city}, "id": f"fc{i}{rid}"}
        }
        if i == 0:
            part["thoughtSignature"] = _sig(rid, city)
        out.append(_chunk(rid, model, [part]))
    out.append(_chunk(rid, model, [{"text": ""}], finish=True))
    return out


def _merge(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming body: the stream's parts in one candidate (consecutive text pieces joined)."""
    parts: list[dict[str, Any]] = []
    for c in chunks:
        for p in c["candidates"][0]["content"]["parts"]:
            prev = parts[-1] if parts else None
            if (
                prev is not None
                and "text" in p
                and "text" in prev
                and prev.get("thought") == p.get("thought")
                and "thoughtSignature" not in prev
            ):
                prev["text"] += p["text"]
                if "thoughtSignature" in p:
                    prev["thoughtSignature"] = p["thoughtSignature"]
            elif p.get("text") == "" and "thoughtSignature" not in p:
                continue
            else:
                parts.append(dict(p))
    last = dict(chunks[-1])
    last["candidates"] = [{**last["candidates"][0], "content": {"role": "model", "parts": parts}}]
    return last


def _check_signatures(req: dict[str, Any]) -> str | None:
    """Gemini 3's rule: each model turn's first functionCall carries its signature."""
    for pos, content in enumerate(req.get("contents") or []):
        if content.get("role") != "model":
            continue
        calls = [p for p in content["parts"] if "functionCall" in p]
        if calls and "thoughtSignature" not in calls[0]:
            return MISSING.format(name=calls[0]["functionCall"]["name"], pos=pos + 1)
    return None


def transport(**options: Any) -> GeminiScripted:
    return GeminiScripted(**options)


class GeminiStatus:
    """Answers every request with one error status in Google's envelope (retry-after 2 s, ``req_c``).

    The contract's neutral error type names are said in Gemini's dialect where it has one
    (``overloaded_error`` is ``UNAVAILABLE``).
    """

    def __init__(self, status: int, error_type: str = "some_error", message: str | None = None) -> None:
        self.bodies: list[bytes] = []
        self.status = status
        self.message = message or f"status {status}"
        self.error_type = "UNAVAILABLE" if error_type == "overloaded_error" else error_type

    @property
    def last_json(self) -> Any:
        return json.loads(self.bodies[-1])

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(await request.aread())
        body = {"error": {"code": self.status, "message": self.message, "status": self.error_type}}
        return httpx2.Response(self.status, json=body, headers={"retry-after": "2", "x-request-id": "req_c"})
