"""Conversation items: portable ones, and the one opaque kind only its maker may see.

Portable items are understood by any provider; ``ProviderReasoningItem`` by no provider but the one
that made it.

Portable items are small frozen pydantic values in a union discriminated by ``kind``; they are what
history, checkpoints, the memory store and session hand-overs between providers are made of.

``ProviderReasoningItem`` is deliberately *not* a pydantic model. It wraps a provider's reasoning
block or item (an Anthropic ``thinking``/``redacted_thinking`` block with its signature, an OpenAI
``reasoning`` item with ``encrypted_content``) as the exact raw JSON bytes received, and:

* never shows its payload in ``repr``/``str``;
* refuses to be pickled or deep-copied into something durable (``__reduce__`` raises);
* hands its payload only to a caller that names the provider *and* API surface it was made by
  (a Claude signature from one endpoint is not valid on another), through :meth:`unseal`.

Ordering within a model response is kept with ``turn_id`` + ``index``: every output part of one
response (reasoning, text, tool call) carries the id of the response that produced it and its
position in that response's output, so an adapter can put opaque items back exactly where they were.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, ClassVar, Literal, NoReturn, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agentlab.errors import ContinuityError

__all__ = [
    "AssistantPart",
    "AssistantTextItem",
    "OtherItem",
    "PortableItem",
    "ProviderReasoningItem",
    "SummaryItem",
    "SystemItem",
    "ToolCallItem",
    "ToolResultItem",
    "UserItem",
    "UserText",
    "history_adapter",
    "payload_digest",
]


def payload_digest(payload: bytes) -> str:
    """SHA-256 of a payload's canonical JSON (sorted keys, no whitespace); of the raw bytes if not JSON.

    Why canonical: the continuity guard compares what was received with what an adapter put in its
    wire body, which may be the same JSON re-encoded (a parsed Anthropic block, a Gemini signature
    string); key order and whitespace mean nothing to the API, every value does.
    """
    try:
        canonical = json.dumps(
            json.loads(payload), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")
    except ValueError:
        canonical = payload
    return hashlib.sha256(canonical).hexdigest()


class _Item(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    cache_breakpoint: bool = Field(default=False, exclude_if=lambda v: not v)
    """A neutral prompt-cache mark: the prefix up to and including this item is worth caching.

    Anthropic gets ``cache_control`` (the run's ``CacheHints.ttl``) on the item's last block, within
    the API's 4 breakpoints (over that, agentlab's automatic marks go first, then the oldest item
    marks, with a ``cache_hint_adjusted`` diagnostic); OpenAI an explicit breakpoint on models that
    take them, else a ``setting_ignored`` diagnostic. Left out of dumps when unset, so history
    written before it existed reads and writes the same.
    """


class SystemItem(_Item):
    """System (OpenAI: developer/instructions) text."""

    kind: Literal["system"] = "system"
    text: str


class UserItem(_Item):
    """A user message."""

    kind: Literal["user"] = "user"
    text: str


class _AssistantPart(_Item):
    # Which model response produced this part and where it stood in that response's output. ``None``
    # for parts that did not come from a model call (e.g. hand-written few-shot history).
    turn_id: str | None = None
    index: int | None = None
    # The provider's own id for the output item (OpenAI ``msg_...``/``fc_...``). Not secret; lets an
    # adapter replay a turn with the ids a reasoning item's "required following item" check expects.
    provider_item_id: str | None = None


class AssistantTextItem(_AssistantPart):
    """Assistant answer text (portable: it crosses providers).

    ``phase`` is the provider's label of the message as received, kept verbatim: OpenAI Responses
    marks assistant messages ``"commentary"`` (intermediate text, e.g. a preamble before tool calls)
    or ``"final_answer"`` and asks clients to send it back on every assistant message (gpt-5.3-codex
    and later; dropping it degrades the model). It is a plain label, not reasoning, so it lives in
    portable history and survives checkpoints and sessions; the OpenAI adapter writes it back, other
    providers' adapters do not send it (their APIs have no such field), and text another provider
    wrote has none. ``None``: the provider gave no phase.
    """

    kind: Literal["assistant_text"] = "assistant_text"
    text: str
    phase: str | None = None


class ToolCallItem(_AssistantPart):
    """A tool call the model made. ``arguments`` is the JSON text of the arguments object."""

    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: str = "{}"


class ToolResultItem(_Item):
    """The result of one tool call, matched by ``call_id``. ``is_error`` marks a failed tool."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str | None = None
    output: str
    is_error: bool = False


class SummaryItem(_Item):
    """A compacted summary of earlier history, sent as portable text."""

    kind: Literal["summary"] = "summary"
    text: str


