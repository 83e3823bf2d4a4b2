r"""The toy provider's remote side: a scripted service speaking the toy wire format, in process.

The wire format is deliberately tiny. A request is one JSON body (``model``, ``input`` items,
``tools``, ``reasoning``: the opaque payloads sent back, parsed). A streamed answer is Server-Sent
Events text, one chunk per event (``data: {json}\n\n``): ``thinking`` (reasoning text), ``opaque``
(a reasoning payload to send back next time), ``text``, ``call`` (a tool call with JSON-string
arguments), then ``done`` (response id, usage, stop reason). A non-streaming answer is the same
events as one JSON array. An error answer (``ToyStatus``) comes before any event.

The "model" answers the contract suite's questions from a script (arithmetic, the weather tool),
and faults are switched on like the simulator's (``default_fault="429"``, ``"429x1"``, ``"cut"``,
``"reset"``, ``"malformed"``, ``"unknown_event"``, ``"500"``, ``"529"``), so the shared adapter contract
runs on this provider unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["MODELS", "ToyServer", "ToyStatus"]

MODELS = ("toy-1",)
WEATHER = {"paris": "18 C, cloudy", "rome": "24 C, sunny", "florence, italy": "21 C, clear"}


@dataclass
class ToyStatus(Exception):
    """An HTTP-like error answer from the toy service (before any event is sent)."""

    status: int
    message: str
    retry_after_s: float | None = None
    request_id: str = "toy_req"
    error_type: str | None = None


class ToyServer:
    """Answers toy requests from a script; records every body it received (``bodies``).

    Stands where an SDK client stands for a real adapter: ``base_url`` and ``close()``.
    """

    base_url = "toy://local"

    def __init__(self, *, default_fault: str | None = None, retry_after_ms: int = 1000) -> None:
        self.bodies: list[bytes] = []
        self.retry_after_ms = retry_after_ms
        self._fault, self._fault_left = _parse_fault(default_fault)
        self._turns = 0
        self._always: ToyStatus | None = None

    @classmethod
    def answering(cls, status: int, error_type: str, message: str | None = None) -> ToyServer:
        """A service answering every request with one error (retry hint 2 s, request id ``req_c``)."""
        server = cls()
        server._always = ToyStatus(status, message or f"status {status}", 2.0, "req_c", error_type)
        return server

    async def close(self) -> None:
        """Nothing to release: the toy service is in process."""

    @property
    def last_json(self) -> Any:
        return json.loads(self.bodies[-1])

    def respond(self, body: bytes) -> Iterator[str]:
        """The answer's text for one request body, as it arrives; raises ``ToyStatus`` for an error answer."""
        self.bodies.append(body)
        if self._always is not None:
            raise self._always
        request = json.loads(body)
        fault = self._take_fault()
        if fault in ("429", "500", "529"):
            retry = self.retry_after_ms / 1000 if fault == "429" else None
            raise ToyStatus(int(fault), f"toy fault {fault}", retry_after_s=retry)
        if request.get("model") not in MODELS:
            raise ToyStatus(404, f"the toy service has no model {request.get('model')!r}")
        self._turns += 1
        answer = _answer(request)
        events = [json.dumps(e) for e in (*answer, _done(request, self._turns, answer))]
        streamed = request.get("stream", True)
        reset_at = None
        if fault == "unknown_event":  # a type this adapter has never seen (the case names it)
            events.insert(1, '{"type": "novel_event", "x": 1}')
        elif fault == "cut":
            events = events[:-1]
        elif fault == "malformed":
            events.insert(1, '{"type": "text", "text": ')
        elif fault == "reset":
            reset_at = 1 if streamed else 0  # after the first event, or before the whole body
        if not streamed:
            return _deliver(["[" + ",".join(events) + "]"], reset_at=reset_at)
        return _deliver([f"data: {e}\n\n" for e in events], reset_at=reset_at)

    def _take_fault(self) -> str | None:
        if self._fault is None or self._fault_left == 0:
            return None
        self._fault_left -= 1
        return self._fault


def _deliver(chunks: list[str], *, reset_at: int | None) -> Iterator[str]:
    """The chunks as a connection delivers them: a reset raises where it happens, mid-answer."""
    for k, chunk in enumerate(chunks):
        if k == reset_at:
            raise ConnectionResetError("the toy connection was reset")
        yield chunk


def _parse_fault(fault: str | None) -> tuple[str | None, int]:
    """``"429x1"`` -> ``("429", 1)``; ``"cut"`` -> ``("cut", -1)`` (every request)."""
    if fault is None:
        return None, 0
    m = re.fullmatch(r"(\w+?)x(\d+)", fault)
    return (m.group(1), int(m.group(2))) if m else (fault, -1)


def _answer(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripted model: tool results answered, a weather question calls the tool, else arithmetic."""
    items = request.get("input", [])
    results = [i for i in items if i.get("kind") == "tool_result"]
    question = next((i["text"] for i in reversed(items) if i.get("kind") == "user"), "")
    if results:
        asked = {
            i["call_id"]: json.loads(i["arguments"]).get("city")
            for i in items
            if i.get("kind") == "tool_call"
        }
        readings = [(str(asked.get(r["call_id"])), str(r.get("output"))) for r in results]
        warmest = max(readings, key=lambda cr: _degrees(cr[1]))[0]
        said = "; ".join(f"{city}: {out}" for city, out in readings)
        return [
            {"type": "thinking", "text": "Compare the readings."},
            {"type": "text", "text": f"{said}. Warmest: {warmest}."},
        ]
    cities = [c for c in WEATHER if c in question.lower()]
    if cities and request.get("tools"):
        calls = [
            {
                "type": "call",
                "id": f"call_{k}",
                "name": "get_weather",
                "arguments": json.dumps({"city": _title(c)}),
            }
            for k, c in enumerate(cities)
        ]
        return [
            {"type": "thinking", "text": "I need the weather."},
            {"type": "opaque", "data": {"plan": cities}},
            *calls,
        ]
    product = "84" if "12 * (3 + 4)" in question else "I do not know"
    return [
        {"type": "thinking", "text": "12 * 7 = 84."},
        {"type": "opaque", "data": {"plan": "multiply"}},
        {"type": "text", "text": "The answer is "},
        {"type": "text", "text": product + "."},
    ]


def _degrees(reading: str) -> int:
    head = reading.split(" ")[0]
    return int(head) if head.isdigit() else -1


def _title(city: str) -> str:
    return ", ".join(part.strip().title() for part in city.split(","))


def _done(request: dict[str, Any], turn: int, events: list[dict[str, Any]]) -> dict[str, Any]:
    calls = any(e["type"] == "call" for e in events)
    thought = sum(len(e["text"]) for e in events if e["type"] == "thinking")
    said = sum(
        len(e.get("text", "")) + len(e.get("arguments", "")) for e in events if e["type"] != "thinking"
    )
    return {
        "type": "done",
        "id": f"toy_resp_{turn}",
        "stop": "tool_use" if calls else "end_turn",
        "usage": {
            "in": 10 + len(json.dumps(request.get("input", []))) // 4,
            "out": thought + said,
            "thought": thought,
        },
    }
