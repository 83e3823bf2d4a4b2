"""``POST /v1/responses``: the OpenAI Responses wire protocol, streaming and not.

Event grammar (as in recorded OpenAI traffic): ``response.created``,
``response.in_progress``, then per output item ``response.output_item.added`` ... item events ...
``response.output_item.done``, and finally ``response.completed`` (or ``response.incomplete`` when
``max_output_tokens`` cut the output). Reasoning items stream ``reasoning_summary_part.added``,
``reasoning_summary_text.delta``/``.done``, ``reasoning_summary_part.done`` when a summary was asked
for; function calls stream ``function_call_arguments.delta``/``.done``; messages stream
``content_part.added``, ``output_text.delta``/``.done``, ``content_part.done``. Every event carries
``sequence_number``; text deltas carry ``obfuscation``. Like the real API, the
``output_item.added`` copy of a reasoning item's ``encrypted_content`` is partial (not verifiable);
only the ``output_item.done``/``response.completed`` copies may be sent back.

Rules enforced (each a 4xx in the real shape): unknown model (400 ``model_not_found``);
``temperature`` (400, unsupported on reasoning models); ``previous_response_id`` that is not stored
(400; with ``store: false`` nothing is); items of another provider (400 ``invalid_value``);
tampered or foreign ``encrypted_content`` (400 ``invalid_encrypted_content``); a reasoning item
given by id only while ``store`` is false (404 "Item with id ... not found"); a reasoning item not
followed by the item that followed it in the original output (400 "... without its required
following item."); a ``function_call_output`` without its ``function_call`` or the reverse (400 "No
tool call found ..." / "No tool output found ..."). With ``store`` left true, responses and reasoning
items are kept in memory (bounded) so id-only replay and ``previous_response_id`` work.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from . import errors as E
from .core import OPENAI_MODELS, Ids, SimReply, Simulator, SSEEvent, sse
from .protocols import SimProtocol
from .reasoner import PastCall, Situation, Step, ToolDef, plan_step
from .signing import FIXED_TIMESTAMP
from .tokenizer import chunks, count_tokens, tokenize, truncate_tokens

EFFORT_LEVELS = {"none": -1, "minimal": 0, "low": 1, "medium": 2, "high": 4, "xhigh": 6}
_ITEM_TYPES = ("message", "reasoning", "function_call", "function_call_output", "item_reference")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for p in content or []:
        if isinstance(p, dict) and isinstance(p.get("text"), str):
            parts.append(p["text"])
    return "\n".join(parts)


def _bad(message: str, param: str | None = "input", code: str | None = None) -> E.SimError:
    return E.OPENAI.bad_request(message, param, code)


def _abbrev(token: str) -> str:
    return f"{token[:4]}...{token[-4:]}" if len(token) > 12 else token


class _Parsed:
    """The request, validated, as the planner and the usage counter need it."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.segments: list[str] = []
        self.reasoning_payloads: list[dict[str, Any]] = []


def _normalise_input(raw: Any) -> list[dict[str, Any]]:
    if isinstance(raw, str):
        return [{"type": "message", "role": "user", "content": raw}]
    if not isinstance(raw, list):
        raise _bad(
            "Invalid type for 'input': expected a string or an array of input items.", "input", "invalid_type"
        )
    out: list[dict[str, Any]] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise _bad(f"Invalid type for 'input[{i}]': expected an object.", f"input[{i}]", "invalid_type")
        kind = item.get("type", "message" if "role" in item else None)
        if kind not in _ITEM_TYPES:
            raise _bad(
                f"Invalid value: '{kind}'. Supported values are: 'message', 'reasoning', 'function_call', "
                "'function_call_output' and 'item_reference'.",
                f"input[{i}].type",
                "invalid_value",
            )
        out.append({**item, "type": kind})
    return out


