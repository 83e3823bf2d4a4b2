r"""The simulated Chat Completions protocol: DeepSeek, OpenRouter and local servers behind ``openai``.

Why one module for three hosts: they share the wire (``POST .../chat/completions``, ``data: {...}\n\n``
streams ending ``data: [DONE]``) and differ in facts held by :mod:`agentlab.sim.chat.dialects`;
requests are read by :mod:`agentlab.sim.chat.schema`, continuity is judged by
:mod:`agentlab.sim.chat.rules`, the model is the shared planner (:mod:`agentlab.sim.reasoner`) and
every count comes from the one tokenizer.

Routes (exact paths, as the hosts): DeepSeek ``POST /chat/completions`` and
``/v1/chat/completions``, ``GET /models``; Kimi, xAI and local servers ``POST
/v1/chat/completions`` (the model decides), ``GET /v1/models`` (a path the OpenAI simulator
serves too: :func:`agentlab.sim.chat_client` marks its requests with ``x-agentlab-chat-dialect``);
Z.AI ``POST /api/paas/v4/chat/completions`` and ``/api/coding/paas/v4/chat/completions``;
OpenRouter ``POST /api/v1/chat/completions``, ``GET /api/v1/models``. Another prefix is the host's
404.

Shapes follow the recordings in ``fixtures/chat_completions``: DeepSeek chunks carry
``reasoning_content`` (``""`` on the first delta), ``logprobs: null`` and ``usage: null`` until the
finish chunk, which carries usage when ``stream_options.include_usage`` is set; OpenRouter opens with
``: OPENROUTER PROCESSING`` comment lines, sends ``reasoning`` + ``reasoning_details`` pieces by
``index`` (a Claude signature in its own delta after the text; a Gemini encrypted item whole, before
the calls), ``native_finish_reason``, and repeats the finish chunk with usage (``cost``,
``cost_details``, cached and reasoning tokens) always; local servers (llama.cpp's layout) end with a
``choices: []`` usage chunk when asked, without ``reasoning_tokens`` (llama.cpp's ``timings`` are
measurements and are not invented). Structured output (:func:`response_format`): OpenRouter and
local servers answer ``json_schema`` with an instance of the schema; DeepSeek refuses it with its real
400 and takes JSON mode (``json_object``, the word "json" required in the prompt). Fault
``error_chunk``: a 200 stream whose generation fails midway with a chunk holding a top-level
``error`` (OpenRouter's in-stream error), then ``[DONE]``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from agentlab.sim.chat import errors as CE
from agentlab.sim.chat import rules as R
from agentlab.sim.chat import streams as S
from agentlab.sim.chat.dialects import (
    CHAT_REAL_MODELS,
    DEEPSEEK_MODELS,
    LOCAL_MODELS,
    MOONSHOT_MODELS,
    OPENROUTER_MODELS,
    ROUTER_REAL_MODELS,
    XAI_CHAT_MODELS,
    ZAI_MODELS,
    ZAI_REAL_MODELS,
    Profile,
    profile,
)
from agentlab.sim.chat.schema import check_pairs, situation, validate
from agentlab.sim.core import Ids, SimReply, Simulator, SSEEvent
from agentlab.sim.protocols import Route, SimProtocol
from agentlab.sim.reasoner import Step, plan_step
from agentlab.sim.routes import list_models, models_routes
from agentlab.sim.signing import FIXED_TIMESTAMP
from agentlab.sim.structured import json_answer
from agentlab.sim.tokenizer import count_tokens, tokenize, truncate_tokens

PLAN_HEADER = "x-sim-plan"


@dataclass
class Out:
    """What the model produced in one call, before any dialect writes it."""

    reasoning: str | None
    reasoning_tokens: int
    content: str | None
    calls: list[tuple[str, str, str]] = field(default_factory=list)  # (id, name, arguments JSON)
    finish: str = "stop"
    details: list[dict[str, Any]] = field(default_factory=list)
    prompt: int = 0
    cached: int = 0

    @property
    def completion(self) -> int:
        """Reasoning plus visible output: reasoning tokens are billed output."""
        calls = sum(count_tokens(name + args) for _, name, args in self.calls)
        return self.reasoning_tokens + count_tokens(self.content or "") + calls


def _call_id(p: Profile, ids: Ids, name: str, k: int, seen: int = 0) -> str:
    """Tool-call ids in each host's shape (DeepSeek ``call_00_...``, Gemini ``tool_<name>_...``).

    Kimi numbers its ``functions.<name>:<n>`` ids along the conversation; ``seen`` (the messages
    already in the request) keeps them unique within a loop.
    """
    if p.vendor == "deepseek":
        return ids.alnum(f"call_{k:02d}_", 24)
    if p.vendor == "gemini":
        return ids.alnum(f"tool_{name}_", 20)
    if p.vendor == "claude":
        return ids.b58("toolu_01", 22)
    if p.vendor == "openai":
        return ids.alnum("call_", 24)
    if p.vendor == "moonshot":
        return f"functions.{name}:{seen + k}"
    if p.vendor == "xai_chat":
        return f"call_{int(ids.hex('', 8), 16) % 10**8:08d}"
    if p.vendor == "zai":
        return f"call_-{int(ids.hex('', 16), 16) % 10**19:019d}"
    return ids.alnum("", 32)


def _limit(req: dict[str, Any]) -> int | None:
    raw = req.get("max_completion_tokens", req.get("max_tokens"))
    return int(raw) if isinstance(raw, int) and not isinstance(raw, bool) else None


def produce(sim: Simulator, p: Profile, ids: Ids, step: Step, level: int, req: dict[str, Any]) -> Out:
    """The step as output: reasoning (when on), then calls or the answer, cut by the token limit."""
    full = step.reasoning_text if level >= 0 else ""
    shown: str | None = (step.summary if p.vendor == "openai" else full) if level >= 0 else None
    out = Out(shown if p.vendor != "gemini" else None, count_tokens(full), step.answer)
    seen = len(req.get("messages") or ())
    out.calls = [
        (_call_id(p, ids, name, k, seen), name, json.dumps(args, ensure_ascii=False))
        for k, (name, args) in enumerate(step.tool_calls)
    ]
    if out.calls:
        out.finish, out.content = "tool_calls", None
    limit = _limit(req)
    if limit is not None and out.completion > limit:
        _cut(out, limit)
    return out


def _cut(out: Out, limit: int) -> None:
    """``max_tokens`` reached: reasoning counts first (it is output), then the answer; calls are lost."""
    out.finish, out.calls = "length", []
    if out.reasoning_tokens >= limit:
        out.reasoning = truncate_tokens(out.reasoning, limit) if out.reasoning else out.reasoning
        out.reasoning_tokens, out.content = limit, None
        return
    out.content = truncate_tokens(out.content or "", limit - out.reasoning_tokens)


def prompt_tokens(req: dict[str, Any], messages: list[dict[str, Any]]) -> list[str]:
    """The prompt as tokens: tools, then the messages (a repeated prefix stays a cacheable prefix)."""
    text = [json.dumps(t, sort_keys=True) for t in req.get("tools") or []]
    for m in messages:
        kept = {
            k: v for k, v in m.items() if k not in ("reasoning_details", "reasoning", "reasoning_content")
        }
        text.append(json.dumps(kept, sort_keys=True, ensure_ascii=False))
    return tokenize("\n".join(text))


#: DeepSeek's refusal of ``response_format: {type: json_schema}`` (it has JSON mode, ``json_object``,
#: only: api-docs.deepseek.com/guides/json_mode); the body as quoted in llm-exe/llm-exe#662 and
#: UKGovernmentBEIS/inspect_ai#4916 (deepseek-v4-pro / -flash, 2026).
DS_NO_JSON_SCHEMA = "This response_format type is unavailable now"
#: DeepSeek's JSON mode needs the word in the prompt (the JSON Output guide); the 400's text as
#: quoted in vercel/ai#7913 (deepseek-chat) and yubing744/trading-gpt#77 (deepseek-v4-pro).
DS_JSON_WORD = (
    "Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'."
)


def response_format(p: Profile, req: dict[str, Any]) -> dict[str, Any] | bool:
    """What ``response_format`` asks the answer to be: a JSON schema, ``True`` (JSON mode), ``False`` (text).

    OpenRouter and local servers (vLLM, llama.cpp, Ollama) take OpenAI's ``json_schema`` form;
    DeepSeek refuses it with its real 400 and takes ``json_object`` only.
    """
    fmt = req.get("response_format")
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind == "json_object":
        if p.dialect == "deepseek" and not _mentions_json(req.get("messages")):
            raise CE.deepseek_error(400, DS_JSON_WORD)
        return True
    if kind != "json_schema":
        return False
    if p.dialect == "deepseek":
        raise CE.deepseek_error(400, DS_NO_JSON_SCHEMA)
    assert isinstance(fmt, dict)
    spec = fmt.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    return schema if isinstance(schema, dict) else True


def _mentions_json(messages: Any) -> bool:
    """Whether a system or user message's text says "json" (any case)."""
    for m in messages if isinstance(messages, list) else []:
        if (
            isinstance(m, dict)
            and m.get("role") in ("system", "user")
            and "json" in str(m.get("content")).lower()
        ):
            return True
    return False


