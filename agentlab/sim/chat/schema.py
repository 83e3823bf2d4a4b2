"""Reading a Chat Completions request: field checks per dialect, tool pairing, the planner's view.

Why per dialect: the three hosts validate differently, and a client must fail offline where it
would fail in production, and only there.

* DeepSeek deserializes the body strictly by type (a Rust serde parser): a message ``role`` outside
  system/user/assistant/tool, a ``thinking.type`` other than enabled/disabled or a non-list
  ``messages`` is a 400 "Failed to deserialize the JSON body into the target type: ...". Unknown
  *fields* are ignored (serde's default; no quoted DeepSeek error names an unknown field), so they
  are ignored here too. The real text ends with " at line 1 column N"; the simulator leaves the
  position out (it reads the parsed body, not the bytes).
* OpenRouter ignores parameters a model does not support (its documented behaviour) and relays the
  backing vendor's refusals (tool pairing in the vendor's words, wrapped as "Provider returned
  error").
* Local servers (llama.cpp, vLLM, Ollama) are lenient: extra fields are accepted and ignored, and
  tool pairing is not checked (their chat templates render whatever arrives).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentlab.sim.chat import errors as CE
from agentlab.sim.chat.dialects import ROUTER_PROVIDER, Profile
from agentlab.sim.errors import SimError
from agentlab.sim.reasoner import PastCall, Situation, ToolChoice, ToolDef

ROLES = ("system", "developer", "user", "assistant", "tool")
DEEPSEEK_ROLES = ("system", "user", "assistant", "tool")
_DESER = "Failed to deserialize the JSON body into the target type: "
DS_MISSING_RESULTS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. (insufficient tool messages following tool_calls message)"
)
DS_ORPHAN_RESULT = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
OPENAI_MISSING_RESULTS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
OPENAI_ORPHAN_RESULT = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
    "'tool_calls'."
)
CLAUDE_MISSING_RESULTS = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each "
    "`tool_use` block must have a corresponding `tool_result` block in the next message."
)
CLAUDE_ORPHAN_RESULT = (
    "messages.{i}.content.0: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. Each "
    "`tool_result` block must have a corresponding `tool_use` block in the previous message."
)
GEMINI_COUNT = (
    "Please ensure that the number of function response parts is equal to the number of function call "
    "parts of the function call turn."
)
DS_EFFORTS = {"minimal": 1, "low": 1, "medium": 2, "high": 2, "xhigh": 2, "max": 4, "ultra": 4}
ROUTER_EFFORTS = {"none": -1, "minimal": 0, "low": 1, "medium": 2, "high": 4, "xhigh": 6}
LOCAL_EFFORTS = {"none": -1, "low": 1, "medium": 2, "high": 4}
XAI_EFFORTS = {"low": 1, "high": 4}
"""grok-3-mini's two levels (docs.x.ai "Reasoning"); it always reasons."""


def _variant(path: str, value: object, allowed: Sequence[str]) -> SimError:
    expected = ", ".join(f"`{a}`" for a in allowed)
    return CE.deepseek_error(400, f"{_DESER}{path}: unknown variant `{value}`, expected one of {expected}")


