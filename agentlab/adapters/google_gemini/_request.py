"""``ModelRequest`` -> the Gemini ``generateContent`` body (JSON bytes), with the API's rules checked first.

Continuity (the rule that matters most): Gemini 3 answers a tool loop whose model turn lost a
``thoughtSignature`` with 400 INVALID_ARGUMENT ("Function call is missing a thought_signature in
functionCall parts"), and a changed or moved one with "Thought signature is not valid". Signatures
come from ``request.continuation`` only (opaque ``ProviderReasoningItem``s holding the string exactly
as received) and go back on the part they arrived on: the model content of their turn (``turn_id``),
the part at their ``index``, of their kind. A signature whose part carries no portable item (an empty
text part that only held the signature) goes back as that empty part, at its position. Thought
summaries are never sent back (the API accepts their omission). Signatures made by another provider,
API, model or endpoint (Gemini API vs Vertex AI), whose turn is not in the history, or whose
position now holds a part of another kind, are dropped and counted (``reasoning_item_dropped``),
never sent. Under ``continuation_policy="drop"`` (signatures withheld on purpose) and in a loop whose
continuation was released before it finished (``ModelRequest.continuation_released``) Gemini 3 models
get Google's documented dummy signature on the current turn's unsigned calls (:mod:`._stand_in`).

Function call ids: the API's own id (``provider_item_id``) goes back on the ``functionCall`` and its
``functionResponse``; an id agentlab made up (``gc_...``) is not sent (the API pairs calls and
responses by order and name then).

The body is serialized once here (compact JSON, UTF-8) and posted as those bytes through the SDK's
API client, so what is sent is exactly what was built (and digested by the wire-golden test).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from agentlab.adapters import built_request
from agentlab.adapters.built_request import BuiltRequest, check_provider_options, knobs
from agentlab.adapters.google_gemini import _models
from agentlab.adapters.google_gemini._stand_in import STAND_IN_RULE, fill_stand_ins
from agentlab.adapters.google_gemini._stream import API, CALL, SIGNATURE, TEXT, THOUGHT, signature_kind
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.items import (
    AssistantPart,
    AssistantTextItem,
    OtherItem,
    ProviderReasoningItem,
    SystemItem,
    ToolCallItem,
    UserText,
)
from agentlab.neutral.recovery import NOTHING_REQUIRED, plan_recovery
from agentlab.neutral.request import ModelRequest, ReasoningSettings, ToolSpec, named_tool

__all__ = ["EFFORT_BUDGETS", "PROVIDER", "build_request", "check_options", "thinking_config"]

log = logging.getLogger("agentlab.adapters.google")

PROVIDER = "google"
MAX_STOP_SEQUENCES = 5
EFFORT_BUDGETS: dict[str, int] = {"minimal": 512, "low": 1024, "medium": 8192, "high": 24576}
"""``thinkingBudget`` chosen from ``effort`` on a budget (Gemini 2.5) model; clipped to its range."""
#: Where the real API accepts an empty user text part (so agentlab sends it): a recorded 200 for
#: ``contents: [{role: user, parts: [{text: ""}]}]`` beside a system instruction.
EMPTY_TEXT_ACCEPTED = (
    "pydantic/pydantic-ai tests/models/cassettes/test_google/test_google_model_empty_user_prompt.yaml "
    "@267486352b738e598be3b47e533245cfdd41f6f9, gemini-2.5-flash"
)
#: The sources of the content rules this module refuses before sending.
FUNCTION_RESPONSE_NAME = "FunctionResponse.name is REQUIRED in the Gemini API reference, ai.google.dev/api"
NO_CONTENTS = 'the API\'s 400 "* GenerateContentRequest.contents: contents is not specified"'


# ---------------------------------------------------------------------- checks


def _check_knobs(req: ModelRequest) -> None:
    """The neutral knobs Gemini has no field for (refused, never silently dropped), and its ranges."""
    if not req.parallel_tool_calls:
        raise InvalidSettingsError(
            "google: Gemini has no switch for parallel tool calls (the model decides); "
            "leave parallel_tool_calls=True"
        )
    if req.metadata:
        raise InvalidSettingsError("google: the Gemini API takes no request metadata; remove metadata")
    if req.user_id is not None:
        raise InvalidSettingsError("google: the Gemini API has no end-user id field; remove user_id")
    if req.service_tier is not None:
        raise InvalidSettingsError(
            f"google: service_tier {req.service_tier!r} is not offered by the Gemini API adapter; remove it"
        )
    if req.output is not None and req.tools and _models.capabilities(req.model).json_with_tools is False:
        raise InvalidSettingsError(
            f"google: {req.model} cannot take tools and output_type in one request (the API answers 400 "
            "\"Function calling with a response mime type: 'application/json' is unsupported\" before "
            "Gemini 3); drop output_type or the tools, or use a Gemini 3 model"
        )
    if len(req.stop_sequences) > MAX_STOP_SEQUENCES:
        raise InvalidSettingsError(
            f"google: Gemini takes at most {MAX_STOP_SEQUENCES} stop_sequences; got {len(req.stop_sequences)}"
        )


def _level(model: str, r: ReasoningSettings, caps: _models.GeminiModel) -> dict[str, Any]:
    """``thinkingLevel`` for a Gemini 3 model (effort -> level; adaptive / no effort: the model's default)."""
    if r.budget_tokens is not None:
        raise InvalidSettingsError(
            f"google: {model} takes thinkingLevel, not a token budget; give effort="
            f"{sorted(caps.levels or _models.ALL_LEVELS)} instead of budget_tokens"
        )
    if r.effort is None or r.adaptive:
        return {}
    if r.effort == "none":
        raise InvalidSettingsError(
            f"google: {model} cannot turn thinking off; use its lowest level "
            f"({min(caps.levels or _models.ALL_LEVELS, key=_models.ALL_LEVELS.index)!r}) instead"
        )
    if r.effort not in _models.ALL_LEVELS or (caps.levels is not None and r.effort not in caps.levels):
        takes = [lv for lv in _models.ALL_LEVELS if caps.levels is None or lv in caps.levels]
        raise InvalidSettingsError(
            f"google: effort {r.effort!r} is not a thinking level of {model}; use one of {takes}"
        )
    return {"thinkingLevel": r.effort.upper()}


def _budget(model: str, r: ReasoningSettings, caps: _models.GeminiModel) -> dict[str, Any]:
    """``thinkingBudget`` for a Gemini 2.5 model (``-1``: dynamic, when adaptive)."""
    if r.adaptive:
        return {"thinkingBudget": -1}
    budget = r.budget_tokens
    if budget is None and r.effort == "none":
        budget = 0
    elif budget is None and r.effort is not None:
        if r.effort not in EFFORT_BUDGETS:
            raise InvalidSettingsError(
                f"google: effort {r.effort!r} has no Gemini budget; use one of "
                f"{sorted(EFFORT_BUDGETS)} or budget_tokens"
            )
        budget = EFFORT_BUDGETS[r.effort]
        if caps.budget is not None:
            budget = max(caps.budget[0], min(caps.budget[1], budget))
    if budget is None:
        return {}
    if budget == 0:
        return _off(model, caps)
    if caps.budget is not None and not (caps.budget[0] <= budget <= caps.budget[1]):
        lo, hi = caps.budget
        raise InvalidSettingsError(
            f"google: {model} takes a thinking budget of {lo} to {hi} tokens; got {budget}"
        )
    return {"thinkingBudget": budget}


def _off(model: str, caps: _models.GeminiModel) -> dict[str, Any]:
    if caps.thinking == "none":
        return {}
    if not caps.can_off:
        raise InvalidSettingsError(
            f"google: {model} cannot turn thinking off (the API refuses a zero budget / has no 'off' "
            "level); lower the effort instead"
        )
    return {"thinkingBudget": 0}


def thinking_config(model: str, r: ReasoningSettings | None) -> dict[str, Any] | None:
    """The ``thinkingConfig`` for ``r`` on ``model`` (``None``: send none), or ``InvalidSettingsError``.

    ``includeThoughts`` follows the summary setting (thought summaries are display only).
    """
    caps = _models.capabilities(model)
    if r is None:
        return None
    if not r.enabled:
        return _off(model, caps) or None
    if caps.thinking == "none":
        if r.effort is None and r.budget_tokens is None and not r.adaptive:
            return None
        raise InvalidSettingsError(f"google: {model} does not think; use ReasoningSettings(enabled=False)")
    config = _level(model, r, caps) if caps.thinking == "level" else _budget(model, r, caps)
    if r.summary is not None and r.display != "omitted" and config.get("thinkingBudget") != 0:
        config["includeThoughts"] = True
    return config or None


def check_options(request: ModelRequest, adapter: object | None = None) -> None:
    """The request's knobs checked against Gemini's rules, as ``build_request`` checks them.

    A run calls this when it is constructed (``ProviderSpec.check_options``), so a knob the API would
    refuse, or Gemini does not have, fails before anything is sent or logged.
    """
    _check_knobs(request)
    thinking_config(request.model, request.reasoning)


# ---------------------------------------------------------------------- contents


def _usable(item: ProviderReasoningItem, model: str, base_url: str | None) -> bool:
    """Made here: this provider and API, this model, and this very endpoint (Gemini API or Vertex)."""
    return (
        item.block_type.partition(":")[0] == SIGNATURE
        and item.matches(provider=PROVIDER, api=API, model=model)
        and item.base_url == base_url
    )


class _Contents:
    """Walks the portable history once, building ``contents`` with this loop's signatures put back."""

    _shaped_repr = True

    def __init__(self, signatures: dict[str, dict[int, ProviderReasoningItem]]) -> None:
        self.signatures = signatures
        self.contents: list[dict[str, Any]] = []
        self.system: list[dict[str, Any]] = []
        self.turn: str | None = None
        self.turn_parts: list[tuple[int, dict[str, Any]]] = []
        self.call_names: dict[str, str] = {}
        self.api_ids: set[str] = set()
        self.sent = 0
        self.moved = 0
        self.signed_turns: set[str] = set()  # turns whose functionCall part got its signature back

    def __repr__(self) -> str:
        return f"<_Contents contents={len(self.contents)} sent={self.sent} moved={self.moved}>"

    def _push(self, role: str, part: dict[str, Any]) -> None:
        if (
            self.contents
            and self.contents[-1]["role"] == role
            and role == "user"
            and ("functionResponse" in part and "functionResponse" in self.contents[-1]["parts"][-1])
        ):
            self.contents[-1]["parts"].append(part)
            return
        self.contents.append({"role": role, "parts": [part]})

    def flush_turn(self) -> None:
        """Emit the model turn being collected, with its signatures on their parts."""
        if self.turn is None and not self.turn_parts:
            return
        sigs = self.signatures.pop(self.turn, {}) if self.turn is not None else {}
        parts = self.turn_parts
        taken = {i for i, _ in parts}
        for index, item in sigs.items():
            if index not in taken:
                kind = signature_kind(item.block_type)
                if kind in (TEXT, THOUGHT):  # an empty part that only held the signature
                    empty: dict[str, Any] = {"text": ""}
                    if kind == THOUGHT:
                        empty["thought"] = True
                    parts.append((index, empty))
                else:
                    self.moved += 1
                    continue
            self.sent += 1
        parts.sort(key=lambda p: p[0])
        out: list[dict[str, Any]] = []
        for index, part in parts:
            sig = sigs.get(index)
            if sig is not None:
                part["thoughtSignature"] = json.loads(sig.unseal(provider=PROVIDER, api=API))
                if "functionCall" in part and self.turn is not None:
                    self.signed_turns.add(self.turn)
            out.append(part)
        if out:
            self.contents.append({"role": "model", "parts": out})
        self.turn = None
        self.turn_parts = []

    def assistant(self, item: AssistantPart, position: int) -> None:
        if item.turn_id is None or item.turn_id != self.turn:
            self.flush_turn()
            self.turn = item.turn_id
        index = item.index if item.index is not None else 10_000 + position
        sigs = self.signatures.get(item.turn_id or "", {})
        sig = sigs.get(index)
        if isinstance(item, AssistantTextItem):
            if sig is not None and signature_kind(sig.block_type) not in (None, TEXT):
                self._moved(sigs, index)
            if not item.text and index not in sigs:
                return
            self.turn_parts.append((index, {"text": item.text}))
            return
        if sig is not None and signature_kind(sig.block_type) not in (None, CALL):
            self._moved(sigs, index)
        call: dict[str, Any] = {"name": item.name, "args": _args(item)}
        if item.provider_item_id:
            call["id"] = item.provider_item_id
            self.api_ids.add(item.call_id)
        self.call_names[item.call_id] = item.name
        self.turn_parts.append((index, {"functionCall": call}))

    def _moved(self, sigs: dict[int, ProviderReasoningItem], index: int) -> None:
        """A signature whose position now holds a part of another kind: never sent elsewhere."""
        del sigs[index]
        self.moved += 1

    def other(self, item: OtherItem) -> None:
        self.flush_turn()
        if isinstance(item, SystemItem):
            self.system.append({"text": item.text})
        elif isinstance(item, UserText):
            # Empty text is sent, not refused: EMPTY_TEXT_ACCEPTED is the recording that shows the API
            # answering it. A part with *no* data, or a content with no parts, is what the API refuses.
            self._push("user", {"text": item.text})
        else:
            name = item.name or self.call_names.get(item.call_id)
            if name is None:
                raise InvalidSettingsError(
                    f"google: tool result {item.call_id!r} answers no tool call of this history "
                    f"(a functionResponse must name its function: {FUNCTION_RESPONSE_NAME})"
                )
            key = "error" if item.is_error else "result"
            response: dict[str, Any] = {"name": name, "response": {key: item.output}}
            if item.call_id in self.api_ids:
                response = {"id": item.call_id, **response}
            self._push("user", {"functionResponse": response})


def _args(item: ToolCallItem) -> Any:
    try:
        value = json.loads(item.arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _signatures(
    req: ModelRequest, base_url: str | None
) -> tuple[dict[str, dict[int, ProviderReasoningItem]], int]:
    """This loop's signatures by turn and part index, and how many were made elsewhere."""
    by_turn: dict[str, dict[int, ProviderReasoningItem]] = {}
    other = 0
    for opaque in req.continuation:
        if _usable(opaque, req.model, base_url):
            by_turn.setdefault(opaque.turn_id, {})[opaque.index] = opaque
        else:
            other += 1
            log.debug("google: dropping reasoning item not made here: %r", opaque)
    return by_turn, other


def _contents(req: ModelRequest, base_url: str | None, out: BuiltRequest[bytes]) -> _Contents:
    by_turn, other = _signatures(req, base_url)
    orphans = built_request.orphaned(by_turn, req.items)
    walk = _Contents(by_turn)
    for position, item in enumerate(req.items):
        if isinstance(item, AssistantPart):
            walk.assistant(item, position)
        else:
            walk.other(item)
    walk.flush_turn()
    out.reasoning_sent = walk.sent
    # A signature whose part is now of another kind lost its part: orphaned too (never moved elsewhere).
    moved = ("orphaned", "the part at their position is of another kind", walk.moved)
    built_request.report_dropped(out, PROVIDER, other, orphans, moved)
    return walk


# ---------------------------------------------------------------------- the body


def _tool(t: ToolSpec) -> dict[str, Any]:
    decl: dict[str, Any] = {"name": t.name, "description": t.description}
    decl["parametersJsonSchema"] = t.parameters
    return decl


def _tool_config(req: ModelRequest) -> dict[str, Any]:
    forced = named_tool(req.tool_choice)
    if forced is not None:
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [forced]}}
    mode = {"auto": "AUTO", "required": "ANY", "none": "NONE"}[req.tool_choice]
    return {"functionCallingConfig": {"mode": mode}}


