"""Error texts name types, fields, positions and ids, never values that came from a model.

Each case feeds one malformed provider stream (hand-made wire bytes, served through the real SDK and
the real adapter) into a real ``Run`` with an event log, and into a sweep with a results file. The
stream first delivers a valid reasoning delta holding the canary, then the malformed event (which
often holds the canary too). The run must fail with a typed agentlab error whose text, ``repr`` and
exception chain hold no canary, and the canary must reach none of the durable sinks: ``RunResult.error``,
the result's JSON, the event log, the sweep's results file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

import agentlab as al
from agentlab.adapters.base import Adapter, ModelRef
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.errors import AgentlabError, ModelBehaviorError, StreamInterruptedError
from agentlab.neutral.events import ReasoningDeltaEvent
from agentlab.sweeps import Task, sweep
from tests.adapters.anthropic_messages.anthropic_support import SSE, Replay, Served, adapter_for
from tests.support.cassettes import to_sse

CANARY = "secret thought CANARY-7f3a"
A_MODEL = "sim-thinker"  # priced; the adapter gets a scripted client
O_MODEL = "sim-reasoner"


# ---------------------------------------------------------------- Anthropic streams


def _a_start() -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": A_MODEL,
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }


def _a_stream(
    bad: dict[str, Any] | None = None, *, tool: dict[str, Any] | None = None, stop: Any = "end_turn"
) -> list[dict[str, Any]]:
    """A thinking block whose first delta holds the canary, then ``bad`` inside the same block."""
    think = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
    }
    good = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": CANARY},
    }
    evs: list[dict[str, Any]] = [_a_start(), think, good]
    if bad is not None:
        evs.append(bad)
    evs.append({"type": "content_block_stop", "index": 0})
    if tool is not None:
        evs += [
            {"type": "content_block_start", "index": 1, "content_block": tool},
            {"type": "content_block_stop", "index": 1},
        ]
    evs += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    return evs


def _delta(delta: Any, index: Any = 0) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


ANTHROPIC_CASES: dict[str, list[dict[str, Any]]] = {
    "thinking_is_dict": _a_stream(_delta({"type": "thinking_delta", "thinking": {"t": CANARY}})),
    "thinking_is_list": _a_stream(_delta({"type": "thinking_delta", "thinking": [CANARY]})),
    "thinking_is_int": _a_stream(_delta({"type": "thinking_delta", "thinking": 123})),
    "signature_is_int": _a_stream(_delta({"type": "signature_delta", "signature": 123})),
    "signature_is_list": _a_stream(_delta({"type": "signature_delta", "signature": [CANARY]})),
    "thinking_missing": _a_stream(_delta({"type": "thinking_delta"})),
    "delta_is_string": _a_stream(_delta(CANARY)),
    "index_is_list": _a_stream(_delta({"type": "thinking_delta", "thinking": "x"}, index=[CANARY])),
    "unknown_index": _a_stream(_delta({"type": "thinking_delta", "thinking": "x"}, index=7)),
    "text_start_is_dict": _a_stream(
        {"type": "content_block_start", "index": 3, "content_block": {"type": "text", "text": {"x": CANARY}}}
    ),
    "tool_id_is_dict": _a_stream(
        tool={"type": "tool_use", "id": {"x": CANARY}, "name": "f", "input": {}}, stop="tool_use"
    ),
    "stop_reason_is_list": _a_stream(stop=[CANARY]),
}


def _anthropic_adapter(events: list[dict[str, Any]]) -> Adapter:
    return adapter_for(A_MODEL, Replay([Served(200, to_sse(events), SSE)]))


# ---------------------------------------------------------------- OpenAI streams


def _o_resp(status: str = "completed", output: list[Any] | None = None) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "status": status,
        "model": O_MODEL,
        "output": output or [],
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }


def _o_stream(*bad: dict[str, Any], final: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    good = {
        "type": "response.reasoning_summary_text.delta",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "delta": CANARY,
    }
    return [
        {"type": "response.created", "response": _o_resp("in_progress")},
        good,
        *bad,
        final or {"type": "response.completed", "response": _o_resp()},
    ]


OPENAI_CASES: dict[str, list[dict[str, Any]]] = {
    "summary_delta_is_dict": _o_stream(
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_1",
            "output_index": 0,
            "summary_index": 0,
            "delta": {"t": CANARY},
        }
    ),
    "text_delta_is_list": _o_stream(
        {
            "type": "response.output_text.delta",
            "item_id": "m",
            "output_index": 1,
            "content_index": 0,
            "delta": [CANARY],
        }
    ),
    "reasoning_text_delta_missing": _o_stream({"type": "response.reasoning_text.delta", "item_id": "rs_1"}),
    "message_content_is_string": _o_stream(
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {"type": "message", "id": "m", "content": CANARY},
        }
    ),
    "message_text_is_dict": _o_stream(
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {
                "type": "message",
                "id": "m",
                "content": [{"type": "output_text", "text": {"t": CANARY}}],
            },
        }
    ),
    "final_usage_is_list": _o_stream(
        final={
            "type": "response.completed",
            "response": {**_o_resp(), "usage": {"input_tokens_details": [CANARY]}},
        }
    ),
}


def _openai_adapter(events: list[dict[str, Any]]) -> Adapter:
    resp = httpx2.Response(
        200, headers={"content-type": "text/event-stream", "x-request-id": "req_1"}, content=to_sse(events)
    )
    client = openai.AsyncOpenAI(
        api_key="sk-test-not-a-key",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(lambda r: resp)),
    )
    return OpenAIResponsesAdapter(O_MODEL, client=client, max_retries=0)


CASES: list[Any] = [
    pytest.param("anthropic", A_MODEL, _anthropic_adapter, evs, id=f"anthropic-{k}")
    for k, evs in ANTHROPIC_CASES.items()
] + [
    pytest.param("openai", O_MODEL, _openai_adapter, evs, id=f"openai-{k}") for k, evs in OPENAI_CASES.items()
]


# ---------------------------------------------------------------- checks


def chain(err: BaseException) -> Iterator[BaseException]:
    """The error and everything reachable through ``__cause__`` / ``__context__``."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [err]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [e.__cause__, e.__context__]