def _router_details(
    sim: Simulator, p: Profile, ids: Ids, out: Out, step: Step, pos: int
) -> list[dict[str, Any]]:
    """The ``reasoning_details`` a router model returns (merged form, as a client sends them back)."""
    fmt = S.DETAIL_FORMATS[p.vendor]
    if p.vendor == "gemini":
        first = {"function": {"name": out.calls[0][1], "arguments": out.calls[0][2]}} if out.calls else None
        digest = R.call_digest(first) if first else "text:" + (out.content or "")
        item: dict[str, Any] = {
            "type": "reasoning.encrypted",
            "data": R.sign_gemini(sim, digest, pos),
            "format": fmt,
        }
        if out.calls:
            item["id"] = out.calls[0][0]
        return [{**item, "index": 0}]
    if out.reasoning is None:
        return []
    if p.vendor == "claude":
        sig = sim.signer.sign_thinking(out.reasoning, 0)
        return [
            {"type": "reasoning.text", "text": out.reasoning, "signature": sig, "format": fmt, "index": 0}
        ]
    token = sim.signer.encrypt_reasoning({"model": p.model, "reasoning": step.reasoning_text})
    return [
        {"type": "reasoning.summary", "summary": out.reasoning, "format": fmt, "index": 0},
        {"type": "reasoning.encrypted", "data": token, "id": ids.hex("rs_"), "format": fmt, "index": 1},
    ]


