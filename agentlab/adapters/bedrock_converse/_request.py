"""``ModelRequest`` -> the Converse request (the keyword arguments of boto3's ``converse``).

Thinking is switched on through ``additionalModelRequestFields``, in the words of the model family
behind the id (Converse passes that field to the model as it is):

* Claude (``anthropic.claude-*``): ``thinking: {type: enabled, budget_tokens}`` (budgeted; the
  budget from ``budget_tokens`` or the effort), or ``{type: adaptive}`` with ``output_config.effort``;
  ``display: omitted`` when asked. ``maxTokens`` must exceed the budget.
* OpenAI models on Bedrock (``openai.*``): ``reasoning_effort`` (``low``/``medium``/``high``).
* Kimi, DeepSeek and others reason by themselves: nothing is sent.

This loop's reasoning blocks go back verbatim, each before the part that followed it in its turn
(by block ``index``), in the same assistant message; blocks made by another provider, API, model or
endpoint (another region) are dropped with one diagnostic. Neutral cache hints become ``cachePoint``
blocks after the system prompt, the tools and the history (Claude only: other families refuse them).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from agentlab.adapters import built_request
from agentlab.adapters.bedrock_converse._errors import PROVIDER
from agentlab.adapters.bedrock_converse._stream import API
from agentlab.adapters.built_request import BuiltRequest, check_provider_options, knobs
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.items import (
    AssistantPart,
    AssistantTextItem,
    OtherItem,
    ProviderReasoningItem,
    SystemItem,
    ToolResultItem,
)
from agentlab.neutral.recovery import ContinuityRule, arguments_text, called_text, plan_recovery, result_text
from agentlab.neutral.request import ModelRequest

__all__ = ["build_request", "check_options", "drop_rule", "family"]

MIN_BUDGET = 1024
ANSWER_ROOM = 4096
_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 4096, "high": 8192, "xhigh": 16384, "max": 32000}
_OPENAI_EFFORT = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}
_CACHE_POINT: dict[str, Any] = {"cachePoint": {"type": "default"}}
RULE = ContinuityRule(
    requires="last_turn",
    source="Claude on Bedrock: 'a final assistant message must start with a thinking block'",
)
"""Claude with thinking on: the last assistant turn, when it holds tool calls, starts with its reasoning."""


def family(model: str) -> str:
    """``claude``, ``gpt`` (OpenAI models), ``kimi``, ``deepseek`` or ``other``, from the model id."""
    m = model.lower()
    for name, marks in (
        ("claude", ("anthropic.claude", "sim-bedrock-claude")),
        ("gpt", ("openai.", "sim-bedrock-openai")),
        ("kimi", ("moonshot", "kimi")),
        ("deepseek", ("deepseek",)),
    ):
        if any(k in m for k in marks):
            return name
    return "other"


def drop_rule(model: str) -> str | None:
    """Why ``continuation_policy="drop"`` cannot run with reasoning on for ``model`` (``None``: it can).

    Only Claude refuses a tool-use turn without its reasoning block; OpenAI models, Kimi and the
    others take the turn without it (their reasoning is lost, which is what ``drop`` measures).
    """
    if family(model) == "claude":
        return (
            "with thinking on, Claude on Bedrock requires the current tool loop's reasoning blocks to go "
            "back unmodified (ValidationException otherwise)"
        )
    return None


def _claude_thinking(req: ModelRequest, extra: dict[str, Any]) -> int | None:
    """Adds Claude's thinking fields; returns the budget (``None``: adaptive or off)."""
    r = req.reasoning
    if r is None or not r.enabled:
        return None
    display = {"display": r.display} if r.display else {}
    if r.adaptive:
        extra["thinking"] = {"type": "adaptive", **display}
        if r.effort is not None:
            extra["output_config"] = {"effort": r.effort}
        return None
    budget = r.budget_tokens if r.budget_tokens is not None else _BUDGETS.get(r.effort or "medium", 4096)
    if budget < MIN_BUDGET:
        raise InvalidSettingsError(f"bedrock: budget_tokens must be >= {MIN_BUDGET} for Claude, got {budget}")
    if req.max_output_tokens is not None and req.max_output_tokens <= budget:
        raise InvalidSettingsError(
            f"bedrock: max_output_tokens ({req.max_output_tokens}) must exceed budget_tokens ({budget})"
        )
    extra["thinking"] = {"type": "enabled", "budget_tokens": budget, **display}
    return budget


