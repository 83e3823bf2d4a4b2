"""agentlab's durable records as OpenTelemetry GenAI semantic-convention attributes.

Pure functions from events and portable items to ``{name: value}``; no OpenTelemetry import, so the
mapping is testable on its own and the names live in one place. The names follow the GenAI semantic
conventions as of ``opentelemetry-semantic-conventions`` 0.66b2 (``gen_ai.provider.name``,
``gen_ai.usage.cache_read.input_tokens``, ``gen_ai.usage.reasoning.output_tokens``, ...); agentlab's
own figures carry an ``agentlab.`` prefix (``agentlab.cost_usd``).

Two rules every function here keeps:

* **Unknown is omitted, never 0.** A ``None`` usage bucket or cost leaves the attribute out, so a
  backend's sum or average is not dragged down by invented zeros.
* **Only portable data.** The inputs are durable events (which refuse opaque provider state at
  construction) and portable items. Reasoning text is not among them: ``ReasoningDeltaEvent`` is
  transient and never reaches this module, and no item kind holds reasoning. Message content is
  built only when the caller asked for it (``include_content``), from user, system and answer text,
  tool arguments and tool results.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agentlab.neutral.events import (
    ErrorEvent,
    ModelCallCompletedEvent,
    RunCompletedEvent,
    RunStartedEvent,
    StopReason,
)
from agentlab.neutral.items import (
    AssistantTextItem,
    SummaryItem,
    SystemItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.usage import CallUsage

if TYPE_CHECKING:
    from agentlab.loop.tools import ToolSource

__all__ = [
    "AttributeValue",
    "Attributes",
    "call_attributes",
    "call_output_messages",
    "error_attributes",
    "finish_reason",
    "input_messages",
    "provider_name",
    "run_end_attributes",
    "run_output_messages",
    "run_start_attributes",
    "tool_call_attributes",
    "tool_result_attributes",
    "usage_attributes",
]

AttributeValue = str | bool | int | float | tuple[str, ...]
Attributes = dict[str, AttributeValue]

AGENT_NAME = "agentlab"
"""``gen_ai.agent.name`` of every run span (the tool loop is agentlab's, whatever the model)."""

_FINISH: Mapping[StopReason, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_call",
    "max_tokens": "length",
    "content_filter": "content_filter",
}
"""agentlab stop reason -> the convention's finish reason; the others keep agentlab's word."""


def provider_name(provider: str) -> str:
    """``gen_ai.provider.name`` for an agentlab provider name: its spec's ``otel_name``, else the name.

    A provider fact, so it lives on the ``ProviderSpec``; ``agentlab.provider`` always carries
    agentlab's own name beside it.
    """
    from agentlab.adapters.registry import find_provider

    spec = find_provider(provider)
    return spec.otel_name if spec is not None and spec.otel_name else provider


def finish_reason(stop: StopReason) -> str:
    """The convention's finish reason (``stop``, ``tool_call``, ``length``...) for a stop reason."""
    return _FINISH.get(stop, stop)


def _known(pairs: Iterable[tuple[str, AttributeValue | None]]) -> Attributes:
    return {k: v for k, v in pairs if v is not None}


def usage_attributes(usage: CallUsage, prefix: str = "gen_ai.usage.") -> Attributes:
    """Token buckets; ``None`` buckets are left out.

    The convention's ``input_tokens`` includes cache reads and writes, and ``output_tokens`` includes
    reasoning, exactly agentlab's buckets (``CallUsage``), so the figures map one to one.
    """
    out = _known(
        [
            (f"{prefix}input_tokens", usage.input_tokens),
            (f"{prefix}output_tokens", usage.output_tokens),
            (f"{prefix}cache_read.input_tokens", usage.cache_read_tokens),
            (f"{prefix}cache_creation.input_tokens", usage.cache_write_tokens),
            (f"{prefix}reasoning.output_tokens", usage.reasoning_tokens),
        ]
    )
    if usage.reasoning_tokens is not None:
        out["agentlab.usage.reasoning_source"] = usage.reasoning_source
    return out


def run_start_attributes(ev: RunStartedEvent, run_id: str) -> Attributes:
    """The run span's attributes known when the run starts."""
    return _known(
        [
            ("gen_ai.operation.name", "invoke_agent"),
            ("gen_ai.agent.name", AGENT_NAME),
            ("gen_ai.provider.name", provider_name(ev.provider)),
            ("gen_ai.request.model", ev.model),
            ("agentlab.provider", ev.provider),
            ("agentlab.api", ev.api),
            ("agentlab.run_id", run_id),
        ]
    )


def run_end_attributes(ev: RunCompletedEvent) -> Attributes:
    """The run span's totals: status, steps, summed usage and cost (when every call was priced)."""
    out: Attributes = {"agentlab.status": ev.status, "agentlab.steps": ev.steps}
    out.update(usage_attributes(ev.usage))
    if ev.cost_usd is not None:
        out["agentlab.cost_usd"] = ev.cost_usd
    return out


def call_attributes(ev: ModelCallCompletedEvent) -> Attributes:
    """A chat span's response attributes: ids, model, finish reason, usage, cost, timings."""
    firsts = [s for s in (ev.first_reasoning_s, ev.first_text_s) if s is not None]
    out = _known(
        [
            ("gen_ai.response.model", ev.model),
            ("gen_ai.response.id", ev.response_id),
            ("gen_ai.response.finish_reasons", (finish_reason(ev.stop_reason),)),
            ("gen_ai.response.time_to_first_chunk", min(firsts) if firsts else None),
            ("agentlab.stop_reason", ev.stop_reason),
            ("agentlab.request_id", ev.request_id),
            ("agentlab.cost_usd", ev.cost_usd),
            ("agentlab.provider_cost_usd", ev.provider_cost_usd),
            ("agentlab.latency_s", ev.latency_s),
            ("agentlab.first_reasoning_s", ev.first_reasoning_s),
            ("agentlab.first_text_s", ev.first_text_s),
        ]
    )
    if ev.reasoning_items_dropped:
        out["agentlab.reasoning_items_dropped"] = ev.reasoning_items_dropped
    out.update(usage_attributes(ev.usage))
    return out


def error_attributes(ev: ErrorEvent) -> Attributes:
    """``error.type`` (the exception's class name) and the HTTP status / request id when known."""
    return _known(
        [
            ("error.type", ev.error_type),
            ("http.response.status_code", ev.status),
            ("agentlab.request_id", ev.request_id),
        ]
    )


def tool_call_attributes(call: ToolCallItem, *, include_content: bool) -> Attributes:
    """An ``execute_tool`` span's attributes; the arguments only with ``include_content``."""
    out: Attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.call_id,
        "gen_ai.tool.type": "function",
    }
    if include_content:
        out["gen_ai.tool.call.arguments"] = call.arguments
    return out