def handle(sim: Simulator, req: dict[str, Any], headers: dict[str, str], model: str) -> SimReply:  # noqa: C901 - one branch per simulated behaviour (options, faults, tool turns, stream or not)
    """Answer one Responses request (model already validated and stripped of options)."""
    raw_bytes = json.dumps(req, sort_keys=True, separators=(",", ":")).encode()
    ids = Ids(sim.seed, raw_bytes)
    if "temperature" in req and req["temperature"] is not None:
        raise _bad("Unsupported parameter: 'temperature' is not supported with this model.", "temperature")
    store = req.get("store", True) is not False
    prev = req.get("previous_response_id")
    items = _normalise_input(req.get("input", []))
    if prev is not None:
        stored = sim.stored.get(str(prev)) if store else None
        if stored is None:
            raise E.SimError(
                400,
                "invalid_request_error",
                f"Previous response with id '{prev}' not found.",
                "previous_response_id",
                "previous_response_not_found",
            )
        items = list(stored["input"]) + list(stored["output"]) + items
    include = req.get("include") or []
    want_encrypted = "reasoning.encrypted_content" in include
    reasoning_cfg = req.get("reasoning") or {}
    effort = reasoning_cfg.get("effort") or "medium"
    if effort not in EFFORT_LEVELS:
        raise _bad(
            f"Invalid value: '{effort}'. Supported values are: 'none', 'minimal', 'low', 'medium', "
            "'high' and 'xhigh'.",
            "reasoning.effort",
            "invalid_value",
        )
    want_summary = (
        reasoning_cfg.get("summary") is not None or reasoning_cfg.get("generate_summary") is not None
    )

    tools = _tools(req.get("tools") or [])
    # -- verify opaque items, locate the task and the current loop -------------------------------
    payloads: dict[int, dict[str, Any]] = {}
    for i, it in enumerate(items):
        if it["type"] != "reasoning":
            continue
        token = it.get("encrypted_content")
        rid = str(it.get("id", ""))
        if token is None:
            hit = sim.stored.get("item:" + rid) if store else None
            if hit is None:
                if not store:
                    raise E.SimError(
                        404,
                        "invalid_request_error",
                        f"Item with id '{rid}' not found. Items are "
                        "not persisted when `store` is set to false. Try again with `store` set to "
                        "true, or remove this item from your input.",
                        "input",
                        None,
                    )
                raise E.SimError(
                    404, "invalid_request_error", f"Item with id '{rid}' not found.", "input", None
                )
            payloads[i] = hit
            continue
        payload = sim.signer.decrypt_reasoning(token)
        if payload is None or payload.get("rid") != rid:
            raise E.SimError(
                400,
                "invalid_request_error",
                f"The encrypted content {_abbrev(str(token))} could not be verified.",
                None,
                "invalid_encrypted_content",
            )
        payloads[i] = payload
    for i, payload in payloads.items():
        nxt = items[i + 1] if i + 1 < len(items) else None
        want = payload.get("next") or {}
        ok = nxt is not None and (
            (
                want.get("type") == "function_call"
                and nxt["type"] == "function_call"
                and nxt.get("call_id") == want.get("call_id")
            )
            or (
                want.get("type") == "message" and nxt["type"] == "message" and nxt.get("id") == want.get("id")
            )
        )
        if want and not ok:
            raise E.SimError(
                400,
                "invalid_request_error",
                f"Item '{items[i].get('id')}' of type 'reasoning' "
                "was provided without its required following item.",
                "input",
                None,
            )

    _check_call_pairs(items)
    last_user = max(
        (i for i, it in enumerate(items) if it["type"] == "message" and it.get("role") == "user"), default=-1
    )
    task = _text_of(items[last_user].get("content")) if last_user >= 0 else ""
    loop = items[last_user + 1 :]
    outputs = {
        str(it.get("call_id")): _text_of(it.get("output"))
        for it in loop
        if it["type"] == "function_call_output"
    }
    calls: list[PastCall] = []
    for it in loop:
        if it["type"] == "function_call":
            try:
                args = json.loads(it.get("arguments") or "{}")
            except ValueError:
                args = {}
            cid = str(it.get("call_id"))
            calls.append(
                PastCall(cid, str(it.get("name")), args if isinstance(args, dict) else {}, outputs.get(cid))
            )
    planned = {c for i, p in payloads.items() if i > last_user for c in p.get("calls", [])}
    plan_known = all(c.call_id in planned for c in calls)
    level = EFFORT_LEVELS[effort]
    parallel = req.get("parallel_tool_calls", True) is not False
    step = plan_step(Situation(task, tools, tuple(calls), parallel, plan_known, max(level, 0)))

    # -- usage -------------------------------------------------------------------------------------
    segments = [json.dumps(req.get("tools") or [], sort_keys=True), str(req.get("instructions") or "")]
    for i, it in enumerate(items):
        if it["type"] == "reasoning":
            segments.append("reasoning: " + str(payloads.get(i, {}).get("text", "")))
        elif it["type"] == "message":
            segments.append(f"{it.get('role')}: {_text_of(it.get('content'))}")
        else:
            segments.append(
                json.dumps({k: v for k, v in it.items() if k not in ("id", "status")}, sort_keys=True)
            )
    prompt_tokens: list[str] = []
    for s in segments:
        prompt_tokens += [*tokenize(s), "\n"]
    cached = sim.cache.openai(model, req.get("prompt_cache_key"), prompt_tokens)

    return _build(
        sim,
        req,
        ids,
        model,
        step,
        level,
        want_summary,
        want_encrypted,
        store,
        len(prompt_tokens),
        cached,
        headers,
        items,
        plan_known,
    )