def _reasoning_fields(req: ModelRequest, fam: str) -> tuple[dict[str, Any], int | None, str | None]:
    """(additionalModelRequestFields, thinking budget, reasoning mode) for the model family."""
    extra: dict[str, Any] = {}
    if fam == "claude":
        budget = _claude_thinking(req, extra)
        mode = (extra.get("thinking") or {}).get("type")
        return extra, budget, mode
    r = req.reasoning
    if fam == "gpt" and r is not None and r.enabled and r.effort is not None:
        extra["reasoning_effort"] = _OPENAI_EFFORT[r.effort]
        return extra, None, extra["reasoning_effort"]
    return extra, None, None


def check_options(req: ModelRequest, adapter: object | None = None) -> None:
    """The knobs Converse refuses, before anything is sent (the build runs the same)."""
    if req.tool_choice == "none" and req.tools:
        raise InvalidSettingsError(
            "bedrock: Converse has no tool_choice 'none'; leave the tools out of this call instead"
        )
    if req.output is not None:
        raise InvalidSettingsError(
            "bedrock: structured output (output_type) is not supported on Converse here"
        )
    _reasoning_fields(req, family(req.model))


def _block_back(item: ProviderReasoningItem) -> dict[str, Any]:
    """A reasoning block as boto3 takes it: ``redactedContent`` as bytes (botocore base64-encodes it)."""
    block: dict[str, Any] = json.loads(item.unseal(provider=PROVIDER, api=API))
    rc = block.get("reasoningContent") or {}
    if isinstance(rc.get("redactedContent"), str):
        rc["redactedContent"] = base64.b64decode(rc["redactedContent"])
    return block


class _Messages:
    """Converse ``messages`` with this loop's reasoning re-interleaved by (turn_id, index)."""

    def __init__(self, by_turn: dict[str, list[ProviderReasoningItem]]) -> None:
        self.by_turn = by_turn
        self.messages: list[dict[str, Any]] = []
        self.system: list[dict[str, Any]] = []
        self.pending: list[ProviderReasoningItem] = []
        self.turn: str | None = None
        self.sent = 0
        self.trailing = 0
        self.carried: set[str] = set()  # turns whose reasoning went back

    def push(self, role: str, block: dict[str, Any]) -> None:
        if self.messages and self.messages[-1]["role"] == role:
            self.messages[-1]["content"].append(block)
        else:
            self.messages.append({"role": role, "content": [block]})

    def end_turn(self) -> None:
        self.trailing += len(self.pending)
        self.pending = []
        self.turn = None

    def assistant(self, item: AssistantPart) -> None:
        if item.turn_id != self.turn:
            self.end_turn()
            self.turn = item.turn_id
            self.pending = list(self.by_turn.pop(item.turn_id, ())) if item.turn_id else []
        while self.pending and (item.index is None or self.pending[0].index < item.index):
            r = self.pending.pop(0)
            self.push("assistant", _block_back(r))
            self.sent += 1
            self.carried.add(r.turn_id)
        if isinstance(item, AssistantTextItem):
            if item.text:
                self.push("assistant", {"text": item.text})
            return
        try:
            args = json.loads(item.arguments or "{}")
        except ValueError:
            args = {}
        use = {"toolUseId": item.call_id, "name": item.name, "input": args if isinstance(args, dict) else {}}
        self.push("assistant", {"toolUse": use})

    def other(self, item: OtherItem) -> None:
        self.end_turn()
        if isinstance(item, SystemItem):
            self.system.append({"text": item.text})
        elif isinstance(item, ToolResultItem):
            result = {
                "toolUseId": item.call_id,
                "content": [{"text": item.output}],
                "status": "error" if item.is_error else "success",
            }
            self.push("user", {"toolResult": result})
        elif item.text:
            self.push("user", {"text": item.text})
        else:
            raise InvalidSettingsError(f"bedrock: empty {item.kind} text; Converse rejects empty text blocks")


def _messages(req: ModelRequest, base_url: str | None, out: BuiltRequest[dict[str, Any]]) -> _Messages:
    by_turn, elsewhere = built_request.reasoning_by_turn(
        req.continuation, lambda r: r.matches(provider=PROVIDER, api=API, model=req.model, base_url=base_url)
    )
    orphans = built_request.orphaned(by_turn, req.items)
    walk = _Messages(by_turn)
    built_request.walk_history(req.items, walk)
    walk.end_turn()
    for msg in walk.messages:  # tool results open the user turn that answers a toolUse turn
        if msg["role"] == "user":
            msg["content"].sort(key=lambda b: "toolResult" not in b)
    out.reasoning_sent = walk.sent
    trailing = ("trailing", "after the last part of their turn", walk.trailing)
    built_request.report_dropped(out, PROVIDER, len(elsewhere), orphans, trailing)
    return walk


