"""Tool calls sent without their opaque reasoning: the one decision of when an adapter must recover.

Why one place: every way to resume a tool loop from portable items (a checkpoint restored from JSON,
a continuation released at a cell's end, a ``Session`` that moves to another provider mid-loop)
leaves tool-call turns whose opaque reasoning is gone for good, and every provider that ties
reasoning to tool calls answers such a turn with a 400 by a rule of its own: Anthropic (the last
tool-use turn must start with its thinking), Gemini 3 (each function call of the current turn needs
its signature), DeepSeek (every tool-call message, in every later request, needs its
``reasoning_content``), OpenRouter (whatever its backing model requires). Decided per adapter, a
dialect that forgot the decision answered a resumed loop 400. Here the decision is made once:

* the adapter states what its API requires, as a :class:`ContinuityRule` (which tool-call turns
  must carry their reasoning, and the documented remedy when one cannot);
* :func:`plan_recovery` finds the tool-call turns of the request in that scope whose reasoning is
  not being sent, and why (:data:`GapCause`), and returns the ones to recover;
* the adapter renders the remedy on exactly those turns: ``as_text`` (the exchange written out as
  plain text with :func:`called_text` / :func:`result_text`, the recovery Anthropic documents and
  every API accepts, since no tool call is left to validate) or ``stand_in`` (Google's documented
  dummy signature).

A gap whose cause is unknown (a live loop, verbatim, never released) may be a bug: a rule with
``unexplained="send"`` lets the API answer it with its 400 instead of papering over it.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from agentlab.neutral.diagnostics import diagnostic
from agentlab.neutral.events import DiagnosticEvent
from agentlab.neutral.items import AssistantTextItem, PortableItem, SummaryItem, ToolCallItem, UserItem
from agentlab.neutral.request import ModelRequest

__all__ = [
    "NOTHING_REQUIRED",
    "ContinuityRule",
    "Gap",
    "GapCause",
    "RecoveryPlan",
    "Scope",
    "called_text",
    "plan_recovery",
    "result_text",
]

Scope = Literal["nothing", "last_turn", "current_turn", "every_turn"]
"""Which tool-call turns must carry their opaque reasoning back:

