"""Fuzzed wire events through the real adapters and a real run: typed errors, and no value in them.

Each example starts from a valid stream of one provider (thinking/summary, opaque payload, text, a tool
call), applies a few mutations (a field retyped, a field dropped, a canary appended to every string of
an event, two events swapped, an event duplicated, an event's JSON cut, the body truncated), serves the
result through the real SDK and adapter to a real ``Run`` with an event log, and checks:

* the run either succeeds or fails with an ``AgentlabError`` (never a bare Python exception);
* ``REASONING`` (placed in every reasoning field: thinking text, signatures, redacted data, summaries,
  ``encrypted_content``; and inside wrong-typed containers) reaches no error text, ``repr``, exception
  chain, ``RunResult.error``, result JSON or event-log line;
* ``OTHER`` (appended to the remaining string fields) reaches no error text either (it may be durable
  where the field is, e.g. assistant text in history).

Deterministic (``derandomize``, no example database) and fast (a few hundred examples in seconds).
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import openai
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentlab as al
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.errors import AgentlabError
from agentlab.neutral.events import ErrorEvent
from tests.adapters.anthropic_messages.anthropic_support import adapter_for
from tests.reliability.test_error_texts import chain

REASONING = "think REASONINGCANARY q7"
OTHER = "said OTHERCANARY z3"
A_MODEL, O_MODEL = "sim-thinker", "sim-reasoner"

FUZZ = settings(
    max_examples=100,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name.
    """
    return "sunny"


# ---------------------------------------------------------------- valid streams


def anthropic_stream(tool: bool = True) -> list[dict[str, Any]]:
    msg: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": A_MODEL,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    evs: list[dict[str, Any]] = [
        {"type": "message_start", "message": msg},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": REASONING},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": f"more {REASONING}"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": REASONING},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "redacted_thinking", "data": REASONING},
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Let me check."}},
        {"type": "content_block_stop", "index": 2},
    ]
    if tool:
        evs += [
            {
                "type": "content_block_start",
                "index": 3,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 3,
                "delta": {"type": "input_json_delta", "partial_json": '{"city": '},
            },
            {
                "type": "content_block_delta",
                "index": 3,
                "delta": {"type": "input_json_delta", "partial_json": '"Paris"}'},
            },
            {"type": "content_block_stop", "index": 3},
        ]
    evs += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 30},
        },
        {"type": "message_stop"},
    ]
    return evs


def _o_resp(status: str, output: list[Any]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "status": status,
        "model": O_MODEL,
        "output": output,
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 7,
            "output_tokens_details": {"reasoning_tokens": 4},
            "total_tokens": 17,
        },
    }


def openai_stream(tool: bool = True) -> list[dict[str, Any]]:
    rs = {
        "type": "reasoning",
        "id": "rs_1",
        "encrypted_content": REASONING,
        "summary": [{"type": "summary_text", "text": f"{REASONING} summary"}],
    }
    msg = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}],
    }
    fc = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
        "status": "completed",
    }
    output = [rs, msg, fc] if tool else [rs, msg]
    evs: list[dict[str, Any]] = [
        {"type": "response.created", "response": _o_resp("in_progress", [])},
        {"type": "response.output_item.added", "output_index": 0, "item": {**rs, "summary": []}},
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_1",
            "output_index": 0,
            "summary_index": 0,
            "delta": REASONING,
        },
        {
            "type": "response.reasoning_text.delta",
            "item_id": "rs_1",
            "output_index": 0,
            "content_index": 0,
            "delta": REASONING,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": rs},
        {"type": "response.output_item.added", "output_index": 1, "item": {**msg, "content": []}},
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 1,
            "content_index": 0,
            "delta": "Let me check.",
        },
        {"type": "response.output_item.done", "output_index": 1, "item": msg},
    ]
    if tool:
        evs += [
            {"type": "response.output_item.added", "output_index": 2, "item": {**fc, "arguments": ""}},
            {
                "type": "response.function_call_arguments.delta",
                "item_id": "fc_1",
                "output_index": 2,
                "delta": '{"city": "Paris"}',
            },
            {"type": "response.output_item.done", "output_index": 2, "item": fc},
        ]
    evs.append({"type": "response.completed", "response": _o_resp("completed", output)})
    return evs


# Keys whose string values are reasoning or opaque payloads (the REASONING canary lives there).
_REASONING_KEYS = {"thinking", "signature", "data", "encrypted_content"}


def _is_reasoning(path: tuple[Any, ...], ev: dict[str, Any]) -> bool:
    if any(p in _REASONING_KEYS or p == "summary" for p in path if isinstance(p, str)):
        return True
    return "reasoning" in str(ev.get("type")) and path == ("delta",)


# ---------------------------------------------------------------- mutations


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        out.append((*prefix, k))
        out += _paths(v, (*prefix, k))
    return out


def _parent(obj: Any, path: tuple[Any, ...]) -> Any:
    for p in path[:-1]:
        obj = obj[p]
    return obj


RETYPES: list[Any] = [123, -1, 1.5, None, True, "", OTHER, [REASONING], {"x": REASONING}, [], {}]


def _inject(obj: Any, path: tuple[Any, ...], ev: dict[str, Any]) -> Any:
    if isinstance(obj, str):
        return obj if _is_reasoning(path, ev) else obj + OTHER
    if isinstance(obj, dict):
        return {k: _inject(v, (*path, k), ev) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_inject(v, (*path, i), ev) for i, v in enumerate(obj)]
    return obj


