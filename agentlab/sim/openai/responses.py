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
``temperature`` (400, unsupported on reasoning models); ``tool_choice`` ``"required"`` without
tools or naming a function (or hosted tool type) the request does not declare (400, the API's
"Tool choice ... 'tools' parameter." texts; the choice then decides the turn, see
:class:`agentlab.sim.reasoner.ToolChoice`); ``previous_response_id`` that is not stored
(400; with ``store: false`` nothing is); items of another provider (400 ``invalid_value``);
tampered or foreign ``encrypted_content`` (400 ``invalid_encrypted_content``); a reasoning item
given by id only while ``store`` is false (404 "Item with id ... not found"); a reasoning item not
followed by the item that followed it in the original output (400 "... without its required
following item."); on gpt-5.4 and later (and ``sim-reasoner``), the reverse: an output
``message`` sent back with its id but without the reasoning item it came with (400 "Item
'msg_...' of type 'message' was provided without its required 'reasoning' item: 'rs_...'."; the
simulator remembers which reasoning item each message it wrote came with); a
``function_call_output`` without its ``function_call`` or the reverse (400 "No tool call found
..." / "No tool output found ..."). With ``store`` left true, responses and reasoning
items are kept in memory (bounded) so id-only replay and ``previous_response_id`` work.

Assistant-message ``phase`` (``commentary`` / ``final_answer``, and the preamble ``sim-reasoner``
writes before tool calls when asked to) is in :mod:`agentlab.sim.openai.phase`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import agentlab.sim.errors as E
from agentlab.sim.access import openai_headers
from agentlab.sim.batch.openai import ROUTES as BATCH_ROUTES
from agentlab.sim.core import OPENAI_MODELS, Ids, SimReply, Simulator, SSEEvent, sse
from agentlab.sim.openai import compaction as compaction
from agentlab.sim.openai import dialects as dialects
from agentlab.sim.openai import phase as phase
from agentlab.sim.protocols import Route, RouteCall, SimProtocol
from agentlab.sim.real_models import OPENAI_REAL_MODELS, requested_name
from agentlab.sim.reasoner import PastCall, Situation, Step, ToolChoice, ToolDef, plan_step
from agentlab.sim.routes import json_reply, models_routes, require_model
from agentlab.sim.schemas.dialects import check_openai_request
from agentlab.sim.signing import FIXED_TIMESTAMP
from agentlab.sim.structured import instance, openai_format, openai_text_echo
from agentlab.sim.tokenizer import chunks, count_tokens, tokenize, truncate_tokens

EFFORT_LEVELS = {"none": -1, "minimal": 0, "low": 1, "medium": 2, "high": 4, "xhigh": 6}
_ITEM_TYPES = (
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "item_reference",
    "compaction",
)


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


@dataclass(frozen=True)
class _Options:
    """The request's knobs, validated: what the reply depends on besides the plan."""

    store: bool
    level: int
    want_summary: bool
    want_encrypted: bool


@dataclass(frozen=True)
class _Prompt:
    """The validated input as the reply needs it: its size, the cached part, and the plan's state."""

    items: list[dict[str, Any]]
    input_tokens: int
    cached: int
    plan_known: bool


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


def handle(sim: Simulator, req: dict[str, Any], headers: dict[str, str], model: str) -> SimReply:
    """Answer one Responses request (model already validated and stripped of options).

    The checks run in this order because the first failing one is the error the client sees: the
    body against the published schema (unknown, mistyped, missing fields), the options, then the
    input items (and a ``previous_response_id``'s stored ones), the reasoning effort, the tools, the
    opaque reasoning items, and the pairing of tool calls and outputs.
    """
    check_openai_request(req)
    ids = Ids(sim.seed, json.dumps(req, sort_keys=True, separators=(",", ":")).encode())
    _check_temperature(req)
    host = dialects.profile(model)
    store = req.get("store", True) is not False
    items = _input_items(sim, req, store)
    opts = _options(req, store)
    tools = _tools(req.get("tools") or [])
    fmt = openai_format(req)
    payloads = _reasoning_payloads(sim, items, store, host)
    if host.strict_following:
        _check_following_items(items, payloads)
    if pairs_both_ways(str(req["model"])):
        _check_reasoning_of_messages(sim, items)
    _check_call_pairs(items)
    choice, tools = _tool_choice(req, tools)
    step, plan_known = _plan(req, items, payloads, tools, opts.level, choice)
    if fmt is not None and step.answer is not None:
        step = dataclasses.replace(step, answer=_formatted(fmt, step.answer))
    prompt_tokens = _prompt_tokens(req, items, payloads)
    cached = sim.cache.openai(model, req.get("prompt_cache_key"), prompt_tokens)
    prompt = _Prompt(items, len(prompt_tokens), cached, plan_known)
    return _build(sim, req, ids, model, step, opts, prompt, host)


def _formatted(fmt: dict[str, Any], answer: str) -> str:
    """The final answer as the JSON document ``text.format`` asks for (see ``agentlab.sim.structured``)."""
    if fmt.get("type") == "json_object":
        return json.dumps({"answer": answer}, ensure_ascii=False)
    return json.dumps(instance(fmt["schema"], answer), ensure_ascii=False)


def _check_temperature(req: dict[str, Any]) -> None:
    """Reasoning models refuse ``temperature`` (an explicit ``null`` is accepted)."""
    if "temperature" in req and req["temperature"] is not None:
        raise _bad("Unsupported parameter: 'temperature' is not supported with this model.", "temperature")


def _input_items(sim: Simulator, req: dict[str, Any], store: bool) -> list[dict[str, Any]]:
    """The input items, after those of the stored ``previous_response_id`` (never with ``store: false``)."""
    prev = req.get("previous_response_id")
    items = _normalise_input(req.get("input", []))
    if prev is None:
        return items
    stored = sim.stored.get(str(prev)) if store else None
    if stored is None:
        raise E.SimError(
            400,
            "invalid_request_error",
            f"Previous response with id '{prev}' not found.",
            "previous_response_id",
            "previous_response_not_found",
        )
    return list(stored["input"]) + list(stored["output"]) + items


def _options(req: dict[str, Any], store: bool) -> _Options:
    """``include``, ``reasoning.effort`` (one of :data:`EFFORT_LEVELS`) and the summary wish."""
    include = req.get("include") or []
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
    return _Options(store, EFFORT_LEVELS[effort], want_summary, "reasoning.encrypted_content" in include)


def _reasoning_payloads(
    sim: Simulator, items: list[dict[str, Any]], store: bool, host: dialects.Profile = dialects.OPENAI
) -> dict[int, dict[str, Any]]:
    """The sealed payload of every reasoning item, by position: decrypted, or looked up by id.

    A host whose ``encrypted_content`` is not ciphertext reads the item it keeps (see
    :func:`agentlab.sim.openai.dialects.text_payload`).
    """
    payloads: dict[int, dict[str, Any]] = {}
    for i, it in enumerate(items):
        if it["type"] == compaction.KIND:
            payloads[i] = compaction.decrypted(sim, it)
            continue
        if it["type"] != "reasoning":
            continue
        if host.encrypted != "ciphertext":
            payloads[i] = dialects.text_payload(sim.stored, it, host)
        elif it.get("encrypted_content") is None:
            payloads[i] = _stored_reasoning(sim, str(it.get("id", "")), store)
        else:
            payloads[i] = _decrypted_reasoning(sim, it, host)
    return payloads


def _stored_reasoning(sim: Simulator, rid: str, store: bool) -> dict[str, Any]:
    """A reasoning item sent by id only: found only when stored (404 otherwise, as the real API)."""
    hit = sim.stored.get("item:" + rid) if store else None
    if hit is not None:
        return hit
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
    raise E.SimError(404, "invalid_request_error", f"Item with id '{rid}' not found.", "input", None)


def _decrypted_reasoning(
    sim: Simulator, item: dict[str, Any], host: dialects.Profile = dialects.OPENAI
) -> dict[str, Any]:
    """The payload of ``encrypted_content``; tampered, foreign or re-labelled tokens are a 400."""
    token = item.get("encrypted_content")
    sealed = dialects.unwrap(host, token)
    payload = None if sealed is None else sim.signer.decrypt_reasoning(sealed)
    if payload is None or payload.get("rid") != str(item.get("id", "")):
        raise E.SimError(
            400,
            "invalid_request_error",
            f"The encrypted content {_abbrev(str(token))} could not be verified.",
            None,
            "invalid_encrypted_content",
        )
    return payload


def _follows(want: dict[str, Any], nxt: dict[str, Any] | None) -> bool:
    """Whether ``nxt`` is the item that followed the reasoning item in its original output."""
    if nxt is None:
        return False
    if want.get("type") == "function_call":
        by_id = want.get("id") is not None and nxt.get("id") == want.get("id")  # ids reused per response
        return nxt["type"] == "function_call" and (nxt.get("call_id") == want.get("call_id") or by_id)
    return want.get("type") == "message" and nxt["type"] == "message" and nxt.get("id") == want.get("id")


def _check_following_items(items: list[dict[str, Any]], payloads: dict[int, dict[str, Any]]) -> None:
    """A reasoning item must come with the item that followed it (the real API's 400 otherwise)."""
    for i, payload in payloads.items():
        want = payload.get("next") or {}
        if want and not _follows(want, items[i + 1] if i + 1 < len(items) else None):
            raise E.SimError(
                400,
                "invalid_request_error",
                f"Item '{items[i].get('id')}' of type 'reasoning' "
                "was provided without its required following item.",
                "input",
                None,
            )


#: Simulated models that reject a message sent back without its reasoning item (like gpt-5.4+).
BOTH_WAYS_MODELS = frozenset({"sim-reasoner"})
FIRST_BOTH_WAYS_VERSION = (5, 4)
_GPT_VERSION = re.compile(r"gpt-(\d+)(?:\.(\d+))?(?![\d.])")


def pairs_both_ways(model: str) -> bool:
    """Whether the model the client asked for also checks pairing in reverse (gpt-5.4 and later).

    Like ``phase`` (:mod:`agentlab.sim.openai.phase`), the real name decides: gpt-5.2 served by
    sim-reasoner keeps the old, one-way rule.
    """
    name = requested_name(model)
    if name.startswith("sim-"):
        return name in BOTH_WAYS_MODELS
    m = _GPT_VERSION.match(name)
    return m is not None and (int(m.group(1)), int(m.group(2) or 0)) >= FIRST_BOTH_WAYS_VERSION


def _check_reasoning_of_messages(sim: Simulator, items: list[dict[str, Any]]) -> None:
    """A message this simulator wrote after a reasoning item goes back with that item before it."""
    seen: set[str] = set()
    for it in items:
        if it["type"] == "reasoning":
            seen.add(str(it.get("id", "")))
            continue
        if it["type"] != "message" or not it.get("id"):
            continue
        paired = sim.stored.get("pair:" + str(it["id"]))
        if paired is not None and paired["rid"] not in seen:
            raise E.SimError(
                400,
                "invalid_request_error",
                f"Item '{it['id']}' of type 'message' was provided without its required 'reasoning' "
                f"item: '{paired['rid']}'.",
                "input",
                None,
            )


def _plan(
    req: dict[str, Any],
    items: list[dict[str, Any]],
    payloads: dict[int, dict[str, Any]],
    tools: tuple[ToolDef, ...],
    level: int,
    choice: ToolChoice,
) -> tuple[Step, bool]:
    """The planner's step for the task (the last user message) and its current loop.

    The plan is known when every tool call of the loop was planned by a reasoning item the request
    carries back; otherwise the model re-plans (the continuity effect in the module docstring).
    """
    last_user = max(
        (i for i, it in enumerate(items) if it["type"] == "message" and it.get("role") == "user"), default=-1
    )
    task = _text_of(items[last_user].get("content")) if last_user >= 0 else ""
    calls = _past_calls(items[last_user + 1 :])
    planned = {c for i, p in payloads.items() if i > last_user for c in _planned(p)}
    plan_known = all(c.call_id in planned for c in calls)
    parallel = req.get("parallel_tool_calls", True) is not False
    situation = Situation(task, tools, tuple(calls), parallel, plan_known, max(level, 0), choice)
    return plan_step(situation), plan_known


def _planned(payload: dict[str, Any]) -> list[str]:
    """The call ids a reasoning item planned, also as a client scopes reused ids (``<resp>:call_0``)."""
    calls = [str(c) for c in payload.get("calls", [])]
    resp = payload.get("resp")
    return calls + [f"{resp}:{c}" for c in calls] if resp else calls


def _past_calls(loop: list[dict[str, Any]]) -> list[PastCall]:
    """The function calls of the current loop with their outputs (unparsable arguments read as {})."""
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
    return calls


def _prompt_tokens(
    req: dict[str, Any], items: list[dict[str, Any]], payloads: dict[int, dict[str, Any]]
) -> list[str]:
    """The prompt as tokens (tools, instructions, then every item), for usage and the prompt cache."""
    segments = [json.dumps(req.get("tools") or [], sort_keys=True), str(req.get("instructions") or "")]
    for i, it in enumerate(items):
        if it["type"] == compaction.KIND:  # it replaces the context before it
            segments = [*segments[:2], "compaction: " + str(payloads.get(i, {}).get("summary", ""))]
        elif it["type"] == "reasoning":
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
    return prompt_tokens


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


def _choice_not_found(kind: str) -> E.SimError:
    return _bad(f"Tool choice '{kind}' not found in 'tools' parameter.", "tool_choice", None)


def _tool_choice(req: dict[str, Any], tools: tuple[ToolDef, ...]) -> tuple[ToolChoice, tuple[ToolDef, ...]]:
    """``tool_choice`` as the planner takes it, and the function tools it may use.

    ``"required"`` needs tools; a named function (``{"type": "function", "name": ...}``) or a hosted
    tool type must be among them (the API's 400s otherwise); ``allowed_tools`` narrows the tools to
    its list under its ``mode``. A hosted tool forced by type is never called by the simulator.
    """
    raw = req.get("tool_choice", "auto")
    declared = req.get("tools") or []
    if isinstance(raw, str):
        if raw == "required" and not declared:
            raise _bad(
                "Tool choice 'required' must be specified with 'tools' parameter.", "tool_choice", None
            )
        return ToolChoice(raw if raw in ("none", "required") else "auto"), tools
    kind = str(raw.get("type")) if isinstance(raw, dict) else ""
    if kind == "function":
        if not any(t.name == raw.get("name") for t in tools):
            raise _choice_not_found(kind)
        return ToolChoice("tool", str(raw["name"])), tools
    if kind == "allowed_tools":
        allowed = {str(t.get("name")) for t in raw.get("tools") or [] if isinstance(t, dict)}
        mode = "required" if raw.get("mode") == "required" else "auto"
        return ToolChoice(mode), tuple(t for t in tools if t.name in allowed)
    if not any(isinstance(t, dict) and t.get("type") == kind for t in declared):
        raise _choice_not_found(kind)
    return ToolChoice(), tools


@dataclass
class _Output:
    """The visible output of one call within ``max_output_tokens``, and the tokens it used."""

    budget: int
    reasoning_tokens: int
    used: int = 0
    incomplete: bool = False
    calls: list[dict[str, Any]] = field(default_factory=list)
    message: dict[str, Any] | None = None
    preamble: dict[str, Any] | None = None  # commentary before the calls (see agentlab.sim.openai.phase)


def _build(
    sim: Simulator,
    req: dict[str, Any],
    ids: Ids,
    model: str,
    step: Step,
    opts: _Options,
    prompt: _Prompt,
    host: dialects.Profile = dialects.OPENAI,
) -> SimReply:
    """The response (JSON or stream) for ``step``, stored when ``store`` is on.

    Ids are drawn in a fixed order (response, calls, message, reasoning item) so the same request
    and seed give the same bytes.
    """
    resp_id = ids.hex("resp_")
    out = _visible_output(req, ids, step, opts.level)
    if host.reused_call_ids:  # Mantle numbers the calls of each response from call_0
        for n, call in enumerate(out.calls):
            call["call_id"] = f"call_{n}"
    _phases(req, ids, step, prompt.items, out)
    if host.phase and out.message is not None:
        out.message["phase"] = "final_answer"
    output: list[dict[str, Any]] = []
    if opts.level >= 0:
        output.append(_reasoning_item(sim, ids, model, step, opts, out, (resp_id, host)))
    if out.preamble is not None:
        output.append(out.preamble)
    output += out.calls
    if out.message is not None:
        output.append(out.message)
    _compact(sim, req, ids, prompt, output, out)
    base = _response_shell(req, resp_id, str(req["model"]), opts.store)  # the label, see app
    final = {
        **base,
        "status": "incomplete" if out.incomplete else "completed",
        "completed_at": FIXED_TIMESTAMP + 2 if not out.incomplete else None,
        "incomplete_details": {"reason": "max_output_tokens"} if out.incomplete else None,
        "output": output,
        "usage": _usage(prompt.input_tokens, prompt.cached, out),
    }
    dialects.extras(host, final)
    for msg in (out.preamble, out.message):  # which reasoning item each message came with
        if msg is not None and opts.level >= 0:
            sim.remember("pair:" + msg["id"], {"rid": output[0]["id"]})
    if opts.store:  # ``response`` (a copy) is what ``GET /v1/responses/{id}`` returns
        kept = json.loads(json.dumps(final))
        sim.remember(resp_id, {"input": prompt.items, "output": output, "response": kept})
    rh = {
        "x-request-id": E.openai_request_id(ids.seed_bytes),
        "openai-processing-ms": "1",
        "x-sim-plan": "known" if prompt.plan_known else "lost",
    }
    unlabelled = phase.missing(prompt.items) if phase.labels_phase(str(req["model"])) else 0
    if unlabelled:
        rh[phase.MISSING_HEADER] = str(unlabelled)
    if not req.get("stream"):
        rh["content-type"] = "application/json"
        return SimReply(200, rh, json.dumps(final, separators=(",", ":")).encode())
    rh["content-type"] = "text/event-stream; charset=utf-8"
    return SimReply(200, rh, events=_stream(ids, base, final, output, opts.want_encrypted))


def _compact(
    sim: Simulator, req: dict[str, Any], ids: Ids, prompt: _Prompt, output: list[dict[str, Any]], out: _Output
) -> None:
    """A ``compaction`` item first when the prompt is over ``compact_threshold`` (its summary is output)."""
    limit = compaction.threshold(req)
    if limit is None or prompt.input_tokens <= limit or out.incomplete:
        return
    users = [it for it in prompt.items if it["type"] == "message" and it.get("role") == "user"]
    task = _text_of(users[-1].get("content")) if users else ""
    calls = sum(1 for it in prompt.items if it["type"] == "function_call_output")
    text = compaction.summary(task, calls)
    out.used += count_tokens(text)
    output.insert(0, compaction.item(sim, ids, text))


def _visible_output(req: dict[str, Any], ids: Ids, step: Step, level: int) -> _Output:
    """Reasoning first, then tool calls or the answer, until ``max_output_tokens`` runs out."""
    max_out = req.get("max_output_tokens")
    budget = int(max_out) if isinstance(max_out, int) else 10**9
    reasoning_tokens = count_tokens(step.reasoning_text) if level >= 0 else 0
    out = _Output(budget, reasoning_tokens, min(reasoning_tokens, budget), reasoning_tokens >= budget)
    if out.incomplete:
        return out
    remaining = budget - reasoning_tokens
    for name, args in step.tool_calls:
        arguments = json.dumps(args, separators=(",", ":"))
        cost = count_tokens(arguments) + count_tokens(name)
        if cost > remaining:
            out.incomplete = True
            break
        remaining -= cost
        out.used += cost
        out.calls.append(
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
        out.message = _message(ids, step.answer, remaining, out)
    return out


def _phases(req: dict[str, Any], ids: Ids, step: Step, items: list[dict[str, Any]], out: _Output) -> None:
    """The preamble before the calls (when asked for) and the ``phase`` labels of the model's messages.

    Whether messages are labelled follows the name the client asked for (``req["model"]``, see
    :func:`agentlab.sim.openai.phase.labels_phase`), not the simulated model serving it.

    The preamble's id is drawn after the others, so a response without one keeps its ids.
    """
    if out.calls and not out.incomplete and phase.wants_preamble(req, items):
        text = phase.preamble(list(step.tool_calls[: len(out.calls)]))
        if count_tokens(text) <= out.budget - out.used:
            out.used += count_tokens(text)
            out.preamble = {
                "id": ids.hex("msg_"),
                "type": "message",
                "status": "completed",
                "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}],
                "role": "assistant",
            }
    if phase.labels_phase(str(req["model"])):
        if out.preamble is not None:
            out.preamble["phase"] = "commentary"
        if out.message is not None:
            out.message["phase"] = "final_answer"


def _message(ids: Ids, text: str, remaining: int, out: _Output) -> dict[str, Any]:
    """The answer message, cut to ``remaining`` tokens (which makes the response incomplete)."""
    if count_tokens(text) > remaining:
        text = truncate_tokens(text, remaining)
        out.incomplete = True
    out.used += count_tokens(text)
    return {
        "id": ids.hex("msg_"),
        "type": "message",
        "status": "incomplete" if out.incomplete else "completed",
        "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}],
        "role": "assistant",
    }


def _reasoning_item(
    sim: Simulator,
    ids: Ids,
    model: str,
    step: Step,
    opts: _Options,
    out: _Output,
    where: tuple[str, dialects.Profile] = ("", dialects.OPENAI),
) -> dict[str, Any]:
    """The reasoning item; its sealed payload names the calls it planned and the item after it.

    ``where``: the response id and the host's profile (how its reasoning and token look).
    """
    resp_id, host = where
    rid = ids.hex("rs_")
    nxt: dict[str, Any] = {}
    if out.preamble is not None:
        nxt = {"type": "message", "id": out.preamble["id"]}
    elif out.calls:
        nxt = {"type": "function_call", "call_id": out.calls[0]["call_id"]}
        if host.reused_call_ids:  # paired by item id where call ids repeat
            nxt["id"] = out.calls[0]["id"]
    elif out.message is not None:
        nxt = {"type": "message", "id": out.message["id"]}
    payload = {
        "rid": rid,
        "model": model,
        "calls": [c["call_id"] for c in out.calls],
        "next": nxt,
        "text": step.reasoning_text,
        "task": hashlib.sha256(step.reasoning[0].encode()).hexdigest()[:16],
    }
    if host.reused_call_ids:
        payload["resp"] = resp_id
    item: dict[str, Any] = {
        "id": rid,
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": step.summary}] if opts.want_summary else [],
    }
    if host.reasoning_as == "content":
        item["summary"] = []
        item["content"] = [{"type": "reasoning_text", "text": step.reasoning_text}]
    if opts.want_encrypted and host.encrypted != "refused":
        item["encrypted_content"] = dialects.token(host, sim.signer.encrypt_reasoning(payload), resp_id)
    if opts.store or host.encrypted != "ciphertext":  # a reference names an item the host keeps
        sim.remember("item:" + rid, payload)
    return item


def _usage(input_tokens: int, cached: int, out: _Output) -> dict[str, Any]:
    """Usage as the Responses API reports it: reasoning tokens are inside output tokens."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out.used,
        "output_tokens_details": {"reasoning_tokens": min(out.reasoning_tokens, out.budget)},
        "total_tokens": input_tokens + out.used,
    }


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
        "text": openai_text_echo(req),
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


class _Events:
    """The events of one streamed response, numbered, with delta obfuscation as the real API sends."""

    def __init__(self, obf_seed: bytes) -> None:
        self.events: list[SSEEvent] = []
        self._seq = 0
        self._obf_seed = obf_seed

    def emit(self, kind: str, data: dict[str, Any], *, delta: bool = False) -> None:
        body = {"type": kind, **data, "sequence_number": self._seq}
        if delta:
            h = hashlib.sha256(self._obf_seed + self._seq.to_bytes(4, "big")).hexdigest()
            body["obfuscation"] = h[: 2 + (self._seq * 7) % 14]
        self.events.append(sse(kind, body, delta=delta))
        self._seq += 1


def _stream(
    ids: Ids, base: dict[str, Any], final: dict[str, Any], output: list[dict[str, Any]], want_encrypted: bool
) -> list[SSEEvent]:
    """The event grammar of the module docstring, one item after the other."""
    ev = _Events(ids.seed_bytes)
    ev.emit("response.created", {"response": base})
    ev.emit("response.in_progress", {"response": base})
    for idx, item in enumerate(output):
        _ITEM_EVENTS.get(item["type"], _message_events)(ev, idx, item, want_encrypted)
        ev.emit("response.output_item.done", {"item": item, "output_index": idx})
    ev.emit(
        "response.completed" if final["status"] == "completed" else "response.incomplete", {"response": final}
    )
    return ev.events


def _reasoning_events(ev: _Events, idx: int, item: dict[str, Any], want_encrypted: bool) -> None:
    """A reasoning item: added with a partial (unverifiable) token, then each summary part."""
    added = {**item, "summary": []}
    full = item.get("encrypted_content")
    if want_encrypted and isinstance(full, str):
        added["encrypted_content"] = full[: len(full) // 2]
    if "content" in item:
        added["content"] = []
    ev.emit("response.output_item.added", {"item": added, "output_index": idx})
    _reasoning_text_events(ev, idx, item)
    for si, part in enumerate(item["summary"]):
        where = {"item_id": item["id"], "output_index": idx}
        ev.emit(
            "response.reasoning_summary_part.added",
            {**where, "part": {"type": "summary_text", "text": ""}, "summary_index": si},
        )
        for d in chunks(part["text"]):
            ev.emit(
                "response.reasoning_summary_text.delta",
                {"delta": d, **where, "summary_index": si},
                delta=True,
            )
        ev.emit("response.reasoning_summary_text.done", {**where, "summary_index": si, "text": part["text"]})
        ev.emit(
            "response.reasoning_summary_part.done",
            {**where, "part": {"type": "summary_text", "text": part["text"]}, "summary_index": si},
        )


def _reasoning_text_events(ev: _Events, idx: int, item: dict[str, Any]) -> None:
    """``reasoning_text`` content (DeepSeek, local servers): its part, deltas and done events."""
    where = {"item_id": item["id"], "output_index": idx}
    for ci, part in enumerate(item.get("content") or []):
        ev.emit(
            "response.content_part.added",
            {**where, "content_index": ci, "part": {"type": "reasoning_text", "text": ""}},
        )
        for d in chunks(part["text"]):
            ev.emit("response.reasoning_text.delta", {**where, "content_index": ci, "delta": d}, delta=True)
        ev.emit("response.reasoning_text.done", {**where, "content_index": ci, "text": part["text"]})
        ev.emit("response.content_part.done", {**where, "content_index": ci, "part": part})


def _function_call_events(ev: _Events, idx: int, item: dict[str, Any], want_encrypted: bool) -> None:
    """A function call: added with empty arguments, then the arguments two tokens at a time."""
    ev.emit(
        "response.output_item.added",
        {"item": {**item, "status": "in_progress", "arguments": ""}, "output_index": idx},
    )
    for d in chunks(item["arguments"], 2):
        ev.emit(
            "response.function_call_arguments.delta",
            {"delta": d, "item_id": item["id"], "output_index": idx},
            delta=True,
        )
    ev.emit(
        "response.function_call_arguments.done",
        {"arguments": item["arguments"], "item_id": item["id"], "output_index": idx},
    )


def _message_events(ev: _Events, idx: int, item: dict[str, Any], want_encrypted: bool) -> None:
    """A message: added empty, then its one output_text part."""
    ev.emit(
        "response.output_item.added",
        {"item": {**item, "status": "in_progress", "content": []}, "output_index": idx},
    )
    text = item["content"][0]["text"]
    empty_part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    ev.emit(
        "response.content_part.added",
        {"content_index": 0, "item_id": item["id"], "output_index": idx, "part": empty_part},
    )
    for d in chunks(text):
        ev.emit(
            "response.output_text.delta",
            {"content_index": 0, "delta": d, "item_id": item["id"], "logprobs": [], "output_index": idx},
            delta=True,
        )
    ev.emit(
        "response.output_text.done",
        {"content_index": 0, "item_id": item["id"], "logprobs": [], "output_index": idx, "text": text},
    )
    ev.emit(
        "response.content_part.done",
        {"content_index": 0, "item_id": item["id"], "output_index": idx, "part": item["content"][0]},
    )


#: The events of each output item type (messages for any other).
def _compaction_events(ev: _Events, idx: int, item: dict[str, Any], want_encrypted: bool) -> None:
    """A compaction item: added with a partial (unverifiable) token, complete only when done."""
    full = item["encrypted_content"]
    ev.emit(
        "response.output_item.added",
        {"item": {**item, "encrypted_content": full[: len(full) // 2]}, "output_index": idx},
    )


_ITEM_EVENTS: dict[str, Callable[[_Events, int, dict[str, Any], bool], None]] = {
    "reasoning": _reasoning_events,
    "function_call": _function_call_events,
    compaction.KIND: _compaction_events,
}


def model_card(name: str, served: str) -> dict[str, Any]:
    """One OpenAI model object; a real name served by a simulated model says so in ``owned_by``."""
    owner = "agentlab-sim" if name == served else f"agentlab-sim (simulated: {served})"
    return {"id": name, "object": "model", "created": 1767225600, "owned_by": owner}


def models_page(cards: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``GET /v1/models`` as OpenAI lists models."""
    return {"object": "list", "data": list(cards)}


def _input_tokens(call: RouteCall) -> SimReply:
    """``POST /v1/responses/input_tokens``: the prompt size a ``responses.create`` would report.

    The same input checks and the same tokenizer as a generation call, so the count equals that
    call's ``usage.input_tokens``; ``model`` is optional in the SDK, but an unknown one is refused.
    """
    if call.body.get("model") is not None:
        require_model(call)
    store = call.body.get("store", True) is not False
    items = _input_items(call.sim, call.body, store)
    payloads = _reasoning_payloads(call.sim, items, store)
    n = len(_prompt_tokens(call.body, items, payloads))
    return json_reply({"object": "response.input_tokens", "input_tokens": n})


def _response_not_found(rid: str) -> E.SimError:
    return E.SimError(404, "invalid_request_error", f"Response with id '{rid}' not found.")


def _retrieve(call: RouteCall) -> SimReply:
    """``GET /v1/responses/{id}``: the stored response; 404 for one made with ``store: false``."""
    rid = call.params["response_id"]
    stored = call.sim.stored.get(rid)
    if stored is None or "response" not in stored:
        raise _response_not_found(rid)
    return json_reply(stored["response"])


def _delete(call: RouteCall) -> SimReply:
    """``DELETE /v1/responses/{id}``: forgets it (it can no longer be retrieved or continued)."""
    rid = call.params["response_id"]
    stored = call.sim.stored.get(rid)
    if stored is None or "response" not in stored or not call.sim.forget(rid):
        raise _response_not_found(rid)
    return json_reply({"id": rid, "object": "response.deleted", "deleted": True})


_UNKNOWN_EVENT = "response.sim_unknown_event"

#: The registry entry of this protocol (see :mod:`agentlab.sim.protocols`).
PROTOCOL = SimProtocol(
    name="openai",
    endpoints=("/v1/responses",),
    handle=handle,
    models=(*OPENAI_MODELS, *dialects.PROFILES),
    models_page=models_page,
    model_card=model_card,
    errors=E.OPENAI,
    unknown_event=sse(
        _UNKNOWN_EVENT,
        {"type": _UNKNOWN_EVENT, "note": "an event type this client has never seen", "sequence_number": 1},
    ),
    routes=(
        *models_routes(),
        Route("POST", "/v1/responses/input_tokens", _input_tokens),
        Route("GET", "/v1/responses/{response_id}", _retrieve),
        Route("DELETE", "/v1/responses/{response_id}", _delete),
        *BATCH_ROUTES,
    ),
    real_models=OPENAI_REAL_MODELS,
    check_headers=openai_headers,
)
