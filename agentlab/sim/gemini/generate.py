r"""The simulated Gemini API (``generateContent``, ``streamGenerateContent``, ``countTokens``, models).

Why strict: Gemini 3 attaches an encrypted ``thoughtSignature`` to the first ``functionCall`` part
of a model turn and refuses the next request of the tool loop (400 ``INVALID_ARGUMENT``) when that
signature is not carried back on the same part, unchanged. Clients break on exactly this; a test
against this simulator fails for the same reasons the real API would:

* ``sim-gemini`` (Gemini 3): ``thinkingConfig.thinkingLevel`` (MINIMAL/LOW/MEDIUM/HIGH; a budget
  is still taken, but not 0 and not beside a level); signatures required on the first
  ``functionCall`` of every model step of the current turn (the contents after the last user text,
  as the docs validate), bound by HMAC to the call's name and arguments and to its position
  (content index, call index), so missing, modified, moved and foreign signatures are refused
  with the real texts. Both base64 alphabets decode to the same bytes and are accepted, and so are
  exactly the two dummy values Google documents for calls whose signatures are not available.
  Calls carry 8-character ids; an answer ends with an empty text part carrying a signature.
* ``sim-gemini-legacy`` (Gemini 2.5 Flash): ``thinkingBudget`` (0 turns thinking off, -1 dynamic,
  up to 24576); ``thinkingLevel`` is refused; signatures are issued but not enforced; calls have no id.

Both: protobuf JSON field names (camelCase or snake_case, unknown names refused, see
:mod:`agentlab.sim.gemini.schema`), ``functionResponse`` parts must answer the calls of the model
turn before them, ``toolConfig.functionCallingConfig`` (AUTO/ANY/NONE, ``allowedFunctionNames``),
thought summaries with ``includeThoughts``, ``usageMetadata`` with ``thoughtsTokenCount`` and
implicit cache hits (``cachedContentTokenCount``), and the continuity effect: a current-turn step
whose first call came back without its own signature (a dummy; on 2.5 none) has lost its plan
(:func:`plan_known`; re-planning thoughts, the last batch of calls repeated once; header
``x-sim-plan: known|lost``). Streams are ``data: {...}\r\n\r\n`` events
(``alt=sse``; without it a JSON array), each a whole ``GenerateContentResponse`` chunk with
cumulative usage, the ``finishReason`` on the last; the grammar follows the recordings in
``fixtures/gemini``. Explicit caches (``cachedContents``, ``cachedContent`` in a request) are
:mod:`agentlab.sim.gemini.cache`. Under ``responseMimeType: application/json`` the answer is an
instance of ``responseJsonSchema`` / ``responseSchema`` (:mod:`agentlab.sim.structured`); the 2.5
model refuses that beside function declarations, as the API does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentlab.sim.app import PATH_HEADER, QUERY_HEADER
from agentlab.sim.batch import gemini as batch_gemini
from agentlab.sim.core import GEMINI_MODELS, Ids, SimReply, Simulator, SSEEvent
from agentlab.sim.errors import SimError
from agentlab.sim.gemini import cache as gemini_cache
from agentlab.sim.gemini import errors as GE
from agentlab.sim.gemini import files as gemini_files
from agentlab.sim.gemini.request import content_parts as _parts
from agentlab.sim.gemini.request import content_text as _text
from agentlab.sim.gemini.request import prompt_tokens, read_request
from agentlab.sim.protocols import Route, RouteCall, SimProtocol, versioned
from agentlab.sim.reasoner import PastCall, Situation, Step, ToolDef, plan_step
from agentlab.sim.structured import gemini_schema, json_answer
from agentlab.sim.tokenizer import chunks, count_tokens, truncate_tokens

GEMINI3 = "sim-gemini"
VERSIONS = ("v1", "v1beta", "v1alpha")
#: Sentinels the real API accepts in place of a signature (documented for migrated histories).
SKIP_SIGNATURES = frozenset({"skip_thought_signature_validator", "context_engineering_is_the_way_to_go"})
MISSING_SIGNATURE = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
    "correctly, and missing thought_signature may lead to degraded model performance. Additional data, "
    "function call `default_api:{name}` , position {position}. please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
INVALID_SIGNATURE = "Thought signature is not valid."
COUNT_MISMATCH = (
    "Please ensure that the number of function response parts is equal to the number of function call "
    "parts of the function call turn."
)
CALL_TURN_ORDER = (
    "Please ensure that function call turn comes immediately after a user turn or after a function "
    "response turn."
)
#: Gemini 2.5 and earlier: function declarations and a JSON answer in one request (quoted in
#: googleapis/python-genai#867 and symfony/ai#803); Gemini 3 takes both.
JSON_WITH_TOOLS = "Function calling with a response mime type: 'application/json' is unsupported"
BOTH_THINKING = "You can only set only one of thinking budget and thinking level."
ONLY_THINKING = "Budget 0 is invalid. This model only works in thinking mode."
GENERIC_INVALID = "Request contains an invalid argument."
NO_CONTENTS = "* GenerateContentRequest.contents: contents is not specified\n"
# The part and content refusals, as the API words them (quoted in public reports: vercel/ai#3775
# and egoist/chatwise-releases#250 for empty parts, router-for-me/CLIProxyAPI#1292 and
# songquanpeng/one-api#2243 for a part with no data). An *empty* text part is data and is accepted:
# pydantic/pydantic-ai's recorded test_google_model_empty_user_prompt.yaml (gemini-2.5-flash, 200).
NO_PARTS = "* GenerateContentRequest.{where}.parts: contents.parts must not be empty.\n"
NO_DATA = (
    "* GenerateContentRequest.{where}.parts[{k}].data: required oneof field 'data' must have one "
    "initialized field\n"
)
#: The members of ``Part``'s ``data`` oneof (``thought`` and ``thoughtSignature`` are metadata).
PART_DATA = frozenset(
    {
        "text",
        "inlineData",
        "fileData",
        "functionCall",
        "functionResponse",
        "executableCode",
        "codeExecutionResult",
    }
)
_LEVELS = {"MINIMAL": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 4, "THINKING_LEVEL_UNSPECIFIED": 4}
LEGACY_MAX_BUDGET = 24576
_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def _bad(message: str) -> SimError:
    return GE.invalid_argument(message)


# -- access -------------------------------------------------------------------------------------


def _query(headers: Mapping[str, str]) -> dict[str, str]:
    """The request's query parameters (the app passes the raw query as a pseudo-header)."""
    out: dict[str, str] = {}
    for pair in headers.get(QUERY_HEADER, "").split("&"):
        key, sep, value = pair.partition("=")
        if sep or key:
            out[key] = value
    return out