def validate(p: Profile, req: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The request's messages, after the dialect's own checks (see the module docstring)."""
    messages = req.get("messages")
    if p.dialect == "deepseek":
        _deepseek_types(req)
    if not isinstance(messages, list) or not messages:
        raise _bad(p, "messages: a non-empty list of messages is required", "messages")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            raise _bad(p, f"messages[{i}].role must be one of {', '.join(ROLES)}", "messages")
        bad = _tool_calls_problem(m.get("tool_calls"))
        if bad:
            raise _bad(
                p, f"{_DESER if p.dialect == 'deepseek' else ''}messages[{i}].tool_calls{bad}", "messages"
            )
    for name in ("max_tokens", "max_completion_tokens"):
        n = req.get(name)
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
            raise _bad(p, f"Invalid {name} value: it must be a positive integer", name)
    if not isinstance(req.get("tools") or [], list):
        raise _bad(
            p, f"{_DESER if p.dialect == 'deepseek' else ''}tools: invalid type, expected a sequence", "tools"
        )
    if not isinstance(req.get("stream_options") or {}, dict):
        raise _bad(p, f"{_DESER if p.dialect == 'deepseek' else ''}stream_options: expected an object")
    return [dict(m) for m in messages]


def _tool_calls_problem(calls: Any) -> str:
    """What is wrong with an assistant message's ``tool_calls`` ('' when it is well formed)."""
    if calls is None:
        return ""
    if not isinstance(calls, list):
        return ": invalid type, expected a sequence"
    for k, c in enumerate(calls):
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            return f"[{k}].function: expected an object with a string `name`"
        if not isinstance(fn.get("arguments", ""), str):
            return f"[{k}].function.arguments: invalid type, expected a string"
    return ""


def _deepseek_types(req: Mapping[str, Any]) -> None:
    """The variants and types DeepSeek's parser refuses, in its words."""
    messages = req.get("messages")
    if "messages" not in req:
        raise CE.deepseek_error(400, f"{_DESER}missing field `messages`")
    if not isinstance(messages, list):
        raise CE.deepseek_error(
            400, f"{_DESER}messages: invalid type: {type(messages).__name__}, expected a sequence"
        )
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in DEEPSEEK_ROLES:
            raise _variant(f"messages[{i}]", role, DEEPSEEK_ROLES)
    thinking = req.get("thinking")
    if thinking is not None:
        kind = thinking.get("type") if isinstance(thinking, dict) else thinking
        if kind not in ("enabled", "disabled"):
            raise _variant("thinking.type", kind, ("enabled", "disabled"))
    effort = req.get("reasoning_effort")
    if effort is not None and (not isinstance(effort, str) or effort not in DS_EFFORTS):
        raise _variant("reasoning_effort", effort, tuple(DS_EFFORTS))


def _bad(p: Profile, message: str, param: str | None = None) -> SimError:
    if p.dialect == "deepseek":
        return CE.deepseek_error(400, message)
    if p.dialect == "openrouter":
        return CE.OPENROUTER.bad_request(message, param)
    return CE.ChatError(400, "invalid_request_error", message, dialect=p.dialect)


# -- tool pairing -----------------------------------------------------------------------------------


def call_ids(m: Mapping[str, Any]) -> list[str]:
    """The ids of an assistant message's tool calls."""
    return [str(c.get("id")) for c in m.get("tool_calls") or [] if isinstance(c, dict)]


def check_pairs(p: Profile, messages: list[dict[str, Any]]) -> None:
    """Each assistant ``tool_calls`` message is answered by ``tool`` messages, one per id, right after.

    Local servers do not check (lenient), nor do Kimi, GLM and xAI here (their own words for it are
    not on record); the others refuse in their own (or the vendor's) words.
    """
    if p.dialect not in ("deepseek", "openrouter"):
        return
    open_ids: list[str] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            tid = str(m.get("tool_call_id"))
            if tid not in open_ids:
                raise _pair_error(p, orphan=True, ids=[tid], index=i, messages=messages)
            open_ids.remove(tid)
            continue
        if open_ids:
            raise _pair_error(p, orphan=False, ids=open_ids, index=i - 1, messages=messages)
        if role == "assistant":
            open_ids = call_ids(m)
    if open_ids:
        raise _pair_error(p, orphan=False, ids=open_ids, index=len(messages) - 1, messages=messages)


def _pair_error(
    p: Profile, *, orphan: bool, ids: list[str], index: int, messages: list[dict[str, Any]]
) -> SimError:
    if p.vendor == "deepseek":
        return CE.deepseek_error(400, DS_ORPHAN_RESULT if orphan else DS_MISSING_RESULTS)
    n_system = sum(1 for m in messages[:index] if m.get("role") in ("system", "developer"))
    joined = ", ".join(ids)
    if p.vendor == "claude":
        text = (CLAUDE_ORPHAN_RESULT if orphan else CLAUDE_MISSING_RESULTS).format(
            i=index - n_system, ids=joined
        )
        raw = {"type": "error", "error": {"type": "invalid_request_error", "message": text}}
    elif p.vendor == "gemini":
        raw = {"error": {"code": 400, "message": GEMINI_COUNT, "status": "INVALID_ARGUMENT"}}
    else:
        text = OPENAI_ORPHAN_RESULT if orphan else OPENAI_MISSING_RESULTS.format(ids=joined)
        raw = {"error": {"message": text, "type": "invalid_request_error", "param": "messages", "code": None}}
    return CE.upstream(json.dumps(raw, indent=2) + "\n", ROUTER_PROVIDER[p.vendor])


# -- the planner's view ----------------------------------------------------------------------------


def text_of(content: Any) -> str:
    """A message's text: a string, or the ``text`` parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(c.get("text") or "") for c in content if isinstance(c, dict) and c.get("type") == "text"
        )
    return ""


def turn_start(messages: Sequence[Mapping[str, Any]]) -> int:
    """Index of the last user message: the current turn (the tool loop under way) starts there."""
    start = 0
    for i, m in enumerate(messages):
        if m.get("role") == "user":
            start = i
    return start


def tools(req: Mapping[str, Any]) -> tuple[ToolDef, ...]:
    """The function tools the request declares."""
    out = []
    for t in req.get("tools") or []:
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and fn.get("name"):
            params = fn.get("parameters")
            out.append(
                ToolDef(
                    str(fn["name"]),
                    str(fn.get("description") or ""),
                    params if isinstance(params, dict) else {},
                )
            )
    return tuple(out)


def tool_choice(p: Profile, req: Mapping[str, Any], declared: Sequence[ToolDef]) -> ToolChoice:
    """``tool_choice`` as the planner takes it; a name the request does not declare is refused."""
    raw = req.get("tool_choice")
    if raw is None or raw == "auto":
        return ToolChoice()
    if raw in ("none", "required"):
        return ToolChoice(str(raw))
    fn = raw.get("function") if isinstance(raw, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(name, str):
        raise _bad(p, "tool_choice must be 'auto', 'none', 'required' or a named function", "tool_choice")
    if name not in {t.name for t in declared}:
        raise _bad(p, f"tool_choice names function '{name}', which is not in tools", "tool_choice")
    return ToolChoice("tool", name)


def _arguments(raw: Any) -> dict[str, Any]:
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def past_calls(messages: Sequence[Mapping[str, Any]]) -> tuple[PastCall, ...]:
    """The current turn's tool calls with the results the request carries."""
    start = turn_start(messages)
    results = {
        str(m.get("tool_call_id")): text_of(m.get("content"))
        for m in messages[start:]
        if m.get("role") == "tool"
    }
    calls: list[PastCall] = []
    for m in messages[start:]:
        if m.get("role") != "assistant":
            continue
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {} if isinstance(c, dict) else {}
            cid = str(c.get("id"))
            calls.append(
                PastCall(cid, str(fn.get("name")), _arguments(fn.get("arguments")), results.get(cid))
            )
    return tuple(calls)


def situation(
    p: Profile, req: Mapping[str, Any], messages: Sequence[Mapping[str, Any]], level: int, plan_known: bool
) -> Situation:
    """Everything the shared planner looks at for this call."""
    declared = tools(req)
    choice = tool_choice(p, req, declared)
    task = text_of(messages[turn_start(messages)].get("content")) if messages else ""
    parallel = req.get("parallel_tool_calls") is not False
    return Situation(task, declared, past_calls(messages), parallel, plan_known, max(level, 0), choice)
