"""``ModelRequest`` -> the Messages API request body, with the API's rules checked before sending.

Why checks here: the API answers a wrong thinking/caching setup with a 400 after a network round trip
(or, worse, mid-loop); agentlab raises ``InvalidSettingsError`` with the fix instead.

Continuity (the rule that matters most): inside an active tool loop, the ``thinking`` and
``redacted_thinking`` blocks of the last assistant turn must go back exactly as received, or the API
answers 400 ("... cannot be modified"). They come from ``request.continuation`` only (opaque
``ProviderReasoningItem``s, raw JSON bytes) and are put back inside the assistant turn that produced
them, at their original block ``index`` among that turn's portable text/tool_use items
(matched by ``turn_id``). Items from another provider/API/model/endpoint, and items whose turn is
not in the history, are dropped and counted, never sent.

Documented recovery (no continuation while thinking is on; the decision is
:func:`agentlab.neutral.recovery.plan_recovery`'s under :data:`RULE`): when the latest assistant turn holds
``tool_use`` but has no thinking block to send (the loop was abandoned in an earlier cell, the
checkpoint was restored from disk, or the session switched provider), the API would reject the
request ("a final assistant message must start with a thinking block"). agentlab then rewrites that
one dangling exchange as portable text: the turn's tool calls become assistant text
(``[called tool NAME with ARGS]``) and their results become user text (``[result of tool NAME:
OUTPUT]``), and a ``DiagnosticEvent`` (``dangling_tool_use``) says so. Thinking stays on; it
is never disabled to get past the rule. This applies to budgeted and adaptive thinking alike (an
adaptive turn that really had no thinking block is rewritten too: lossy, but always accepted).
"""

from __future__ import annotations

import itertools
import json
import logging
import re
from typing import Any

from agentlab.adapters import built_request
from agentlab.adapters.anthropic_messages import _models
from agentlab.adapters.anthropic_messages._output import output_config
from agentlab.adapters.built_request import BuiltRequest, check_provider_options, knobs
from agentlab.errors import InvalidSettingsError
from agentlab.neutral._shapes import shaped_repr
from agentlab.neutral.call_ids import conform_call_id
from agentlab.neutral.diagnostics import diagnostic
from agentlab.neutral.items import (
    AssistantPart,
    AssistantTextItem,
    OtherItem,
    ProviderReasoningItem,
    SystemItem,
    ToolCallItem,
    UserText,
)
from agentlab.neutral.recovery import ContinuityRule, arguments_text, called_text, plan_recovery, result_text
from agentlab.neutral.request import ModelRequest, ReasoningSettings, ToolSpec, named_tool

__all__ = [
    "API_VERSION",
    "DEFAULT_MAX_TOKENS",
    "EFFORT_BUDGETS",
    "INTERLEAVED_BETA",
    "BuiltRequest",
    "build_request",
    "check_options",
    "count_breakpoints",
    "takes_sampling",
]

log = logging.getLogger("agentlab.adapters.anthropic")

PROVIDER = "anthropic"
API = "messages"
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
API_VERSION = "2026-10-21"
"""The ``anthropic-version`` the installed SDK sends (its clients' ``default_headers``; a test keeps
the two equal). An adapter's ``extra_headers`` may pin another one."""
SAMPLING_REMOVED_IN = "2026-10-21"
"""From this API version, ``temperature``/``top_p``/``top_k`` are not request fields at all: any
value, even the default, is a 400 "temperature: Extra inputs are not permitted"."""
DEFAULT_MAX_TOKENS = 16000
"""``max_tokens`` when the request gives no ``max_output_tokens`` (the API requires one)."""
ANSWER_ROOM = 4096
"""With a budget at or above the default ``max_tokens``, room left for the answer after thinking."""
MIN_BUDGET = 1024
MAX_BREAKPOINTS = 4
EFFORT_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
    "max": 63999,
}
"""``budget_tokens`` chosen from ``effort`` when budgeted thinking gets no explicit budget."""
_OUTPUT_EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})
_THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
_OPAQUE_TYPES = _THINKING_TYPES | {"compaction"}
"""What goes back verbatim within a loop: thinking, and server-side ``compaction`` blocks."""
COMPACT_BETA = "compact-2026-01-12"
"""The beta a request with ``context_management`` compaction edits needs."""
_TTL_RANK = {"5m": 0, "1h": 1}


