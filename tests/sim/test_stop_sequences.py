"""Anthropic ``stop_sequences`` in the simulator: the text ends before the first one that appears.

From the Messages API reference: generation stops when the text would contain one of the custom
``stop_sequences``; the response then has ``stop_reason: "stop_sequence"`` and ``stop_sequence`` set
to the one matched, which the text does not include (streamed: in the ``message_delta``). Without a
match the turn ends as usual (``end_turn``, ``stop_sequence: null``).
"""

from __future__ import annotations

from typing import Any

import pytest

import agentlab as al
from agentlab import sim

MATH = [{"role": "user", "content": "What is 6 * 7?"}]  # answered "6 * 7 = 42"


def _message(stop: list[str], *, stream: bool, **kw: Any) -> Any:
    client = sim.anthropic_sync_client(max_retries=0)
    body: dict[str, Any] = {"model": "sim-thinker", "max_tokens": 4000, "messages": MATH}
    body["stop_sequences"] = stop
    if stream:
        with client.messages.stream(**body, **kw) as st:
            events = [ev.type for ev in st]
            final = st.get_final_message()
        assert events[-1] == "message_stop"
        return final
    return client.messages.create(**body, **kw)


@pytest.mark.parametrize("stream", [False, True])
def test_the_text_stops_before_the_sequence_and_says_which(stream: bool) -> None:
    m = _message(["="], stream=stream)
    assert [b.text for b in m.content if b.type == "text"] == ["6 * 7 "]
    assert (m.stop_reason, m.stop_sequence) == ("stop_sequence", "=")
    full = _message([], stream=stream)
    assert m.usage.output_tokens < full.usage.output_tokens  # the cut text is not billed


@pytest.mark.parametrize("stream", [False, True])
def test_the_first_sequence_in_the_text_wins(stream: bool) -> None:
    m = _message(["42", "*"], stream=stream)
    assert [b.text for b in m.content if b.type == "text"] == ["6 "]
    assert (m.stop_reason, m.stop_sequence) == ("stop_sequence", "*")


def test_no_match_ends_the_turn_as_usual() -> None:
    m = _message(["###"], stream=False)
    assert [b.text for b in m.content if b.type == "text"] == ["6 * 7 = 42"]
    assert (m.stop_reason, m.stop_sequence) == ("end_turn", None)


def test_thinking_is_not_cut_only_the_answer() -> None:
    m = _message(["="], stream=False, thinking={"type": "enabled", "budget_tokens": 2048})
    assert [b.type for b in m.content] == ["thinking", "text"]
    assert m.content[1].text == "6 * 7 " and m.stop_reason == "stop_sequence"


@pytest.mark.parametrize("stream", [True, False])
def test_run_result_reports_the_stop_sequence(stream: bool) -> None:
    result = al.run("anthropic:sim-thinker", "What is 6 * 7?", stop_sequences=["="], stream=stream)
    assert result.status == "completed"
    assert (result.output, result.stop_reason) == ("6 * 7 ", "stop_sequence")