def _check_call_pairs(items: list[dict[str, Any]]) -> None:
    """Every function_call_output needs its function_call, and every function_call its output."""
    calls = [str(it.get("call_id")) for it in items if it["type"] == "function_call"]
    outputs = [str(it.get("call_id")) for it in items if it["type"] == "function_call_output"]
    for cid in outputs:
        if cid not in calls:
            raise _bad(f"No tool call found for function call output with call_id {cid}.")
    for cid in calls:
        if cid not in outputs:
            raise _bad(f"No tool output found for function call {cid}.")


def _tools(raw: list[Any]) -> tuple[ToolDef, ...]:
    out: list[ToolDef] = []
    for i, t in enumerate(raw):
        if not isinstance(t, dict) or t.get("type") != "function" or not t.get("name"):
            if isinstance(t, dict) and t.get("type") not in (None, "function"):
                continue  # hosted tools are accepted and never called by the simulator
            raise _bad(
                f"Missing required parameter: 'tools[{i}].name'.",
                f"tools[{i}].name",
                "missing_required_parameter",
            )
        out.append(ToolDef(str(t["name"]), str(t.get("description") or ""), dict(t.get("parameters") or {})))
    return tuple(out)


def _build(
    sim: Simulator,
    req: dict[str, Any],
    ids: Ids,
    model: str,
    step: Step,
    level: int,
    want_summary: bool,
    want_encrypted: bool,
    store: bool,
    input_tokens: int,
    cached: int,
    headers: dict[str, str],
    items: list[dict[str, Any]],
    plan_known: bool,
) -> SimReply:
    resp_id = ids.hex("resp_")
    max_out = req.get("max_output_tokens")
    budget = int(max_out) if isinstance(max_out, int) else 10**9
    reasoning_tokens = count_tokens(step.reasoning_text) if level >= 0 else 0
    output: list[dict[str, Any]] = []
    incomplete = False
    used = min(reasoning_tokens, budget)
    if reasoning_tokens >= budget:
        incomplete = True

    planned_calls: list[dict[str, Any]] = []
    message: dict[str, Any] | None = None
    if not incomplete:
        remaining = budget - reasoning_tokens
        for name, args in step.tool_calls:
            arguments = json.dumps(args, separators=(",", ":"))
            cost = count_tokens(arguments) + count_tokens(name)
            if cost > remaining:
                incomplete = True
                break
            remaining -= cost
            used += cost
            planned_calls.append(
                {
                    "id": ids.hex("fc_"),
                    "type": "function_call",
                    "status": "completed",
                    "arguments": arguments,
                    "call_id": ids.alnum("call_"),
                    "name": name,
                }
            )
        if step.answer is not None:
            text = step.answer
            if count_tokens(text) > remaining:
                text = truncate_tokens(text, remaining)
                incomplete = True
            used += count_tokens(text)
            message = {
                "id": ids.hex("msg_"),
                "type": "message",
                "status": "incomplete" if incomplete else "completed",
                "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}],
                "role": "assistant",
            }
    if level >= 0:
        rid = ids.hex("rs_")
        nxt: dict[str, Any] = {}
        if planned_calls:
            nxt = {"type": "function_call", "call_id": planned_calls[0]["call_id"]}
        elif message is not None:
            nxt = {"type": "message", "id": message["id"]}
        payload = {
            "rid": rid,
            "model": model,
            "calls": [c["call_id"] for c in planned_calls],
            "next": nxt,
            "text": step.reasoning_text,
            "task": hashlib.sha256(step.reasoning[0].encode()).hexdigest()[:16],
        }
        ritem: dict[str, Any] = {
            "id": rid,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": step.summary}] if want_summary else [],
        }
        if want_encrypted:
            ritem["encrypted_content"] = sim.signer.encrypt_reasoning(payload)
        output.append(ritem)
        if store:
            sim.remember("item:" + rid, payload)
    output += planned_calls
    if message is not None:
        output.append(message)

    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": used,
        "output_tokens_details": {"reasoning_tokens": min(reasoning_tokens, budget)},
        "total_tokens": input_tokens + used,
    }
    status = "incomplete" if incomplete else "completed"
    base = _response_shell(req, resp_id, model, store)
    final = {
        **base,
        "status": status,
        "completed_at": FIXED_TIMESTAMP + 2 if not incomplete else None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "output": output,
        "usage": usage,
    }
    if store:
        sim.remember(resp_id, {"input": items, "output": output})
    rh = {
        "x-request-id": E.openai_request_id(ids.seed_bytes),
        "openai-processing-ms": "1",
        "x-sim-plan": "known" if plan_known else "lost",
    }
    if not req.get("stream"):
        rh["content-type"] = "application/json"
        return SimReply(200, rh, json.dumps(final, separators=(",", ":")).encode())
    rh["content-type"] = "text/event-stream; charset=utf-8"
    return SimReply(200, rh, events=_stream(ids, base, final, output, want_encrypted))


