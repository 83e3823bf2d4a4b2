"""Stream events. Each event *type* says whether it is durable or transient (``durable`` class var).

* Transient events are for display and for the live run only: reasoning and text deltas, partial
  tool-call arguments, and the adapter's final ``ResponseCompletedEvent`` that carries the opaque
  continuation. The event log refuses them by type; they never reach disk.
* Durable events are records: run start/end, model call start/end with usage, tool calls and
  results, diagnostics and errors. They hold portable data only.

Adapters yield ``AdapterEvent``s born carrying the ``run_id``/``step`` of the request's
``origin`` (``EventOrigin``); a ``Run`` re-emits them and adds its own durable records
(``RunEvent``).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentlab.neutral._shapes import ShapedRepr
from agentlab.neutral.items import (
    AssistantTextItem,
    PortableItem,
    ProviderReasoningItem,
    ToolCallItem,
    ToolResultItem,
)
from agentlab.neutral.usage import CallUsage

__all__ = [
    "DURABLE_TYPES",
    "AdapterEvent",
    "DiagnosticEvent",
    "DurableEvent",
    "ErrorEvent",
    "Event",
    "EventOrigin",
    "ModelCallCompletedEvent",
    "ModelCallStartedEvent",
    "ModelResponse",
    "ReasoningDeltaEvent",
    "ResponseCompletedEvent",
    "RunCompletedEvent",
    "RunEvent",
    "RunStartedEvent",
    "StopReason",
    "TextDeltaEvent",
    "ToolCallDeltaEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "durable_event_adapter",
]

StopReason = Literal[
    "end_turn",  # final answer
    "tool_use",  # the model wants tools run
    "max_tokens",  # output limit reached (OpenAI incomplete: max_output_tokens)
    "refusal",
    "content_filter",
    "pause_turn",  # Anthropic server-side pause; the loop continues it
    "stop_sequence",
    "incomplete",  # other incomplete reason
]


class Event(BaseModel):
    """Base of all events. ``durable`` is fixed per type; see the module docstring."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    durable: ClassVar[bool]
    run_id: str | None = None
    step: int | None = None


_EVENT_IDS = frozenset({"run_id", "step", "kind"})


class EventOrigin(BaseModel):
    """Where an event belongs: the run and the step. Events are frozen, so they are born with it.

    A run puts its origin on each ``ModelRequest`` (``request.origin``); the adapter's assembler
    builds every event of that call with it, and the run builds its own records with it. Nothing
    stamps an event after construction.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    run_id: str
    step: int


# ---------------------------------------------------------------- transient (display / live only)


class ReasoningDeltaEvent(ShapedRepr, Event):
    """A piece of reasoning text to *display* (OpenAI summary/reasoning text, Anthropic thinking).

    ``block`` separates blocks (Anthropic content-block index, OpenAI ``item_id:summary_index``) so a
    panel can show interleaved thinking as separate paragraphs. Never used for continuity. Its repr
    and ``str`` show the text's length, not the text (``on_event=print`` prints no reasoning);
    ``ev.text`` is the explicit way to show it.

    ``omitted``: the provider returned this reasoning block without its text (Anthropic thinking with
    ``display: "omitted"``: a signature and empty text). There was reasoning (its tokens are in the
    usage), there is just nothing to show; ``text`` is then empty.
    """

    _repr_shown = _EVENT_IDS | {"block", "omitted"}
    durable: ClassVar[bool] = False
    kind: Literal["reasoning_delta"] = "reasoning_delta"
    text: str
    block: str = "0"
    omitted: bool = False


class TextDeltaEvent(ShapedRepr, Event):
    """A piece of answer text as it streams (repr: its length; ``ev.text``: the text)."""

    _repr_shown = _EVENT_IDS
    durable: ClassVar[bool] = False
    kind: Literal["text_delta"] = "text_delta"
    text: str


class ToolCallDeltaEvent(ShapedRepr, Event):
    """Partial tool-call arguments as they stream (progress display only; repr: their length)."""

    _repr_shown = _EVENT_IDS | {"call_id", "name"}
    durable: ClassVar[bool] = False
    kind: Literal["tool_call_delta"] = "tool_call_delta"
    call_id: str
    name: str
    arguments_delta: str


class ModelResponse(ShapedRepr, BaseModel):
    """One completed model call, as the adapter assembled it.

    ``items`` are the portable output parts (assistant text, tool calls) in output order.
    ``reasoning`` holds the opaque items for this tool loop's continuation; excluded from dumps.
    The repr shows ids, counts and kinds (``response.text`` and ``response.items`` hold the content).
    """

    _repr_shown = frozenset(
        {
            "provider",
            "api",
            "model",
            "response_id",
            "request_id",
            "stop_reason",
            "usage",
            "reasoning_items_dropped",
        }
    )
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    provider: str
    api: str
    model: str
    response_id: str | None = None
    request_id: str | None = None
    items: tuple[AssistantTextItem | ToolCallItem, ...] = ()
    reasoning: tuple[ProviderReasoningItem, ...] = Field(default=(), exclude=True)
    stop_reason: StopReason = "end_turn"
    stop_detail: str | None = None
    usage: CallUsage = Field(default_factory=CallUsage)
    reasoning_items_dropped: int = 0
    """Opaque items the adapter could not send (other provider, id-only, orphaned) for this call."""
    provider_cost_usd: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """The provider's own cost figure for this call (OpenRouter ``usage.cost``), kept beside the cost
    agentlab computes from prices; ``None``: the provider reports none (left out of dumps then)."""
    pricing_tier: Literal["standard", "batch"] = Field(
        default="standard", exclude_if=lambda v: v == "standard"
    )
    """``"batch"``: answered through the provider's batch API, billed at its batch rates."""

    @property
    def text(self) -> str:
        """The answer text of this call (every text item joined); tool calls are not in it."""
        return "".join(i.text for i in self.items if isinstance(i, AssistantTextItem))

    @property
    def tool_calls(self) -> list[ToolCallItem]:
        """The calls the model asked for in this response; empty when it answered instead."""
        return [i for i in self.items if isinstance(i, ToolCallItem)]