* ``nothing``: none (OpenAI Responses, local servers; a missing item only costs quality);
* ``last_turn``: the last assistant turn, when it holds tool calls (Anthropic's thinking rule);
* ``current_turn``: every tool-call turn after the last user (or summary) message (Gemini 3);
* ``every_turn``: every tool-call turn of the history, also of earlier loops (DeepSeek).
"""

GapCause = Literal["earlier_loop", "policy_drop", "released", "unexplained"]
"""Why a tool-call turn has no reasoning to send: it belongs to a loop before the last user message
(reasoning never crosses loops); ``continuation_policy="drop"`` withheld it; the loop's continuation
was released before it finished (``ModelRequest.continuation_released``); or none of these."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContinuityRule:
    """What one API requires of tool-call turns and their reasoning, and its remedy when it is gone."""

    requires: Scope
    remedy: Literal["as_text", "stand_in"] = "as_text"
    """``as_text``: the exchange goes as plain text (calls as assistant text, results as user text);
    ``stand_in``: the API's documented placeholder in place of the missing item (Gemini's dummy)."""
    unexplained: Literal["recover", "send"] = "recover"
    """A gap with no known cause: ``recover`` it too (the API cannot tell a turn that had no reasoning
    from a lost one, e.g. an adaptive Anthropic turn that did not think), or ``send`` it as it is so
    the API's 400 shows a bug (Gemini 3 signs every function call, so a missing signature is one)."""
    source: str = ""
    """Where the rule is stated (the provider's documentation or error text), for messages."""


NOTHING_REQUIRED = ContinuityRule(requires="nothing")


@dataclass(frozen=True, slots=True)
class Gap:
    """One tool-call turn to recover: its ``turn_id`` (``None`` for a turn without one), its calls."""

    turn_id: str | None
    call_ids: tuple[str, ...]
    cause: GapCause


@dataclass(frozen=True, slots=True)
class RecoveryPlan:
    """The turns of one request an adapter recovers, under ``rule`` (empty: send as built)."""

    rule: ContinuityRule
    gaps: tuple[Gap, ...] = ()

    @property
    def call_ids(self) -> frozenset[str]:
        """Every tool call of the turns to recover (how a renderer finds them in its messages)."""
        return frozenset(c for g in self.gaps for c in g.call_ids)

    def covers(self, call_ids: Collection[str]) -> bool:
        """Whether a message holding these tool calls is one to recover."""
        ids = self.call_ids
        return any(c in ids for c in call_ids)

    def text_notice(self, label: str) -> DiagnosticEvent | None:
        """The ``dangling_tool_use`` diagnostic for an ``as_text`` recovery (``None``: nothing recovered)."""
        if not self.gaps or self.rule.remedy != "as_text":
            return None
        causes = sorted({g.cause for g in self.gaps})
        return diagnostic(
            "dangling_tool_use",
            f"{len(self.gaps)} tool-use turn(s) have no {label} reasoning to send back ({', '.join(causes)}: "
            "an earlier loop, a restored checkpoint, a released continuation or a provider switch); "
            "their tool calls and results were sent as plain text so reasoning can stay on",
            tool_calls=sorted(self.call_ids),
        )


def called_text(name: str, arguments: str) -> str:
    """A tool call written out as assistant text (the ``as_text`` remedy)."""
    return f"[called tool {name} with {arguments}]"


def result_text(name: str, output: str, is_error: bool) -> str:
    """A tool result written out as user text (the ``as_text`` remedy)."""
    status = "error from" if is_error else "result of"
    return f"[{status} tool {name}: {output}]"


def arguments_text(value: object) -> str:
    """A parsed arguments object as the JSON text :func:`called_text` shows."""
    return json.dumps(value, ensure_ascii=False)


def _turns(items: tuple[PortableItem, ...]) -> list[tuple[str | None, list[str], bool, bool]]:
    """``(turn_id, call ids, in the current turn, is the last assistant turn)`` per assistant turn.

    The current turn is what follows the last user (or summary) message, as ``resumes_mid_turn``
    and Gemini read it; parts without a ``turn_id`` are a turn each.
    """
    turns: list[tuple[str | None, list[str], bool]] = []
    last_user = max((i for i, it in enumerate(items) if isinstance(it, UserItem | SummaryItem)), default=-1)
    open_turn = False
    for i, item in enumerate(items):
        if not isinstance(item, AssistantTextItem | ToolCallItem):
            open_turn = False
            continue
        if not open_turn or item.turn_id is None or item.turn_id != turns[-1][0]:
            turns.append((item.turn_id, [], i > last_user))
            open_turn = True
        if isinstance(item, ToolCallItem):
            turns[-1][1].append(item.call_id)
    n = len(turns)
    return [(t, calls, current, k == n - 1) for k, (t, calls, current) in enumerate(turns)]


def _cause(req: ModelRequest, current: bool) -> GapCause:
    if not current:
        return "earlier_loop"
    if req.continuation_policy == "drop":
        return "policy_drop"
    return "released" if req.continuation_released else "unexplained"


def _in_scope(scope: Scope, current: bool, last: bool) -> bool:
    if scope == "every_turn":
        return True
    if scope == "current_turn":
        return current
    return scope == "last_turn" and last


def plan_recovery(req: ModelRequest, rule: ContinuityRule, carried: Collection[str | None]) -> RecoveryPlan:
    """The tool-call turns of ``req`` the adapter must recover under ``rule``.

    ``carried``: the ``turn_id`` of every turn whose reasoning the adapter is sending back (its
    usable continuation items). A turn in the rule's scope that holds tool calls and is not carried is
    a gap; it is recovered unless its cause is unknown and the rule says to ``send`` such a turn.
    """
    if rule.requires == "nothing":
        return RecoveryPlan(rule)
    gaps: list[Gap] = []
    for turn_id, calls, current, last in _turns(req.items):
        if not calls or not _in_scope(rule.requires, current, last):
            continue
        if turn_id is not None and turn_id in carried:
            continue
        cause = _cause(req, current)
        if cause == "unexplained" and rule.unexplained == "send":
            continue
        gaps.append(Gap(turn_id, tuple(calls), cause))
    return RecoveryPlan(rule, tuple(gaps))
