"""``ModelRequest`` -> the Chat Completions body (JSON bytes) for every dialect, its rules checked first.

Messages: system text -> ``role: system``; user and summary text -> ``role: user``; the portable
assistant parts of one model turn (same ``turn_id``) -> one ``role: assistant`` message (``content``
and ``tool_calls``, the API's call ids); each tool result -> ``role: tool`` with its ``tool_call_id``.

Continuity: this loop's opaque items (``request.continuation``) go back on the assistant message of
their turn, verbatim: a ``content`` dialect's joined text under the field it arrived in
(``reasoning_content``/``reasoning``), OpenRouter's merged ``reasoning_details`` as the list they
were. Items made by another provider, API, model or endpoint, or whose turn is not in the history,
are dropped and counted (``reasoning_item_dropped``); with ``send_reasoning=False`` (a local server
that takes none) they are dropped as ``policy_drop``.

Recovery (reasoning on): a tool-call assistant message with no reasoning to send (an earlier run's
exchange, a restored checkpoint, a released continuation, a provider switch) gets the 400 of a server
that requires it (DeepSeek: "reasoning_content ... must be passed back", every turn; OpenRouter:
what its backing model requires, e.g. Gemini's current turn). Which messages the dialect's rule
(``Dialect.continuity``) requires and lack their reasoning is decided by
:func:`agentlab.neutral.recovery.plan_recovery`; those exchanges are sent as plain text: the calls
become assistant text ``[called tool NAME with ARGS]``, their results user text ``[result of tool
NAME: OUTPUT]``, and a ``dangling_tool_use`` diagnostic names the calls (the same documented
recovery as the Anthropic adapter's). Reasoning stays on; what the model loses is the structure of
that exchange and the thinking behind it.
The recovery is for reasoning that is *gone*, never for reasoning withheld on purpose: with
``send_reasoning=False`` this loop's tool-call turns go as tool calls without it (they count as
carried for the plan), so DeepSeek answers its 400 at the loop's second step. Rewriting them as text
instead would hide every tool result of the loop from the model on every step, and the loop would
spend its whole step budget calling the same tools again.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from agentlab.adapters import built_request
from agentlab.adapters.built_request import BuiltRequest, check_provider_options, knobs
from agentlab.adapters.openai_chat._dialect import API, DETAILS, Dialect
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.items import (
    AssistantPart,
    AssistantTextItem,
    OtherItem,
    ProviderReasoningItem,
    SystemItem,
    UserText,
)
from agentlab.neutral.recovery import RecoveryPlan, called_text, plan_recovery, result_text
from agentlab.neutral.request import ModelRequest, ToolSpec, named_tool, strict_schema_problem

__all__ = ["build_request", "check_knobs"]

log = logging.getLogger("agentlab.adapters.openai_chat")


def check_knobs(dialect: Dialect, req: ModelRequest) -> None:
    """The neutral knobs Chat Completions has no field for here (refused, never silently dropped)."""
    name = dialect.name
    if req.metadata:
        raise InvalidSettingsError(f"{name}: {dialect.label} takes no request metadata; remove metadata")
    if req.service_tier is not None:
        raise InvalidSettingsError(
            f"{name}: service_tier {req.service_tier!r} is not offered by {dialect.label}; remove it"
        )
    dialect.reasoning_body(req.model, req.reasoning)
    if req.output is not None and dialect.no_json_schema is not None:
        raise InvalidSettingsError(
            f"{name}: output_type {req.output.name!r} cannot be sent: {dialect.no_json_schema}"
        )
    for t in req.tools:
        if t.strict is True and (problem := strict_schema_problem(t.parameters)) is not None:
            raise InvalidSettingsError(f"{name}: tool {t.name!r} is strict but its schema is not: {problem}")


def _tool(t: ToolSpec) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": t.name, "description": t.description, "parameters": t.parameters}
    if t.strict is True:
        fn["strict"] = True
    return {"type": "function", "function": fn}


def _tool_choice(req: ModelRequest) -> Any:
    forced = named_tool(req.tool_choice)
    if forced is not None:
        return {"type": "function", "function": {"name": forced}}
    return req.tool_choice


class _Messages:
    """Walks the portable history once, building ``messages`` with this loop's reasoning put back."""

    _shaped_repr = True

    def __init__(
        self, dialect: Dialect, reasoning: dict[str, list[ProviderReasoningItem]], plan: RecoveryPlan
    ) -> None:
        self.dialect = dialect
        self.reasoning = reasoning
        self.plan = plan
        self.messages: list[dict[str, Any]] = []
        self.turn: str | None = None
        self.open: dict[str, Any] | None = None
        self.recovered: dict[str, str] = {}  # call id -> tool name, of exchanges sent as text
        self.sent = 0

    def __repr__(self) -> str:
        return f"<_Messages messages={len(self.messages)} sent={self.sent} recovered={len(self.recovered)}>"

    def close_turn(self) -> None:
        msg = self.open
        self.open = None
        if msg is None:
            return
        turn, self.turn = self.turn, None
        items = self.reasoning.pop(turn, []) if turn is not None else []
        if items:
            self._attach(msg, items)
        elif msg.get("tool_calls") and self.plan.covers([c["id"] for c in msg["tool_calls"]]):
            self._as_text(msg)
        self.messages.append(msg)

    def _attach(self, msg: dict[str, Any], items: list[ProviderReasoningItem]) -> None:
        if self.dialect.carry == "details":
            msg[DETAILS] = [json.loads(i.unseal(provider=self.dialect.name, api=API)) for i in items]
        else:
            for i in items:
                msg[i.block_type] = json.loads(i.unseal(provider=self.dialect.name, api=API))
        self.sent += len(items)

    def _as_text(self, msg: dict[str, Any]) -> None:
        lines = [msg["content"]] if msg.get("content") else []
        for call in msg.pop("tool_calls"):
            fn = call["function"]
            self.recovered[call["id"]] = fn["name"]
            lines.append(called_text(fn["name"], fn["arguments"]))
        msg["content"] = "\n".join(lines)

    def assistant(self, item: AssistantPart) -> None:
        if self.open is None or item.turn_id is None or item.turn_id != self.turn:
            self.close_turn()
            self.open = {"role": "assistant", "content": None}
            self.turn = item.turn_id
        msg = self.open
        if isinstance(item, AssistantTextItem):
            msg["content"] = (msg["content"] or "") + item.text
            return
        fn = {"name": item.name, "arguments": item.arguments}
        call = {"id": item.call_id, "type": "function", "function": fn}
        msg.setdefault("tool_calls", []).append(call)

    def other(self, item: OtherItem) -> None:
        self.close_turn()
        if isinstance(item, SystemItem):
            self.messages.append({"role": "system", "content": item.text})
        elif isinstance(item, UserText):
            self.messages.append({"role": "user", "content": item.text})
        elif item.call_id in self.recovered:
            name = self.recovered[item.call_id]
            line = result_text(name, item.output, item.is_error)
            last = self.messages[-1] if self.messages else None
            if last is not None and last.get("role") == "user" and last.get("_recovered"):
                last["content"] += "\n" + line
            else:
                self.messages.append({"role": "user", "content": line, "_recovered": True})
        else:
            self.messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.output})