def _response_shell(req: dict[str, Any], resp_id: str, model: str, store: bool) -> dict[str, Any]:
    reasoning = req.get("reasoning") or {}
    return {
        "id": resp_id,
        "object": "response",
        "created_at": FIXED_TIMESTAMP,
        "status": "in_progress",
        "background": False,
        "completed_at": None,
        "error": None,
        "frequency_penalty": 0.0,
        "incomplete_details": None,
        "instructions": req.get("instructions"),
        "max_output_tokens": req.get("max_output_tokens"),
        "max_tool_calls": req.get("max_tool_calls"),
        "model": model,
        "output": [],
        "parallel_tool_calls": req.get("parallel_tool_calls", True) is not False,
        "presence_penalty": 0.0,
        "previous_response_id": req.get("previous_response_id"),
        "prompt_cache_key": req.get("prompt_cache_key"),
        "prompt_cache_retention": "in_memory",
        "reasoning": {
            "effort": reasoning.get("effort") or "medium",
            "summary": "detailed" if reasoning.get("summary") else None,
        },
        "safety_identifier": None,
        "service_tier": "default",
        "store": store,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": req.get("tool_choice", "auto"),
        "tools": [_echo_tool(t) for t in req.get("tools") or []],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": None,
        "user": None,
        "metadata": req.get("metadata") or {},
    }


def _echo_tool(t: dict[str, Any]) -> dict[str, Any]:
    if t.get("type") != "function":
        return t
    return {
        "type": "function",
        "description": t.get("description"),
        "name": t.get("name"),
        "parameters": t.get("parameters"),
        "strict": t.get("strict", True),
    }