def gemini_headers(headers: Mapping[str, str]) -> None:
    """An API key in ``x-goog-api-key`` or ``key=``; else the API's 403, 400 or 401.

    No credential at all is 403 ``PERMISSION_DENIED`` ("unregistered callers"); an empty key is 400
    ``API_KEY_INVALID``; an OAuth ``Authorization`` header with no token is 401 ``UNAUTHENTICATED``.
    A non-empty key or token is accepted, never checked or kept. A resumable upload's chunks go
    to the session URL the start request answered with, which the SDK sends without a key: the
    ``upload_id`` is their credential (the upload route refuses an unknown one).
    """
    if headers.get(PATH_HEADER, "").startswith("/upload/") and "upload_id" in _query(headers):
        return
    key = headers.get("x-goog-api-key")
    if key is None:
        key = _query(headers).get("key")
    if key is not None:
        if not key.strip():
            raise SimError(400, "INVALID_ARGUMENT", GE.BAD_KEY, details=[GE.error_info("API_KEY_INVALID")])
        return
    auth = headers.get("authorization")
    if auth is None:
        raise SimError(403, "PERMISSION_DENIED", GE.NO_KEY)
    scheme, _, token = auth.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise SimError(
            401, "UNAUTHENTICATED", GE.BAD_TOKEN, details=[GE.error_info("ACCESS_TOKEN_TYPE_UNSUPPORTED")]
        )


# -- request reading -----------------------------------------------------------------------------


_BASE64 = re.compile(r"[A-Za-z0-9+/_\-]*={0,2}")


def _decodes(value: str) -> bool:
    """Whether the API's JSON parser takes ``value`` as bytes: either base64 alphabet, padding optional.

    Whitespace is skipped, as protobuf's base64 decoder skips it (a near miss of the skip sentinel with a
    trailing space decodes, and is then an invalid signature).
    """
    text = "".join(value.split())
    return bool(_BASE64.fullmatch(text)) and len(text.rstrip("=")) % 4 != 1


