"""``ModelRequest`` -> the JSON body of ``POST /v1/responses``.

The body is built here as bytes, not handed to the SDK's ``responses.create`` as keyword arguments,
for one reason: a reasoning item must reach the API exactly as it arrived (``encrypted_content``
complete, no field added or dropped by a typed model), so its raw JSON is spliced into ``input``
verbatim. The SDK still sends it (auth, retries, headers, errors) via ``client.post(content=...)``.

Layout, chosen so the cacheable prefix stays byte-stable across the steps of a tool loop:

* leading system items -> ``instructions`` (or a developer message carrying an explicit cache
  breakpoint on models that support ``prompt_cache_options``); later system items -> developer
  messages in place;
* user -> user message; summary -> user message with a marker (portable text);
* assistant text -> assistant message; tool call -> ``function_call``; tool result ->
  ``function_call_output``;
* the loop's continuation: each reasoning item right before the item that followed it in its
  response (``turn_id``/``index``), together with the follower's original id; items that cannot be
  sent (other provider/model/endpoint, no ``encrypted_content``, follower gone) are dropped with a
  ``DiagnosticEvent``.

Stateless always: ``store: false``, ``include: ["reasoning.encrypted_content"]`` (reasoning models),
never ``previous_response_id``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from agentlab.adapters.built_request import BuiltRequest, check_provider_options
from agentlab.adapters.openai_responses import _models
from agentlab.adapters.openai_responses._dialect import OPENAI, ResponsesDialect
from agentlab.adapters.openai_responses._output import text_param
from agentlab.errors import InvalidSettingsError
from agentlab.neutral._shapes import shaped_repr
from agentlab.neutral.diagnostics import add_dropped, diagnostic
from agentlab.neutral.events import DiagnosticEvent
from agentlab.neutral.items import (
    AssistantTextItem,
    ProviderReasoningItem,
    SummaryItem,
    SystemItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import (
    CacheHints,
    ModelRequest,
    ReasoningSettings,
    ToolSpec,
    named_tool,
    strict_schema_problem,
)

__all__ = [
    "API",
    "PROVIDER",
    "BuiltRequest",
    "build_request",
    "check_options",
    "is_reasoning_model",
    "prompt_cache_key",
    "strict_schema_ok",
    "strict_schema_problem",
    "takes_sampling",
]

log = logging.getLogger("agentlab.adapters.openai_responses")

PROVIDER = "openai"
API = "responses"

SUMMARY_MARKER = "Summary of the earlier conversation:\n"


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` takes ``reasoning`` / returns reasoning items (and rejects ``temperature``).

    Asks the family table (:mod:`._models`): gpt-5 and later (except the ``-chat`` variants), the
    o-series, codex models and the simulator's ``sim-*`` models; a fine-tune (``ft:<base>:...``) is
    judged by its base model. Unknown names other than ``gpt-5+``/``o*``/codex are treated as
    non-reasoning, so nothing is sent that an older model would reject.
    """
    return _models.is_reasoning_model(model)


def takes_sampling(model: str, effort: str | None = None) -> bool:
    """Whether ``model`` takes ``temperature`` / ``top_p`` at this reasoning ``effort`` (the one place).

    Reasoning models answer 400 "Unsupported parameter" to both, except the families that take them
    with reasoning off (``effort="none"``); the family table (:mod:`._models`) knows which.
    """
    return _models.sampling_allowed(model, effort)


def strict_schema_ok(schema: Any) -> bool:
    """Whether a JSON schema qualifies for OpenAI strict mode (see :func:`strict_schema_problem`)."""
    return strict_schema_problem(schema) is None


def _tool(spec: ToolSpec) -> dict[str, Any]:
    """One function tool; ``strict`` as the spec asks (``None``: where the schema qualifies)."""
    out: dict[str, Any] = {"type": "function", "name": spec.name}
    if spec.description:
        out["description"] = spec.description
    out["parameters"] = spec.parameters
    problem = None if spec.strict is False else strict_schema_problem(spec.parameters)
    if spec.strict is True and problem is not None:
        raise InvalidSettingsError(
            f"openai: tool {spec.name!r} asks for strict mode, but its schema does not qualify "
            f"({problem}); fix the schema or use @tool(strict=None) to send it non-strict"
        )
    out["strict"] = spec.strict is not False and problem is None
    return out


