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
* ``sim-thinker`` reports ``usage.output_tokens_details.thinking_tokens``; ``sim-thinker-legacy`` does
  not (like older Anthropic responses).

Rules enforced (400 ``invalid_request_error`` with the real texts): ``budget_tokens`` < 1024, or >=
``max_tokens``; more than 4 ``cache_control`` blocks; ``cache_control`` on a thinking block; an
assistant message ending in a thinking block; with thinking on, the latest assistant message that
holds ``tool_use`` must start with thinking/redacted_thinking, every thinking signature must verify
(else "Invalid `signature`") and match its block's text and position (else "cannot be modified");
``redacted_thinking`` data must be intact and in place; other providers' block types are rejected;
``tool_use`` ids need ``tool_result`` blocks in the next message and vice versa; thinking with a
``tool_choice`` that forces tool use is refused. Thinking blocks of earlier assistant turns are not
validated and not billed (the real API strips them).
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import errors as E
from .caching import Breakpoint
from .core import ANTHROPIC_MODELS, Ids, SimReply, Simulator, SSEEvent, sse
from .protocols import SimProtocol
from .reasoner import MAGIC_REDACTED, PastCall, Situation, Step, ToolDef, plan_step
from .signing import ThinkingVerdict, turn_layout
from .tokenizer import chunks, count_tokens, tokenize, truncate_tokens

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
)
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


def uses_name(uses: list[tuple[str, str, dict[str, Any]]], call_id: str) -> str | None:
    """The tool name of a call in ``uses`` by id."""
    return next((n for c, n, _ in uses if c == call_id), None)


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


