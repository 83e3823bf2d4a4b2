"""The shared recovery decision: which tool-call turns go without their reasoning, under which rule."""

from __future__ import annotations

import pytest

from agentlab.neutral.items import AssistantTextItem, ToolCallItem, ToolResultItem, UserItem
from agentlab.neutral.recovery import ContinuityRule, Scope, called_text, plan_recovery, result_text
from agentlab.neutral.request import ModelRequest

# An earlier loop (turn a: one call, then a final answer in turn b), a new user message, and the
# current loop so far (turn c, then turn d, each one call with its result).
HISTORY = (
    UserItem(text="first"),
    ToolCallItem(call_id="a1", name="t", turn_id="a"),
    ToolResultItem(call_id="a1", output="1"),
    AssistantTextItem(text="done", turn_id="b"),
    UserItem(text="second"),
    AssistantTextItem(text="let me look", turn_id="c"),
    ToolCallItem(call_id="c1", name="t", turn_id="c"),
    ToolResultItem(call_id="c1", output="2"),
    ToolCallItem(call_id="d1", name="t", turn_id="d"),
    ToolCallItem(call_id="d2", name="t", turn_id="d"),
    ToolResultItem(call_id="d1", output="3"),
    ToolResultItem(call_id="d2", output="4"),
)


def request(**kw: object) -> ModelRequest:
    return ModelRequest(model="m", items=HISTORY, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("scope", "turns"),
    [
        ("nothing", []),
        ("last_turn", ["d"]),
        ("current_turn", ["c", "d"]),
        ("every_turn", ["a", "c", "d"]),
    ],
)
def test_the_scope_names_the_turns_the_api_requires(scope: Scope, turns: list[str]) -> None:
    plan = plan_recovery(request(continuation_released=True), ContinuityRule(requires=scope), carried=())
    assert [g.turn_id for g in plan.gaps] == turns


def test_a_carried_turn_is_no_gap_and_causes_are_named() -> None:
    plan = plan_recovery(
        request(continuation_released=True), ContinuityRule(requires="every_turn"), carried={"d"}
    )
    assert [(g.turn_id, g.call_ids, g.cause) for g in plan.gaps] == [
        ("a", ("a1",), "earlier_loop"),
        ("c", ("c1",), "released"),
    ]
    assert plan.covers(["c1"]) and not plan.covers(["d1", "d2"])


def test_an_unexplained_gap_is_sent_as_it_is_when_the_rule_says_so() -> None:
    live = request()  # verbatim, never released: a missing item may be a bug
    send = ContinuityRule(requires="current_turn", unexplained="send")
    assert plan_recovery(live, send, carried=()).gaps == ()
    recover = ContinuityRule(requires="current_turn")
    assert [g.cause for g in plan_recovery(live, recover, carried=()).gaps] == ["unexplained"] * 2
    dropped = plan_recovery(request(continuation_policy="drop"), send, carried=())
    assert [g.cause for g in dropped.gaps] == ["policy_drop"] * 2


def test_the_text_notice_names_the_calls_and_the_texts_are_shared() -> None:
    plan = plan_recovery(
        request(continuation_released=True), ContinuityRule(requires="last_turn"), carried=()
    )
    notice = plan.text_notice("Demo")
    assert notice is not None and notice.code == "dangling_tool_use"
    assert notice.data["tool_calls"] == ["d1", "d2"] and "\n" not in notice.message
    assert ContinuityRule(requires="last_turn", remedy="stand_in") != plan.rule
    assert called_text("t", '{"x":1}') == '[called tool t with {"x":1}]'
    assert result_text("t", "boom", True) == "[error from tool t: boom]"