def prompt_cache_key(model: str, system: str, tools: list[dict[str, Any]], hints: CacheHints) -> str:
    """A stable ``prompt_cache_key``: the hint's key, or a digest of what makes the prefix.

    Requests with the same model, system text and tools share a key, so OpenAI routes them to the
    same cache shard across steps and runs; nothing in it changes between the steps of a loop.
    """
    if hints.key:
        return hints.key
    h = hashlib.sha256()
    h.update(model.encode())
    h.update(b"\x00")
    h.update(system.encode())
    h.update(b"\x00")
    h.update(json.dumps(tools, sort_keys=True, separators=(",", ":")).encode())
    return "agentlab-" + h.hexdigest()[:32]


def _dumps(obj: Any) -> str:
    # The same compact, non-ASCII-preserving form the SDK itself sends.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class _Raw:
    """A piece of ``input`` that is already JSON text (a verbatim reasoning item)."""

    __slots__ = ("text",)
    _shaped_repr = True

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return shaped_repr(self, text=self.text)


def _drop(
    diags: list[DiagnosticEvent],
    item: ProviderReasoningItem,
    reason: str,
    message: str,
    provider: str = PROVIDER,
) -> None:
    """Count one dropped item into the request's one ``reasoning_item_dropped`` per reason."""
    add_dropped(diags, reason=reason, provider=provider, detail=message)


def _present_followers(request: ModelRequest) -> set[tuple[str, int]]:
    """(turn_id, index) of every portable output item still in the history."""
    present: set[tuple[str, int]] = set()
    for it in request.items:
        if (
            isinstance(it, AssistantTextItem | ToolCallItem)
            and it.turn_id is not None
            and it.index is not None
        ):
            present.add((it.turn_id, it.index))
    return present


def _sendable(
    item: ProviderReasoningItem,
    *,
    model: str,
    base_url: str | None,
    diags: list[DiagnosticEvent],
    dialect: ResponsesDialect = OPENAI,
) -> str | None:
    """The item's JSON text as this dialect takes it back; else None, with its diagnostic."""
    name = dialect.name
    if not item.matches(provider=name, api=API):
        log.debug(
            "dropping reasoning item from %s/%s (this run is pinned to %s/%s)",
            *(item.provider, item.api, name, API),
        )
        _drop(
            diags,
            item,
            "other_provider",
            f"reasoning item made by {item.provider}/{item.api} not sent to {name}/{API}",
            name,
        )
        return None
    if item.model != model or (
        base_url is not None and item.base_url is not None and item.base_url != base_url
    ):
        log.debug("dropping reasoning item made by another model or endpoint (%s)", item.model)
        _drop(
            diags,
            item,
            "other_model",
            f"reasoning item made by {item.model} at {item.base_url} not sent to {model} at {base_url}",
            name,
        )
        return None
    text = item.unseal(provider=name, api=API).decode("utf-8")
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or parsed.get("type") not in ("reasoning", "compaction"):
        _drop(diags, item, "malformed", "payload is not an OpenAI reasoning or compaction item", name)
        return None
    if dialect.encrypted == "reference":
        return text  # its state is its reasoning_text (and a reference the host resolves): verbatim
    if dialect.encrypted == "refused" and parsed.get("encrypted_content") is not None:
        return _without_token(parsed)
    if dialect.encrypted == "refused":
        return text  # nothing the host refuses: verbatim
    if not parsed.get("encrypted_content"):
        # Under store=false an id-only item is answered with 404 "Item with id 'rs_...' not found".
        _drop(
            diags,
            item,
            "no_encrypted_content",
            "reasoning item has no encrypted_content (was the request made without "
            "include=['reasoning.encrypted_content']?); it cannot be replayed statelessly",
            name,
        )
        return None
    return text


def _without_token(parsed: dict[str, Any]) -> str:
    """A reasoning item for a host that refuses ``encrypted_content``: as it arrived, without that field.

    vLLM answers a non-null one with 400 "Encrypted content is not supported."; the item's text is
    the state it reads.
    """
    return _dumps({k: v for k, v in parsed.items() if k != "encrypted_content"})