def handle(sim: Simulator, req: dict[str, Any], headers: dict[str, str], model: str) -> SimReply:  # noqa: C901 - one branch per simulated behaviour (options, faults, tool turns, stream or not)
    """Answer one Messages request (model already validated and stripped of options)."""
    raw_bytes = json.dumps(req, sort_keys=True, separators=(",", ":")).encode()
    ids = Ids(sim.seed, raw_bytes)
    max_tokens = req.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        raise _bad(
            "max_tokens: Field required"
            if max_tokens is None
            else "max_tokens: Input should be a valid integer"
        )
    if max_tokens < 1:
        raise _bad("max_tokens: Input should be greater than or equal to 1")
    thinking = req.get("thinking") or {"type": "disabled"}
    ttype = thinking.get("type")
    level = 0
    if ttype == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            raise _bad("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        # With interleaved thinking the budget spans every thinking block of the turn and may exceed
        # max_tokens (Anthropic's extended-thinking docs, "interleaved thinking").
        if budget >= max_tokens and INTERLEAVED_BETA not in headers.get("anthropic-beta", ""):
            raise _bad(
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                f"documentation at {_DOCS}#max-tokens-and-context-window-size"
            )
        level = min(6, 1 + (budget - 1024) // 1024)
    elif ttype == "adaptive":
        effort = (req.get("output_config") or {}).get("effort") or "high"
        if effort not in _EFFORT:
            raise _bad(
                f"This model does not support effort level '{effort}'. Supported levels: high, low, max, "
                "medium."
            )
        level = _EFFORT[effort]
        budget = max_tokens - 1
    elif ttype in ("disabled", None):
        budget = 0
    else:
        raise _bad(
            f"thinking: Input tag '{ttype}' found using 'type' does not match any of the expected tags: "
            "'adaptive', 'disabled', 'enabled'"
        )
    thinking_on = ttype in ("enabled", "adaptive")
    forced = (req.get("tool_choice") or {}).get("type") in ("any", "tool")
    if thinking_on and forced:
        raise _bad("Thinking may not be enabled when tool_choice forces tool use.")
    display = thinking.get("display") or "summarized"
    temp = req.get("temperature")
    if thinking_on and temp is not None and temp != 1:
        raise _bad(
            "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode. Please "
            f"consult our documentation at {_DOCS}#feature-compatibility"
        )
    messages = req.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad(
            "messages: Field required" if messages is None else "messages: at least one message is required"
        )
    beta = headers.get("anthropic-beta", "")
    interleaved = thinking_on and (INTERLEAVED_BETA in beta or ttype == "adaptive")

    breakpoints = _validate(sim, req, messages, thinking_on)
    tools = tuple(
        ToolDef(str(t.get("name")), str(t.get("description") or ""), dict(t.get("input_schema") or {}))
        for t in req.get("tools") or []
        if isinstance(t, dict) and "input_schema" in t
    )

    # -- task and current loop --------------------------------------------------------------------
    # A capable model also reads a tool exchange that was written out as text (agentlab's recovery
    # for a tool-use turn whose thinking is gone): such user turns are results, not a new task.
    last_user = -1
    for i, m in enumerate(messages):
        texts = [b for b in _blocks(m.get("content")) if b.get("type") == "text"]
        is_results = all(_TEXT_RESULT.match(str(b.get("text"))) for b in texts)
        if m.get("role") == "user" and texts and not is_results:
            last_user = i
    task = _text(messages[last_user].get("content")) if last_user >= 0 else ""
    results: dict[str, str] = {}
    uses: list[tuple[str, str, dict[str, Any]]] = []
    pending_text_calls: list[str] = []
    for m in messages[last_user + 1 :]:
        for b in _blocks(m.get("content")):
            if b.get("type") == "tool_use":
                inp = b.get("input")
                uses.append((str(b.get("id")), str(b.get("name")), inp if isinstance(inp, dict) else {}))
            elif b.get("type") == "tool_result":
                c = b.get("content")
                results[str(b.get("tool_use_id"))] = c if isinstance(c, str) else _text(c)
            elif b.get("type") == "text":
                called, result = _TEXT_CALL.match(str(b.get("text"))), _TEXT_RESULT.match(str(b.get("text")))
                if called and m.get("role") == "assistant":
                    try:
                        args = json.loads(called.group(2))
                    except ValueError:
                        args = {}
                    cid = f"text_call_{len(uses)}"
                    uses.append((cid, called.group(1), args if isinstance(args, dict) else {}))
                    pending_text_calls.append(cid)
                elif result and m.get("role") == "user":
                    name = result.group(2)
                    match = next((c for c in pending_text_calls if uses_name(uses, c) == name), None)
                    if match is not None:
                        pending_text_calls.remove(match)
                        results[match] = result.group(3)
    calls = tuple(PastCall(cid, n, a, results.get(cid)) for cid, n, a in uses)
    choice = req.get("tool_choice") or {}
    parallel = not bool(choice.get("disable_parallel_tool_use"))
    step = plan_step(Situation(task, tools, calls, parallel, True, level))
    redact = MAGIC_REDACTED in task

    # -- usage: tools, system, messages, in cache order --------------------------------------------
    prompt_tokens, bp_list = _prompt_tokens(req, messages, breakpoints)
    cache = sim.cache.anthropic(model, prompt_tokens, bp_list)
    usage_in = {
        "input_tokens": len(prompt_tokens) - cache.read - cache.write,
        "cache_creation_input_tokens": cache.write,
        "cache_read_input_tokens": cache.read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache.write_5m,
            "ephemeral_1h_input_tokens": cache.write_1h,
        },
    }
    content, stop, out_tokens, thinking_tokens = _content(
        sim, ids, step, thinking_on, budget, max_tokens, display, redact, interleaved
    )
    usage = {**usage_in, "output_tokens": out_tokens, "service_tier": "standard"}
    if model != "sim-thinker-legacy":
        usage["output_tokens_details"] = {"thinking_tokens": thinking_tokens}
    msg = {
        "model": model,
        "id": ids.b58("msg_01"),
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    rh = {"request-id": E.anthropic_request_id(ids.seed_bytes), "anthropic-organization-id": "sim-org"}
    if not req.get("stream"):
        rh["content-type"] = "application/json"
        return SimReply(200, rh, json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode())
    rh["content-type"] = "text/event-stream; charset=utf-8"
    return SimReply(200, rh, events=_stream(msg, usage_in, model))


def _validate(  # noqa: C901 - one check per wire rule the real API enforces, each with its own error
    sim: Simulator, req: dict[str, Any], messages: list[Any], thinking_on: bool
) -> list[tuple[int, int, str]]:
    """Check block types, cache_control and thinking continuity; return breakpoints (msg, block, ttl)."""
    bps: list[tuple[int, int, str]] = []
    n_cc = 0
    for t in req.get("tools") or []:
        if isinstance(t, dict) and t.get("cache_control"):
            n_cc += 1
    system = req.get("system")
    if isinstance(system, list):
        n_cc += sum(1 for b in system if isinstance(b, dict) and b.get("cache_control"))
    last_assistant = max(
        (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"),
        default=-1,
    )
    for i, m in enumerate(messages):
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
            if b.get("cache_control") is not None:
                if bt in ("thinking", "redacted_thinking"):
                    raise _bad(f"messages.{i}.content.{j}.{bt}.cache_control: Extra inputs are not permitted")
                n_cc += 1
        if (
            m["role"] == "assistant"
            and blocks
            and blocks[-1].get("type") == "thinking"
            and i != len(messages) - 1
        ):
            raise _bad(f"messages.{i}: The final block in an assistant message cannot be `thinking`.")
    _check_tool_pairs(messages)
    if req.get("cache_control"):
        n_cc += 1
    if n_cc > 4:
        raise _bad(f"A maximum of 4 blocks with cache_control may be provided. Found {n_cc}.")
    if thinking_on and last_assistant >= 0:
        blocks = _blocks(messages[last_assistant].get("content"))
        if any(b.get("type") == "tool_use" for b in blocks):
            first = blocks[0].get("type") if blocks else "nothing"
            if first not in ("thinking", "redacted_thinking"):
                raise _bad(f"messages.{last_assistant}.content.0.type: " + _EXPECTED_THINKING.format(first))
        modified = (
            f"messages.{last_assistant}.content.{{j}}: `thinking` or `redacted_thinking` blocks in the "
            "latest assistant message cannot be modified. These blocks must remain as they were in the "
            "original response."
        )
        present: list[tuple[int, str, str]] = []
        layouts: list[tuple[int, bytes]] = []
        for j, b in enumerate(blocks):
            if b.get("type") == "thinking":
                verdict, layout = sim.signer.check_thinking(b.get("thinking"), b.get("signature"), j)
                if verdict == ThinkingVerdict.INVALID:
                    raise _bad(
                        f"messages.{last_assistant}.content.{j}: Invalid `signature` in `thinking` block"
                    )
                if verdict == ThinkingVerdict.MODIFIED or layout is None:
                    raise _bad(modified.format(j=j))
                present.append((j, "thinking", str(b.get("thinking"))))
                layouts.append((j, layout))
            elif b.get("type") == "redacted_thinking":
                opened = sim.signer.open_redacted(b.get("data"), j)
                if opened is None:
                    raise _bad(modified.format(j=j))
                present.append((j, "redacted_thinking", opened[0]))
                layouts.append((j, opened[1]))
        # The turn as a whole: no sibling block missing, none from another response.
        whole = turn_layout(present)
        for j, layout in layouts:
            if layout != whole:
                raise _bad(modified.format(j=j))
    return bps


_RESULT_NEEDS_USE = (
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
_USE_NEEDS_RESULT = "Each `tool_use` block must have a corresponding `tool_result` block in the next message."


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


def _prompt_tokens(req: dict[str, Any], messages: list[Any], _bps: Any) -> tuple[list[str], list[Breakpoint]]:  # noqa: C901 - one branch per content block type counted
    """Prompt tokens in cache order and the breakpoints (prefix lengths) the request marked."""
    tokens: list[str] = []
    bps: list[Breakpoint] = []

    def add(text: str, cc: Any) -> None:
        tokens.extend(tokenize(text))
        tokens.append("\n")
        if isinstance(cc, dict):
            bps.append(Breakpoint(len(tokens), "1h" if cc.get("ttl") == "1h" else "5m"))

    for t in req.get("tools") or []:
        if isinstance(t, dict):
            add(
                json.dumps({k: v for k, v in t.items() if k != "cache_control"}, sort_keys=True),
                t.get("cache_control"),
            )
    system = req.get("system")
    if isinstance(system, str):
        add("system: " + system, None)
    elif isinstance(system, list):
        for b in system:
            if isinstance(b, dict):
                add("system: " + str(b.get("text", "")), b.get("cache_control"))
    last = len(messages) - 1
    for i, m in enumerate(messages):
        for b in _blocks(m.get("content")):
            bt = b.get("type")
            if bt in ("thinking", "redacted_thinking") and i != last and m.get("role") == "assistant":
                # Thinking from earlier turns is stripped by the API and not billed, as documented.
                continue
            if bt == "text":
                body = str(b.get("text", ""))
            elif bt == "thinking":
                body = str(b.get("thinking", ""))
            elif bt == "redacted_thinking":
                body = "[redacted]"
            else:
                body = json.dumps(
                    {k: v for k, v in b.items() if k not in ("cache_control", "id", "tool_use_id")},
                    sort_keys=True,
                )
            add(f"{m.get('role')}: {body}", b.get("cache_control"))
    if isinstance(req.get("cache_control"), dict) and tokens:
        cc = req["cache_control"]
        bps.append(Breakpoint(len(tokens), "1h" if cc.get("ttl") == "1h" else "5m"))
    return tokens, bps


def _content(
    sim: Simulator,
    ids: Ids,
    step: Step,
    thinking_on: bool,
    budget: int,
    max_tokens: int,
    display: str,
    redact: bool,
    interleaved: bool,
) -> tuple[list[dict[str, Any]], str, int, int]:
    """The assistant content blocks, stop reason, output tokens and thinking tokens."""
    blocks: list[dict[str, Any]] = []
    used = 0
    thinking_tokens = 0
    paras = list(step.reasoning)
    signed: list[tuple[int, str, str]] = []  # (position, type, text) of each thinking block

    def thought(text: str) -> None:
        nonlocal used, thinking_tokens
        text = truncate_tokens(text, max(1, budget - thinking_tokens))
        n = count_tokens(text)
        used += n
        thinking_tokens += n
        pos = len(blocks)
        shown = "" if display == "omitted" else text
        blocks.append({"type": "thinking", "thinking": shown, "signature": ""})  # signed at the end
        signed.append((pos, "thinking", shown))

    def redacted(text: str) -> None:
        nonlocal used, thinking_tokens
        n = count_tokens(text)
        used += n
        thinking_tokens += n
        signed.append((len(blocks), "redacted_thinking", text))
        blocks.append({"type": "redacted_thinking", "data": ""})  # sealed at the end

    calls = list(step.tool_calls)
    if thinking_on:
        head = paras if not (interleaved and len(calls) > 1) else paras[:1] + paras[2:]
        if redact and len(head) >= 1:
            thirds = [
                head[: max(1, len(head) // 3)],
                head[max(1, len(head) // 3) : max(2, 2 * len(head) // 3)],
                head[max(2, 2 * len(head) // 3) :],
            ]
            thought("\n\n".join(thirds[0]))
            redacted("\n\n".join(thirds[1]) or "(hidden)")
            thought("\n\n".join(thirds[2]) or "Proceeding.")
        else:
            thought("\n\n".join(head))
    stop = "tool_use" if calls else "end_turn"
    remaining = max_tokens - used
    for k, (name, args) in enumerate(calls):
        if thinking_on and interleaved and k > 0:
            thought(
                f"Next, {name} for {', '.join(str(v) for v in args.values())}."
                + (f" {paras[1]}" if k == 1 and len(paras) > 1 else "")
            )
            remaining = max_tokens - used
        cost = count_tokens(json.dumps(args)) + count_tokens(name)
        if cost > remaining:
            stop = "max_tokens"
            break
        used += cost
        remaining -= cost
        blocks.append(
            {
                "type": "tool_use",
                "id": ids.b58("toolu_01"),
                "name": name,
                "input": args,
                "caller": {"type": "direct"},
            }
        )
    if step.answer is not None:
        text = step.answer
        if count_tokens(text) > remaining:
            text = truncate_tokens(text, remaining)
            stop = "max_tokens"
        used += count_tokens(text)
        if text:
            blocks.append({"type": "text", "text": text})
    # Sign once the turn is complete: every block's signature binds it to its siblings.
    layout = turn_layout(signed)
    for pos, kind, text in signed:
        if kind == "thinking":
            blocks[pos]["signature"] = sim.signer.sign_thinking(text, pos, layout)
        else:
            blocks[pos]["data"] = sim.signer.seal_redacted(text, pos, layout)
    return blocks, stop, used, thinking_tokens


def _stream(msg: dict[str, Any], usage_in: dict[str, Any], model: str) -> list[SSEEvent]:
    events: list[SSEEvent] = []
    start = {
        **msg,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage_in, "output_tokens": 1, "service_tier": "standard"},
    }
    events.append(sse("message_start", {"type": "message_start", "message": start}))
    for idx, b in enumerate(msg["content"]):
        bt = b["type"]
        if idx == 1:  # the real API pings once, right after the first block started
            pos = next(i for i, e in enumerate(events) if e.raw.startswith(b"event: content_block_start"))
            events.insert(pos + 1, sse("ping", {"type": "ping"}))
        if bt == "thinking":
            events.append(
                sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": idx,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    },
                )
            )
            for d in chunks(b["thinking"]):
                events.append(
                    sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": idx,
                            "delta": {"type": "thinking_delta", "thinking": d},
                        },
                        delta=True,
                    )
                )
            events.append(
                sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": idx,
                        "delta": {"type": "signature_delta", "signature": b["signature"]},
                    },
                )
            )
        elif bt == "redacted_thinking":
            events.append(
                sse("content_block_start", {"type": "content_block_start", "index": idx, "content_block": b})
            )
        elif bt == "text":
            events.append(
                sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": idx,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            for d in chunks(b["text"]):
                events.append(
                    sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": idx,
                            "delta": {"type": "text_delta", "text": d},
                        },
                        delta=True,
                    )
                )
        else:
            events.append(
                sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": idx, "content_block": {**b, "input": {}}},
                )
            )
            args = json.dumps(b["input"], separators=(",", ":"), ensure_ascii=False)
            for d in ["", *chunks(args, 2)]:
                events.append(
                    sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": idx,
                            "delta": {"type": "input_json_delta", "partial_json": d},
                        },
                        delta=True,
                    )
                )
        events.append(sse("content_block_stop", {"type": "content_block_stop", "index": idx}))
    usage = {k: v for k, v in msg["usage"].items() if k not in ("cache_creation", "service_tier")}
    events.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                "usage": usage,
            },
        )
    )
    events.append(sse("message_stop", {"type": "message_stop"}))
    del model
    return events


def models_page() -> dict[str, Any]:
    """``GET /v1/models`` as Anthropic lists models."""
    data = [
        {
            "type": "model",
            "id": m,
            "display_name": m.replace("-", " ").title(),
            "created_at": "2026-01-01T00:00:00Z",
        }
        for m in ANTHROPIC_MODELS
    ]
    return {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}


#: The registry entry of this protocol (see :mod:`agentlab.sim.protocols`).
PROTOCOL = SimProtocol(
    name="anthropic",
    endpoints=("/messages",),
    handle=handle,
    models=ANTHROPIC_MODELS,
    models_page=models_page,
    errors=E.ANTHROPIC,
    unknown_event=sse(
        "sim_unknown_event", {"type": "sim_unknown_event", "note": "an event type this client has never seen"}
    ),
    # The Anthropic SDK always sends it; OpenAI clients never do.
    marker_header="anthropic-version",
)
