"""A Converse request as the simulated model reads it: thinking settings, the task, the loop so far.

Why its own module: the reply (:mod:`.converse`) and the rules (:mod:`.rules`) both read the same
request, and the parsing of Converse's block shapes (``text``, ``toolUse``, ``toolResult``,
``reasoningContent``, ``cachePoint``) is written once here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentlab.sim.anthropic.messages import _TEXT_RESULT as TEXT_RESULT
from agentlab.sim.anthropic.messages import _past_calls as past_calls
from agentlab.sim.bedrock.errors import model_error, validation
from agentlab.sim.bedrock.rules import CLAUDE, OPENAI
from agentlab.sim.caching import Breakpoint
from agentlab.sim.reasoner import PastCall, Situation, ToolChoice, ToolDef
from agentlab.sim.tokenizer import tokenize

DEFAULT_MAX_TOKENS = 4096
_START = (
    "A conversation must start with a user message. Try again with a conversation that starts with a "
    "user message."
)
_EFFORT = {"low": 1, "medium": 2, "high": 4, "max": 6}


@dataclass(frozen=True)
class Thinking:
    """Whether the model reasons, how much (planner level), and whether the text is shown."""

    on: bool
    level: int
    omitted: bool = False


def _claude_thinking(extra: dict[str, Any], max_tokens: int) -> Thinking:
    raw = extra.get("thinking")
    if raw is None:
        return Thinking(False, 0)
    kind = raw.get("type") if isinstance(raw, dict) else None
    omitted = isinstance(raw, dict) and raw.get("display") == "omitted"
    if kind == "enabled":
        budget = raw.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            raise model_error("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if budget >= max_tokens:
            raise model_error("`max_tokens` must be greater than `thinking.budget_tokens`.")
        return Thinking(True, min(6, -(-(budget - 1024) // 1024)), omitted)
    if kind == "adaptive":
        effort = (extra.get("output_config") or {}).get("effort", "high")
        return Thinking(True, _EFFORT.get(str(effort), 4), omitted)
    if kind == "disabled":
        return Thinking(False, 0)
    raise model_error(
        f"thinking: Input tag '{kind}' found using 'type' does not match any of the expected tags: "
        "'adaptive', 'disabled', 'enabled'"
    )


def thinking(family: str, req: dict[str, Any], max_tokens: int) -> Thinking:
    """Claude: ``additionalModelRequestFields.thinking``; OpenAI: ``reasoning_effort``; Kimi: always on."""
    extra = req.get("additionalModelRequestFields") or {}
    if not isinstance(extra, dict):
        raise validation("additionalModelRequestFields must be a JSON object.")
    if family == CLAUDE:
        return _claude_thinking(extra, max_tokens)
    if family == OPENAI:
        effort = extra.get("reasoning_effort", "medium")
        if effort not in ("low", "medium", "high"):
            raise validation(
                f"The value {effort!r} for reasoning_effort is not supported; use low, medium or high."
            )
        return Thinking(True, _EFFORT[str(effort)])
    return Thinking(True, 2)


def max_tokens(req: dict[str, Any]) -> int:
    """``inferenceConfig.maxTokens`` (the model's default when absent)."""
    value = (req.get("inferenceConfig") or {}).get("maxTokens", DEFAULT_MAX_TOKENS)
    if not isinstance(value, int) or value < 1:
        raise validation(
            "1 validation error detected: Value at 'inferenceConfig.maxTokens' failed to satisfy "
            "constraint: Member must have value greater than or equal to 1"
        )
    return value


def messages(req: dict[str, Any]) -> list[dict[str, Any]]:
    """``messages``: required, alternating roles are the client's job (checked loosely here)."""
    msgs = req.get("messages")
    if not isinstance(msgs, list) or not msgs or not all(isinstance(m, dict) for m in msgs):
        raise validation(_START)
    if msgs[0].get("role") != "user":
        raise validation(_START)
    return msgs


def _blocks(m: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in m.get("content") or [] if isinstance(b, dict)]


def result_text(result: dict[str, Any]) -> str:
    """A ``toolResult``'s content as text (``text`` and ``json`` parts joined)."""
    parts = []
    for c in result.get("content") or []:
        if isinstance(c, dict) and "text" in c:
            parts.append(str(c["text"]))
        elif isinstance(c, dict) and "json" in c:
            parts.append(json.dumps(c["json"]))
    return "".join(parts)


def tools(req: dict[str, Any]) -> tuple[ToolDef, ...]:
    """``toolConfig.tools[].toolSpec`` as the planner takes them."""
    out = []
    for t in (req.get("toolConfig") or {}).get("tools") or []:
        spec = t.get("toolSpec") if isinstance(t, dict) else None
        if isinstance(spec, dict):
            schema = (spec.get("inputSchema") or {}).get("json") or {}
            out.append(ToolDef(str(spec.get("name")), str(spec.get("description") or ""), dict(schema)))
    return tuple(out)


def _choice(req: dict[str, Any], declared: tuple[ToolDef, ...]) -> ToolChoice:
    raw = (req.get("toolConfig") or {}).get("toolChoice") or {"auto": {}}
    if "tool" in raw:
        name = str((raw.get("tool") or {}).get("name"))
        if name not in {t.name for t in declared}:
            raise validation(f"The tool {name} in toolChoice is not defined in toolConfig.tools.")
        return ToolChoice("tool", name)
    return ToolChoice("required" if "any" in raw else "auto")


def _as_messages_blocks(m: dict[str, Any]) -> dict[str, Any]:
    """A Converse message in the Messages shape the shared loop reader takes (tool exchanges as text too)."""
    out: list[dict[str, Any]] = []
    for b in _blocks(m):
        if "text" in b:
            out.append({"type": "text", "text": str(b["text"])})
        elif "toolUse" in b:
            u = b["toolUse"] or {}
            out.append(
                {"type": "tool_use", "id": u.get("toolUseId"), "name": u.get("name"), "input": u.get("input")}
            )
        elif "toolResult" in b:
            r = b["toolResult"] or {}
            out.append({"type": "tool_result", "tool_use_id": r.get("toolUseId"), "content": result_text(r)})
    return {"role": m.get("role"), "content": out}


def _task_index(msgs: list[dict[str, Any]]) -> int:
    """The last user message with text that is not a tool exchange written out as text (a recovery)."""
    last = -1
    for i, m in enumerate(msgs):
        texts = [str(b["text"]) for b in _blocks(m) if "text" in b]
        if m.get("role") == "user" and texts and not all(TEXT_RESULT.match(t) for t in texts):
            last = i
    return last


def _calls(loop: list[dict[str, Any]]) -> tuple[PastCall, ...]:
    return past_calls([_as_messages_blocks(m) for m in loop])


def situation(family: str, req: dict[str, Any], msgs: list[dict[str, Any]], level: int) -> Situation:
    """The task (last user text), the loop's calls, and (OpenAI family) whether its plan came back.

    An OpenAI model's plan lives in its ``redactedContent``: a tool-use turn sent back without it
    makes the model re-plan (more reasoning, its last calls repeated), as the OpenAI simulator does.
    """
    declared = tools(req)
    at = _task_index(msgs)
    task = " ".join(str(b["text"]) for b in _blocks(msgs[at]) if "text" in b) if at >= 0 else ""
    loop = msgs[at + 1 :]
    known = True
    if family == OPENAI:
        known = all(
            any("reasoningContent" in b for b in _blocks(m))
            for m in loop
            if m.get("role") == "assistant" and any("toolUse" in b for b in _blocks(m))
        )
    return Situation(task, declared, _calls(loop), True, known, level, _choice(req, declared))


def _block_text(b: dict[str, Any]) -> str:
    if "text" in b:
        return str(b["text"])
    if "toolUse" in b:
        return json.dumps(b["toolUse"], sort_keys=True)
    if "toolResult" in b:
        return result_text(b["toolResult"] or {})
    return ""


def prompt_tokens(req: dict[str, Any], msgs: list[dict[str, Any]]) -> tuple[list[str], list[Breakpoint]]:
    """The prompt's tokens in cache order (tools, system, messages) and its ``cachePoint`` marks."""
    tokens: list[str] = []
    marks: list[Breakpoint] = []

    def add(b: dict[str, Any], text: str) -> None:
        if "cachePoint" in b:
            ttl = (b.get("cachePoint") or {}).get("ttl")
            marks.append(Breakpoint(len(tokens), "1h" if ttl == "1h" else "5m"))
        else:
            tokens.extend(tokenize(text))
            tokens.append("\n")

    for t in (req.get("toolConfig") or {}).get("tools") or []:
        if isinstance(t, dict):
            add(t, json.dumps(t, sort_keys=True))
    for b in req.get("system") or []:
        if isinstance(b, dict):
            add(b, "system: " + str(b.get("text", "")))
    for m in msgs:
        for b in _blocks(m):
            add(b, f"{m.get('role')}: {_block_text(b)}")
    return tokens, marks