def _recover_dangling(req: ModelRequest, walk: _Messages, out: BuiltRequest[dict[str, Any]]) -> None:
    """Anthropic's documented recovery when the last tool-use turn's reasoning is gone for good.

    A restored checkpoint, a released continuation or a session moved from another provider leaves
    a tool-use turn with no reasoning block, which Claude refuses with thinking on: its calls and
    results go as plain text (:mod:`agentlab.neutral.recovery`), so thinking can stay on.
    """
    msgs = walk.messages
    last = next((i for i in range(len(msgs) - 1, -1, -1) if msgs[i]["role"] == "assistant"), None)
    if last is None or last + 1 >= len(msgs):
        return
    calls = {b["toolUse"]["toolUseId"]: b["toolUse"] for b in msgs[last]["content"] if "toolUse" in b}
    plan = plan_recovery(req, RULE, walk.carried)
    if not plan.covers(calls):
        return
    msgs[last]["content"] = [
        {"text": called_text(b["toolUse"]["name"], arguments_text(b["toolUse"]["input"]))}
        if "toolUse" in b
        else b
        for b in msgs[last]["content"]
    ]
    answer = []
    for b in msgs[last + 1]["content"]:
        r = b.get("toolResult")
        if r is not None and r["toolUseId"] in calls:
            text = "".join(c.get("text", "") for c in r["content"])
            b = {"text": result_text(calls[r["toolUseId"]]["name"], text, r.get("status") == "error")}
        answer.append(b)
    msgs[last + 1]["content"] = answer
    notice = plan.text_notice("Claude-on-Bedrock")
    if notice is not None:
        out.diagnostics.append(notice)


def _tool_config(req: ModelRequest, cache: bool) -> dict[str, Any]:
    tools: list[dict[str, Any]] = [
        {
            "toolSpec": {
                "name": t.name,
                "description": t.description or t.name,
                "inputSchema": {"json": t.parameters},
            }
        }
        for t in req.tools
    ]
    if cache:
        tools.append(dict(_CACHE_POINT))
    config: dict[str, Any] = {"tools": tools}
    if req.tool_choice == "required":
        config["toolChoice"] = {"any": {}}
    elif req.tool_choice.startswith("tool:"):
        config["toolChoice"] = {"tool": {"name": req.tool_choice[5:]}}
    return config


_SAMPLING = {"temperature": "temperature", "top_p": "topP", "stop_sequences": "stopSequences"}


def _inference(req: ModelRequest, budget: int | None) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if req.max_output_tokens is not None:
        config["maxTokens"] = req.max_output_tokens
    elif budget is not None:
        config["maxTokens"] = budget + ANSWER_ROOM
    config.update(knobs(req, _SAMPLING))
    return config


def build_request(req: ModelRequest, *, base_url: str | None) -> BuiltRequest[dict[str, Any]]:
    """The ``converse``/``converse_stream`` keyword arguments for ``req``, or ``InvalidSettingsError``."""
    check_provider_options(PROVIDER, req)
    check_options(req)
    fam = family(req.model)
    out: BuiltRequest[dict[str, Any]] = BuiltRequest(body={})
    extra, budget, out.reasoning_mode = _reasoning_fields(req, fam)
    walk = _messages(req, base_url, out)
    if not walk.messages:
        raise InvalidSettingsError("bedrock: the request has no user or assistant messages")
    if fam == "claude" and out.reasoning_mode is not None:
        _recover_dangling(req, walk, out)
    hints = req.cache if fam == "claude" and req.cache is not None and req.cache.enabled else None
    body: dict[str, Any] = {"modelId": req.model, "messages": walk.messages}
    if walk.system:
        body["system"] = walk.system + ([dict(_CACHE_POINT)] if hints and hints.system else [])
    inference = _inference(req, budget)
    if inference:
        body["inferenceConfig"] = inference
    if req.tools:
        body["toolConfig"] = _tool_config(req, bool(hints and hints.tools))
    if hints and hints.history and len(walk.messages) > 1:
        walk.messages[-1]["content"].append(dict(_CACHE_POINT))
    opts = req.options_for(PROVIDER)
    extra.update(opts.pop("additionalModelRequestFields", None) or {})
    if extra:
        body["additionalModelRequestFields"] = extra
    body.update(opts)
    out.body = body
    return out