def _with_followers(
    candidates: dict[tuple[str, int], tuple[ProviderReasoningItem, str]],
    present: set[tuple[str, int]],
    diags: list[DiagnosticEvent],
    provider: str = PROVIDER,
) -> tuple[dict[tuple[str, int], tuple[ProviderReasoningItem, str]], int]:
    """The candidates whose follower survives, and the number dropped as orphans.

    A follower survives when it is a portable item or a kept reasoning item.
    """
    # Walk each response's reasoning items from the last one back, so a reasoning item followed by
    # another reasoning item knows whether that one survived.
    kept: dict[tuple[str, int], tuple[ProviderReasoningItem, str]] = {}
    dropped = 0
    for key in sorted(candidates, key=lambda k: (k[0], -k[1])):
        item, text = candidates[key]
        follower = (item.turn_id, item.index + 1)
        if follower in present or follower in kept:
            kept[key] = (item, text)
        else:
            _drop(
                diags,
                item,
                "orphaned",
                "reasoning item dropped: the item that followed it in its response is not in the "
                "history (trimmed, compacted, edited, or a hosted-tool item agentlab does not keep), and "
                "OpenAI rejects a reasoning item without it",
                provider,
            )
            dropped += 1
    return kept, dropped


def _select_continuation(
    request: ModelRequest,
    *,
    model: str,
    base_url: str | None,
    diags: list[DiagnosticEvent],
    dialect: ResponsesDialect = OPENAI,
) -> tuple[dict[tuple[str, int], list[_Raw]], int, int]:
    """Decide which reasoning items go back and before which history item.

    Returns ``{(turn_id, index of the follower): [raw reasoning items, in order]}``, the number kept
    and the number dropped. A reasoning item at ``index`` needs the item at ``index + 1`` of the same
    response: either a portable item still in history or another kept reasoning item (which then
    needs its own follower). Without it the API answers 400 "provided without its required following
    item", so the item is dropped instead.
    """
    dropped = 0
    candidates: dict[tuple[str, int], tuple[ProviderReasoningItem, str]] = {}
    for item in request.continuation:
        text = _sendable(item, model=model, base_url=base_url, diags=diags, dialect=dialect)
        if text is None:
            dropped += 1
            continue
        key = (item.turn_id, item.index)
        if key in candidates:
            continue  # the same item twice: send it once
        candidates[key] = (item, text)
    kept, orphaned = _with_followers(candidates, _present_followers(request), diags, dialect.name)

    # Group chains: each kept reasoning item is emitted before the first portable follower.
    before: dict[tuple[str, int], list[_Raw]] = {}
    for key in sorted(kept, key=lambda k: (k[0], k[1])):
        item, text = kept[key]
        target = (item.turn_id, item.index + 1)
        while target in kept:
            target = (target[0], target[1] + 1)
        before.setdefault(target, []).append(_Raw(text))
    return before, len(kept), dropped + orphaned


def _unpaired(request: ModelRequest, before: dict[tuple[str, int], list[_Raw]]) -> set[tuple[str, int]]:
    """Output items whose own reasoning item (the nearest one before them in their response) is not sent.

    gpt-5.4 and later reject a ``message`` sent back with its id but without its reasoning item (the
    reverse of "a reasoning item needs its following item"), so such an item goes back without its id,
    as portable text: the pair is dropped whole, never half of it.
    """
    reasoning: dict[str, set[int]] = {}
    for r in request.continuation:
        reasoning.setdefault(r.turn_id, set()).add(r.index)
    sent = {
        (turn, i) for (turn, follower), raws in before.items() for i in range(follower - len(raws), follower)
    }
    out: set[tuple[str, int]] = set()
    for it in request.items:
        if not isinstance(it, AssistantTextItem | ToolCallItem) or it.turn_id is None or it.index is None:
            continue
        earlier = [i for i in reasoning.get(it.turn_id, ()) if i < it.index]
        if earlier and (it.turn_id, max(earlier)) not in sent:
            out.add((it.turn_id, it.index))
    return out