def check_bytes(contents: list[Any]) -> None:
    """A ``thoughtSignature`` that is not base64 is refused by the JSON parser, before any rule.

    The real text (one line per value, as reported against the live API): ``Invalid value at
    'contents[2].parts[0].thought_signature' (TYPE_BYTES), Base64 decoding failed for "<the value>"``
    -- it quotes the value it refused, so clients must not pass that text on verbatim.
    """
    bad: list[tuple[str, str]] = []
    for ci, content in enumerate(contents):
        parts = content.get("parts") if isinstance(content, dict) else None
        for pi, part in enumerate(parts if isinstance(parts, list) else ()):
            sig = part.get("thoughtSignature") if isinstance(part, dict) else None
            if isinstance(sig, str) and not _decodes(sig):
                bad.append((f"contents[{ci}].parts[{pi}].thought_signature", sig))
    if bad:
        lines = [f"Invalid value at '{f}' (TYPE_BYTES), Base64 decoding failed for \"{v}\"" for f, v in bad]
        violations = [{"field": f, "description": line} for (f, _), line in zip(bad, lines, strict=True)]
        raise GE.invalid_argument("\n".join(lines), violations)


def _calls(content: Any) -> list[dict[str, Any]]:
    return [p for p in _parts(content) if isinstance(p.get("functionCall"), dict)]


def _responses(content: Any) -> list[dict[str, Any]]:
    return [p for p in _parts(content) if isinstance(p.get("functionResponse"), dict)]


def _is_user_text(content: Any) -> bool:
    """A user content that starts a turn: it holds something other than function responses."""
    parts = _parts(content)
    return (content.get("role") or "user") == "user" and any("functionResponse" not in p for p in parts)


def current_turn(contents: list[Any]) -> int:
    """Index of the user content the current turn starts with (its model steps are validated)."""
    start = 0
    for i, c in enumerate(contents):
        if isinstance(c, dict) and _is_user_text(c):
            start = i
    return start


def call_digest(call: Mapping[str, Any]) -> str:
    """What a signature binds: the call's name and arguments (not its id, which clients may invent)."""
    args = call.get("args")
    return (
        "call:" + str(call.get("name")) + "|" + json.dumps(args or {}, sort_keys=True, separators=(",", ":"))
    )


def check_parts(body: Mapping[str, Any]) -> None:
    """Every content holds parts and every part one ``data`` member (an empty ``text`` counts)."""
    where = [(f"contents[{i}]", c) for i, c in enumerate(body.get("contents") or [])]
    if isinstance(body.get("systemInstruction"), dict):
        where.append(("system_instruction", body["systemInstruction"]))
    for name, content in where:
        parts = content.get("parts") if isinstance(content, dict) else None
        if not parts:
            raise _bad(NO_PARTS.format(where=name))
        for k, part in enumerate(parts):
            if not isinstance(part, dict) or not PART_DATA & part.keys():
                raise _bad(NO_DATA.format(where=name, k=k))


def check_pairs(contents: list[Any]) -> None:
    """Function responses answer the calls of the model content right before them, one for one."""
    for i, c in enumerate(contents):
        if not isinstance(c, dict):
            continue
        if _calls(c) and i > 0:
            prev = contents[i - 1]
            if not isinstance(prev, dict) or (prev.get("role") or "user") != "user":
                raise _bad(CALL_TURN_ORDER)
        responses = _responses(c)
        if not responses:
            continue
        prev_calls = _calls(contents[i - 1]) if i > 0 else []
        if len(responses) != len(prev_calls):
            raise _bad(COUNT_MISMATCH)


def check_signatures(sim: Simulator, contents: list[Any]) -> None:
    """Every model step of the current turn carries its signature back on its first call, unchanged."""
    for ci in range(current_turn(contents), len(contents)):
        c = contents[ci]
        if not isinstance(c, dict) or c.get("role") != "model":
            continue
        call_index = 0
        for part in _parts(c):
            call = part.get("functionCall")
            if isinstance(call, dict):
                _check_call(sim, part, call, (ci, call_index))
                call_index += 1
            else:
                _check_other(sim, part)


