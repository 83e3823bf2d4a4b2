"""The continuity guard: response n's opaque items must reach request n+1 present, in order, unmodified.

Why a guard and not a test of each adapter: most providers punish a lost reasoning item with a 400,
but some answer 200 and quietly lose the model's plan (xAI documents it; OpenAI accepts a
``function_call`` without its reasoning item). A bug that drops, reorders or rewrites an opaque item
is then invisible. So before a live loop sends its next request, agentlab compares what it is about
to send with what it received, and refuses to send on any difference (:class:`ContinuityViolation`,
naming the item by provider, kind and index, never its payload).

The comparison is by digest, taken when the item was received (:attr:`ProviderReasoningItem.digest`,
a SHA-256 of the payload's canonical JSON): key order and whitespace do not count as a change, every
value does. It runs at two depths, with the same rule:

* on the neutral request (:func:`check_request`): the loop's ``continuation`` holds the expected
  items in order (any adapter, including ones that declare nothing);
* on the wire body the adapter built (:func:`check_body`), where the adapter declares, as data, where
  opaque items sit in its body (:class:`ContinuityLayout`): the last place a bug could lose one.

What the guard expects (:func:`expected_refs`) is what the run's continuity policy keeps: with
``continuation_policy="verbatim"``, every item of the last response the loop's continuation accepted,
except those the adapter's layout says can never be replayed (an OpenAI reasoning item without
``encrypted_content``: dropped with a diagnostic instead). Released continuations, the ``drop``
policy and provider switches expect nothing: those gaps are known and reported elsewhere.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentlab.errors import ContinuityViolation
from agentlab.neutral.items import ProviderReasoningItem, payload_digest

__all__ = [
    "ContinuityLayout",
    "ContinuityViolation",
    "OpaqueRef",
    "OpaqueSite",
    "check_body",
    "check_request",
    "expected_refs",
    "opaque_slots",
    "payload_digest",
]


class OpaqueRef:
    """What the guard remembers of one received opaque item: who made it, where, and its digest.

    Safe to show and to keep in a request: the digest reveals nothing of the payload. A plain value
    (not validated): it copies what the item says as received, whatever a malformed stream put there.
    """

    __slots__ = ("digest", "index", "kind", "provider", "turn_id")

    provider: str
    kind: str
    """The provider's type of the item (``reasoning``, ``thinking``, ``compaction``...)."""
    turn_id: str
    index: int
    digest: str

    def __init__(self, *, provider: str, kind: str, turn_id: str, index: int, digest: str) -> None:
        self.provider = provider
        self.kind = kind
        self.turn_id = turn_id
        self.index = index
        self.digest = digest

    def _key(self) -> tuple[str, str, str, int, str]:
        return (self.provider, self.kind, self.turn_id, self.index, self.digest)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpaqueRef) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"<OpaqueRef {self.named()} {self.digest[:12]}>"

    def named(self) -> str:
        """How an error names the item (never its payload)."""
        return f"{self.provider} {self.kind} item (index {self.index} of response {self.turn_id})"

    @classmethod
    def of(cls, item: ProviderReasoningItem) -> OpaqueRef:
        """The ref of an item as received (its digest was taken then)."""
        return cls(
            provider=item.provider,
            kind=item.block_type,
            turn_id=item.turn_id,
            index=item.index,
            digest=item.digest,
        )


@dataclass(frozen=True, slots=True)
class OpaqueSite:
    """One place of a wire body where opaque items sit.

    ``path``: keys from the body's root; ``"*"`` stands for every element of a list. ``types``: when
    set, only objects whose ``"type"`` is one of them are opaque items (the others at that place are
    portable, e.g. a Responses ``input`` message).
    """

    path: tuple[str, ...]
    types: frozenset[str] | None = None
    keys: frozenset[str] | None = None
    """When set, only objects holding one of these keys are opaque items (Bedrock Converse: a content
    block ``{"reasoningContent": ...}`` beside portable ``text``/``toolUse`` blocks, which carry no
    ``type``)."""

    def holds(self, value: Any) -> bool:
        """Whether ``value``, found at this place, is an opaque item."""
        if value is None:
            return False
        if self.types is not None and not (isinstance(value, dict) and value.get("type") in self.types):
            return False
        return self.keys is None or (isinstance(value, dict) and not self.keys.isdisjoint(value))


@dataclass(frozen=True, slots=True)
class ContinuityLayout:
    """Where an adapter's wire body carries opaque items, and which items can never go back.

    ``needs``: ``kind -> field``: an item of that kind whose payload has no value for the field was
    never replayable (the adapter drops it, with a diagnostic), so the guard does not expect it.

    ``follower``: the API's rule on what must follow an opaque item in its response, known when the
    response arrives: ``"next"`` (OpenAI: the item right after it, through a chain of opaque items,
    must be one agentlab keeps; a reasoning item before a hosted-tool call is dropped, with a
    diagnostic) or ``"later"`` (Anthropic: some kept part after it in its turn; a trailing thinking
    block cannot go back). An item its response cannot satisfy is not expected. ``None``: no rule.
    """

    sites: tuple[OpaqueSite, ...]
    needs: Mapping[str, str] = field(default_factory=dict)
    follower: Literal["next", "later"] | None = None

    def replayable(self, item: ProviderReasoningItem) -> bool:
        """Whether the item can go back at all (see ``needs``)."""
        wanted = self.needs.get(item.block_type)
        if wanted is None:
            return True
        try:
            parsed = json.loads(item.unseal(provider=item.provider, api=item.api))
        except ValueError:
            return False
        return isinstance(parsed, dict) and parsed.get(wanted) not in (None, "")