PortableItem = Annotated[
    SystemItem | UserItem | AssistantTextItem | ToolCallItem | ToolResultItem | SummaryItem,
    Field(discriminator="kind"),
]

AssistantPart: TypeAlias = AssistantTextItem | ToolCallItem
"""A part of one model turn: an adapter puts that turn's opaque reasoning back around these."""
UserText: TypeAlias = UserItem | SummaryItem
"""Text that goes to the model as the user's: the user's own, or the summary of the turns it replaced."""
OtherItem: TypeAlias = SystemItem | UserText | ToolResultItem
"""Every portable item that is not an assistant part: it ends the model turn before it."""

history_adapter: TypeAdapter[list[PortableItem]] = TypeAdapter(list[PortableItem])
"""The one serializer for portable history (JSON round-trip)."""


class ProviderReasoningItem:
    """An opaque, provider-tagged reasoning block/item, kept exactly as received.

    ``provider`` (``"openai"``/``"anthropic"``), ``api`` (``"responses"``/``"messages"``) and
    ``model`` say what made it; ``base_url`` distinguishes endpoints (a simulator's signature is not a
    real one). ``block_type`` is the provider's type (``thinking``, ``redacted_thinking``,
    ``reasoning``). The payload is the raw JSON bytes of the block as received and leaves this object
    only through :meth:`unseal`.
    """

    __slots__ = (
        "__weakref__",
        "_digest",
        "_payload",
        "api",
        "base_url",
        "block_type",
        "index",
        "model",
        "provider",
        "turn_id",
    )

    _shaped_repr: ClassVar[bool] = True  # its repr shows no payload (see ``agentlab.neutral._shapes``)
    _opaque: ClassVar[bool] = True
    provider: str
    api: str
    model: str
    base_url: str | None
    block_type: str
    turn_id: str
    index: int
    _payload: bytes
    _digest: str

    def __init__(
        self,
        payload: bytes,
        *,
        provider: str,
        api: str,
        model: str,
        block_type: str,
        turn_id: str,
        index: int,
        base_url: str | None = None,
    ) -> None:
        if not isinstance(payload, bytes):
            raise TypeError("ProviderReasoningItem payload must be the raw bytes received")
        object.__setattr__(self, "_payload", payload)
        object.__setattr__(self, "_digest", payload_digest(payload))
        object.__setattr__(self, "provider", provider)
        object.__setattr__(self, "api", api)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "block_type", block_type)
        object.__setattr__(self, "turn_id", turn_id)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "base_url", base_url)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("ProviderReasoningItem is immutable")

    def matches(
        self, *, provider: str, api: str, model: str | None = None, base_url: str | None = None
    ) -> bool:
        """Whether this item may be sent to that provider/API (and model/endpoint, when given)."""
        if self.provider != provider or self.api != api:
            return False
        if model is not None and self.model != model:
            return False
        return base_url is None or self.base_url is None or self.base_url == base_url

    def unseal(self, *, provider: str, api: str) -> bytes:
        """The raw payload, for the adapter that owns ``provider``/``api`` only."""
        if self.provider != provider or self.api != api:
            raise ContinuityError(
                f"reasoning item made by {self.provider}/{self.api} cannot be opened by {provider}/{api}"
            )
        return self._payload

    @property
    def size(self) -> int:
        """Payload size in bytes (safe to show)."""
        return len(self._payload)

    @property
    def digest(self) -> str:
        """SHA-256 of the payload's canonical JSON, taken on receipt (what the continuity guard compares)."""
        return self._digest

    @property
    def fingerprint(self) -> str:
        """A short digest of the payload: lets tests and diagnostics compare items without exposing them."""
        return hashlib.sha256(self._payload).hexdigest()[:16]

    def __repr__(self) -> str:
        return (
            f"<ProviderReasoningItem {self.provider}/{self.api} {self.model} {self.block_type} "
            f"turn={self.turn_id} index={self.index} {self.size} bytes (opaque)>"
        )

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProviderReasoningItem):
            return NotImplemented
        return (
            self._payload == other._payload
            and self.provider == other.provider
            and self.api == other.api
            and self.turn_id == other.turn_id
            and self.index == other.index
        )

    def __hash__(self) -> int:
        return hash((self.provider, self.api, self.turn_id, self.index, self._payload))

    def __reduce__(self) -> NoReturn:
        from agentlab.errors import PrivacyError

        raise PrivacyError("ProviderReasoningItem is transient and cannot be pickled or persisted")

    def __copy__(self) -> ProviderReasoningItem:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ProviderReasoningItem:
        return self