def tool_source_attributes(source: ToolSource) -> Attributes:
    """Where an ``execute_tool`` span's tool came from (an MCP server's name, version, tool name).

    The server as the user named it and as it named itself; unknown values are left out.
    """
    out: Attributes = {
        "agentlab.tool.source": source.kind,
        "agentlab.tool.server": source.server,
        "agentlab.tool.remote_name": source.tool,
    }
    if source.server_name is not None:
        out["agentlab.tool.server.name"] = source.server_name
    if source.server_version is not None:
        out["agentlab.tool.server.version"] = source.server_version
    return out


def tool_result_attributes(result: ToolResultItem, *, include_content: bool) -> Attributes:
    """What a tool's result adds to its span: ``error.type`` when it failed, the output with content."""
    out: Attributes = {}
    if result.is_error:
        out["error.type"] = "tool_error"
    if include_content:
        out["gen_ai.tool.call.result"] = result.output
    return out


# ------------------------------------------------------------------ message content (opt-in)


_TEXT_ROLES: Mapping[type, str] = {
    UserItem: "user",
    SystemItem: "system",
    SummaryItem: "user",  # a compacted summary of earlier turns goes to the model as user text
    AssistantTextItem: "assistant",
}


def _part(item: object) -> tuple[str, dict[str, Any]] | None:
    """``(role, part)`` of a portable item in the convention's message schema; None for anything else.

    An allow-list by exact type: an item kind added later (or an object that is not an item) is
    left out until someone decides it is content a trace may carry.
    """
    t = type(item)
    role = _TEXT_ROLES.get(t)
    if role is not None:
        return role, {"type": "text", "content": getattr(item, "text")}  # noqa: B009 - typed by role
    if t is ToolCallItem:
        assert isinstance(item, ToolCallItem)
        return "assistant", {
            "type": "tool_call",
            "id": item.call_id,
            "name": item.name,
            "arguments": _arguments(item.arguments),
        }
    if t is ToolResultItem:
        assert isinstance(item, ToolResultItem)
        return "tool", {"type": "tool_call_response", "id": item.call_id, "response": item.output}
    return None


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _messages(items: Iterable[object]) -> list[dict[str, Any]]:
    """Consecutive parts of one role folded into one message, in order."""
    out: list[dict[str, Any]] = []
    for item in items:
        found = _part(item)
        if found is None:
            continue
        role, part = found
        if out and out[-1]["role"] == role:
            out[-1]["parts"].append(part)
        else:
            out.append({"role": role, "parts": [part]})
    return out


def _dump(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, ensure_ascii=False, separators=(",", ":"))


def input_messages(items: Iterable[object]) -> str:
    """``gen_ai.input.messages``: the portable history a call was sent, as the convention's JSON."""
    return _dump(_messages(items))


def call_output_messages(ev: ModelCallCompletedEvent) -> str:
    """``gen_ai.output.messages`` of one call: its answer text and tool calls, with the finish reason."""
    parts = [p for _, p in filter(None, map(_part, ev.items))]
    return _dump([{"role": "assistant", "parts": parts, "finish_reason": finish_reason(ev.stop_reason)}])


def run_output_messages(ev: RunCompletedEvent) -> str | None:
    """The run's final answer as ``gen_ai.output.messages`` (None when it ended without one)."""
    if ev.output is None:
        return None
    return _dump([{"role": "assistant", "parts": [{"type": "text", "content": ev.output}]}])