def _adaptive_preferred(model: str) -> bool:
    """Models where budgeted thinking is deprecated or refused (the family table, and the SDK's list)."""
    return _models.adaptive_preferred(model) or _models.capabilities(model).budgeted is False


def _check_model_thinking(model: str, r: ReasoningSettings, adaptive: bool) -> None:
    """The model's own thinking rules (:mod:`._models`): each is a 400 from the API otherwise."""
    caps = _models.capabilities(model)
    if not caps.thinking:
        raise InvalidSettingsError(
            f"anthropic: {model} has no extended thinking; use a Claude 3.7 / 4 (or later) model or "
            "ReasoningSettings(enabled=False)"
        )
    if adaptive and caps.adaptive is False:
        raise InvalidSettingsError(
            f"anthropic: {model} does not take adaptive thinking (Opus 4.6 / Sonnet 4.6 and later do); "
            "give budget_tokens or an effort instead"
        )
    if not adaptive and caps.budgeted is False:
        raise InvalidSettingsError(
            f"anthropic: {model} takes adaptive thinking only (thinking.type 'enabled' with budget_tokens "
            "is refused there); use ReasoningSettings(adaptive=True, effort=...)"
        )
    if adaptive and r.effort is not None and not _models.accepts_effort(model, r.effort):
        takes = [e for e in _models.ALL_EFFORTS if _models.accepts_effort(model, e)]
        raise InvalidSettingsError(
            f"anthropic: effort {r.effort!r} is not offered by {model}; use one of {takes}"
        )


def takes_sampling(api_version: str = API_VERSION) -> bool:
    """Whether requests at ``api_version`` may carry ``temperature``/``top_p``/``top_k``.

    The one place that answers it for Anthropic (API versions are dates, so they compare as text).
    """
    return api_version < SAMPLING_REMOVED_IN


def _check_sampling_version(req: ModelRequest, opts: dict[str, Any], api_version: str) -> None:
    """Sampling knobs on an API version without them: refused here instead of a 400 there."""
    if takes_sampling(api_version):
        return
    given = [("temperature", req.temperature), ("top_p", req.top_p)] + [
        (f"anthropic_{k}", opts.get(k)) for k in ("temperature", "top_p", "top_k")
    ]
    for where, value in given:
        if value is not None:
            raise InvalidSettingsError(
                f"anthropic: {where} is not accepted by Messages API version {api_version} (the version "
                f'the anthropic SDK sends; the API answers 400 "{where.removeprefix("anthropic_")}: Extra '
                'inputs are not permitted"); remove it, or pin the older version on the adapter: '
                "AnthropicMessagesAdapter(model, extra_headers={'anthropic-version': '2023-06-01'})"
            )


def thinking_on(req: ModelRequest) -> bool:
    """Whether the request thinks (budgeted or adaptive): the sampling and tool-choice rules follow it."""
    return req.reasoning is not None and req.reasoning.enabled


def _check_sampling_with_thinking(req: ModelRequest, opts: dict[str, Any]) -> None:
    """Sampling knobs and forced tool use the API refuses while thinking is on.

    The API's own words: "`temperature` may only be set to 1 when thinking is enabled", "`top_p`
    must be ... at least 0.95", "Thinking may not be enabled when tool_choice forces tool use".
    """
    # The generic knob and the escape hatch (anthropic_temperature) go through the same rule.
    temp = req.temperature if req.temperature is not None else opts.get("temperature")
    if temp is not None and temp != 1:
        raise InvalidSettingsError(
            f'anthropic: temperature={temp} is not allowed with thinking (the API: "`temperature` may '
            'only be set to 1 when thinking is enabled"); leave it unset (or 1), '
            "or turn thinking off with ReasoningSettings(enabled=False)"
        )
    if opts.get("top_k") is not None:
        raise InvalidSettingsError("anthropic: top_k is not allowed with thinking; remove anthropic_top_k")
    for where, top_p in (("top_p", req.top_p), ("anthropic_top_p", opts.get("top_p"))):
        if top_p is not None and not (0.95 <= float(top_p) <= 1):
            raise InvalidSettingsError(
                f"anthropic: with thinking, {where} must be between 0.95 and 1 (or unset); got {top_p}"
            )
    if req.tools and (req.tool_choice == "required" or named_tool(req.tool_choice) is not None):
        raise InvalidSettingsError(
            f"anthropic: tool_choice={req.tool_choice!r} (forced tool use) is not allowed with thinking "
            '(the API: "Thinking may not be enabled when tool_choice forces tool use"); '
            "use tool_choice='auto' or 'none', or turn thinking off with ReasoningSettings(enabled=False)"
        )