def assert_error_text_clean(err: BaseException, canary: str = CANARY) -> None:
    for e in chain(err):
        assert canary not in str(e), f"{type(e).__name__} text holds the canary: {str(e)[:300]}"
        assert canary not in repr(e), f"{type(e).__name__} repr holds the canary"
        for value in vars(e).values():
            assert canary not in repr(value), f"{type(e).__name__} attribute holds the canary"


@pytest.mark.parametrize(("provider", "model", "make", "events"), CASES)
def test_malformed_event_fails_typed_and_value_free_in_every_sink(
    tmp_path: Path,
    provider: str,
    model: str,
    make: Callable[[list[dict[str, Any]]], Adapter],
    events: list[dict[str, Any]],
) -> None:
    log_path = tmp_path / "events.jsonl"
    run = al.Run(f"{provider}:{model}", "hi", adapter=make(events), event_log=log_path)
    with pytest.raises(AgentlabError) as info:
        run.run_sync()
    err = info.value
    assert isinstance(err, StreamInterruptedError | ModelBehaviorError), type(err)
    assert_error_text_clean(err)
    result = run.result
    assert result is not None and result.status == "failed"
    assert result.error_type == type(err).__name__
    assert result.error and CANARY not in result.error
    assert CANARY not in result.model_dump_json()
    log_text = log_path.read_text()
    assert '"error"' in log_text and CANARY not in log_text

    results = tmp_path / "results.jsonl"
    rep = sweep(
        [Task("hi", id="t")],
        [f"{provider}:{model}"],
        results=results,
        progress=None,
        concurrency=1,
        adapter_factory=lambda ref: make(events),
    )
    assert rep.failed == 1
    (row,) = [json.loads(line) for line in results.read_text().splitlines()]
    assert row["status"] == "failed" and row["error_type"] == type(err).__name__
    assert CANARY not in results.read_text()


def test_positive_control_the_canary_does_reach_the_display() -> None:
    """The canary delta is delivered as display text before the bad event (so the checks above can fail)."""
    seen: list[str] = []

    def on_event(ev: Any) -> None:
        if isinstance(ev, ReasoningDeltaEvent):
            seen.append(ev.text)

    for make, events in ((_anthropic_adapter, _a_stream()), (_openai_adapter, _o_stream())):
        model = "anthropic:" + A_MODEL if make is _anthropic_adapter else "openai:" + O_MODEL
        al.Run(model, "hi", adapter=make(events), on_event=on_event).run_sync()
    assert seen == [CANARY, CANARY]


# ---------------------------------------------------------------- exceptions that are not agentlab's


def test_a_foreign_exception_is_recorded_by_type_without_its_text(tmp_path: Path) -> None:
    """An ``on_event`` callback that quotes a reasoning delta in its exception.

    The caller gets the exception as raised; the durable record names its type only.
    """
    quoted: list[str] = []

    def on_event(ev: Any) -> None:
        if isinstance(ev, ReasoningDeltaEvent):
            quoted.append(ev.text)
            raise ValueError(f"cannot handle {ev.text!r}")

    log_path = tmp_path / "events.jsonl"
    run = al.Run(
        f"anthropic:{A_MODEL}",
        "hi",
        adapter=_anthropic_adapter(_a_stream()),
        on_event=on_event,
        event_log=log_path,
    )
    with pytest.raises(ValueError, match="CANARY"):
        run.run_sync()
    assert quoted == [CANARY]
    result = run.result
    assert result is not None and result.status == "failed" and result.error_type == "ValueError"
    assert result.error is not None and "ValueError" in result.error and CANARY not in result.error
    assert CANARY not in log_path.read_text()
    assert CANARY not in result.model_dump_json()


def test_adapter_factory_error_in_a_sweep_row_is_value_free(tmp_path: Path) -> None:
    """A run that could not even start (``result`` is None): the row is built from the exception."""

    def factory(ref: ModelRef) -> Adapter:
        raise KeyError(CANARY)

    results = tmp_path / "results.jsonl"
    rep = sweep(
        [Task("hi", id="t")], [f"openai:{O_MODEL}"], results=results, progress=None, adapter_factory=factory
    )
    assert rep.failed == 1
    (row,) = [json.loads(line) for line in results.read_text().splitlines()]
    assert row["error_type"] == "KeyError" and row["error"]
    assert CANARY not in results.read_text()