def _usable(item: ProviderReasoningItem, dialect: Dialect, model: str, base_url: str | None) -> bool:
    kinds = (DETAILS,) if dialect.carry == "details" else ("reasoning_content", "reasoning")
    return (
        item.block_type in kinds
        and item.matches(provider=dialect.name, api=API, model=model)
        and item.base_url == base_url
    )


def _messages(
    req: ModelRequest, dialect: Dialect, base_url: str | None, send: bool, out: BuiltRequest[bytes]
) -> list[dict[str, Any]]:
    by_turn, elsewhere = built_request.reasoning_by_turn(
        req.continuation, lambda opaque: _usable(opaque, dialect, req.model, base_url)
    )
    for opaque in elsewhere:
        log.debug("%s: dropping reasoning item not made here: %r", dialect.name, opaque)
    policy = 0
    withheld: frozenset[str] = frozenset()
    if not send:
        policy = sum(len(v) for v in by_turn.values())
        withheld, by_turn = frozenset(by_turn), {}
    orphans = built_request.orphaned(by_turn, req.items)
    plan = plan_recovery(req, dialect.rule(req.model, req.reasoning), carried=by_turn.keys() | withheld)
    walk = _Messages(dialect, by_turn, plan)
    built_request.walk_history(req.items, walk)
    walk.close_turn()
    out.reasoning_sent = walk.sent
    withheld_row = ("policy_drop", "this adapter sends no reasoning back (send_reasoning=False)", policy)
    built_request.report_dropped(out, dialect.name, len(elsewhere), orphans, withheld_row)
    notice = plan.text_notice(dialect.label) if walk.recovered else None
    if notice is not None:
        out.diagnostics.append(notice)
    for m in walk.messages:
        m.pop("_recovered", None)
    return walk.messages


_KNOBS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_output_tokens": "max_tokens",
    "stop_sequences": "stop",
}


def _knobs(req: ModelRequest, body: dict[str, Any]) -> None:
    body.update(knobs(req, _KNOBS))
    if req.user_id is not None:
        body["user"] = req.user_id
    if req.tools:
        body["tools"] = [_tool(t) for t in req.tools]
        body["tool_choice"] = _tool_choice(req)
        if not req.parallel_tool_calls:
            body["parallel_tool_calls"] = False
    if req.output is not None:
        schema: dict[str, Any] = {"name": req.output.name, "schema": req.output.json_schema}
        if req.output.strict:
            schema["strict"] = True
        body["response_format"] = {"type": "json_schema", "json_schema": schema}


def build_request(
    req: ModelRequest, *, dialect: Dialect, base_url: str | None, send_reasoning: bool
) -> BuiltRequest[bytes]:
    """The ``/chat/completions`` body for ``req`` as JSON bytes, or ``InvalidSettingsError``."""
    check_provider_options(dialect.name, req)  # the spec's declared rules (provider.py)
    opts = req.options_for(dialect.name)
    check_knobs(dialect, req)
    out: BuiltRequest[bytes] = BuiltRequest(body=b"")
    messages = _messages(req, dialect, base_url, send_reasoning, out)
    if not messages:
        raise InvalidSettingsError(f"{dialect.name}: the request has no messages")
    body: dict[str, Any] = {"model": req.model, "messages": messages}
    reasoning = dialect.reasoning_body(req.model, req.reasoning)
    body.update(reasoning)
    out.reasoning_mode = _mode(reasoning)
    _knobs(req, body)
    body["stream"] = req.stream
    if req.stream:
        body["stream_options"] = {"include_usage": True}
    body.update(opts)
    out.body = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return out


def _mode(fields: dict[str, Any]) -> str | None:
    """What reasoning configuration was sent, for the run's record (``None``: the server's default)."""
    if "reasoning_effort" in fields:
        return str(fields["reasoning_effort"])
    for key in ("thinking", "reasoning"):
        value = fields.get(key)
        if isinstance(value, dict):
            inner = value.get("type", value.get("effort", value.get("max_tokens", value.get("enabled"))))
            return str(inner)
    if "chat_template_kwargs" in fields:
        return "disabled"
    return None