_ANTHROPIC_TIERS = frozenset({"auto", "standard_only"})


def _check_knobs(req: ModelRequest) -> None:
    """Ranges and the fields Messages has in another form (metadata takes only ``user_id``)."""
    if req.output is not None and _models.capabilities(req.model).structured is False:
        raise InvalidSettingsError(
            f"anthropic: {req.model} has no structured outputs (the API refuses output_config.format "
            f"there); drop output_type {req.output.name!r} or use a model that has them"
        )
    if req.temperature is not None and not (0 <= req.temperature <= 1):
        raise InvalidSettingsError(f"anthropic: temperature must be between 0 and 1; got {req.temperature}")
    if req.top_p is not None and not (0 <= req.top_p <= 1):
        raise InvalidSettingsError(f"anthropic: top_p must be between 0 and 1; got {req.top_p}")
    extra = sorted(set(req.metadata or {}) - {"user_id"})
    if extra:
        raise InvalidSettingsError(
            f"anthropic: metadata takes only user_id (Messages has metadata.user_id and nothing else); "
            f"got keys {extra}; pass user_id=... instead"
        )
    if req.service_tier is not None and req.service_tier not in _ANTHROPIC_TIERS:
        raise InvalidSettingsError(
            f"anthropic: service_tier {req.service_tier!r} is not offered; "
            f"use one of {sorted(_ANTHROPIC_TIERS)}"
        )
    for t in req.tools:
        if t.strict and t.parameters.get("additionalProperties", True) is not False:
            raise InvalidSettingsError(
                f"anthropic: tool {t.name!r} asks for strict mode, but its schema does not qualify "
                "(parameters: additionalProperties must be false)"
            )


def check_options(req: ModelRequest, adapter: object | None = None, *, provider: str = PROVIDER) -> None:
    """The request's knobs checked against the Messages API's rules, as ``build_request`` checks them.

    A run calls this when it is constructed (through ``ProviderSpec.check_options``), so a knob the
    API would refuse fails before anything is sent or logged. ``adapter``: the run's own adapter,
    when given; its ``api_version`` (an ``anthropic-version`` it pins) decides the sampling rule.
    ``provider``: the registry entry whose rules apply (a platform serving Claude passes its own).

    It is the build itself, on the request as it stands (no opaque items yet): every rule the build
    applies (thinking budget, sampling, cache breakpoints, tool results) fails here, with the same
    words, and none is left for step 1. Building is pure and costs one pass over the history.
    """
    version = getattr(adapter, "api_version", None)
    pinned = {"anthropic-version": version} if isinstance(version, str) and version != API_VERSION else None
    build_request(req, base_url=getattr(adapter, "base_url", None), extra_headers=pinned, provider=provider)


def _user_id(req: ModelRequest) -> str | None:
    return req.user_id if req.user_id is not None else (req.metadata or {}).get("user_id")


def _adaptive_config(r: ReasoningSettings, opts: dict[str, Any]) -> dict[str, Any]:
    """Adaptive thinking: the model picks its depth; ``effort`` travels as ``output_config``."""
    if r.effort is not None:
        if r.effort not in _OUTPUT_EFFORTS:
            raise InvalidSettingsError(
                f"anthropic: effort {r.effort!r} is not offered; use one of {sorted(_OUTPUT_EFFORTS)}"
            )
        opts.setdefault("output_config", {"effort": r.effort})
    return {"type": "adaptive"}


def _budget_config(r: ReasoningSettings, user_max: int | None, max_tokens: int) -> tuple[dict[str, Any], int]:
    """Budgeted thinking: the budget (explicit, or from ``effort``) and the ``max_tokens`` it needs."""
    budget = r.budget_tokens if r.budget_tokens is not None else EFFORT_BUDGETS[r.effort or "medium"]
    if budget < MIN_BUDGET:
        raise InvalidSettingsError(f"anthropic: budget_tokens must be at least {MIN_BUDGET}; got {budget}")
    if budget >= max_tokens and not r.interleaved:
        if user_max is not None:
            raise InvalidSettingsError(
                f"anthropic: budget_tokens ({budget}) must be below max_output_tokens ({user_max}); "
                "raise max_output_tokens or lower the budget (or use interleaved thinking)"
            )
        max_tokens = budget + ANSWER_ROOM
    return {"type": "enabled", "budget_tokens": budget}, max_tokens