_KNOBS = {
    "temperature": "temperature",
    "top_p": "topP",
    "max_output_tokens": "maxOutputTokens",
    "stop_sequences": "stopSequences",
}


def _generation_config(req: ModelRequest, opts: dict[str, Any]) -> dict[str, Any]:
    config = knobs(req, _KNOBS)
    thinking = thinking_config(req.model, req.reasoning)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    if req.output is not None:
        config["responseMimeType"] = "application/json"
        config["responseJsonSchema"] = req.output.json_schema
    config.update(opts.get("generation_config") or {})  # checked against the spec's rules first
    return config


def build_request(req: ModelRequest, *, base_url: str | None) -> BuiltRequest[bytes]:
    """The ``generateContent`` body for ``req`` as JSON bytes, or ``InvalidSettingsError``."""
    check_provider_options(PROVIDER, req)  # the spec's declared rules (provider.py)
    opts = req.options_for(PROVIDER)
    _check_knobs(req)
    out: BuiltRequest[bytes] = BuiltRequest(body=b"")
    generation = _generation_config(req, opts)
    thinking = generation.get("thinkingConfig") or {}
    out.reasoning_mode = thinking.get("thinkingLevel") or (
        None if "thinkingBudget" not in thinking else str(thinking["thinkingBudget"])
    )
    walk = _contents(req, base_url, out)
    if not walk.contents:
        raise InvalidSettingsError(f"google: the request has no user or model contents ({NO_CONTENTS})")
    rule = STAND_IN_RULE if _models.capabilities(req.model).signatures_required else NOTHING_REQUIRED
    plan = plan_recovery(req, rule, carried=walk.signed_turns)
    if plan.gaps:  # known to be missing: see _stand_in
        fill_stand_ins(walk.contents, out.diagnostics, plan.gaps[0].cause)
    body: dict[str, Any] = {"contents": walk.contents}
    if walk.system:
        body["systemInstruction"] = {"parts": walk.system}
    if req.tools:
        body["tools"] = [{"functionDeclarations": [_tool(t) for t in req.tools]}]
        body["toolConfig"] = _tool_config(req)
    if generation:
        body["generationConfig"] = generation
    body.update({k: v for k, v in opts.items() if k != "generation_config"})
    out.body = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return out