def _check_call(
    sim: Simulator, part: Mapping[str, Any], call: Mapping[str, Any], pos: tuple[int, int]
) -> None:
    """A step's first call must carry its own signature; any call's signature must verify here."""
    sig = part.get("thoughtSignature")
    if sig is None:
        if pos[1] == 0:
            raise _bad(MISSING_SIGNATURE.format(name=call.get("name"), position=pos[0] + 1))
        return
    if sig not in SKIP_SIGNATURES and not sim.signer.check_gemini(sig, call_digest(call), pos):
        raise _bad(INVALID_SIGNATURE)


def _check_other(sim: Simulator, part: Mapping[str, Any]) -> None:
    """A signature on a text part (an answer's last part) is optional but must be one of ours."""
    sig = part.get("thoughtSignature")
    if sig is None or sig in SKIP_SIGNATURES:
        return
    if not sim.signer.check_gemini(sig, "text:" + str(part.get("text") or ""), None):
        raise _bad(INVALID_SIGNATURE)


def plan_known(sim: Simulator, contents: list[Any], thinking_on: bool) -> bool:
    """Whether the model has its plan: each current-turn step's first call got its own signature back.

    A documented dummy, or (on 2.5, which accepts it) no signature, means the plan is lost: the
    continuity effect in :mod:`agentlab.sim.reasoner`. Without thinking there is no plan to lose.
    """
    if not thinking_on:
        return True
    for ci in range(current_turn(contents), len(contents)):
        c = contents[ci]
        first = _calls(c)[:1] if isinstance(c, dict) and c.get("role") == "model" else []
        for part in first:
            digest = call_digest(part["functionCall"])
            if not sim.signer.check_gemini(part.get("thoughtSignature"), digest, (ci, 0)):
                return False
    return True


@dataclass(frozen=True)
class Thinking:
    """How the model thinks here: whether at all, how hard, summaries shown, a token cap."""

    on: bool
    level: int
    include: bool
    budget: int | None = None


def thinking(model: str, config: Mapping[str, Any]) -> Thinking:
    """``thinkingConfig`` as each model takes it; what the model cannot do is the API's 400."""
    tc = config.get("thinkingConfig") or {}
    level, budget = tc.get("thinkingLevel"), tc.get("thinkingBudget")
    include = bool(tc.get("includeThoughts"))
    if level is not None and budget is not None:
        raise _bad(BOTH_THINKING)
    if model == GEMINI3:
        if budget is not None:
            return _gemini3_budget(int(budget), include)
        name = str(level or "HIGH").upper()
        if name not in _LEVELS:
            raise _bad(
                "Invalid value at 'generation_config.thinking_config.thinking_level' (TYPE_ENUM), "
                f'"{level}"'
            )
        return Thinking(True, _LEVELS[name], include)
    if level is not None:
        raise _bad(GENERIC_INVALID)
    if budget is None or int(budget) == -1:
        return Thinking(True, 2, include)
    b = int(budget)
    if b == 0:
        return Thinking(False, 0, False)
    if not 0 < b <= LEGACY_MAX_BUDGET:
        raise _bad(f"The thinking budget ({b}) is invalid.")
    return Thinking(True, 1 if b < 1024 else 2 if b < 8192 else 4, include, b)


def _gemini3_budget(budget: int, include: bool) -> Thinking:
    if budget == 0:
        raise _bad(ONLY_THINKING)
    if budget == -1:
        return Thinking(True, 4, include)
    return Thinking(True, 1 if budget < 1024 else 2 if budget < 8192 else 4, include, budget)


def _schema_of(decl: Mapping[str, Any]) -> dict[str, Any]:
    """The declaration's parameters as JSON schema, OpenAPI type names lowered (``STRING``)."""
    raw = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
    return (
        json.loads(json.dumps(raw).replace('"type": "STRING"', '"type": "string"'))
        if isinstance(raw, dict)
        else {}
    )


def tools(req: Mapping[str, Any]) -> tuple[ToolDef, ...]:
    """The function declarations the model may call under ``toolConfig.functionCallingConfig``."""
    fcc = (req.get("toolConfig") or {}).get("functionCallingConfig") or {}
    if str(fcc.get("mode") or "AUTO").upper() == "NONE":
        return ()
    allowed = fcc.get("allowedFunctionNames")
    out = []
    for t in req.get("tools") or []:
        for d in (t or {}).get("functionDeclarations") or []:
            name = str(d.get("name"))
            if allowed and name not in allowed:
                continue
            out.append(ToolDef(name, str(d.get("description") or ""), _schema_of(d)))
    return tuple(out)