def _thinking(
    req: ModelRequest, opts: dict[str, Any], headers: dict[str, str]
) -> tuple[dict[str, Any] | None, int]:
    """The ``thinking`` param and ``max_tokens``, with the API's constraints checked."""
    r = req.reasoning
    user_max = req.max_output_tokens
    max_tokens = user_max or DEFAULT_MAX_TOKENS
    if r is None or not r.enabled:
        return None, max_tokens
    if r.effort == "none":
        raise InvalidSettingsError(
            "anthropic: reasoning effort 'none' asks for no thinking; set ReasoningSettings(enabled=False)"
        )
    adaptive = r.adaptive or (r.budget_tokens is None and _adaptive_preferred(req.model))
    if r.adaptive and r.budget_tokens is not None:
        raise InvalidSettingsError(
            "anthropic: adaptive thinking takes no budget_tokens; set adaptive or budget_tokens, not both"
        )
    _check_model_thinking(req.model, r, adaptive)
    _check_sampling_with_thinking(req, opts)
    cfg: dict[str, Any]
    if adaptive:
        cfg = _adaptive_config(r, opts)
    else:
        cfg, max_tokens = _budget_config(r, user_max, max_tokens)
    if r.display is not None:
        cfg["display"] = r.display
    if r.interleaved and not adaptive:
        # Adaptive thinking interleaves on its own; budgeted thinking needs the beta (Claude 4+).
        if not _models.capabilities(req.model).interleaved_beta:
            raise InvalidSettingsError(
                f"anthropic: interleaved thinking needs a Claude 4 (or later) model; {req.model} has none"
            )
        _add_beta(headers, INTERLEAVED_BETA)
    return cfg, max_tokens


def _add_beta(headers: dict[str, str], beta: str) -> None:
    current = [b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()]
    if beta not in current:
        current.append(beta)
    headers["anthropic-beta"] = ",".join(current)


class _Messages:
    """Builds the ``messages`` list, merging consecutive same-role turns as the API requires."""

    _shaped_repr = True

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def __repr__(self) -> str:
        return shaped_repr(self, messages=self.messages)

    def push(self, role: str, block: dict[str, Any]) -> None:
        msgs = self.messages
        if msgs and msgs[-1]["role"] == role:
            msgs[-1]["content"].append(block)
        else:
            msgs.append({"role": role, "content": [block]})