@st.composite
def mutated(draw: st.DrawFn, base: Callable[[bool], list[dict[str, Any]]]) -> bytes:
    """A mutated SSE body derived from a valid stream."""
    events = copy.deepcopy(base(draw(st.booleans())))
    cut: dict[int, int] = {}  # event index -> cut its JSON at this char
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(events) - 1))
        op = draw(st.sampled_from(["retype", "drop", "inject", "swap", "dup", "cut_json"]))
        ev = events[i]
        paths = _paths(ev)
        if op in ("retype", "drop") and paths:
            path = draw(st.sampled_from(paths))
            parent = _parent(ev, path)
            if op == "retype":
                parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(RETYPES)))
            else:
                del parent[path[-1]]
        elif op == "inject":
            events[i] = _inject(ev, (), ev)
        elif op == "swap":
            j = draw(st.integers(0, len(events) - 1))
            events[i], events[j] = events[j], events[i]
        elif op == "dup":
            events.insert(i, copy.deepcopy(ev))
        elif op == "cut_json":
            cut[i] = draw(st.integers(1, 200))
    parts = []
    for i, ev in enumerate(events):
        data = json.dumps(ev, separators=(",", ":"))
        if i in cut:
            data = data[: cut[i]]
        name = ev.get("type") if isinstance(ev.get("type"), str) else "x"
        parts.append(f"event: {name}\ndata: {data}\n\n")
    body = "".join(parts).encode("utf-8")
    if draw(st.integers(0, 5)) == 0:  # one in six bodies is also cut short
        body = body[: draw(st.integers(0, len(body)))]
    return body


# ---------------------------------------------------------------- the run


def _sse(body: bytes) -> httpx2.Response:
    return httpx2.Response(
        200,
        headers={"content-type": "text/event-stream", "request-id": "req_1", "x-request-id": "req_1"},
        content=body,
    )


def _handler(first: bytes, then: bytes) -> Callable[[httpx2.Request], httpx2.Response]:
    """The fuzzed body for the first request, a valid final answer for any later one."""
    n = [0]

    def handle(request: httpx2.Request) -> httpx2.Response:
        n[0] += 1
        return _sse(first if n[0] == 1 else then)

    return handle


def _adapter(provider: str, body: bytes) -> Any:
    if provider == "anthropic":
        return adapter_for(A_MODEL, _handler(body, _body(anthropic_stream(False))))
    client = openai.AsyncOpenAI(
        api_key="sk-test-not-a-key",
        http_client=httpx2.AsyncClient(
            transport=httpx2.MockTransport(_handler(body, _body(openai_stream(False))))
        ),
    )
    return OpenAIResponsesAdapter(O_MODEL, client=client, max_retries=0)


def _body(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def check_run(provider: str, body: bytes) -> None:
    model = f"{provider}:{A_MODEL if provider == 'anthropic' else O_MODEL}"
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "events.jsonl"
        run = al.Run(
            model,
            "What is the weather in Paris?",
            adapter=_adapter(provider, body),
            tools=[get_weather],
            event_log=log_path,
            retries=0,
            max_steps=3,
        )
        err: AgentlabError | None = None
        try:
            run.run_sync()
        except AgentlabError as e:
            err = e
        # Anything else propagates and fails the example: a bare Python exception is the defect.
        result = run.result
        assert result is not None
        log_lines = log_path.read_text().splitlines() if log_path.exists() else []
    texts: list[str] = [result.error or "", result.model_dump_json(), *log_lines]
    if err is not None:
        assert result.status == "failed" and result.error_type == type(err).__name__
        for exc in chain(err):
            texts += [str(exc), repr(exc), *(repr(v) for v in vars(exc).values())]
    for t in texts:
        assert REASONING not in t, t[:400]
    error_texts = [result.error or ""] + [ln for ln in log_lines if '"kind":"error"' in ln.replace(" ", "")]
    if err is not None:
        error_texts += [str(e) for e in chain(err)]
    for t in error_texts:
        assert OTHER not in t, t[:400]
    for rec in log_lines:
        json.loads(rec)  # complete lines only


@FUZZ
@given(body=mutated(anthropic_stream))
def test_fuzzed_anthropic_stream(body: bytes) -> None:
    check_run("anthropic", body)


@FUZZ
@given(body=mutated(openai_stream))
def test_fuzzed_openai_stream(body: bytes) -> None:
    check_run("openai", body)


def test_the_valid_streams_succeed_and_carry_the_canaries() -> None:
    """Positive control: unmutated, both streams complete a tool loop.

    The canary went through the adapters (display and opaque continuation), so the absence checks above can
    fail.
    """
    for provider, base in (("anthropic", anthropic_stream), ("openai", openai_stream)):
        seen: list[Any] = []
        model = f"{provider}:{A_MODEL if provider == 'anthropic' else O_MODEL}"
        adapter = _adapter(provider, _body(base(True)))
        run = al.Run(model, "weather?", adapter=adapter, tools=[get_weather], on_event=seen.append)
        result = run.run_sync()
        assert result.status == "completed" and result.steps == 2
        assert any(REASONING in getattr(ev, "text", "") for ev in seen)
        assert not any(isinstance(e, ErrorEvent) for e in result.events)
