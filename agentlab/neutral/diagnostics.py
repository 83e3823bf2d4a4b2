"""The diagnostic codes agentlab emits: one registry, one meaning and one payload model per code.

A ``DiagnosticEvent`` is a durable record a user reads later (a usage frame, an event log, a
notebook), so its ``code`` is a stable name and its ``data`` has one shape per code. Codes used to
be free strings spread over six modules, and the same fact had two names and two payloads (a
dropped reasoning item: one diagnostic per item on OpenAI, one aggregate on Anthropic, a third
name in the run). Here each code is declared once, with a one-line meaning and a pydantic payload
model, and :func:`diagnostic` is the one way to build the event: it validates the payload, so a
misspelled key or a wrong type fails where the event is made, not in a reader's notebook.

Codes are neutral (no provider prefix): the provider is a payload field when it matters. A
provider package with a fact of its own declares its code with :func:`register_code` at import.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentlab.neutral.events import DiagnosticEvent, EventOrigin

__all__ = [
    "CODES",
    "CacheHintAdjusted",
    "CallRef",
    "Count",
    "DanglingToolUse",
    "DiagnosticCode",
    "NoPayload",
    "ReasoningDropped",
    "Retry",
    "SettingIgnored",
    "ToolRef",
    "ToolTimeout",
    "UnsupportedContent",
    "add_dropped",
    "diagnostic",
    "dropped",
    "register_code",
]


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class NoPayload(_Payload):
    """A code whose message says it all."""


class Count(_Payload):
    """How many opaque items a note is about; never which ones (their payloads stay opaque)."""

    count: int = Field(ge=0)


DropReason = Literal[
    "other_provider",  # made by another provider/API
    "other_model",  # made by another model or endpoint of this provider
    "other_origin",  # made elsewhere (provider, API, model or endpoint not told apart)
    "malformed",  # the payload is not this provider's reasoning item
    "no_encrypted_content",  # id-only item: cannot be replayed statelessly
    "orphaned",  # the item that followed it in its response is not in the history
    "trailing",  # after the last part of its turn
    "policy_drop",  # continuation_policy='drop'
    "provider_switch",  # a session moved to another provider/API/model between runs
]


class ReasoningDropped(_Payload):
    """``count`` opaque items not sent (or not kept) for one ``reason``, by/for ``provider``."""

    count: int = Field(ge=0)
    reason: DropReason
    provider: str


class SettingIgnored(_Payload):
    """The request setting the model does not take, by name (its value is the user's, not logged)."""

    setting: str


class CallRef(_Payload):
    """The tool call a note is about, by id and tool name; never its arguments (model output)."""

    call_id: str | None
    name: str | None


class UnsupportedContent(_Payload):
    """``where`` says which part of the wire format; ``type`` is the wire type name (never content)."""

    where: Literal["event", "block", "delta", "item"]
    type: str
    provider: str


class DanglingToolUse(_Payload):
    """Ids of the tool calls in a last assistant turn that lost its thinking (recovered, not sent as is)."""

    tool_calls: list[str]


class CacheHintAdjusted(_Payload):
    """The cache lifetime asked for and the one the provider accepts, so a cost chart can explain itself."""

    requested: str
    sent: str


class Retry(_Payload):
    """One retry of a model call: which attempt, after how long, and the error type that caused it."""

    attempt: int = Field(ge=1)
    delay_s: float = Field(ge=0)
    error_type: str


class ToolRef(_Payload):
    """The tool and call a tool-execution note is about (the arguments and output are not repeated)."""

    tool: str
    call_id: str


class ToolTimeout(_Payload):
    """A tool that outlived its limit; ``timeout_s`` is the limit in force (``None``: none was set)."""

    tool: str
    call_id: str
    timeout_s: float | None


@dataclass(frozen=True, slots=True)
class DiagnosticCode:
    """One registered code: its name, what it means (one line), and the model its ``data`` follows."""

    code: str
    meaning: str
    payload: type[BaseModel]


CODES: dict[str, DiagnosticCode] = {}
"""Every code agentlab (or a registered provider package) emits, by name."""


def register_code(code: str, meaning: str, payload: type[BaseModel] = NoPayload) -> DiagnosticCode:
    """Declare a diagnostic code (a provider package calls this at import for a fact of its own).

    Registering the same code again with the same payload model is a no-op (a module re-imported);
    a different model for a known code is refused, so one code never has two payload shapes.
    """
    known = CODES.get(code)
    if known is not None:
        if known.payload is not payload:
            raise ValueError(f"diagnostic code {code!r} is already registered with {known.payload.__name__}")
        return known
    entry = DiagnosticCode(code, meaning, payload)
    CODES[code] = entry
    return entry


def diagnostic(
    code: str, message: str, *, origin: EventOrigin | None = None, **payload: Any
) -> DiagnosticEvent:
    """The ``DiagnosticEvent`` for a registered ``code``, its ``payload`` validated against the code's model.

    ``origin`` stamps ``run_id``/``step`` at construction (events are frozen: born stamped or not at all).
    Raises ``KeyError`` for an unregistered code and ``pydantic.ValidationError`` for a payload of the
    wrong shape: both are programming errors, caught by the tests that emit the code.
    """
    entry = CODES[code]
    data = entry.payload.model_validate(payload).model_dump(mode="json")
    if origin is None:
        return DiagnosticEvent(code=code, message=message, data=data)
    return DiagnosticEvent(code=code, message=message, data=data, run_id=origin.run_id, step=origin.step)


def add_dropped(
    diags: list[DiagnosticEvent], *, reason: str, provider: str, detail: str, count: int = 1
) -> None:
    """Count ``count`` dropped reasoning items into ``diags``: one ``reasoning_item_dropped`` per reason.

    The policy for dropped items, the same on every adapter and in the run: aggregated per request
    (per reason), never one event per item, so a long loop switching provider does not flood the log.
    ``detail`` says why (the first one given for a reason stands); the count is the total.
    """
    if count <= 0:
        return
    for i, d in enumerate(diags):
        if d.code == "reasoning_item_dropped" and d.data.get("reason") == reason:
            count += int(d.data["count"])
            detail = d.message.partition(": ")[2]
            diags[i] = dropped(count=count, reason=reason, provider=provider, detail=detail)
            return
    diags.append(dropped(count=count, reason=reason, provider=provider, detail=detail))


def dropped(
    *, count: int, reason: str, provider: str, detail: str, origin: EventOrigin | None = None
) -> DiagnosticEvent:
    """The one ``reasoning_item_dropped`` event (message: the count, then why)."""
    return diagnostic(
        "reasoning_item_dropped",
        f"{count} opaque reasoning item(s) not sent: {detail}",
        origin=origin,
        count=count,
        reason=reason,
        provider=provider,
    )


def registered() -> Mapping[str, DiagnosticCode]:
    """A read-only view of the registry (for docs and tests)."""
    return dict(CODES)


# ---------------------------------------------------------------- agentlab's own codes

register_code(
    "reasoning_item_dropped",
    "opaque reasoning items not sent back or not kept; counted in reasoning_items_dropped",
    ReasoningDropped,
)
register_code("setting_ignored", "a setting the provider has no equivalent for was not sent", SettingIgnored)
register_code(
    "invalid_tool_arguments",
    "a tool call's arguments are not a JSON object; kept, and answered with an error result",
    CallRef,
)
register_code(
    "unsupported_content",
    "a stream event, content block, delta or output item agentlab does not map; ignored",
    UnsupportedContent,
)
register_code(
    "dangling_tool_use",
    "a tool-use turn without its reasoning was sent as plain text so reasoning can stay on",
    DanglingToolUse,
)
register_code(
    "cache_hint_adjusted",
    "a cache hint the provider does not offer was sent as the nearest one",
    CacheHintAdjusted,
)
register_code("retry", "a failed model call is tried again on the same provider", Retry)
register_code("continuation_released", "the loop's opaque items were released; it goes on from portable ones")
register_code(
    "batch_resumed", "a batch sweep's restarted driver resumed this run from its portable checkpoint"
)
register_code(
    "continuation_not_carried", "a new tool loop starts without the previous loop's opaque items", Count
)
register_code("tool_timeout", "a tool call timed out; the model got an error result", ToolTimeout)
register_code("tool_abandoned", "a tool call still running when the run was cancelled was abandoned", ToolRef)
register_code(
    "tool_server_failed",
    "the server behind a tool (an MCP server) failed during a call; the model got an error result",
    ToolRef,
)
register_code("unencodable_text", "model output text UTF-8 cannot encode was replaced with U+FFFD", Count)