def _tool_input(item: ToolCallItem) -> dict[str, Any]:
    """A history tool call's ``input``: its arguments object, or ``{}`` when they are not one.

    Malformed arguments are kept in history on purpose (the policy of every adapter: the run
    answered that call with an error result, so the model could correct itself). The Messages API
    accepts only an object as ``tool_use.input``, so such a call goes back as ``{}``: the turn stays
    valid and the error result right after it says the call was not run.
    """
    try:
        value = json.loads(item.arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _usable(item: ProviderReasoningItem, model: str, base_url: str | None, provider: str) -> bool:
    return item.block_type in _OPAQUE_TYPES and item.matches(
        provider=provider, api=API, model=model, base_url=base_url
    )


def _by_turn(
    req: ModelRequest, base_url: str | None, provider: str
) -> tuple[dict[str, list[ProviderReasoningItem]], int]:
    """This loop's reasoning blocks, grouped by the turn that made them (in block order).

    Also counts how many of the continuation were made elsewhere (another provider/API/model/endpoint;
    a platform serving Claude, Bedrock or Vertex, is a provider of its own: its signatures are not
    valid on Anthropic's API nor on the other platform).
    """
    by_turn, elsewhere = built_request.reasoning_by_turn(
        req.continuation, lambda opaque: _usable(opaque, req.model, base_url, provider)
    )
    for opaque in elsewhere:
        log.debug("anthropic: dropping reasoning item not made here: %r", opaque)
    return by_turn, len(elsewhere)


def _marked(block: dict[str, Any], mark: bool) -> dict[str, Any]:
    """The block, carrying the interleaver's cache marker when its item asked for a breakpoint."""
    if mark:
        block[_MARK] = True
    return block


class _Interleaver:
    """Puts each turn's reasoning blocks back before the part that followed them (by block ``index``).

    Walks the history once; counts what could be sent and what trailed a turn.
    """

    _shaped_repr = True

    def __init__(self, by_turn: dict[str, list[ProviderReasoningItem]], provider: str) -> None:
        self.by_turn = by_turn
        self.provider = provider
        self.m = _Messages()
        self.system: list[dict[str, Any]] = []
        self.pending: list[ProviderReasoningItem] = []  # reasoning of the turn being emitted, not yet placed
        self.current_turn: str | None = None
        self.trailing = 0
        self.sent = 0
        self.carried: set[str] = set()  # turns whose thinking went back

    def __repr__(self) -> str:
        return shaped_repr(
            self, ("trailing", "sent"), messages=self.m.messages, trailing=self.trailing, sent=self.sent
        )

    def flush_turn(self) -> None:
        # Reasoning after the turn's last portable part would end the message with a thinking block,
        # which the API rejects; such items cannot be sent.
        self.trailing += len(self.pending)
        self.pending = []

    def assistant(self, item: AssistantPart) -> None:
        m = self.m
        if item.turn_id != self.current_turn:
            self.flush_turn()
            self.current_turn = item.turn_id
            self.pending = list(self.by_turn.pop(item.turn_id, ())) if item.turn_id is not None else []
        idx = item.index
        pending = self.pending
        while pending and (idx is None or pending[0].index < idx):
            r = pending.pop(0)
            m.push("assistant", json.loads(r.unseal(provider=self.provider, api=API)))
            self.sent += 1
            self.carried.add(r.turn_id)
        block: dict[str, Any] | None = None
        if isinstance(item, AssistantTextItem):
            if item.text:
                block = {"type": "text", "text": item.text}
        else:
            block = {"type": "tool_use", "id": item.call_id, "name": item.name, "input": _tool_input(item)}
        if block is not None:
            m.push("assistant", _marked(block, item.cache_breakpoint))

    def other(self, item: OtherItem) -> None:
        self.flush_turn()
        self.current_turn = None
        m = self.m
        if isinstance(item, SystemItem):
            self.system.append(_marked({"type": "text", "text": item.text}, item.cache_breakpoint))
        elif isinstance(item, UserText):
            if not item.text:
                raise InvalidSettingsError(
                    f"anthropic: empty {item.kind} text; the API rejects empty text blocks"
                )
            m.push("user", _marked({"type": "text", "text": item.text}, item.cache_breakpoint))
        else:
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": item.call_id,
                "content": item.output,
            }
            if item.is_error:
                block["is_error"] = True
            m.push("user", _marked(block, item.cache_breakpoint))


def _messages(
    req: ModelRequest, base_url: str | None, out: BuiltRequest[dict[str, Any]], provider: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[str]]:
    """(system blocks, messages, carried turns), this loop's reasoning re-interleaved by (turn_id, index).

    The carried turns are those whose thinking blocks went back (the recovery decision needs them).
    """
    by_turn, other = _by_turn(req, base_url, provider)
    orphans = built_request.orphaned(by_turn, req.items)
    walk = _Interleaver(by_turn, provider)
    built_request.walk_history(req.items, walk)
    walk.flush_turn()

    # Tool results must open the user turn that answers a tool_use turn.
    for msg in walk.m.messages:
        if msg["role"] == "user" and len(msg["content"]) > 1:
            msg["content"].sort(key=lambda b: b.get("type") != "tool_result")

    out.reasoning_sent = walk.sent
    trailing = ("trailing", "after the last part of their turn", walk.trailing)
    built_request.report_dropped(out, provider, other, orphans, trailing)
    return walk.system, walk.m.messages, walk.carried


RULE = ContinuityRule(
    requires="last_turn",
    source="Anthropic: 'a final assistant message must start with a thinking block'",
)
"""Thinking on: the last assistant turn, when it holds tool calls, must start with its thinking."""


