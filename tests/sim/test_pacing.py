"""Pacing (``+tps=``, ``+ttft=``): simulated streams delivered at the rate asked for, in every protocol.

Only lower bounds are asserted on time (a pause cannot be shorter than asked; a loaded machine makes
it longer), and the token count of every pause is checked exactly on the plan, which is pure data.
"""

from __future__ import annotations

import time

import pytest

import agentlab as al
from agentlab.errors import InvalidSettingsError
from agentlab.sim import faults
from agentlab.sim.core import SSEEvent, sse
from agentlab.sim.pacing import Pace, PaceError, delta_tokens, parse_options
from agentlab.sim.tokenizer import count_tokens


def test_options_parse_and_typos_are_named() -> None:
    assert parse_options("sim-reasoner") == ("sim-reasoner", None, Pace())
    assert parse_options("sim-reasoner+fault=429x1+tps=40+ttft=250") == (
        "sim-reasoner", "429x1", Pace(40.0, 250)
    )  # fmt: skip
    for bad, named in (("sim-x+tsp=40", "'tsp=40'"), ("sim-x+tps=0", "tps='0'"), ("sim-x+ttft=-1", "ttft")):
        with pytest.raises(PaceError, match=named):
            parse_options(bad)


@pytest.mark.parametrize(
    ("event", "text"),
    [
        (sse("response.output_text.delta", {"delta": "The total is 54", "item_id": "msg_1"}, delta=True),
         "The total is 54"),
        (sse("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": "Paris is"}},
             delta=True), "Paris is"),
        (SSEEvent(b'data: {"choices":[{"delta":{"reasoning_content":"Rome is warmer"}}]}\n\n', True),
         "Rome is warmer"),
        (SSEEvent(b'data: {"candidates":[{"content":{"parts":[{"text":"Oslo, 12 C"}]}}]}\r\n\r\n', True),
         "Oslo, 12 C"),
    ],
)  # fmt: skip
def test_each_protocols_delta_is_counted_by_its_text(event: SSEEvent, text: str) -> None:
    assert delta_tokens(event.raw) == count_tokens(text) > 1


def test_the_plan_pauses_tokens_over_tps_before_each_delta_and_ttft_first() -> None:
    events = [sse("start", {"id": "r1"}), *(sse("d", {"delta": w}, delta=True) for w in ("one two", "three"))]
    plan = faults.stream_plan(events, [], sse("x", {}), Pace(tps=10, ttft_ms=300))
    sleeps = [c.seconds for c in plan if isinstance(c, faults.Sleep)]
    assert sleeps == pytest.approx([0.3, count_tokens("one two") / 10, count_tokens("three") / 10])
    assert [c for c in plan if isinstance(c, bytes)] == [e.raw for e in events]
    assert not any(isinstance(c, faults.Sleep) for c in faults.stream_plan(events, [], sse("x", {})))


@pytest.mark.parametrize("model", ["openai:sim-reasoner", "anthropic:sim-thinker", "google:sim-gemini"])
def test_a_paced_run_waits_its_time_to_first_token_and_answers_the_same(model: str) -> None:
    fast = al.run(model, "What is 12 * (3 + 4)?")
    start = time.perf_counter()
    paced = al.run(f"{model}+tps=400+ttft=300", "What is 12 * (3 + 4)?")
    took = time.perf_counter() - start
    assert paced.output == fast.output and paced.usage.output_tokens == fast.usage.output_tokens
    assert took >= 0.3 * paced.steps


def test_a_bad_option_is_refused_before_anything_is_logged(tmp_path: object) -> None:
    from pathlib import Path

    log = Path(str(tmp_path)) / "events.jsonl"
    with pytest.raises(InvalidSettingsError, match="unknown simulator model option 'tsp=40'"):
        al.run("openai:sim-reasoner+tsp=40", "hi", event_log=log)
    assert not log.exists()
