"""What an adapter builds before it sends: one ``BuiltRequest`` type for every provider.

Also the checks of an adapter's constructor arguments, written once so the same mistake raises the same error
type on every adapter.

Why one type: the run, the contract suite and users who call ``adapter.build(request)`` to see
what would be sent read the same fields whatever the provider (what was dropped, what diagnostics
building produced). Only the body's form differs: OpenAI's is the exact bytes to send (reasoning
items spliced in verbatim), Anthropic's the JSON object handed to the SDK's ``messages.create``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from agentlab.adapters.registry import get_provider
from agentlab.errors import InvalidSettingsError
from agentlab.neutral._shapes import ShapedDataclass
from agentlab.neutral.diagnostics import add_dropped
from agentlab.neutral.events import DiagnosticEvent
from agentlab.neutral.items import AssistantPart, OtherItem, PortableItem, ProviderReasoningItem
from agentlab.neutral.request import ModelRequest

__all__ = [
    "BuiltRequest",
    "HistoryWalk",
    "check_adapter_args",
    "check_provider_options",
    "check_request",
    "knobs",
    "orphaned",
    "reasoning_by_turn",
    "report_dropped",
    "walk_history",
]

BodyT = TypeVar("BodyT", bytes, dict[str, Any])


@dataclass(repr=False)
class BuiltRequest(ShapedDataclass, Generic[BodyT]):
    """The request body an adapter will send, and what building it noticed.

    The repr shows sizes and counts only (the body holds the prompt and opaque items; headers may
    hold credentials): ``<BuiltRequest body=<1234 bytes> headers=<dict, 1 keys> ... reasoning_sent=2>``.
    """

    _repr_shown = frozenset({"reasoning_sent", "reasoning_dropped", "reasoning_mode"})

    body: BodyT
    """OpenAI: the exact JSON bytes; Anthropic: the JSON object (every key but ``stream``)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra HTTP headers this request needs (Anthropic ``anthropic-beta``); auth is the SDK's."""
    diagnostics: list[DiagnosticEvent] = field(default_factory=list)
    """What building dropped or changed, yielded before the call's first event."""
    reasoning_sent: int = 0
    """Opaque reasoning items of the continuation put into the body."""
    reasoning_dropped: int = 0
    """Opaque reasoning items of the continuation that could not be sent (each one reported)."""
    reasoning_mode: str | None = None
    """The reasoning configuration sent (Anthropic ``enabled``/``adaptive``, OpenAI the effort), or None."""