class ResponseCompletedEvent(ShapedRepr, Event):
    """The adapter's last event for a call. Transient: it carries the opaque continuation."""

    _repr_shown = _EVENT_IDS | {"response", "latency_s", "first_reasoning_s", "first_text_s"}
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
    durable: ClassVar[bool] = False
    kind: Literal["response_completed"] = "response_completed"
    response: ModelResponse
    latency_s: float | None = None
    first_reasoning_s: float | None = None
    first_text_s: float | None = None


# ---------------------------------------------------------------- durable records


# Keys and markers of opaque provider state: a durable record carrying them is refused at construction.
_OPAQUE_KEYS = frozenset({"signature", "encrypted_content", "redacted_thinking", "thinking", "payload"})
_OPAQUE_MARKERS = ('"encrypted_content"', '"signature"', '"redacted_thinking"')


def _check_portable(value: Any, path: str) -> None:
    if isinstance(value, ProviderReasoningItem | bytes | bytearray):
        raise ValueError(f"{path}: opaque provider state ({type(value).__name__}) cannot be a durable record")
    if isinstance(value, str):
        if any(m in value for m in _OPAQUE_MARKERS):
            raise ValueError(f"{path}: looks like a serialized opaque reasoning item; not recordable")
    elif isinstance(value, dict):
        for k, v in value.items():
            if str(k).lower() in _OPAQUE_KEYS:
                raise ValueError(f"{path}.{k}: opaque reasoning fields cannot be a durable record")
            _check_portable(v, f"{path}.{k}")
    elif isinstance(value, list | tuple | set | frozenset):
        for i, v in enumerate(value):
            _check_portable(v, f"{path}[{i}]")
    elif not (value is None or isinstance(value, bool | int | float)):
        raise ValueError(f"{path}: diagnostic data holds JSON values only, not {type(value).__name__}")


class DiagnosticEvent(Event):
    """Something the user should be able to see later: e.g. a reasoning item dropped, a retry.

    ``data`` holds plain JSON values only, and never opaque provider state (payload objects, bytes,
    signature / encrypted_content fields, serialized reasoning items): such data is refused when the
    event is built, so no durable record can carry it.
    """

    durable: ClassVar[bool] = True
    kind: Literal["diagnostic"] = "diagnostic"
    code: str
    message: str
    data: dict[str, Any] = Field(default_factory=dict)

    @field_validator("data")
    @classmethod
    def _portable_data(cls, v: dict[str, Any]) -> dict[str, Any]:
        _check_portable(v, "data")
        return v