def _recover_dangling(
    req: ModelRequest, messages: list[dict[str, Any]], carried: set[str], out: BuiltRequest[dict[str, Any]]
) -> None:
    """The documented recovery (module docstring) for the turns :func:`plan_recovery` names."""
    last_a = next((i for i in range(len(messages) - 1, -1, -1) if messages[i]["role"] == "assistant"), None)
    if last_a is None or last_a + 1 >= len(messages):
        return  # no assistant turn, or no results yet: _check_results raises
    turn = messages[last_a]["content"]
    calls = {b["id"]: b for b in turn if b.get("type") == "tool_use"}
    plan = plan_recovery(req, RULE, carried)
    if not plan.covers(calls):
        return
    new_turn: list[dict[str, Any]] = []
    for b in turn:
        if b.get("type") == "tool_use":
            new_turn.append(
                {"type": "text", "text": called_text(b["name"], arguments_text(b.get("input", {})))}
            )
        else:
            new_turn.append(b)
    new_answer: list[dict[str, Any]] = []
    for b in messages[last_a + 1]["content"]:
        if b.get("type") == "tool_result" and b.get("tool_use_id") in calls:
            name = calls[b["tool_use_id"]]["name"]
            new_answer.append(
                {"type": "text", "text": result_text(name, b.get("content", ""), bool(b.get("is_error")))}
            )
        else:
            new_answer.append(b)
    messages[last_a]["content"] = new_turn
    messages[last_a + 1]["content"] = new_answer
    notice = plan.text_notice("Anthropic")
    if notice is not None:
        out.diagnostics.append(notice)


TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
"""The API's grammar for ``tool_use.id`` and ``tool_result.tool_use_id`` (a 400 "String should match
pattern" otherwise): ids another provider minted (``functions.get_weather:0``) do not all match."""


def _conform_tool_ids(messages: list[dict[str, Any]]) -> None:
    """Render every tool id the API's way (:mod:`agentlab.neutral.call_ids`), calls and results alike."""
    for msg in messages:
        for b in msg["content"]:
            if b.get("type") == "tool_use":
                b["id"] = conform_call_id(str(b["id"]), TOOL_ID)
            elif b.get("type") == "tool_result":
                b["tool_use_id"] = conform_call_id(str(b.get("tool_use_id", "")), TOOL_ID)


def _check_results(messages: list[dict[str, Any]]) -> None:
    """Every tool_use must be answered by a tool_result in the next user turn (else a 400 follows)."""
    for i, msg in enumerate(messages):
        if msg["role"] != "assistant":
            continue
        ids = [b["id"] for b in msg["content"] if b.get("type") == "tool_use"]
        if not ids:
            continue
        nxt = messages[i + 1]["content"] if i + 1 < len(messages) else []
        answered = {b.get("tool_use_id") for b in nxt if b.get("type") == "tool_result"}
        missing = [x for x in ids if x not in answered]
        if missing:
            raise InvalidSettingsError(
                f"anthropic: tool call(s) {missing} have no ToolResultItem right after them in the history"
            )


def _cache_control(ttl: str, out: BuiltRequest[dict[str, Any]]) -> dict[str, Any]:
    if ttl == "24h":
        out.diagnostics.append(
            diagnostic(
                "cache_hint_adjusted",
                "Anthropic offers cache ttls of 5m and 1h; the 24h hint was sent as 1h",
                requested="24h",
                sent="1h",
            )
        )
        ttl = "1h"
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def _breakpoint_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every place a ``cache_control`` can sit, in prompt order (tools, system, messages, top level)."""
    places: list[dict[str, Any]] = []
    tools = body.get("tools")
    if isinstance(tools, list):
        places.extend(t for t in tools if isinstance(t, dict))
    system = body.get("system")
    if isinstance(system, list):
        places.extend(b for b in system if isinstance(b, dict))
    for msg in body.get("messages") or []:
        content = msg.get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if not isinstance(b, dict):
                continue
            places.append(b)
            inner = b.get("content") if b.get("type") == "tool_result" else None
            if isinstance(inner, list):
                places.extend(x for x in inner if isinstance(x, dict))
    places.append(body)  # top-level (automatic caching) breakpoint
    return places


def count_breakpoints(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``cache_control`` values in ``body``, in prompt order."""
    return [p["cache_control"] for p in _breakpoint_blocks(body) if p.get("cache_control")]