def situation(req: Mapping[str, Any], contents: list[Any], level: int, known: bool = True) -> Situation:
    """The task (the turn's user text), the current turn's calls with their responses, the plan.

    ``known``: whether the model still has the plan that made those calls (see :func:`plan_known`).
    """
    start = current_turn(contents)
    task = _text(contents[start]) if contents else ""
    calls: list[tuple[str, str, dict[str, Any]]] = []
    results: dict[str, str] = {}
    for c in contents[start + 1 :]:
        for p in _calls(c):
            fc = p["functionCall"]
            cid = str(fc.get("id") or f"{fc.get('name')}#{len(calls)}")
            calls.append((cid, str(fc.get("name")), dict(fc.get("args") or {})))
        unanswered = [cid for cid, _, _ in calls if cid not in results]
        for p in _responses(c):
            fr = p["functionResponse"]
            cid = str(fr.get("id") or "")
            if cid not in unanswered:
                cid = next((u for u in unanswered if _name(calls, u) == fr.get("name")), cid)
            if cid in unanswered:
                unanswered.remove(cid)
            results[cid] = _result_text(fr.get("response"))
    past = tuple(PastCall(cid, n, a, results.get(cid)) for cid, n, a in calls)
    return Situation(task, tools(req), past, True, known, level)


def _name(calls: Sequence[tuple[str, str, dict[str, Any]]], cid: str) -> str | None:
    return next((n for c, n, _ in calls if c == cid), None)


def _result_text(response: Any) -> str:
    """A function response's content as the model reads it (``{"result": x}`` -> x)."""
    if isinstance(response, dict) and len(response) == 1:
        (value,) = response.values()
        return value if isinstance(value, str) else json.dumps(value)
    return json.dumps(response)


# -- the reply ------------------------------------------------------------------------------------


@dataclass
class Reply:
    """The candidate being built: parts (in order) and the token counts of what it shows."""

    parts: list[dict[str, Any]] = field(default_factory=list)
    thoughts: int = 0
    candidates: int = 0
    finish: str = "STOP"


def _call_id(ids: Ids) -> str:
    return "".join(_ID_ALPHABET[b % 36] for b in ids.hex("", 16).encode()[:8])


def build(
    sim: Simulator, ids: Ids, model: str, step: Step, think: Thinking, pos: int, max_out: int | None
) -> Reply:
    """The candidate's parts: thought summary, then the calls (first one signed) or the answer."""
    r = Reply()
    if think.on:
        r.thoughts = max(1, count_tokens(step.reasoning_text))
        if think.budget is not None:
            r.thoughts = min(r.thoughts, think.budget)
        if think.include:
            r.parts.append({"text": step.summary, "thought": True})
    for k, (name, args) in enumerate(step.tool_calls):
        call: dict[str, Any] = {"name": name, "args": args}
        if model == GEMINI3:
            call["id"] = _call_id(ids)
        part: dict[str, Any] = {"functionCall": call}
        if k == 0 and think.on:
            part["thoughtSignature"] = sim.signer.sign_gemini(call_digest(call), (pos, 0))
        r.parts.append(part)
        r.candidates += count_tokens(json.dumps(call))
    if step.answer is not None:
        text = step.answer
        if max_out is not None and count_tokens(text) + r.thoughts > max_out:
            text = truncate_tokens(text, max(0, max_out - r.thoughts))
            r.finish = "MAX_TOKENS"
        r.parts.append({"text": text})
        r.candidates += count_tokens(text)
    return r


def usage(prompt: int, cached: int, r: Reply, candidates: int | None) -> dict[str, Any]:
    """``usageMetadata`` as the API writes it: candidates omitted while only thoughts came."""
    u: dict[str, Any] = {"promptTokenCount": prompt}
    if candidates:
        u["candidatesTokenCount"] = candidates
    u["totalTokenCount"] = prompt + (candidates or 0) + r.thoughts
    if cached:
        u["cachedContentTokenCount"] = cached
    u["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    if cached:
        u["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": cached}]
    if r.thoughts:
        u["thoughtsTokenCount"] = r.thoughts
    return u