def _reasoning_param(
    settings: ReasoningSettings | None, model: str, diags: list[DiagnosticEvent]
) -> dict[str, Any] | None:
    if settings is None:
        return None
    for name in ("budget_tokens", "display"):
        if getattr(settings, name) is not None:
            diags.append(
                diagnostic(
                    "setting_ignored",
                    f"reasoning.{name} is an Anthropic setting; OpenAI has no equivalent",
                    setting=name,
                )
            )
    if settings.adaptive:
        diags.append(
            diagnostic(
                "setting_ignored",
                "reasoning.adaptive is an Anthropic setting; OpenAI models choose their own depth",
                setting="adaptive",
            )
        )
    if not settings.enabled:
        if not _models.supports_effort_none(model):
            raise InvalidSettingsError(
                f"{model} cannot turn reasoning off; use ReasoningSettings(effort='minimal' or 'low') "
                "or a model that accepts effort 'none' (gpt-5.1 and later)"
            )
        return {"effort": "none"}
    out: dict[str, Any] = {}
    if settings.effort is not None:
        _check_effort(model, settings.effort)
        out["effort"] = settings.effort
    if settings.summary is not None:
        out["summary"] = settings.summary
    return out


def _check_effort(model: str, effort: str) -> None:
    """Refuse an effort the model's family does not take (OpenAI answers 400 "Unsupported value")."""
    if _models.accepts_effort(model, effort):
        return
    takes = [e for e in _models.ALL_EFFORTS if _models.accepts_effort(model, e)]
    if effort == "max":
        raise InvalidSettingsError(
            f"reasoning effort 'max' is Anthropic's (and OpenAI's from gpt-5.6 on); {model} accepts "
            f"{', '.join(takes)}"
        )
    raise InvalidSettingsError(
        f"{model} does not accept reasoning effort {effort!r} (OpenAI answers 400 \"Unsupported "
        f"value\"); it accepts {', '.join(takes)}"
    )


def _sent_effort(request: ModelRequest) -> str | None:
    """The reasoning effort the request sends (``"none"`` when reasoning is off; None: the default)."""
    settings = request.reasoning
    if settings is None:
        return None
    return "none" if not settings.enabled else settings.effort


def _check_sampling(request: ModelRequest, options: dict[str, Any], model: str) -> None:
    """Reasoning models refuse sampling knobs (OpenAI answers 400 "Unsupported parameter").

    One rule for both ways in: the generic ``temperature`` and the escape hatch
    (``provider_options={"openai_temperature": ...}``, ``openai_top_p``), so neither reaches the API.
    """
    if request.temperature is not None and not 0 <= request.temperature <= 2:
        raise InvalidSettingsError(f"openai: temperature must be between 0 and 2; got {request.temperature}")
    if request.top_p is not None and not 0 <= request.top_p <= 1:
        raise InvalidSettingsError(f"openai: top_p must be between 0 and 1; got {request.top_p}")
    if takes_sampling(model, _sent_effort(request)):
        return
    given = [("temperature", request.temperature), ("top_p", request.top_p)] + [
        (f"provider_options['openai_{k}']", options.get(k)) for k in ("temperature", "top_p")
    ]
    for where, value in given:
        if value is not None:
            raise InvalidSettingsError(
                f"{where} is not supported by the reasoning model {model} (OpenAI answers 400 "
                '"Unsupported parameter"); remove it or steer with reasoning effort'
            )


def _message(role: str, text: str, breakpoint: bool = False) -> dict[str, Any]:
    if not breakpoint:
        return {"role": role, "content": text}
    return {
        "role": role,
        "content": [{"type": "input_text", "text": text, "prompt_cache_breakpoint": {"mode": "explicit"}}],
    }


def _checked_options(request: ModelRequest, model: str, provider: str = PROVIDER) -> dict[str, Any]:
    """The request's ``openai_*`` escape-hatch options, checked.

    Refused when they break the provider's declared rules (``provider.py``: what the adapter owns,
    another provider's keys, types, clashes with neutral knobs) or the sampling rule.
    """
    check_provider_options(provider, request)
    options = request.options_for(provider)
    _check_sampling(request, options, model)
    _check_knobs(request)
    return options


_METADATA_MAX = (16, 64, 512)  # pairs, key characters, value characters (the API's limits)
_OPENAI_TIERS = frozenset({"auto", "default", "flex", "scale", "priority", "fast", "ultrafast"})