def handle(sim: Simulator, req: dict[str, Any], headers: dict[str, str], model: str) -> SimReply:
    """One chat completion (the model already resolved by the app)."""
    p = profile(model)
    if p.needs_key:
        CE.require_key(p.dialect, headers)
    label = str(req.pop("model"))
    messages = validate(p, req)
    level = R.thinking_level(p, req)
    check_pairs(p, messages)
    known = R.check(sim, p, messages, level >= 0)
    ids = Ids(sim.seed, json.dumps([model, req], sort_keys=True, separators=(",", ":")).encode())
    step = plan_step(situation(p, req, messages, level, known))
    wanted = response_format(p, req)
    if wanted is not False and step.answer is not None:
        step = replace(step, answer=json_answer(wanted if isinstance(wanted, dict) else None, step.answer))
    out = produce(sim, p, ids, step, level, req)
    if p.dialect == "openrouter":
        out.details = _router_details(sim, p, ids, out, step, R.gemini_position(messages, len(messages)))
    tokens = prompt_tokens(req, messages)
    out.prompt = len(tokens)
    out.cached = 0 if p.dialect == "local" else sim.cache.openai(f"chat|{model}", None, tokens)
    meta = S.Meta(p, label, S.completion_id(p, ids), FIXED_TIMESTAMP)
    extra = {PLAN_HEADER: "known" if known else "lost"}
    if req.get("stream"):
        include = bool((req.get("stream_options") or {}).get("include_usage"))
        return SimReply(
            200, {"content-type": "text/event-stream", **extra}, events=S.stream(meta, out, include)
        )
    return SimReply(200, {"content-type": "application/json", **extra}, S.body(meta, out))