def _chunk(parts: list[dict[str, Any]], meta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish is not None:
        cand["finishReason"] = finish
    cand["index"] = 0
    return {"candidates": [cand], **meta}


def _events(
    sim: Simulator, model: str, r: Reply, ends: dict[str, Any], meta: dict[str, Any], tokens: tuple[int, int]
) -> list[dict[str, Any]]:
    """The stream's chunks: thoughts, text pieces or one call each, then the empty STOP part."""
    prompt, cached = tokens
    out: list[dict[str, Any]] = []
    seen = 0
    for part in r.parts:
        if part.get("thought"):
            out.append(_chunk([part], {"usageMetadata": usage(prompt, cached, r, None), **meta}, None))
        elif "functionCall" in part:
            seen += count_tokens(json.dumps(part["functionCall"]))
            out.append(_chunk([part], {"usageMetadata": usage(prompt, cached, r, seen), **meta}, None))
        else:
            for piece in chunks(part["text"]) or [""]:
                seen += count_tokens(piece)
                out.append(
                    _chunk([{"text": piece}], {"usageMetadata": usage(prompt, cached, r, seen), **meta}, None)
                )
    out.append(_chunk([ends], {"usageMetadata": usage(prompt, cached, r, r.candidates), **meta}, r.finish))
    return out


def handle(sim: Simulator, req: dict[str, Any], headers: dict[str, str], model: str) -> SimReply:
    """One ``generateContent`` / ``streamGenerateContent`` request (model already resolved)."""
    label = str(req.pop("model"))
    body = read_request(req)
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise _bad(NO_CONTENTS)
    check_bytes(contents)
    check_parts(body)
    body, explicit = gemini_cache.resolve(sim, body, headers, label)  # cachedContent: its prefix in front
    contents = body["contents"]
    config = body.get("generationConfig") or {}
    think = thinking(model, config)
    check_pairs(contents)
    if model == GEMINI3:
        check_signatures(sim, contents)
    ids = Ids(sim.seed, json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    known = plan_known(sim, contents, think.on)
    step = plan_step(situation(body, contents, think.level, known))
    wanted = gemini_schema(config)
    if wanted is not False and model != GEMINI3 and tools(body):
        raise _bad(JSON_WITH_TOOLS)
    if wanted is not False and step.answer is not None:
        step = replace(step, answer=json_answer(wanted if isinstance(wanted, dict) else None, step.answer))
    max_out = config.get("maxOutputTokens")
    r = build(sim, ids, model, step, think, len(contents), int(max_out) if max_out is not None else None)
    prompt = prompt_tokens(body, contents)
    cached = sim.cache.gemini(model, prompt) if explicit is None else explicit
    meta = {"modelVersion": label, "responseId": ids.b58("", 23)}
    signed_end = model == GEMINI3 and think.on and step.answer is not None
    end_sig = sim.signer.sign_gemini("text:", (len(contents), 0xFFFF)) if signed_end else None
    if headers.get(PATH_HEADER, "").endswith(":streamGenerateContent"):
        ends: dict[str, Any] = {"text": ""} if end_sig is None else {"text": "", "thoughtSignature": end_sig}
        chunks_ = _events(sim, model, r, ends, meta, (len(prompt), cached))
        reply = _stream_reply(chunks_, "alt=sse" in headers.get(QUERY_HEADER, ""))
        reply.headers["x-sim-plan"] = "known" if known else "lost"
        return reply
    if end_sig is not None:
        r.parts[-1]["thoughtSignature"] = end_sig
    cand = _chunk(r.parts, {}, r.finish)["candidates"][0]
    if step.tool_calls:
        cand["finishMessage"] = "Model generated function call(s)."
    out = {"candidates": [cand], "usageMetadata": usage(len(prompt), cached, r, r.candidates), **meta}
    rh = {"content-type": "application/json; charset=UTF-8", "x-sim-plan": "known" if known else "lost"}
    return SimReply(200, rh, json.dumps(out, indent=2).encode())


def _stream_reply(items: list[dict[str, Any]], sse: bool) -> SimReply:
    """SSE events (``alt=sse``) or, as the API does without it, one JSON array of the chunks."""
    if not sse:
        return SimReply(
            200, {"content-type": "application/json; charset=UTF-8"}, json.dumps(items, indent=2).encode()
        )
    events = [
        SSEEvent(f"data: {json.dumps(c, ensure_ascii=False)}\r\n\r\n".encode(), delta=True) for c in items
    ]
    return SimReply(
        200, {"content-type": "text/event-stream", "content-disposition": "attachment"}, events=events
    )


# -- real model names ------------------------------------------------------------------------------

#: Real Gemini names (``real_models`` on): Gemini 3 behaves as ``sim-gemini``, 2.5 as the legacy model.
GEMINI_REAL_MODELS: dict[str, str] = {
    **dict.fromkeys(
        (
            "gemini-3.1-pro-preview",
            "gemini-3-pro-preview",
            "gemini-3-flash-preview",
            "gemini-3.1-flash-lite-preview",
        ),
        GEMINI3,
    ),
    **dict.fromkeys(("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"), "sim-gemini-legacy"),
}


def gemini_model_rules(name: str, req: dict[str, Any]) -> None:
    """Gemini 2.5 Pro cannot turn thinking off (its simulated model, 2.5 Flash, can)."""
    config = req.get("generationConfig") or req.get("generation_config") or {}
    tc = config.get("thinkingConfig") or config.get("thinking_config") or {}
    budget = tc.get("thinkingBudget", tc.get("thinking_budget"))
    if name == "gemini-2.5-pro" and budget == 0:
        raise _bad(ONLY_THINKING)


# -- other routes ---------------------------------------------------------------------------------


def model_card(name: str, served: str) -> dict[str, Any]:
    """One ``Model`` resource; a real name served by a simulated model says so in ``description``."""
    desc = "Simulated by agentlab" + ("" if name == served else f" ({served})")
    legacy = served != GEMINI3
    return {
        "name": f"models/{name}",
        "version": "2.5" if legacy else "3",
        "displayName": name.replace("-", " ").title(),
        "description": desc,
        "inputTokenLimit": 1048576,
        "outputTokenLimit": 65536,
        "supportedGenerationMethods": ["generateContent", "countTokens", "streamGenerateContent"],
        "temperature": 1,
        "topP": 0.95,
        "topK": 64,
        "maxTemperature": 2,
        "thinking": True,
    }


def models_page(cards: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``GET models``: one page."""
    return {"models": list(cards)}


def _json(status: int, obj: dict[str, Any]) -> SimReply:
    return SimReply(
        status, {"content-type": "application/json; charset=UTF-8"}, json.dumps(obj, indent=2).encode()
    )


def _list_models(call: RouteCall) -> SimReply:
    names = list(call.protocol.models)
    if call.sim.real_models:
        names += list(call.protocol.real_models)
    served = [(n, call.served(n)) for n in names]
    return _json(200, models_page([model_card(n, s) for n, s in served if s is not None]))


def _get_model(call: RouteCall) -> SimReply:
    name = call.params["model"].removeprefix("models/")
    served = call.served(name)
    if served is None:
        raise GE.GEMINI.unknown_model_card(name)
    return _json(200, model_card(name, served))


def _count_tokens(call: RouteCall) -> SimReply:
    """``countTokens``: the ``promptTokenCount`` a generation call with these contents reports."""
    name = call.params["model"].removeprefix("models/")
    if call.served(name) is None:
        raise GE.GEMINI.model_not_found(name)
    body = read_request(call.body, "CountTokensRequest")
    inner = body.get("generateContentRequest") or {}
    contents = inner.get("contents") or body.get("contents") or []
    n = len(prompt_tokens(inner, contents))
    return _json(200, {"totalTokens": n, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": n}]})


def _routes() -> tuple[Route, ...]:
    return (
        *versioned(
            VERSIONS,
            ("GET", "/models", _list_models),
            ("GET", "/models/{model}", _get_model),
            ("POST", "/models/{model}:countTokens", _count_tokens),
        ),
        *gemini_cache.routes(VERSIONS),
        *batch_gemini.routes(VERSIONS),
        *gemini_files.routes(VERSIONS),
    )


PROTOCOL = SimProtocol(
    name="gemini",
    endpoints=tuple(
        f"/{v}/models/{{model}}:{m}" for v in VERSIONS for m in ("generateContent", "streamGenerateContent")
    ),
    handle=handle,
    models=GEMINI_MODELS,
    models_page=models_page,
    model_card=model_card,
    errors=GE.GEMINI,
    unknown_event=SSEEvent(b'data: {"simUnknownField": "a field this client has never seen"}\r\n\r\n'),
    # The google-genai SDKs send the key in this header; ``GET /v1/models`` is shared with OpenAI.
    marker_header="x-goog-api-key",
    routes=_routes(),
    check_headers=gemini_headers,
    real_models=GEMINI_REAL_MODELS,
    model_rules=gemini_model_rules,
)