def _check_knobs(request: ModelRequest) -> None:
    """The knobs Responses does not have or bounds (stop sequences, metadata, ids, service tier)."""
    if request.stop_sequences:
        raise InvalidSettingsError(
            "openai: stop_sequences: the Responses API has no stop sequences (no 'stop' field); "
            "remove it for OpenAI runs (Anthropic takes it)"
        )
    meta = request.metadata or {}
    pairs, key_len, value_len = _METADATA_MAX
    if len(meta) > pairs or any(len(k) > key_len or len(v) > value_len for k, v in meta.items()):
        raise InvalidSettingsError(
            f"openai: metadata takes at most {pairs} pairs, keys up to {key_len} and values up to "
            f"{value_len} characters"
        )
    if request.user_id is not None and len(request.user_id) > 128:
        raise InvalidSettingsError("openai: user_id (sent as safety_identifier) takes at most 128 characters")
    if request.service_tier is not None and request.service_tier not in _OPENAI_TIERS:
        raise InvalidSettingsError(
            f"openai: service_tier {request.service_tier!r} is not offered; "
            f"use one of {sorted(_OPENAI_TIERS)}"
        )


def check_options(
    request: ModelRequest, adapter: object | None = None, dialect: ResponsesDialect = OPENAI
) -> None:
    """The request's knobs checked against OpenAI's rules, as ``build_request`` checks them.

    A run calls this when it is constructed (through ``ProviderSpec.check_options``), so a knob the
    API would refuse fails before anything is sent or logged. ``adapter`` (the run's own, when
    given) changes nothing here.
    """
    # The knobs' rules: the escape hatch's own rules (owned keys, another provider's keys, types)
    # are the spec's declaration, which the registry runs before this.
    _check_sampling(request, request.options_for(dialect.name), request.model)
    _check_knobs(request)
    _add_reasoning({}, request, request.model, dialect.reasoning_model(request.model), [])  # effort rules
    for spec in request.tools:
        _tool(spec)


def _split_system(request: ModelRequest) -> tuple[list[str], list[Any]]:
    """(texts of the leading system items, the rest of the history)."""
    items = list(request.items)
    lead: list[str] = []
    while items and isinstance(items[0], SystemItem):
        first = items.pop(0)
        assert isinstance(first, SystemItem)
        lead.append(first.text)
    return lead, items


def _assistant_message(it: AssistantTextItem, *, replayed: bool) -> dict[str, Any]:
    """An assistant message, with the ``phase`` it was received with (OpenAI asks for it back).

    In a turn whose reasoning is replayed it goes back as the output message it was (its ``msg_``
    id: the reasoning item's required follower); otherwise as a plain assistant message.
    """
    out: dict[str, Any]
    if replayed and it.provider_item_id:
        out = {
            "type": "message",
            "role": "assistant",
            "id": it.provider_item_id,
            "status": "completed",
            "content": [{"type": "output_text", "text": it.text, "annotations": []}],
        }
    else:
        out = _message("assistant", it.text)
    if it.phase is not None:
        out["phase"] = it.phase
    return out


def _item_json(it: Any, replayed_turns: set[str], call_ids: bool = True) -> dict[str, Any]:
    """One portable history item as a Responses ``input`` item."""
    if isinstance(it, UserItem):
        return _message("user", it.text)
    if isinstance(it, SystemItem):
        return _message("developer", it.text)
    if isinstance(it, SummaryItem):
        return _message("user", SUMMARY_MARKER + it.text)
    if isinstance(it, AssistantTextItem):
        return _assistant_message(it, replayed=it.turn_id in replayed_turns)
    if isinstance(it, ToolCallItem):
        call: dict[str, Any] = {"type": "function_call"}
        if call_ids and it.turn_id in replayed_turns and it.provider_item_id:
            call["id"] = it.provider_item_id
        call.update(call_id=it.call_id, name=it.name, arguments=it.arguments)
        return call
    if isinstance(it, ToolResultItem):
        return {"type": "function_call_output", "call_id": it.call_id, "output": it.output}
    raise TypeError(f"unexpected history item {type(it).__name__}")  # pragma: no cover - closed union