def _stream(
    ids: Ids, base: dict[str, Any], final: dict[str, Any], output: list[dict[str, Any]], want_encrypted: bool
) -> list[SSEEvent]:
    events: list[SSEEvent] = []
    seq = 0
    obf_seed = ids.seed_bytes

    def emit(kind: str, data: dict[str, Any], *, delta: bool = False) -> None:
        nonlocal seq
        body = {"type": kind, **data, "sequence_number": seq}
        if delta:
            h = hashlib.sha256(obf_seed + seq.to_bytes(4, "big")).hexdigest()
            body["obfuscation"] = h[: 2 + (seq * 7) % 14]
        events.append(sse(kind, body, delta=delta))
        seq += 1

    emit("response.created", {"response": base})
    emit("response.in_progress", {"response": base})
    for idx, item in enumerate(output):
        kind = item["type"]
        if kind == "reasoning":
            added = {**item, "summary": []}
            if want_encrypted:
                full = item["encrypted_content"]
                added["encrypted_content"] = full[: len(full) // 2]
            emit("response.output_item.added", {"item": added, "output_index": idx})
            for si, part in enumerate(item["summary"]):
                emit(
                    "response.reasoning_summary_part.added",
                    {
                        "item_id": item["id"],
                        "output_index": idx,
                        "part": {"type": "summary_text", "text": ""},
                        "summary_index": si,
                    },
                )
                for d in chunks(part["text"]):
                    emit(
                        "response.reasoning_summary_text.delta",
                        {"delta": d, "item_id": item["id"], "output_index": idx, "summary_index": si},
                        delta=True,
                    )
                emit(
                    "response.reasoning_summary_text.done",
                    {"item_id": item["id"], "output_index": idx, "summary_index": si, "text": part["text"]},
                )
                emit(
                    "response.reasoning_summary_part.done",
                    {
                        "item_id": item["id"],
                        "output_index": idx,
                        "part": {"type": "summary_text", "text": part["text"]},
                        "summary_index": si,
                    },
                )
        elif kind == "function_call":
            emit(
                "response.output_item.added",
                {"item": {**item, "status": "in_progress", "arguments": ""}, "output_index": idx},
            )
            for d in chunks(item["arguments"], 2):
                emit(
                    "response.function_call_arguments.delta",
                    {"delta": d, "item_id": item["id"], "output_index": idx},
                    delta=True,
                )
            emit(
                "response.function_call_arguments.done",
                {"arguments": item["arguments"], "item_id": item["id"], "output_index": idx},
            )
        else:
            emit(
                "response.output_item.added",
                {"item": {**item, "status": "in_progress", "content": []}, "output_index": idx},
            )
            text = item["content"][0]["text"]
            empty_part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            emit(
                "response.content_part.added",
                {"content_index": 0, "item_id": item["id"], "output_index": idx, "part": empty_part},
            )
            for d in chunks(text):
                emit(
                    "response.output_text.delta",
                    {
                        "content_index": 0,
                        "delta": d,
                        "item_id": item["id"],
                        "logprobs": [],
                        "output_index": idx,
                    },
                    delta=True,
                )
            emit(
                "response.output_text.done",
                {
                    "content_index": 0,
                    "item_id": item["id"],
                    "logprobs": [],
                    "output_index": idx,
                    "text": text,
                },
            )
            emit(
                "response.content_part.done",
                {"content_index": 0, "item_id": item["id"], "output_index": idx, "part": item["content"][0]},
            )
        emit("response.output_item.done", {"item": item, "output_index": idx})
    emit(
        "response.completed" if final["status"] == "completed" else "response.incomplete", {"response": final}
    )
    return events


def models_page() -> dict[str, Any]:
    """``GET /v1/models`` as OpenAI lists models."""
    return {
        "object": "list",
        "data": [
            {"id": m, "object": "model", "created": 1767225600, "owned_by": "agentlab-sim"}
            for m in OPENAI_MODELS
        ],
    }


_UNKNOWN_EVENT = "response.sim_unknown_event"

#: The registry entry of this protocol (see :mod:`agentlab.sim.protocols`).
PROTOCOL = SimProtocol(
    name="openai",
    endpoints=("/responses",),
    handle=handle,
    models=OPENAI_MODELS,
    models_page=models_page,
    errors=E.OPENAI,
    unknown_event=sse(
        _UNKNOWN_EVENT,
        {"type": _UNKNOWN_EVENT, "note": "an event type this client has never seen", "sequence_number": 1},
    ),
)