_MARK = "__agentlab_cache_mark"
"""Set by the interleaver on the block an item's ``cache_breakpoint`` lands on; never sent."""

Place = tuple[list[dict[str, Any]], int]


def _take_item_marks(body: dict[str, Any]) -> list[Place]:
    """The blocks items marked for caching, in prompt order (system, then messages); markers removed."""
    places: list[Place] = []
    containers: list[list[dict[str, Any]]] = []
    if isinstance(body.get("system"), list):
        containers.append(body["system"])
    containers.extend(msg["content"] for msg in body["messages"])
    for blocks in containers:
        for k, b in enumerate(blocks):
            if isinstance(b, dict) and b.pop(_MARK, False):
                places.append((blocks, k))
    return places


def _auto_places(req: ModelRequest, body: dict[str, Any]) -> list[Place]:
    """Where the ``CacheHints`` put breakpoints, least worth keeping first (history, tools, system)."""
    hints = req.cache
    if hints is None or not hints.enabled:
        return []
    places: list[Place] = []
    messages = body["messages"]
    if hints.history and messages:
        content = messages[-1]["content"]
        for k in range(len(content) - 1, -1, -1):
            if content[k].get("type") not in _THINKING_TYPES:  # never on thinking blocks
                places.append((content, k))
                break
    tools = body.get("tools")
    if hints.tools and tools:
        places.append((tools, len(tools) - 1))
    system = body.get("system")
    if hints.system and isinstance(system, list) and system:
        places.append((system, len(system) - 1))
    return places


def _fit_breakpoints(
    items: list[Place], auto: list[Place], room: int, out: BuiltRequest[dict[str, Any]]
) -> list[Place]:
    """The places that fit in ``room``: item marks first, then automatic ones; one diagnostic if cut."""
    marked_ids = {(id(c), k) for c, k in items}
    auto = [p for p in auto if (id(p[0]), p[1]) not in marked_ids]
    wanted = len(items) + len(auto)
    if wanted <= room:
        return items + auto
    keep_auto = auto[len(auto) - max(0, room - len(items)) :] if room > len(items) else []
    keep_items = items[len(items) - min(len(items), room) :] if room > 0 else []
    out.diagnostics.append(
        diagnostic(
            "cache_hint_adjusted",
            f"{wanted} cache breakpoints wanted ({len(items)} on history items, {len(auto)} from "
            f"CacheHints) but the API allows {MAX_BREAKPOINTS} (with any set through provider_options); "
            f"sent {len(keep_items) + len(keep_auto)}: item marks first (the latest), then the hints",
            requested=str(wanted),
            sent=str(len(keep_items) + len(keep_auto)),
        )
    )
    return keep_items + keep_auto


def _apply_cache(req: ModelRequest, body: dict[str, Any], out: BuiltRequest[dict[str, Any]]) -> None:
    """Breakpoints: history items' marks and the ``CacheHints``, within the API's four."""
    items = _take_item_marks(body)
    hints = req.cache
    enabled = hints is not None and hints.enabled
    if items and not enabled:
        out.diagnostics.append(
            diagnostic(
                "setting_ignored",
                f"cache_breakpoint on {len(items)} history item(s) was not sent: caching is off for this run",
                setting="cache_breakpoint",
            )
        )
        items = []
    if enabled:
        assert hints is not None
        auto = _auto_places(req, body)
        room = MAX_BREAKPOINTS - len(count_breakpoints(body))
        # Item marks are fitted in (cutting hints first); hints that clash with provider_options'
        # own marks alone are refused as before (the user set both explicitly).
        places = _fit_breakpoints(items, auto, max(room, 0), out) if items else auto
        if places:
            cc = _cache_control(hints.ttl, out)
            for container, k in places:
                container[k] = {**container[k], "cache_control": dict(cc)}
    _check_breakpoints(body)