# -- models -------------------------------------------------------------------------------------------


def model_card(name: str, served: str) -> dict[str, Any]:
    """One ``GET /models`` entry in OpenAI's list shape (what DeepSeek and llama.cpp serve)."""
    return {"id": name, "object": "model", "owned_by": "agentlab-sim", "created": FIXED_TIMESTAMP}


def models_page(cards: Any) -> dict[str, Any]:
    """``{"object": "list", "data": [...]}``."""
    return {"object": "list", "data": list(cards)}


def router_card(name: str, served: str) -> dict[str, Any]:
    """One OpenRouter model entry (a subset of its fields: id, name, created, context, pricing)."""
    vendor = profile(served).vendor
    prices = S.PRICES[vendor]
    return {
        "id": name,
        "name": f"Simulated {vendor} via OpenRouter (agentlab)",
        "created": FIXED_TIMESTAMP,
        "context_length": 1_000_000,
        "pricing": {"prompt": f"{prices[0] / 1e6:.10f}", "completion": f"{prices[1] / 1e6:.10f}"},
        "supported_parameters": ["reasoning", "include_reasoning", "tools", "tool_choice", "max_tokens"],
    }


def router_page(cards: Any) -> dict[str, Any]:
    """``{"data": [...]}``."""
    return {"data": list(cards)}


def _unknown(name: str) -> SSEEvent:
    chunk = {
        "id": "sim-unknown",
        "object": "chat.completion.chunk",
        "created": FIXED_TIMESTAMP,
        "model": name,
    }
    chunk |= {"choices": [], "sim_unknown_field": "a field this client has never seen"}
    return SSEEvent(b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n")


PROTOCOL = SimProtocol(
    name="chat_completions",
    endpoints=("/chat/completions", "/v1/chat/completions"),
    handle=handle,
    models=DEEPSEEK_MODELS + LOCAL_MODELS + MOONSHOT_MODELS + XAI_CHAT_MODELS,
    models_page=models_page,
    model_card=model_card,
    errors=CE.CHAT,
    unknown_event=_unknown("sim-deepseek"),
    marker_header=CE.DIALECT_HEADER,
    routes=(*models_routes(""), *models_routes("/v1")),
    check_headers=CE.shared_headers,
    real_models=CHAT_REAL_MODELS,
)

# The other hosts: the same wire and handler as :data:`PROTOCOL`, on their own paths, with their own
# models and headers (neither has the dialect marker: their paths are their own).
OPENROUTER_PROTOCOL = replace(
    PROTOCOL,
    name="openrouter",
    endpoints=("/api/v1/chat/completions",),
    models=OPENROUTER_MODELS,
    models_page=router_page,
    model_card=router_card,
    errors=CE.OPENROUTER,
    unknown_event=_unknown("sim-router-gemini"),
    marker_header=None,
    routes=(Route("GET", "/api/v1/models", list_models),),
    check_headers=CE.openrouter_headers,
    real_models=ROUTER_REAL_MODELS,
)

ZAI_PROTOCOL = replace(
    PROTOCOL,
    name="zai",
    endpoints=("/api/paas/v4/chat/completions", "/api/coding/paas/v4/chat/completions"),
    models=ZAI_MODELS,
    unknown_event=_unknown("sim-glm"),
    marker_header=None,
    routes=(),
    check_headers=CE.zai_headers,
    real_models=ZAI_REAL_MODELS,
)
"""Z.AI's GLM: the general API (``/api/paas/v4``) and the coding plan's (``/api/coding/paas/v4``)."""