def _with_breakpoint(
    it: Any, wire: dict[str, Any], explicit: bool, diags: list[DiagnosticEvent]
) -> dict[str, Any]:
    """An item's ``cache_breakpoint`` as an explicit breakpoint where Responses takes one.

    Breakpoints sit on input content parts (``input_text``), so user, developer and tool-result
    items can carry one, on models with explicit breakpoints (``_models.cache_mode`` "options"). Elsewhere
    the mark is not sent, and a ``setting_ignored`` diagnostic says so.
    """
    mark = {"mode": "explicit"}
    if explicit and "role" in wire and isinstance(wire.get("content"), str):
        return _message(wire["role"], wire["content"], breakpoint=True)
    if explicit and wire.get("type") == "function_call_output":
        part = {"type": "input_text", "text": wire["output"], "prompt_cache_breakpoint": mark}
        return {**wire, "output": [part]}
    where = (
        "this model has no explicit cache breakpoints"
        if not explicit
        else (f"a {it.kind} item has no input content to carry a breakpoint")
    )
    diags.append(
        diagnostic(
            "setting_ignored",
            f"cache_breakpoint on a {it.kind} item was not sent: {where} (OpenAI caches prefixes on its own)",
            setting="cache_breakpoint",
        )
    )
    return wire


def _inputs(
    items: list[Any],
    before: dict[tuple[str, int], list[_Raw]],
    lead_message: dict[str, Any] | None,
    *,
    explicit_breakpoints: bool = False,
    diags: list[DiagnosticEvent] | None = None,
    call_ids: bool = True,
    unpaired: frozenset[tuple[str, int]] = frozenset(),
) -> list[Any]:
    """The ``input`` list: each kept reasoning item right before the item that followed it."""
    # Output items of a response whose reasoning is replayed go back with their original ids (the
    # API pairs a reasoning item with the item that followed it); other items need none.
    replayed_turns = {turn for turn, _ in before}
    inputs: list[Any] = [] if lead_message is None else [lead_message]
    for it in items:
        key = (it.turn_id, it.index) if isinstance(it, AssistantTextItem | ToolCallItem) else None
        if key is not None and key in before:
            inputs.extend(before[key])
        wire = _item_json(it, set() if key in unpaired else replayed_turns, call_ids)
        if it.cache_breakpoint and diags is not None:
            wire = _with_breakpoint(it, wire, explicit_breakpoints, diags)
        inputs.append(wire)
    return inputs


def _lead_marks(
    request: ModelRequest, lead: list[str], *, explicit: bool, diags: list[DiagnosticEvent]
) -> None:
    """A mark on a leading system item: kept when the system prompt travels with a breakpoint."""
    marked = any(isinstance(it, SystemItem) and it.cache_breakpoint for it in request.items[: len(lead)])
    if marked and not explicit:
        diags.append(
            diagnostic(
                "setting_ignored",
                "cache_breakpoint on the system prompt was not sent: it travels as instructions here "
                "(explicit breakpoints need a model that takes them and CacheHints(system=True))",
                setting="cache_breakpoint",
            )
        )


def _add_tools(body: dict[str, Any], request: ModelRequest, tools: list[dict[str, Any]]) -> None:
    if tools:
        forced = named_tool(request.tool_choice)
        body["tools"] = tools
        body["tool_choice"] = request.tool_choice if forced is None else {"type": "function", "name": forced}
        body["parallel_tool_calls"] = request.parallel_tool_calls
    elif request.tool_choice == "required":
        raise InvalidSettingsError("tool_choice='required' needs at least one tool")


def _add_reasoning(
    body: dict[str, Any],
    request: ModelRequest,
    model: str,
    reasoning_model: bool,
    diags: list[DiagnosticEvent],
) -> None:
    if reasoning_model:
        reasoning = _reasoning_param(request.reasoning, model, diags)
        if reasoning:
            body["reasoning"] = reasoning
    elif request.reasoning is not None and request.reasoning.effort is not None:
        raise InvalidSettingsError(
            f"{model} is not a reasoning model; drop reasoning effort or pick e.g. 'openai:gpt-5.1'"
        )


def _add_include(body: dict[str, Any], options: dict[str, Any], reasoning_model: bool) -> None:
    include = ["reasoning.encrypted_content"] if reasoning_model else []
    for extra in options.pop("include", None) or []:
        if extra not in include:
            include.append(extra)
    if include:
        body["include"] = include


