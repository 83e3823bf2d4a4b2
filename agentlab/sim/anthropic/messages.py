"""``POST /v1/messages``: the Anthropic Messages wire protocol, streaming and not.

Event grammar (as in recorded Anthropic traffic): ``message_start``; per block
``content_block_start`` (thinking / redacted_thinking / text / tool_use), deltas (``thinking_delta``
then one ``signature_delta``; ``text_delta``; ``input_json_delta`` starting with ``""``),
``content_block_stop``; a ``ping`` after the first block starts; ``message_delta`` with
``stop_reason`` and the final usage; ``message_stop``.

Thinking (``thinking.type`` ``enabled`` with ``budget_tokens``, or ``adaptive``):

* ``display: "omitted"`` -> thinking blocks carry ``""`` and a signature only; otherwise the
  thinking text is shown (``summarized`` is the default; the simulator's thoughts are short enough
  that the summary is the thinking itself).
* The magic string ``ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9...`` (as in the real API)
  in the last user text splits the turn's thinking into thinking, ``redacted_thinking``, thinking.
* Interleaved thinking (``anthropic-beta: interleaved-thinking-2025-05-14`` or adaptive thinking):
  with several tool calls in a turn, each ``tool_use`` after the first gets its own thinking block
  before it.
* ``budget_tokens`` sets how many verification paragraphs the model writes (1 per started 1024
  tokens above 1024, at most 6) and caps its thinking; ``output_config.effort`` does the same for
  adaptive thinking (low 1, medium 2, high 4, max 6).
* ``stop_sequences`` end the answer text before the first one it meets (the sequence not written,
  not billed): ``stop_reason: "stop_sequence"`` and ``stop_sequence`` name it, in the message and
  in the streamed ``message_delta``. Thinking is not cut.
* ``sim-thinker`` reports ``usage.output_tokens_details.thinking_tokens``; ``sim-thinker-legacy`` does
  not (like older Anthropic responses).
* Compaction (``context_management.edits: [{"type": "compact_20260112", "trigger": {"type":
  "input_tokens", "value": N}}]``): a prompt over ``N`` tokens gets a turn that opens with a
  ``{"type": "compaction", "content": <summary>}`` block (billed as output). Sent back, the block
  replaces every block before it: only what follows it counts as the prompt.

Rules enforced (400 ``invalid_request_error`` with the real texts): ``budget_tokens`` < 1024, or >=
``max_tokens``; more than 4 ``cache_control`` blocks; ``cache_control`` on a thinking block; an
assistant message ending in a thinking block; with thinking on, the latest assistant message that
holds ``tool_use`` must start with thinking/redacted_thinking, every thinking signature must verify
(else "Invalid `signature`") and match its block's text and position (else "cannot be modified");
``redacted_thinking`` data must be intact and in place; other providers' block types are rejected;
``tool_use`` ids need ``tool_result`` blocks in the next message and vice versa; thinking with a
``tool_choice`` that forces tool use is refused, as are a forced choice without tools ("tool_choice
may only be specified while providing tools.") and a named tool the request does not declare
("Tool 'X' not found in provided tools"). ``tool_choice`` ``any`` / ``tool`` / ``none`` decide the
turn (see :class:`agentlab.sim.reasoner.ToolChoice`). Thinking blocks of earlier assistant turns are not
validated and not billed (the real API strips them).

Message threads (``thread`` create/continue, beta ``message-threads-2026-08-12``) live in
:mod:`agentlab.sim.threads`: a continue is rebuilt into the full request before any check here runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import agentlab.sim.errors as E
import agentlab.sim.threads as threads
from agentlab.sim.access import anthropic_headers
from agentlab.sim.batch.anthropic import ROUTES as BATCH_ROUTES
from agentlab.sim.caching import Breakpoint
from agentlab.sim.core import ANTHROPIC_MODELS, Ids, SimReply, Simulator, SSEEvent, sse
from agentlab.sim.protocols import Route, RouteCall, SimProtocol
from agentlab.sim.real_models import ANTHROPIC_REAL_MODELS, anthropic_model_rules
from agentlab.sim.reasoner import MAGIC_REDACTED, PastCall, Situation, Step, ToolChoice, ToolDef, plan_step
from agentlab.sim.routes import json_reply, models_routes, require_model
from agentlab.sim.schemas.dialects import check_anthropic_request
from agentlab.sim.signing import ThinkingVerdict, turn_layout
from agentlab.sim.structured import anthropic_format, instance
from agentlab.sim.tokenizer import chunks, count_tokens, tokenize, truncate_tokens

INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
_BLOCK_TYPES = (
    "text",
    "image",
    "document",
    "search_result",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_result",
    "server_tool_use",
    "web_search_tool_result",
    "compaction",
)
COMPACT_EDIT = "compact_20260112"
"""``context_management.edits[].type`` of server-side compaction (beta ``compact-2026-01-12``)."""
_EFFORT = {"low": 1, "medium": 2, "high": 4, "max": 6}
_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
_EXPECTED_THINKING = (
    "Expected `thinking` or `redacted_thinking`, but found `{}`. When `thinking` is enabled, a final "
    "`assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and "
    "`tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this "
    "requirement, disable `thinking`. Please consult our documentation at " + _DOCS
)


_TEXT_CALL = re.compile(r"^\[called tool ([A-Za-z0-9_-]+) with (.*)\]$", re.S)
_TEXT_RESULT = re.compile(r"^\[(result of|error from) tool ([A-Za-z0-9_-]+): (.*)\]$", re.S)


def _bad(message: str) -> E.SimError:
    return E.SimError(400, "invalid_request_error", message)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in _blocks(content) if b.get("type") == "text")


@dataclass(frozen=True)
class _Thinking:
    """The request's thinking configuration, validated.

    ``budget`` caps the turn's thinking tokens (0 when off); ``level`` is how many verification
    paragraphs the planner writes; ``interleaved`` gives each further ``tool_use`` its own thought.
    """

    on: bool
    budget: int
    level: int
    display: str
    interleaved: bool


def handle(
    sim: Simulator, req: dict[str, Any], headers: dict[str, str], model: str, *, platform: str = ""
) -> SimReply:
    """Answer one Messages request (model already validated and stripped of options).

    The checks run in this order because the first failing one is the error the client sees: the
    body against the published schema (unknown, mistyped, missing fields), ``max_tokens``,
    ``thinking`` and what it forbids, ``messages``, then the per-message wire rules. ``platform``
    (``""``: Anthropic's API; ``"bedrock"``, ``"vertex"``: :mod:`.platforms`) keys the thinking
    signatures, so one platform's blocks are invalid on the others.
    """
    check_anthropic_request(req, headers)
    req, held = threads.expand(sim.threads, req, headers)
    ids = Ids(sim.seed, json.dumps(req, sort_keys=True, separators=(",", ":")).encode())
    max_tokens = _max_tokens(req)
    thinking = _thinking(req, headers, max_tokens)
    messages = _messages(req)
    _validate(sim, req, messages, thinking.on, platform)
    schema = anthropic_format(req, model)
    situation = _situation(req, messages, thinking.level)
    step = plan_step(situation)
    if schema is not None and step.answer is not None:  # structured outputs: the answer in the schema
        step = replace(step, answer=json.dumps(instance(schema, step.answer), ensure_ascii=False))
    prompt_tokens, breakpoints = _prompt_tokens(req, messages)
    cache = sim.cache.anthropic(model, prompt_tokens, breakpoints)
    usage_in = {
        "input_tokens": len(prompt_tokens) - cache.read - cache.write,
        "cache_creation_input_tokens": cache.write,
        "cache_read_input_tokens": cache.read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache.write_5m,
            "ephemeral_1h_input_tokens": cache.write_1h,
        },
    }
    stops = [str(x) for x in req.get("stop_sequences") or []]
    turn = _content(
        sim, ids, step, thinking, max_tokens, redact=MAGIC_REDACTED in situation.task, stops=stops,
        platform=platform,
        summary=_compaction(req, len(prompt_tokens), situation),
    )  # fmt: skip
    usage = {**usage_in, "output_tokens": turn.used, "service_tier": "standard"}
    if model != "sim-thinker-legacy":
        usage["output_tokens_details"] = {"thinking_tokens": turn.thinking_tokens}
    msg = {
        "model": req["model"],  # the label (a real name says simulated), see app
        "id": ids.b58("msg_01"),
        "type": "message",
        "role": "assistant",
        "content": turn.blocks,
        "stop_reason": turn.stop,
        "stop_sequence": turn.stop_sequence,
        "usage": usage,
    }
    threads.hold(sim.threads, held, msg)
    rh = {"request-id": E.anthropic_request_id(ids.seed_bytes), "anthropic-organization-id": "sim-org"}
    if not req.get("stream"):
        rh["content-type"] = "application/json"
        return SimReply(200, rh, json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode())
    rh["content-type"] = "text/event-stream; charset=utf-8"
    return SimReply(200, rh, events=_stream(msg, usage_in))


def _compaction(req: dict[str, Any], prompt_tokens: int, situation: Situation) -> str | None:
    """The summary a compacting turn opens with, when the prompt is over the compaction trigger."""
    edits = (req.get("context_management") or {}).get("edits") or []
    for edit in edits:
        if isinstance(edit, dict) and edit.get("type") == COMPACT_EDIT:
            trigger = edit.get("trigger") or {}
            limit = trigger.get("value") if isinstance(trigger, dict) else None
            if prompt_tokens > (limit if isinstance(limit, int) else 150_000):
                done = sum(1 for c in situation.calls if c.result is not None)
                task = situation.task
                return f"Summary so far: the user asked: {task} ({done} tool call(s) answered)."
    return None


def _max_tokens(req: dict[str, Any]) -> int:
    """``max_tokens`` is required, an integer (not a bool), at least 1."""
    max_tokens = req.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        raise _bad(
            "max_tokens: Field required"
            if max_tokens is None
            else "max_tokens: Input should be a valid integer"
        )
    if max_tokens < 1:
        raise _bad("max_tokens: Input should be greater than or equal to 1")
    return max_tokens


def _enabled(thinking: dict[str, Any], req: dict[str, Any], beta: str, max_tokens: int) -> tuple[int, int]:
    """``enabled``: ``budget_tokens`` >= 1024 and below ``max_tokens`` (unless interleaved)."""
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        raise _bad("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
    # With interleaved thinking the budget spans every thinking block of the turn and may exceed
    # max_tokens (Anthropic's extended-thinking docs, "interleaved thinking").
    if budget >= max_tokens and INTERLEAVED_BETA not in beta:
        raise _bad(
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
            f"documentation at {_DOCS}#max-tokens-and-context-window-size"
        )
    return budget, min(6, 1 + (budget - 1024) // 1024)


def _adaptive(thinking: dict[str, Any], req: dict[str, Any], beta: str, max_tokens: int) -> tuple[int, int]:
    """``adaptive``: ``output_config.effort`` (default high) sets the level; the budget is max_tokens."""
    effort = (req.get("output_config") or {}).get("effort") or "high"
    if effort not in _EFFORT:
        raise _bad(
            f"This model does not support effort level '{effort}'. Supported levels: high, low, max, medium."
        )
    return max_tokens - 1, _EFFORT[effort]


def _disabled(thinking: dict[str, Any], req: dict[str, Any], beta: str, max_tokens: int) -> tuple[int, int]:
    """``disabled`` (or no ``thinking``): no budget."""
    return 0, 0


#: ``thinking.type`` -> its validation, returning (budget, planner level).
_THINKING_MODES: dict[str | None, Callable[[dict[str, Any], dict[str, Any], str, int], tuple[int, int]]] = {
    "enabled": _enabled,
    "adaptive": _adaptive,
    "disabled": _disabled,
    None: _disabled,
}


def _thinking(req: dict[str, Any], headers: dict[str, str], max_tokens: int) -> _Thinking:
    """The thinking mode, then what thinking forbids: forced tool use, a ``temperature`` other than 1."""
    thinking = req.get("thinking") or {"type": "disabled"}
    ttype = thinking.get("type")
    mode = _THINKING_MODES.get(ttype) if ttype is None or isinstance(ttype, str) else None
    if mode is None:
        raise _bad(
            f"thinking: Input tag '{ttype}' found using 'type' does not match any of the expected tags: "
            "'adaptive', 'disabled', 'enabled'"
        )
    beta = headers.get("anthropic-beta", "")
    budget, level = mode(thinking, req, beta, max_tokens)
    on = ttype in ("enabled", "adaptive")
    if on and (req.get("tool_choice") or {}).get("type") in ("any", "tool"):
        raise _bad("Thinking may not be enabled when tool_choice forces tool use.")
    display = thinking.get("display") or "summarized"
    temp = req.get("temperature")
    if on and temp is not None and temp != 1:
        raise _bad(
            "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode. Please "
            f"consult our documentation at {_DOCS}#feature-compatibility"
        )
    interleaved = on and (INTERLEAVED_BETA in beta or ttype == "adaptive")
    return _Thinking(on, budget, level, display, interleaved)


def _messages(req: dict[str, Any]) -> list[Any]:
    """``messages`` is required and not empty."""
    messages = req.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad(
            "messages: Field required" if messages is None else "messages: at least one message is required"
        )
    return messages


def _situation(req: dict[str, Any], messages: list[Any], level: int) -> Situation:
    """The task (the last user message that is not tool results) and the current loop's calls.

    A capable model also reads a tool exchange that was written out as text (agentlab's recovery
    for a tool-use turn whose thinking is gone): such user turns are results, not a new task.
    """
    tools = tuple(
        ToolDef(str(t.get("name")), str(t.get("description") or ""), dict(t.get("input_schema") or {}))
        for t in req.get("tools") or []
        if isinstance(t, dict) and "input_schema" in t
    )
    last_user = -1
    for i, m in enumerate(messages):
        texts = [b for b in _blocks(m.get("content")) if b.get("type") == "text"]
        is_results = all(_TEXT_RESULT.match(str(b.get("text"))) for b in texts)
        if m.get("role") == "user" and texts and not is_results:
            last_user = i
    task = _text(messages[last_user].get("content")) if last_user >= 0 else ""
    choice = req.get("tool_choice") or {}
    parallel = not bool(choice.get("disable_parallel_tool_use"))
    calls = _past_calls(messages[last_user + 1 :])
    return Situation(task, tools, calls, parallel, True, level, _tool_choice(req))


#: Anthropic ``tool_choice.type`` -> the planner's mode.
_CHOICE_MODES = {"auto": "auto", "any": "required", "tool": "tool", "none": "none"}


def _tool_choice(req: dict[str, Any]) -> ToolChoice:
    """``tool_choice`` as the planner takes it; forcing needs tools, and a named one must be declared.

    (Forced use with thinking on was refused earlier, with the thinking checks.)
    """
    raw = req.get("tool_choice") or {}
    mode = _CHOICE_MODES.get(str(raw.get("type", "auto")), "auto")
    names = [t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)]
    if mode in ("required", "tool") and not names:
        raise _bad("tool_choice may only be specified while providing tools.")
    if mode == "tool" and raw.get("name") not in names:
        raise _bad(f"Tool '{raw.get('name')}' not found in provided tools")
    return ToolChoice(mode, str(raw["name"]) if mode == "tool" else None)


class _Loop:
    """The tool calls of the current loop and their results, as blocks or as written-out text."""

    def __init__(self) -> None:
        self.uses: list[tuple[str, str, dict[str, Any]]] = []
        self.results: dict[str, str] = {}
        self.pending_text_calls: list[str] = []

    def read(self, role: Any, b: dict[str, Any]) -> None:
        if b.get("type") == "tool_use":
            inp = b.get("input")
            self.uses.append((str(b.get("id")), str(b.get("name")), inp if isinstance(inp, dict) else {}))
        elif b.get("type") == "tool_result":
            c = b.get("content")
            self.results[str(b.get("tool_use_id"))] = c if isinstance(c, str) else _text(c)
        elif b.get("type") == "text":
            self._read_text(role, str(b.get("text")))

    def _read_text(self, role: Any, text: str) -> None:
        """``[called tool X with {...}]`` from the assistant, ``[result of tool X: ...]`` from the user."""
        called, result = _TEXT_CALL.match(text), _TEXT_RESULT.match(text)
        if called and role == "assistant":
            try:
                args = json.loads(called.group(2))
            except ValueError:
                args = {}
            cid = f"text_call_{len(self.uses)}"
            self.uses.append((cid, called.group(1), args if isinstance(args, dict) else {}))
            self.pending_text_calls.append(cid)
        elif result and role == "user":
            name = result.group(2)
            match = next((c for c in self.pending_text_calls if self._name_of(c) == name), None)
            if match is not None:
                self.pending_text_calls.remove(match)
                self.results[match] = result.group(3)

    def _name_of(self, call_id: str) -> str | None:
        return next((n for c, n, _ in self.uses if c == call_id), None)


def _past_calls(loop: list[Any]) -> tuple[PastCall, ...]:
    """The calls of the messages after the task, with the results the request carries."""
    state = _Loop()
    for m in loop:
        for b in _blocks(m.get("content")):
            state.read(m.get("role"), b)
    return tuple(PastCall(cid, n, a, state.results.get(cid)) for cid, n, a in state.uses)


def _validate(
    sim: Simulator, req: dict[str, Any], messages: list[Any], thinking_on: bool, platform: str = ""
) -> None:
    """The wire rules on messages, in the order the real API reports them (each its own 400)."""
    for i, m in enumerate(messages):
        _check_message(i, m, len(messages) - 1)
    _check_tool_ids(messages)
    _check_tool_pairs(messages)
    n_cc = _count_cache_control(req, messages)
    if n_cc > 4:
        raise _bad(f"A maximum of 4 blocks with cache_control may be provided. Found {n_cc}.")
    if thinking_on:
        _check_latest_thinking(sim, messages, platform)


def _check_message(i: int, m: Any, last: int) -> None:
    """A role of user/assistant, known block types, no cache_control on thinking, no final thinking."""
    if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
        raise _bad(f"messages.{i}.role: Input should be 'user' or 'assistant'")
    blocks = _blocks(m.get("content"))
    for j, b in enumerate(blocks):
        bt = b.get("type")
        if bt not in _BLOCK_TYPES:
            raise _bad(
                f"messages.{i}.content.{j}: Input tag '{bt}' found using 'type' does not match any of "
                "the expected tags: " + ", ".join(f"'{x}'" for x in _BLOCK_TYPES)
            )
        if b.get("cache_control") is not None and bt in ("thinking", "redacted_thinking"):
            raise _bad(f"messages.{i}.content.{j}.{bt}.cache_control: Extra inputs are not permitted")
    if m["role"] == "assistant" and blocks and blocks[-1].get("type") == "thinking" and i != last:
        raise _bad(f"messages.{i}: The final block in an assistant message cannot be `thinking`.")


def _count_cache_control(req: dict[str, Any], messages: list[Any]) -> int:
    """Blocks marked with cache_control: tools, system blocks, message blocks, and the top level."""
    n_cc = sum(1 for t in req.get("tools") or [] if isinstance(t, dict) and t.get("cache_control"))
    system = req.get("system")
    if isinstance(system, list):
        n_cc += sum(1 for b in system if isinstance(b, dict) and b.get("cache_control"))
    for m in messages:
        n_cc += sum(1 for b in _blocks(m.get("content")) if b.get("cache_control") is not None)
    return n_cc + (1 if req.get("cache_control") else 0)


def _modified(i: int, j: int) -> E.SimError:
    return _bad(
        f"messages.{i}.content.{j}: `thinking` or `redacted_thinking` blocks in the latest assistant "
        "message cannot be modified. These blocks must remain as they were in the original response."
    )


def _check_latest_thinking(sim: Simulator, messages: list[Any], platform: str = "") -> None:
    """The latest assistant message: starts with thinking when it holds tool_use, its thinking intact.

    Every thinking signature must verify (else "Invalid `signature`") and bind its block's text and
    position; redacted data must open in place; and the blocks together must be the whole turn they
    were signed in (none missing, none from another response).
    """
    i = max((k for k, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    if i < 0:
        return
    blocks = _blocks(messages[i].get("content"))
    if any(b.get("type") == "tool_use" for b in blocks):
        opening = [b for b in blocks if b.get("type") != "compaction"]  # a compaction block may lead
        first = opening[0].get("type") if opening else "nothing"
        if first not in ("thinking", "redacted_thinking"):
            raise _bad(f"messages.{i}.content.0.type: " + _EXPECTED_THINKING.format(first))
    present: list[tuple[int, str, str]] = []
    layouts: list[tuple[int, bytes]] = []
    for j, b in enumerate(blocks):
        opened = _open_thinking(sim, i, j, b, platform)
        if opened is not None:
            present.append(opened[0])
            layouts.append((j, opened[1]))
    whole = turn_layout(present)
    for j, layout in layouts:
        if layout != whole:
            raise _modified(i, j)


def _open_thinking(
    sim: Simulator, i: int, j: int, b: dict[str, Any], platform: str = ""
) -> tuple[tuple[int, str, str], bytes] | None:
    """A thinking or redacted_thinking block's (position, type, text) and turn layout; None for others."""
    if b.get("type") == "thinking":
        verdict, layout = sim.signer.check_thinking(
            b.get("thinking"), b.get("signature"), j, platform=platform
        )
        if verdict == ThinkingVerdict.INVALID:
            raise _bad(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
        if verdict == ThinkingVerdict.MODIFIED or layout is None:
            raise _modified(i, j)
        return (j, "thinking", str(b.get("thinking"))), layout
    if b.get("type") == "redacted_thinking":
        opened = sim.signer.open_redacted(b.get("data"), j, platform=platform)
        if opened is None:
            raise _modified(i, j)
        return (j, "redacted_thinking", opened[0]), opened[1]
    return None


_RESULT_NEEDS_USE = (
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
_USE_NEEDS_RESULT = "Each `tool_use` block must have a corresponding `tool_result` block in the next message."


TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
"""The real API's schema for ``tool_use.id`` and ``tool_result.tool_use_id`` (pydantic's message: a
``call_...|fc_...`` or a Kimi ``functions.get_weather:0`` id carried from another provider is refused)."""

_ID_FIELDS = {"tool_use": "id", "tool_result": "tool_use_id"}


def _check_tool_ids(messages: list[Any]) -> None:
    """Each tool id matches the schema's pattern, checked before the pairs, as the real API does."""
    for i, m in enumerate(messages):
        for j, b in enumerate(_blocks(m.get("content"))):
            field = _ID_FIELDS.get(str(b.get("type")))
            if field is not None and not TOOL_ID.fullmatch(str(b.get(field, ""))):
                raise _bad(
                    f"messages.{i}.content.{j}.{b['type']}.{field}: String should match pattern "
                    f"'{TOOL_ID.pattern}'"
                )


def _check_tool_pairs(messages: list[Any]) -> None:
    """tool_use blocks need tool_result blocks in the next message, and results need their uses."""
    for i, m in enumerate(messages):
        blocks = _blocks(m.get("content"))
        if m.get("role") == "user":
            prev = messages[i - 1] if i > 0 else {}
            uses = {b.get("id") for b in _blocks(prev.get("content")) if b.get("type") == "tool_use"}
            if prev.get("role") != "assistant":
                uses = set()
            for j, b in enumerate(blocks):
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in uses:
                    raise _bad(
                        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{b.get('tool_use_id')}. " + _RESULT_NEEDS_USE
                    )
        elif i < len(messages) - 1:
            ids = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
            nxt = messages[i + 1]
            answered = {
                b.get("tool_use_id") for b in _blocks(nxt.get("content")) if b.get("type") == "tool_result"
            }
            missing = [x for x in ids if x not in answered]
            if missing:
                raise _bad(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                    f"after: {', '.join(missing)}. " + _USE_NEEDS_RESULT
                )


class _PromptTokens:
    """The prompt's tokens in cache order and the breakpoints (prefix lengths) marked on the way."""

    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.breakpoints: list[Breakpoint] = []

    def add(self, text: str, cc: Any) -> None:
        self.tokens.extend(tokenize(text))
        self.tokens.append("\n")
        self.mark(cc)

    def mark(self, cc: Any) -> None:
        if isinstance(cc, dict):
            self.breakpoints.append(Breakpoint(len(self.tokens), "1h" if cc.get("ttl") == "1h" else "5m"))


def _prompt_tokens(req: dict[str, Any], messages: list[Any]) -> tuple[list[str], list[Breakpoint]]:
    """Prompt tokens (tools, system, messages, in cache order) and the breakpoints the request marked."""
    p = _PromptTokens()
    for t in req.get("tools") or []:
        if isinstance(t, dict):
            p.add(
                json.dumps({k: v for k, v in t.items() if k != "cache_control"}, sort_keys=True),
                t.get("cache_control"),
            )
    system = req.get("system")
    if isinstance(system, str):
        p.add("system: " + system, None)
    elif isinstance(system, list):
        for b in system:
            if isinstance(b, dict):
                p.add("system: " + str(b.get("text", "")), b.get("cache_control"))
    last = len(messages) - 1
    base = len(p.tokens)
    for i, m in enumerate(messages):
        for b in _blocks(m.get("content")):
            if b.get("type") == "compaction":  # it replaces every block before it
                p.tokens = p.tokens[:base]
                p.breakpoints = [bp for bp in p.breakpoints if bp.tokens <= base]
            if (
                b.get("type") in ("thinking", "redacted_thinking")
                and i != last
                and m.get("role") == "assistant"
            ):
                # Thinking from earlier turns is stripped by the API and not billed, as documented.
                continue
            p.add(f"{m.get('role')}: {_block_body(b)}", b.get("cache_control"))
    if p.tokens:
        p.mark(req.get("cache_control"))
    return p.tokens, p.breakpoints


def _block_body(b: dict[str, Any]) -> str:
    """What a content block contributes to the prompt (its JSON, ids aside, for tool blocks)."""
    bt = b.get("type")
    if bt == "text":
        return str(b.get("text", ""))
    if bt == "thinking":
        return str(b.get("thinking", ""))
    if bt == "redacted_thinking":
        return "[redacted]"
    if bt == "compaction":
        return "compaction: " + str(b.get("content") or "")
    return json.dumps(
        {k: v for k, v in b.items() if k not in ("cache_control", "id", "tool_use_id")}, sort_keys=True
    )


class _Turn:
    """The assistant content of one turn as it is written, with its token accounting.

    Thinking blocks are signed only at the end (:meth:`sign`): every block's signature binds it to
    its siblings, so the turn must be complete first.
    """

    def __init__(self, thinking: _Thinking, max_tokens: int) -> None:
        self.blocks: list[dict[str, Any]] = []
        self.used = 0
        self.thinking_tokens = 0
        self.stop = "end_turn"
        self.stop_sequence: str | None = None  # the one matched when ``stop`` is "stop_sequence"
        self.remaining = max_tokens
        self._budget = thinking.budget
        self._display = thinking.display
        self._max_tokens = max_tokens
        self._signed: list[tuple[int, str, str]] = []  # (position, type, text) of each thinking block

    def thought(self, text: str) -> None:
        text = truncate_tokens(text, max(1, self._budget - self.thinking_tokens))
        n = count_tokens(text)
        self.used += n
        self.thinking_tokens += n
        shown = "" if self._display == "omitted" else text
        self._signed.append((len(self.blocks), "thinking", shown))
        self.blocks.append({"type": "thinking", "thinking": shown, "signature": ""})
        self.remaining = self._max_tokens - self.used

    def compact(self, summary: str) -> None:
        """The compaction block, first in the turn (before any thinking is signed in its place)."""
        self.used += count_tokens(summary)
        self.blocks.append({"type": "compaction", "content": summary})
        self.remaining = self._max_tokens - self.used

    def redacted(self, text: str) -> None:
        n = count_tokens(text)
        self.used += n
        self.thinking_tokens += n
        self._signed.append((len(self.blocks), "redacted_thinking", text))
        self.blocks.append({"type": "redacted_thinking", "data": ""})
        self.remaining = self._max_tokens - self.used

    def spend(self, cost: int) -> bool:
        """Take ``cost`` output tokens if they fit; otherwise the turn stops at ``max_tokens``."""
        if cost > self.remaining:
            self.stop = "max_tokens"
            return False
        self.used += cost
        self.remaining -= cost
        return True

    def sign(self, sim: Simulator, platform: str = "") -> None:
        layout = turn_layout(self._signed)
        for pos, kind, text in self._signed:
            if kind == "thinking":
                self.blocks[pos]["signature"] = sim.signer.sign_thinking(text, pos, layout, platform=platform)
            else:
                self.blocks[pos]["data"] = sim.signer.seal_redacted(text, pos, layout, platform=platform)


def _content(
    sim: Simulator,
    ids: Ids,
    step: Step,
    thinking: _Thinking,
    max_tokens: int,
    *,
    redact: bool,
    stops: Sequence[str] = (),
    platform: str = "",
    summary: str | None = None,
) -> _Turn:
    """The assistant turn: compaction (when due), opening thinking, tool uses, answer."""
    turn = _Turn(thinking, max_tokens)
    if summary is not None:
        turn.compact(summary)
    paras = list(step.reasoning)
    calls = list(step.tool_calls)
    if thinking.on:
        _opening_thoughts(turn, paras, split=thinking.interleaved and len(calls) > 1, redact=redact)
    if calls:
        turn.stop = "tool_use"
    for k, (name, args) in enumerate(calls):
        if thinking.on and thinking.interleaved and k > 0:
            turn.thought(
                f"Next, {name} for {', '.join(str(v) for v in args.values())}."
                + (f" {paras[1]}" if k == 1 and len(paras) > 1 else "")
            )
        if not turn.spend(count_tokens(json.dumps(args)) + count_tokens(name)):
            break
        turn.blocks.append(
            {
                "type": "tool_use",
                "id": ids.b58("toolu_01"),
                "name": name,
                "input": args,
                "caller": {"type": "direct"},
            }
        )
    if step.answer is not None:
        _answer(turn, step.answer, stops)
    turn.sign(sim, platform)
    return turn


def _opening_thoughts(turn: _Turn, paras: list[str], *, split: bool, redact: bool) -> None:
    """The turn's first thinking (its second paragraph saved for the next tool use when ``split``).

    With the magic redaction string it becomes thinking, redacted_thinking, thinking.
    """
    head = paras[:1] + paras[2:] if split else paras
    if not (redact and len(head) >= 1):
        turn.thought("\n\n".join(head))
        return
    thirds = [
        head[: max(1, len(head) // 3)],
        head[max(1, len(head) // 3) : max(2, 2 * len(head) // 3)],
        head[max(2, 2 * len(head) // 3) :],
    ]
    turn.thought("\n\n".join(thirds[0]))
    turn.redacted("\n\n".join(thirds[1]) or "(hidden)")
    turn.thought("\n\n".join(thirds[2]) or "Proceeding.")


def _first_stop(text: str, stops: Sequence[str]) -> tuple[int, str] | None:
    """Where generation of ``text`` meets a stop sequence first: (its start, the sequence).

    Text is written left to right, so the sequence that is complete soonest (smallest end) wins,
    whatever its place in the request's list.
    """
    hits = [(text.find(s) + len(s), text.find(s), s) for s in stops if s and s in text]
    return min(hits)[1:] if hits else None


def _answer(turn: _Turn, text: str, stops: Sequence[str] = ()) -> None:
    """The answer text: ended before the first stop sequence, then cut to what ``max_tokens`` leaves.

    A stop sequence met gives stop reason ``stop_sequence`` (the sequence itself is not written);
    running out of tokens first gives ``max_tokens``.
    """
    hit = _first_stop(text, stops)
    if hit is not None:
        text = text[: hit[0]]
    if count_tokens(text) <= turn.remaining and hit is not None:
        turn.stop, turn.stop_sequence = "stop_sequence", hit[1]
    if count_tokens(text) > turn.remaining:
        text = truncate_tokens(text, turn.remaining)
        turn.stop = "max_tokens"
    turn.used += count_tokens(text)
    if text:
        turn.blocks.append({"type": "text", "text": text})


def _block_start(idx: int, block: dict[str, Any]) -> SSEEvent:
    return sse("content_block_start", {"type": "content_block_start", "index": idx, "content_block": block})


def _block_delta(idx: int, delta: dict[str, Any], *, is_delta: bool = True) -> SSEEvent:
    return sse(
        "content_block_delta", {"type": "content_block_delta", "index": idx, "delta": delta}, delta=is_delta
    )


def _thinking_events(idx: int, b: dict[str, Any]) -> list[SSEEvent]:
    """A thinking block: its text in deltas, then its signature in one ``signature_delta``."""
    events = [_block_start(idx, {"type": "thinking", "thinking": "", "signature": ""})]
    events += [_block_delta(idx, {"type": "thinking_delta", "thinking": d}) for d in chunks(b["thinking"])]
    events.append(_block_delta(idx, {"type": "signature_delta", "signature": b["signature"]}, is_delta=False))
    return events


def _redacted_events(idx: int, b: dict[str, Any]) -> list[SSEEvent]:
    """A redacted_thinking block arrives whole in its start event."""
    return [_block_start(idx, b)]


def _text_events(idx: int, b: dict[str, Any]) -> list[SSEEvent]:
    events = [_block_start(idx, {"type": "text", "text": ""})]
    return events + [_block_delta(idx, {"type": "text_delta", "text": d}) for d in chunks(b["text"])]


def _tool_use_events(idx: int, b: dict[str, Any]) -> list[SSEEvent]:
    """A tool_use block: empty input, then its JSON two tokens at a time after an empty first delta."""
    events = [_block_start(idx, {**b, "input": {}})]
    args = json.dumps(b["input"], separators=(",", ":"), ensure_ascii=False)
    return events + [
        _block_delta(idx, {"type": "input_json_delta", "partial_json": d}) for d in ["", *chunks(args, 2)]
    ]


#: The events of each content block type (tool_use for any other).
_BLOCK_EVENTS: dict[str, Callable[[int, dict[str, Any]], list[SSEEvent]]] = {
    "thinking": _thinking_events,
    "redacted_thinking": _redacted_events,
    "compaction": _redacted_events,  # complete in its start event, as redacted thinking is
    "text": _text_events,
}


def _stream(msg: dict[str, Any], usage_in: dict[str, Any]) -> list[SSEEvent]:
    """The event grammar of the module docstring for a complete message."""
    start = {
        **msg,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage_in, "output_tokens": 1, "service_tier": "standard"},
    }
    events = [sse("message_start", {"type": "message_start", "message": start})]
    for idx, b in enumerate(msg["content"]):
        if idx == 1:  # the real API pings once, right after the first block started
            pos = next(i for i, e in enumerate(events) if e.raw.startswith(b"event: content_block_start"))
            events.insert(pos + 1, sse("ping", {"type": "ping"}))
        events += _BLOCK_EVENTS.get(b["type"], _tool_use_events)(idx, b)
        events.append(sse("content_block_stop", {"type": "content_block_stop", "index": idx}))
    usage = {k: v for k, v in msg["usage"].items() if k not in ("cache_creation", "service_tier")}
    events.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": msg["stop_sequence"]},
                "usage": usage,
            },
        )
    )
    events.append(sse("message_stop", {"type": "message_stop"}))
    return events


def model_card(name: str, served: str) -> dict[str, Any]:
    """One Anthropic model object; a real name served by a simulated model says so in ``display_name``."""
    display = name.replace("-", " ").title()
    if name != served:
        display += f" (simulated by agentlab: {served})"
    return {"type": "model", "id": name, "display_name": display, "created_at": "2026-01-01T00:00:00Z"}


def models_page(cards: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``GET /v1/models`` as Anthropic lists models (one page)."""
    data = list(cards)
    first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
    return {"data": data, "has_more": False, "first_id": first, "last_id": last}


def _count_tokens(call: RouteCall) -> SimReply:
    """``POST /v1/messages/count_tokens``: the prompt size a messages call would bill as input.

    The same tokenizer and prompt layout as :func:`handle`, so the count equals that call's
    ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens``.
    """
    require_model(call)
    tokens, _ = _prompt_tokens(call.body, _messages(call.body))
    return json_reply({"input_tokens": len(tokens)})


#: The registry entry of this protocol (see :mod:`agentlab.sim.protocols`).
PROTOCOL = SimProtocol(
    name="anthropic",
    endpoints=("/v1/messages",),
    handle=handle,
    models=ANTHROPIC_MODELS,
    models_page=models_page,
    model_card=model_card,
    errors=E.ANTHROPIC,
    unknown_event=sse(
        "sim_unknown_event", {"type": "sim_unknown_event", "note": "an event type this client has never seen"}
    ),
    # The Anthropic SDK always sends it; OpenAI clients never do.
    marker_header="anthropic-version",
    routes=(
        *models_routes(),
        Route("POST", "/v1/messages/count_tokens", _count_tokens),
        *BATCH_ROUTES,
    ),
    real_models=ANTHROPIC_REAL_MODELS,
    check_headers=anthropic_headers,
    model_rules=anthropic_model_rules,
)