def check_adapter_args(
    provider: str,
    model: object,
    *,
    max_retries: object,
    timeout: object = None,
    extra_headers: object = None,
    client: object = None,
    client_type: type | None = None,
    api_key: object = None,
    base_url: object = None,
) -> None:
    """Refuse an adapter's bad constructor arguments with ``InvalidSettingsError`` (one type for all).

    ``client_type``: the SDK client class the adapter takes (checked when ``client`` is given; its
    ``api_key``/``base_url`` then belong to the client, not beside it).
    """
    if not isinstance(model, str) or not model.strip():
        raise InvalidSettingsError(f"{provider}: model must be a non-empty model name, got {model!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise InvalidSettingsError(f"{provider}: max_retries must be an int >= 0, got {max_retries!r}")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        raise InvalidSettingsError(f"{provider}: timeout must be a number of seconds > 0, got {timeout!r}")
    if extra_headers is not None and not (
        isinstance(extra_headers, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in extra_headers.items())
    ):
        raise InvalidSettingsError(
            f"{provider}: extra_headers must be a dict of str to str, got {type(extra_headers).__name__}"
        )
    if client is None or client_type is None:
        return
    if not isinstance(client, client_type):
        raise InvalidSettingsError(
            f"{provider}: client must be an {client_type.__module__.split('.')[0]}.{client_type.__name__}, "
            f"got {type(client).__name__} (the adapter is async; wrap an httpx2.AsyncClient: "
            f"{client_type.__name__}(http_client=...))"
        )
    if api_key is not None or base_url is not None:
        raise InvalidSettingsError(f"{provider}: pass api_key/base_url to your client, not beside it")


def check_provider_options(provider: str, request: ModelRequest) -> None:
    """The request's ``provider_options`` against the provider's declared rules (its spec's ``options``).

    The same check a run makes when it is built, so the build refuses exactly what construction
    refuses (another provider's keys, keys agentlab builds, wrong types, clashes with neutral knobs).
    """
    get_provider(provider).check_provider_options(request)


def check_request(provider: str, model: str, request: object) -> ModelRequest:
    """The request, if it is a ``ModelRequest`` for the adapter's model; else ``InvalidSettingsError``."""
    if not isinstance(request, ModelRequest):
        raise InvalidSettingsError(
            f"{provider}: build()/stream() take an agentlab ModelRequest, got {type(request).__name__}"
        )
    if request.model != model:
        raise InvalidSettingsError(
            f"this adapter is pinned to {model!r}; the request names {request.model!r} "
            "(a run stays on one provider and model)"
        )
    return request


def knobs(request: ModelRequest, wire: Mapping[str, str]) -> dict[str, Any]:
    """The request's knobs that are set, under their wire names (``wire``: knob -> key, in body order).

    A knob left ``None`` (or an empty sequence) is not sent: the provider's default applies. A
    sequence goes as a JSON list.
    """
    out: dict[str, Any] = {}
    for knob, key in wire.items():
        value = getattr(request, knob)
        if value is None or (isinstance(value, tuple) and not value):
            continue
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


# ---------------------------------------------------------------------- this loop's reasoning, by turn
# The request builders that put opaque reasoning back inside the assistant turn that made it
# (Anthropic, Bedrock, Chat Completions, Gemini) share how they sort the continuation and what
# they report about the items they could not place; only where an item goes is each builder's own.


def reasoning_by_turn(
    continuation: Iterable[ProviderReasoningItem], usable: Callable[[ProviderReasoningItem], bool]
) -> tuple[dict[str, list[ProviderReasoningItem]], list[ProviderReasoningItem]]:
    """This loop's reasoning items grouped by the turn that made them, and the ones made elsewhere.

    Each turn's items are in ``index`` order; ``usable`` false: another provider, API, model or
    endpoint made the item, and it cannot go back here.
    """
    by_turn: dict[str, list[ProviderReasoningItem]] = {}
    elsewhere: list[ProviderReasoningItem] = []
    for opaque in continuation:
        if usable(opaque):
            by_turn.setdefault(opaque.turn_id, []).append(opaque)
        else:
            elsewhere.append(opaque)
    for items in by_turn.values():
        items.sort(key=lambda i: i.index)
    return by_turn, elsewhere


def orphaned(by_turn: Mapping[str, Sized], history: Sequence[PortableItem]) -> int:
    """How many grouped reasoning items belong to a turn the history does not hold (never sent)."""
    turns = {i.turn_id for i in history if isinstance(i, AssistantPart)}
    return sum(len(v) for k, v in by_turn.items() if k not in turns)


class HistoryWalk(Protocol):
    """A builder's walk over the history, which :func:`walk_history` drives."""

    def assistant(self, item: AssistantPart) -> None:
        """An assistant part: this turn's reasoning goes back before it, by ``index``."""

    def other(self, item: OtherItem) -> None:
        """Any other item (system, user, summary, tool result): it closes the assistant turn."""


def walk_history(history: Sequence[PortableItem], walk: HistoryWalk) -> None:
    """Hand each history item, in order, to the walk's ``assistant`` or ``other``."""
    for item in history:
        if isinstance(item, AssistantPart):
            walk.assistant(item)
        else:
            walk.other(item)


def report_dropped(
    out: BuiltRequest[Any], provider: str, other: int, orphans: int, *own: tuple[str, str, int]
) -> None:
    """Set ``reasoning_dropped`` and add one diagnostic per reason for the items that could not be sent.

    ``other``: made elsewhere; ``orphans``: their turn is not in the history; ``own``: the builder's
    own reasons, ``(reason, why, count)`` (trailing a turn, withheld by policy...).
    """
    rows = (
        ("other_origin", "made by another provider/model/endpoint", other),
        ("orphaned", "their turn is not in the history", orphans),
        *own,
    )
    out.reasoning_dropped = sum(n for _, _, n in rows)
    for reason, why, n in rows:
        add_dropped(out.diagnostics, reason=reason, provider=provider, detail=why, count=n)