def _add_cache(
    body: dict[str, Any], model: str, system_text: str, tools: list[dict[str, Any]], hints: CacheHints | None
) -> None:
    if hints is None or not hints.enabled:
        return
    body["prompt_cache_key"] = prompt_cache_key(model, system_text, tools, hints)
    if hints.ttl != "5m":
        cache_mode = _models.cache_mode(model)
        if cache_mode == "options":
            body["prompt_cache_options"] = {"ttl": "12h"}
        elif cache_mode == "retention":
            body["prompt_cache_retention"] = "24h"


def _add_sampling(body: dict[str, Any], request: ModelRequest) -> None:
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p


def _add_ids(body: dict[str, Any], request: ModelRequest) -> None:
    """Metadata, the end-user id (``safety_identifier``) and the service tier, when set."""
    if request.metadata:
        body["metadata"] = dict(request.metadata)
    if request.user_id is not None:
        body["safety_identifier"] = request.user_id
    if request.service_tier is not None:
        body["service_tier"] = request.service_tier


def _render(body: dict[str, Any]) -> bytes:
    """The body as the exact bytes to send: ``input``'s verbatim reasoning items spliced in as text."""
    parts: list[str] = []
    for k, v in body.items():
        if k == "input":
            rendered = ",".join(x.text if isinstance(x, _Raw) else _dumps(x) for x in v)
            parts.append(f'"input":[{rendered}]')
        else:
            parts.append(f"{_dumps(k)}:{_dumps(v)}")
    return ("{" + ",".join(parts) + "}").encode("utf-8")


def build_request(
    request: ModelRequest,
    *,
    model: str,
    base_url: str | None,
    stream: bool | None = None,
    dialect: ResponsesDialect = OPENAI,
) -> BuiltRequest[bytes]:
    """The wire body for ``request``; raises ``InvalidSettingsError`` before anything is sent.

    The body's keys are added in one fixed order (model, instructions, input, tools, reasoning,
    limits, store, include, stream, cache, then the escape-hatch options), so the bytes of the
    cacheable prefix do not move between the steps of a loop.
    """
    diags: list[DiagnosticEvent] = []
    reasoning_model = dialect.reasoning_model(model)
    options = _checked_options(request, model, dialect.name)
    hints = request.cache
    explicit_breakpoints = _models.cache_mode(model) == "options"
    system_breakpoint = bool(hints is not None and hints.enabled and hints.system and explicit_breakpoints)

    before, sent, dropped = _select_continuation(
        request, model=model, base_url=base_url, diags=diags, dialect=dialect
    )
    lead, items = _split_system(request)
    system_text = "\n\n".join(lead)
    lead_message = _message("developer", system_text, breakpoint=True) if lead and system_breakpoint else None
    inputs = _inputs(
        items, before, lead_message, explicit_breakpoints=explicit_breakpoints, diags=diags,
        call_ids=dialect.replayed_call_ids,
        unpaired=frozenset(_unpaired(request, before)),
    )  # fmt: skip
    _lead_marks(request, lead, explicit=lead_message is not None, diags=diags)
    tools = [_tool(t) for t in request.tools]

    body: dict[str, Any] = {"model": model}
    if lead and not system_breakpoint:
        body["instructions"] = system_text
    body["input"] = inputs
    _add_tools(body, request, tools)
    _add_reasoning(body, request, model, reasoning_model, diags)
    if request.max_output_tokens is not None:
        body["max_output_tokens"] = request.max_output_tokens
    _add_sampling(body, request)
    if request.output is not None:
        body["text"] = text_param(request.output, options)
    if dialect.send_store:
        body["store"] = False
    _add_include(body, options, reasoning_model and dialect.asks_encrypted)
    body["stream"] = request.stream if stream is None else stream
    _add_cache(body, model, system_text, tools, hints)
    _add_ids(body, request)
    body.update(options)
    reasoning = body.get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
    return BuiltRequest(
        body=_render(body),
        diagnostics=diags,
        reasoning_sent=sent,
        reasoning_dropped=dropped,
        reasoning_mode=effort,
    )