def _check_breakpoints(body: dict[str, Any]) -> None:
    """No mark on a thinking block, at most four, 1h ones before 5m ones (else the API answers 400)."""
    for msg in body["messages"]:
        for b in msg["content"]:
            if b.get("type") in _THINKING_TYPES and "cache_control" in b:
                raise InvalidSettingsError("anthropic: cache_control cannot be set on thinking blocks")
    marks = count_breakpoints(body)
    if len(marks) > MAX_BREAKPOINTS:
        raise InvalidSettingsError(
            f"anthropic: {len(marks)} cache breakpoints requested (agentlab's cache hints plus any set "
            f"through provider_options); the API allows {MAX_BREAKPOINTS}. Turn some CacheHints off."
        )
    ranks = [_TTL_RANK.get(str(m.get("ttl", "5m")), 0) if isinstance(m, dict) else 0 for m in marks]
    if any(later > earlier for earlier, later in itertools.pairwise(ranks)):
        raise InvalidSettingsError(
            "anthropic: cache breakpoints with a 1h ttl must come before those with 5m "
            "(tools, then system, then messages); align CacheHints.ttl with the ttls in provider_options"
        )


def _tool(t: ToolSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"name": t.name}
    if t.description:
        out["description"] = t.description
    out["input_schema"] = t.parameters
    if t.strict:
        out["strict"] = True  # asked for explicitly; "auto" (None) sends nothing, as before
    return out


def _tool_choice(req: ModelRequest) -> dict[str, Any]:
    """``tool_choice``: auto / any (required) / none / tool (one named tool), plus the parallel switch."""
    forced = named_tool(req.tool_choice)
    choice: dict[str, Any]
    if forced is not None:
        choice = {"type": "tool", "name": forced}
    else:
        choice = {"type": {"auto": "auto", "required": "any", "none": "none"}[req.tool_choice]}
    if not req.parallel_tool_calls and req.tool_choice != "none":
        choice["disable_parallel_tool_use"] = True
    return choice


_SAMPLING = {"temperature": "temperature", "top_p": "top_p", "stop_sequences": "stop_sequences"}


def _add_knobs(req: ModelRequest, body: dict[str, Any]) -> None:
    """Sampling, stop sequences, the end-user id and the service tier, when set."""
    body.update(knobs(req, _SAMPLING))
    user_id = _user_id(req)
    if user_id is not None:
        body["metadata"] = {"user_id": user_id}
    if req.service_tier is not None:
        body["service_tier"] = req.service_tier


def _compacts(opts: dict[str, Any]) -> bool:
    """Whether ``anthropic_context_management`` asks for server-side compaction (it needs its beta)."""
    cm = opts.get("context_management")
    edits = cm.get("edits") if isinstance(cm, dict) else None
    return any(isinstance(e, dict) and str(e.get("type", "")).startswith("compact_") for e in edits or ())


def build_request(
    req: ModelRequest,
    *,
    base_url: str | None,
    extra_headers: dict[str, str] | None = None,
    provider: str = PROVIDER,
) -> BuiltRequest[dict[str, Any]]:
    """The Messages API body for ``req`` (everything but ``stream``), or ``InvalidSettingsError``.

    ``provider``: the registry entry the request is built for (``anthropic``, or a platform serving
    Claude through the same Messages body, ``anthropic_bedrock``/``anthropic_vertex``): its
    ``provider_options`` rules and keys apply, and only thinking blocks it made go back.
    """
    check_provider_options(provider, req)  # the spec's declared rules (provider.py)
    opts = req.options_for(provider)
    out: BuiltRequest[dict[str, Any]] = BuiltRequest(body={}, headers=dict(extra_headers or {}))
    _check_knobs(req)
    thinking, max_tokens = _thinking(req, opts, out.headers)
    _check_sampling_version(req, opts, out.headers.get("anthropic-version", API_VERSION))
    out.reasoning_mode = thinking["type"] if thinking else None

    system, messages, carried = _messages(req, base_url, out, provider)
    if not messages:
        raise InvalidSettingsError("anthropic: the request has no user or assistant messages")
    if thinking is not None:
        _recover_dangling(req, messages, carried, out)
    _check_results(messages)
    _conform_tool_ids(messages)

    body: dict[str, Any] = {"model": req.model, "max_tokens": max_tokens, "messages": messages}
    if system:
        body["system"] = system
    if thinking is not None:
        body["thinking"] = thinking
    _add_knobs(req, body)
    if req.tools:
        body["tools"] = [_tool(t) for t in req.tools]
        body["tool_choice"] = _tool_choice(req)
    body.update(opts)
    if _compacts(opts):
        _add_beta(out.headers, COMPACT_BETA)
    if req.output is not None:
        body["output_config"] = output_config(req.output, body.get("output_config"))
    _apply_cache(req, body, out)
    out.body = body
    return out