class RunStartedEvent(Event):
    """The first record of a run: which provider, model and API it is pinned to, and the task."""

    durable: ClassVar[bool] = True
    kind: Literal["run_started"] = "run_started"
    provider: str
    model: str
    api: str | None = None
    task: str | None = None


class ModelCallStartedEvent(Event):
    """A model call is about to be made for ``step`` (emitted once per step, not per retry)."""

    durable: ClassVar[bool] = True
    kind: Literal["model_call_started"] = "model_call_started"
    provider: str
    model: str


class ModelCallCompletedEvent(ShapedRepr, Event):
    """A model call's record: stop reason, usage, cost, timings. No reasoning, no opaque data.

    ``items`` (the call's portable output) show as a count and kinds in the repr.
    """

    _repr_shown = _EVENT_IDS | {
        "provider", "model", "response_id", "request_id", "stop_reason", "usage", "cost_usd",
        "latency_s", "first_reasoning_s", "first_text_s", "reasoning_items_dropped", "started_s",
    }  # fmt: skip
    durable: ClassVar[bool] = True
    kind: Literal["model_call_completed"] = "model_call_completed"
    provider: str
    model: str
    response_id: str | None = None
    request_id: str | None = None
    stop_reason: StopReason
    usage: CallUsage
    cost_usd: float | None = None
    latency_s: float | None = None
    first_reasoning_s: float | None = None
    first_text_s: float | None = None
    reasoning_items_dropped: int = 0
    items: tuple[PortableItem, ...] = ()
    provider_cost_usd: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """The provider's own cost figure (OpenRouter ``usage.cost``) beside ``cost_usd``; None: none."""
    started_s: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """When the call's last attempt was sent, in seconds from the run's start (monotonic clock), so a
    timeline shows retries and waits as gaps; None in records made before it was kept (left out of
    dumps then, so older event logs still load and newer ones stay readable by older code)."""


class ToolCallEvent(Event):
    """A tool call the model asked for, recorded before the tool runs (so a crash still shows it)."""

    durable: ClassVar[bool] = True
    kind: Literal["tool_call"] = "tool_call"
    call: ToolCallItem


class ToolResultEvent(Event):
    """A tool's result as the model will see it, with how long the tool took."""

    durable: ClassVar[bool] = True
    kind: Literal["tool_result"] = "tool_result"
    result: ToolResultItem
    duration_s: float | None = None
    started_s: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """When the tool started, in seconds from the run's start (monotonic clock; it ended at
    ``started_s + duration_s``): tools of one step run side by side, and this shows how they
    overlapped. None when the tool never ran (unknown tool, duplicate id) or in older records."""


class ErrorEvent(Event):
    """Why a run failed, in text safe to keep: secrets redacted, no opaque data, no locals."""

    durable: ClassVar[bool] = True
    kind: Literal["error"] = "error"
    error_type: str
    message: str
    provider: str | None = None
    status: int | None = None
    request_id: str | None = None


class RunCompletedEvent(Event):
    """The last record of a run: how it ended, its answer and its totals (usage, cost)."""

    durable: ClassVar[bool] = True
    kind: Literal["run_completed"] = "run_completed"
    status: Literal["completed", "failed", "cancelled", "step_limit"]
    output: str | None = None
    steps: int = 0
    usage: CallUsage = Field(default_factory=CallUsage)
    cost_usd: float | None = None


AdapterEvent = (
    ReasoningDeltaEvent | TextDeltaEvent | ToolCallDeltaEvent | DiagnosticEvent | ResponseCompletedEvent
)

DurableEvent = Annotated[
    RunStartedEvent
    | ModelCallStartedEvent
    | ModelCallCompletedEvent
    | ToolCallEvent
    | ToolResultEvent
    | DiagnosticEvent
    | ErrorEvent
    | RunCompletedEvent,
    Field(discriminator="kind"),
]

RunEvent = AdapterEvent | DurableEvent

DURABLE_TYPES: tuple[type[Event], ...] = get_args(get_args(DurableEvent)[0])
"""The members of ``DurableEvent``, the one list of durable types: what an ``EventLog`` accepts
(exact types: a subclass could add a field)."""


def durable_event_adapter() -> Any:
    """A TypeAdapter for reading durable events back from JSON (built on first use)."""
    from pydantic import TypeAdapter

    return TypeAdapter(DurableEvent)