def _followed(index: object, opaque: set[int], kept: set[int], rule: str | None) -> bool:
    if rule is None or not isinstance(index, int):  # a malformed position: expected as received
        return True
    if rule == "later":
        return any(k > index for k in kept)
    after = index + 1
    while after in opaque:
        after += 1
    return after in kept


def expected_refs(
    items: Iterable[ProviderReasoningItem],
    layout: ContinuityLayout | None = None,
    kept: Iterable[int | None] = (),
) -> tuple[OpaqueRef, ...]:
    """The refs the guard expects in the next request: the given items, minus unreplayable ones.

    ``kept``: the output positions of the response's portable items (what its opaque items may
    follow, under ``layout.follower``).
    """
    if layout is None:
        return tuple(OpaqueRef.of(i) for i in items)
    sendable = [i for i in items if layout.replayable(i)]
    opaque = {i.index for i in sendable if isinstance(i.index, int)}
    portable = {k for k in kept if isinstance(k, int)}
    return tuple(OpaqueRef.of(i) for i in sendable if _followed(i.index, opaque, portable, layout.follower))


def _trie(sites: Sequence[OpaqueSite]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for site in sites:
        node = root
        for key in site.path:
            node = node.setdefault(key, {})
        node[""] = site
    return root


def _walk(node: Any, trie: dict[str, Any]) -> Iterator[tuple[Any, Any]]:
    """``(container, key)`` of every opaque value under ``node``, in document order."""
    if isinstance(node, list):
        sub = trie.get("*")
        if sub is None:
            return
        for i, value in enumerate(node):
            yield from _at(node, i, value, sub)
    elif isinstance(node, dict):
        for key, value in node.items():
            sub = trie.get(key)
            if sub is not None:
                yield from _at(node, key, value, sub)


def _at(container: Any, key: Any, value: Any, sub: dict[str, Any]) -> Iterator[tuple[Any, Any]]:
    site: OpaqueSite | None = sub.get("")
    if site is not None and site.holds(value):
        yield container, key
        return
    yield from _walk(value, sub)


def opaque_slots(body: Any, layout: ContinuityLayout) -> list[tuple[Any, Any]]:
    """``(container, key)`` of every opaque value in a parsed body, in order (``container[key]``)."""
    return list(_walk(body, _trie(layout.sites)))


def _parsed(body: bytes | str | Mapping[str, Any]) -> Any:
    return json.loads(body) if isinstance(body, bytes | str) else body


def _blob(value: object) -> str:
    """A blob in a body the SDK serialises itself (botocore's ``bytes``): its base64 text, as sent."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"{type(value).__name__} in a request body")


def _digest_of(value: Any) -> str:
    return payload_digest(json.dumps(value, ensure_ascii=False, default=_blob).encode("utf-8"))


def _match(
    expected: Sequence[OpaqueRef], found: Sequence[str], changed: Callable[[OpaqueRef], bool], where: str
) -> None:
    """Every expected digest among ``found``, in the expected order; else the first violation raised.

    ``changed(ref)``: whether what stands in the item's place is a changed copy (else it is missing).
    """
    pos = 0
    for ref in expected:
        try:
            at = found.index(ref.digest, pos)
        except ValueError:
            if ref.digest in found[:pos]:
                problem = "out of order"
            else:
                problem = "modified" if changed(ref) else "missing"
            raise ContinuityViolation(
                f"continuity guard: the {ref.named()} is {problem} in the {where}; agentlab refuses to "
                "send it (a bug: the last response's opaque items must go back present, in order and "
                "unmodified)",
                provider=ref.provider,
                kind=ref.kind,
                index=ref.index,
                turn_id=ref.turn_id,
                problem=problem,
            ) from None
        pos = at + 1


def check_request(expected: Sequence[OpaqueRef], continuation: Sequence[ProviderReasoningItem]) -> None:
    """The neutral check: the request's continuation holds the expected items, in order, unmodified."""
    if not expected:
        return
    found = [i.digest for i in continuation]
    by_place = {(i.provider, i.turn_id, i.index): i.digest for i in continuation}

    def changed(ref: OpaqueRef) -> bool:
        return by_place.get((ref.provider, ref.turn_id, ref.index), ref.digest) != ref.digest

    _match(expected, found, changed, "request's continuation")


def check_body(
    expected: Sequence[OpaqueRef],
    continuation: Sequence[ProviderReasoningItem],
    body: bytes | str | Mapping[str, Any],
    layout: ContinuityLayout,
) -> None:
    """The wire check: the body the adapter built carries the expected items, in order, unmodified."""
    if not expected:
        return
    found = [_digest_of(c[k]) for c, k in opaque_slots(_parsed(body), layout)]
    known = {r.digest for r in expected} | {i.digest for i in continuation}
    strangers = any(d not in known for d in found)  # an opaque value nobody received: a changed one
    _match(expected, found, lambda _ref: strangers, "request body")
