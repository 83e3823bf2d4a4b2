"""A small validator for request bodies, compiled from the providers' SDK request ``TypedDict``s.

Why: the real APIs refuse a body with an unknown, mistyped or missing field (top level or nested)
before they look at anything else, and a simulator that accepts such a body lets a client bug pass
offline that fails in production. The SDKs ship the published request schemas as ``TypedDict``s
(generated from the OpenAPI specs), so the simulator compiles those into a tree of :class:`Node`
objects once and walks each body against it. The walk stops at the first problem and returns it as
an :class:`Issue`; each protocol's wording (:mod:`agentlab.sim.schemas.dialects`) turns the
issue into the real API's error text.

What the compiler understands: ``TypedDict`` (keys required by ``Required[...]`` or a total class),
``Union``/``Optional`` (object members told apart by their ``type`` then ``role`` literals, the way
both servers discriminate), ``Literal``, ``List``/``Iterable``/``Sequence``, ``Dict[str, X]``,
``str``/``int``/``float``/``bool``/``None`` and ``object`` (anything). Anything else compiles to
"anything" and is listed in :data:`UNMODELLED` (so the gap is visible, never a false refusal).

Compiling imports nothing itself: callers hand it the SDK classes, imported on first use.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, Union

import typing_extensions
from typing_extensions import override

#: Annotations the compiler could not model (they accept anything); filled while compiling.
UNMODELLED: set[str] = set()

#: The JSON kind of a value, as both dialects name it.
JsonKind = Literal["null", "boolean", "integer", "number", "string", "array", "object"]


_KINDS: dict[type, JsonKind] = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def json_kind(value: Any) -> JsonKind:
    """The JSON type of a parsed value (by exact type: JSON has no 1-as-true)."""
    return _KINDS.get(type(value), "object")


@dataclass(frozen=True)
class Tag:
    """A discriminator value in a path: pydantic (Anthropic) shows it, OpenAI does not."""

    value: str


PathItem = str | int | Tag
Path = tuple[PathItem, ...]


@dataclass(frozen=True)
class Issue:
    """The first problem of a body: what kind, where, and what was expected or found.

    ``kind`` is ``extra`` (unknown key), ``missing`` (required key absent), ``type`` (wrong JSON
    type; ``node`` is what was expected), ``literal`` (a value outside ``values``), ``tag`` (no
    union member has this ``key`` value; ``values`` are the known ones) or ``custom`` (``message``
    is already the API's text, e.g. an id prefix rule).
    """

    kind: Literal["extra", "missing", "type", "literal", "tag", "custom"]
    path: Path
    value: Any = None
    node: Node | None = None
    values: tuple[Any, ...] = ()
    key: str = ""
    message: str = ""
    code: str = ""


@dataclass(frozen=True)
class Order:
    """In which order an object's problems are found (the first one found is the one reported).

    OpenAI reports the body's keys in the order sent (an unknown key as soon as it is met), then
    missing ones; pydantic (Anthropic) checks the declared fields in order, then extra keys.
    """

    extras_first: bool


class Node:
    """One compiled annotation; ``check`` returns the first :class:`Issue` of ``value`` or None."""

    kind: str = "any"

    def check(self, value: Any, path: Path, order: Order) -> Issue | None:
        """The first issue of ``value`` at ``path`` (None when it is valid here)."""
        return None

    def accepts_kind(self, kind: JsonKind) -> bool:
        """Whether a value of this JSON kind could be valid here (picks union members)."""
        return True

    def quick(self, value: Any) -> bool:
        """True when ``value`` is valid at a glance (leaves), so no path needs building for it."""
        return False


class AnyNode(Node):
    """``object`` / unmodelled annotations: anything is accepted."""

    @override
    def quick(self, value: Any) -> bool:
        return True


@dataclass(eq=False)
class ScalarNode(Node):
    """``str``, ``int``, ``float`` (an int is a valid float), ``bool`` or ``None``."""

    kind: str

    @override
    def accepts_kind(self, kind: JsonKind) -> bool:
        return kind == self.kind or (self.kind == "number" and kind == "integer")

    @override
    def quick(self, value: Any) -> bool:
        kind = _KINDS.get(type(value))
        return kind == self.kind or (kind == "integer" and self.kind == "number")

    @override
    def check(self, value: Any, path: Path, order: Order) -> Issue | None:
        if self.accepts_kind(json_kind(value)):
            return None
        return Issue("type", path, value, self)


@dataclass(eq=False)
class LiteralNode(Node):
    """``Literal[...]``: a wrong JSON type is a type issue, a wrong value of the right type a literal one."""

    values: tuple[Any, ...]
    kind: str = "literal"

    @property
    def value_kind(self) -> JsonKind:
        """The JSON kind of the literal values (all of one kind in the SDK types)."""
        return json_kind(self.values[0])

    @override
    def accepts_kind(self, kind: JsonKind) -> bool:
        return kind == self.value_kind

    @override
    def quick(self, value: Any) -> bool:
        return type(value) is str and value in self.values

    @override
    def check(self, value: Any, path: Path, order: Order) -> Issue | None:
        if json_kind(value) != self.value_kind:
            return Issue("type", path, value, self)
        if value in self.values:
            return None
        return Issue("literal", path, value, self, self.values)


def _first_member_issue(
    node: Node, members: collections.abc.Iterable[tuple[int | str, Any]], path: Path, order: Order
) -> Issue | None:
    """The first issue among an array's items or a map's values, each checked against ``node``."""
    if isinstance(node, AnyNode):
        return None
    for key, v in members:
        issue = node.check(v, (*path, key), order)
        if issue is not None:
            return issue
    return None


class _OneKind(Node):
    """A node that takes values of one JSON kind only, its ``kind``: an array or an object."""

    @override
    def accepts_kind(self, kind: JsonKind) -> bool:
        return kind == self.kind


@dataclass(eq=False)
class ListNode(_OneKind):
    """``List``/``Iterable``/``Sequence``: a JSON array whose items are each checked."""

    item: Node
    noun: str = ""
    kind: str = "array"

    @override
    def check(self, value: Any, path: Path, order: Order) -> Issue | None:
        if not isinstance(value, list):
            return Issue("type", path, value, self)
        return _first_member_issue(self.item, enumerate(value), path, order)


@dataclass(eq=False)
class MapNode(_OneKind):
    """``Dict[str, X]``: a JSON object with free keys whose values are each checked."""

    value: Node
    kind: str = "object"

    @override
    def check(self, value: Any, path: Path, order: Order) -> Issue | None:
        if not isinstance(value, dict):
            return Issue("type", path, value, self)
        return _first_member_issue(self.value, ((str(k), v) for k, v in value.items()), path, order)


@dataclass(eq=False)
class ObjectNode(_OneKind):
    """A ``TypedDict``: known keys only, required ones present, each value checked.

    ``fields`` maps a key to (node, required) in declaration order; ``name`` is the class name.
    """

    name: str
    fields: dict[str, tuple[Node, bool]] = field(default_factory=dict)
    _positions: dict[str, int] | None = field(default=None, init=False, repr=False)
    _required_keys: tuple[str, ...] = field(default=(), init=False, repr=False)
    #: ``null`` for an optional key reads as absent: the SDK types do not say whether the servers
    #: take a null for a key they do not declare nullable, and refusing what they accept is worse.
    kind: str = "object"

    def default_tag(self) -> str | None:
        """The ``type`` this member stands for when a body leaves ``type`` out (its one literal)."""
        tag = self.literal_of("type")
        return str(tag[0]) if tag and len(tag) == 1 else None

    def literal_of(self, key: str) -> tuple[Any, ...] | None:
        """The values a ``Literal`` key (possibly Optional) may take here; None if it is not one."""
        entry = self.fields.get(key)
        if entry is None:
            return None
        node = entry[0]
        if isinstance(node, UnionNode):
            lits = [m for m in node.members if isinstance(m, LiteralNode)]
            node = lits[0] if len(lits) == 1 else node
        return node.values if isinstance(node, LiteralNode) else None

    @override
    def check(self, value: Any, path: Path, order: Order) -> Issue | None:
        if not isinstance(value, dict):
            return Issue("type", path, value, self)
        issue = self._check_sent_order(value, path, order)
        if issue is None or order.extras_first:
            return issue
        # Only a refused body pays for finding pydantic's first problem (declared order).
        return self._check_declared_order(value, path, order)

    def _check_sent_order(self, value: dict[str, Any], path: Path, order: Order) -> Issue | None:
        fields = self.fields
        for k, v in value.items():
            entry = fields.get(k)
            if entry is None:
                return Issue("extra", (*path, k), v)
            if (v is None and not entry[1]) or entry[0].quick(v):
                continue
            issue = entry[0].check(v, (*path, k), order)
            if issue is not None:
                return issue
        return self._missing(value, path)

    def _check_declared_order(self, value: dict[str, Any], path: Path, order: Order) -> Issue | None:
        """Pydantic's order: declared fields (missing or invalid) first, then unknown keys."""
        index = self._index()
        missing = next((k for k in self._required() if k not in value), None)
        limit = index[missing] if missing is not None else len(index)
        for _, k in sorted((index[k], k) for k in value if k in index and index[k] < limit):
            node, required = self.fields[k]
            v = value[k]
            if v is None and not required:
                continue
            issue = node.check(v, (*path, k), order)
            if issue is not None:
                return issue
        if missing is not None:
            return Issue("missing", (*path, missing))
        for k in value:
            if k not in index:
                return Issue("extra", (*path, k), value[k])
        return None

    def _index(self) -> dict[str, int]:
        """Each key's declared position (memoised after the compile has filled ``fields``)."""
        if self._positions is None or len(self._positions) != len(self.fields):
            self._positions = {k: i for i, k in enumerate(self.fields)}
            self._required_keys = tuple(k for k, (_, req) in self.fields.items() if req)
        return self._positions

    def _required(self) -> tuple[str, ...]:
        self._index()
        return self._required_keys

    def _missing(self, value: dict[str, Any], path: Path) -> Issue | None:
        self._index()
        for k in self._required_keys:
            if k not in value:
                return Issue("missing", (*path, k))
        return None


class _Absent:
    """A discriminator key the object does not have (a memo key part distinct from any value)."""

    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()

#: The keys object members of a union are told apart by, in this order (``_route`` memoises on them).
DISCRIMINATORS = ("type", "role")


@dataclass(eq=False)
class UnionNode(Node):
    """``Union``/``Optional``: ``None`` if nullable; objects by discriminator; others by JSON kind.

    When several members remain and all fail, the reported issue is that of the member the client
    most likely meant (see :func:`_first_fit`).
    """

    members: tuple[Node, ...]
    nullable: bool = False
    kind: str = "union"
    #: What the API calls a value of this union in its type errors (e.g. ``an input item``).
    label: str = ""
    #: Memos (filled on first use, once the recursive compile has finished): the members a JSON
    #: kind fits, and the object members a (``type``, ``role``) pair narrows to.
    _fits: dict[str, list[Node]] = field(default_factory=dict, init=False, repr=False)
    _routes: dict[tuple[Any, ...], tuple[list[ObjectNode], bool] | Issue] = field(
        default_factory=dict, init=False, repr=False
    )

    @override
    def accepts_kind(self, kind: JsonKind) -> bool:
        return (kind == "null" and self.nullable) or any(m.accepts_kind(kind) for m in self.members)

    @override
    def check(self, value: Any, path: Path, order: Order) -> Issue | None:
        kind = json_kind(value)
        if kind == "null":
            return None if self.nullable else Issue("type", path, value, self)
        fits = self._fits.get(kind)
        if fits is None:
            fits = self._fits[kind] = [m for m in self.members if m.accepts_kind(kind)]
            if kind == "object" and any(isinstance(m, ObjectNode) for m in fits):
                self._fits["typed-object"] = fits
        if kind == "object" and "typed-object" in self._fits:
            return self._check_object(value, path, order)
        if not fits:
            return Issue("type", path, value, self)
        return _first_fit(fits, value, path, order, tagged=False)

    def _route(self, value: dict[str, Any]) -> tuple[list[ObjectNode], bool] | Issue:
        """The candidate members of an object and whether ``type`` told them apart (memoised).

        An :class:`Issue` (unknown tag, missing discriminator) carries a path relative to the union.
        """
        memo_key = (value.get("type", _ABSENT), value.get("role", _ABSENT))
        hashable = all(type(v) is str or v is _ABSENT for v in memo_key)
        hit = self._routes.get(memo_key) if hashable else None
        if hit is not None:
            return hit
        candidates = [m for m in self.members if isinstance(m, ObjectNode)]
        tagged = False
        result: tuple[list[ObjectNode], bool] | Issue | None = None
        for key in DISCRIMINATORS:
            narrowed = _narrow(candidates, key, value, ())
            if isinstance(narrowed, Issue):
                result = narrowed
                break
            if narrowed is not None:
                candidates = narrowed
                tagged = tagged or key == "type"
        if result is None:
            result = (candidates, tagged)
        if hashable:
            self._routes[memo_key] = result
        return result

    def _check_object(self, value: dict[str, Any], path: Path, order: Order) -> Issue | None:
        route = self._route(value)
        if isinstance(route, Issue):
            return dataclasses.replace(route, path=path + route.path)
        candidates, tagged = route
        issue = _first_fit(candidates, value, path, order, tagged=tagged)
        if issue is None:
            return None
        # An open form beside the typed ones (``Union[InputSchemaTyped, Dict[str, object]]``).
        open_forms = [m for m in self.members if not isinstance(m, ObjectNode) and m.accepts_kind("object")]
        if open_forms and _first_fit(open_forms, value, path, order, tagged=False) is None:
            return None
        return issue


def _narrow(
    candidates: list[ObjectNode], key: str, value: dict[str, Any], path: Path
) -> list[ObjectNode] | Issue | None:
    """The members whose ``key`` literal admits the value's ``key`` (None: ``key`` tells nothing)."""
    lits = [(m, m.literal_of(key)) for m in candidates]
    if all(v is None for _, v in lits):
        return None
    if key in value:
        tag = value[key]
        hit = [m for m, v in lits if (v is None and key in m.fields) or (v is not None and tag in v)]
        if hit:
            return hit
        known: list[Any] = []
        for _, v in lits:
            known += [x for x in v or () if x not in known]
        return Issue("tag", path, tag, None, tuple(known), key)
    optional = [m for m in candidates if not m.fields.get(key, (None, False))[1]]
    return optional or Issue("missing", (*path, key), None, None, (), key)


def _first_fit(members: list[Any], value: Any, path: Path, order: Order, *, tagged: bool) -> Issue | None:
    """None when one member accepts ``value``; else the issue of the member most likely meant.

    That is the member declaring most of the value's keys, then the deepest issue, then the first.
    """
    if len(members) == 1 and not tagged:
        only: Node = members[0]
        return only.check(value, path, order)
    best: Issue | None = None
    best_rank = (0, 0)
    sent = value.get("type") if tagged and isinstance(value, dict) else None
    for m in members:
        where = path
        if tagged and isinstance(m, ObjectNode):
            label = sent if isinstance(sent, str) else m.default_tag()
            where = (*path, Tag(label)) if label is not None else path
        issue = m.check(value, where, order)
        if issue is None:
            return None
        rank = (_unknown_keys(m, value), -len(issue.path))
        if best is None or rank < best_rank:
            best, best_rank = issue, rank
    return best


def _unknown_keys(member: Node, value: Any) -> int:
    """How many of the value's keys ``member`` does not declare (the fewer, the likelier meant)."""
    if isinstance(member, ObjectNode) and isinstance(value, dict):
        return sum(1 for k in value if k not in member.fields)
    return 0


# --- compiling annotations ---------------------------------------------------------------------

_LIST_ORIGINS = (list, collections.abc.Iterable, collections.abc.Sequence, collections.abc.Collection)
_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_WRAPPERS = (typing.Required, typing.NotRequired, typing_extensions.Required, typing_extensions.NotRequired)


class Compiler:
    """Compiles annotations to nodes, each ``TypedDict`` once (recursive types included)."""

    def __init__(self) -> None:
        self._objects: dict[type, ObjectNode] = {}

    def typed_dict(self, td: type, *, extra: dict[str, tuple[Any, bool]] | None = None) -> ObjectNode:
        """The node of ``td``; ``extra`` adds (annotation, required) keys the class lacks."""
        if extra is None and td in self._objects:
            return self._objects[td]
        node = ObjectNode(td.__name__)
        if extra is None:
            self._objects[td] = node
        hints = typing.get_type_hints(td, include_extras=True)
        total = bool(getattr(td, "__total__", True))
        for key, ann in hints.items():
            node.fields[key] = self._field(ann, total)
        for key, (ann, required) in (extra or {}).items():
            node.fields[key] = (self.compile(ann), required)
        return node

    def make_optional(self, class_name: str, key: str) -> None:
        """Mark ``key`` of every compiled class named ``class_name`` optional (a server leniency)."""
        for node in self._objects.values():
            if node.name == class_name and key in node.fields:
                node.fields[key] = (node.fields[key][0], False)
                node._positions = None

    def _field(self, ann: Any, total: bool) -> tuple[Node, bool]:
        required = total
        while True:
            origin = typing.get_origin(ann)
            if origin in _WRAPPERS:
                required = origin in (typing.Required, typing_extensions.Required)
                ann = typing.get_args(ann)[0]
            elif origin is typing.Annotated:
                ann = typing.get_args(ann)[0]
            else:
                return self.compile(ann), required

    def compile(self, ann: Any) -> Node:
        """The node of one annotation (unknown forms accept anything and are recorded)."""
        if ann is Any or ann is object:
            return AnyNode()
        if ann is type(None) or ann is None:
            return ScalarNode("null")
        if ann in _SCALARS:
            return ScalarNode(_SCALARS[ann])
        if typing_extensions.is_typeddict(ann):
            return self.typed_dict(ann)
        origin, args = typing.get_origin(ann), typing.get_args(ann)
        if origin in _WRAPPERS or origin is typing.Annotated:
            return self.compile(args[0])
        if origin in (Literal, typing_extensions.Literal):
            return LiteralNode(tuple(args))
        if origin is Union or origin is types.UnionType:
            return self._union(args)
        if origin in _LIST_ORIGINS or getattr(origin, "__name__", "") == "SequenceNotStr":
            return ListNode(self.compile(args[0]) if args else AnyNode())
        if origin in (dict, collections.abc.Mapping):
            return MapNode(self.compile(args[1]) if len(args) == 2 else AnyNode())
        if ann in (dict, list):
            return MapNode(AnyNode()) if ann is dict else ListNode(AnyNode())
        UNMODELLED.add(repr(ann))
        return AnyNode()

    def _union(self, args: tuple[Any, ...]) -> Node:
        nullable = any(a is type(None) for a in args)
        members: list[Node] = []
        for a in args:
            if a is type(None) or _is_response_model(a):
                continue
            node = self.compile(a)
            if isinstance(node, AnyNode):
                return AnyNode()
            members += list(node.members) if isinstance(node, UnionNode) else [node]
            nullable = nullable or (isinstance(node, UnionNode) and node.nullable)
        members = _merge_literals(members)
        if len(members) == 1 and not nullable:
            return members[0]
        return UnionNode(tuple(members), nullable)


def _is_response_model(ann: Any) -> bool:
    """An SDK response model (pydantic) in a param union: sent as its dict, which the params cover."""
    return isinstance(ann, type) and hasattr(ann, "model_fields") and not typing_extensions.is_typeddict(ann)


def _merge_literals(members: list[Node]) -> list[Node]:
    """``Union[Literal['a'], Literal['b']]`` is one literal ``'a' | 'b'`` (one error, all values)."""
    lits = [m for m in members if isinstance(m, LiteralNode) and m.value_kind == "string"]
    if len(lits) < 2:
        return members
    merged = LiteralNode(tuple(v for m in lits for v in m.values))
    out: list[Node] = []
    for m in members:
        if m in lits:
            if merged not in out:
                out.append(merged)
        else:
            out.append(m)
    return out


# --- snapshot (JSON) -----------------------------------------------------------------------------


def dump_nodes(roots: dict[str, Node]) -> dict[str, Any]:
    """A JSON-able form of compiled schemas: one flat node table, shared and recursive nodes by index."""
    table: dict[int, int] = {}
    nodes: list[Any] = []

    def ref(n: Node) -> int:
        if id(n) in table:
            return table[id(n)]
        table[id(n)] = len(nodes)
        nodes.append(None)
        nodes[table[id(n)]] = enc(n)
        return table[id(n)]

    def enc(n: Node) -> list[Any]:
        if isinstance(n, ScalarNode):
            return ["scalar", n.kind]
        if isinstance(n, LiteralNode):
            return ["literal", list(n.values)]
        if isinstance(n, ListNode):
            return ["list", ref(n.item), n.noun]
        if isinstance(n, MapNode):
            return ["map", ref(n.value)]
        if isinstance(n, ObjectNode):
            return ["object", n.name, [[k, ref(v), req] for k, (v, req) in n.fields.items()]]
        if isinstance(n, UnionNode):
            return ["union", [ref(m) for m in n.members], n.nullable, n.label]
        return ["any"]

    named = {name: ref(root) for name, root in roots.items()}
    return {"roots": named, "nodes": nodes}


def load_nodes(doc: dict[str, Any]) -> dict[str, Node]:
    """The schemas of a :func:`dump_nodes` document (nodes made first, then linked)."""
    raw: list[list[Any]] = doc["nodes"]
    made: list[Node] = [_shell(r) for r in raw]
    for node, r in zip(made, raw, strict=True):
        if isinstance(node, ListNode):
            node.item = made[r[1]]
        elif isinstance(node, MapNode):
            node.value = made[r[1]]
        elif isinstance(node, ObjectNode):
            node.fields = {k: (made[i], bool(req)) for k, i, req in r[2]}
        elif isinstance(node, UnionNode):
            node.members = tuple(made[i] for i in r[1])
    return {name: made[i] for name, i in doc["roots"].items()}


def _shell(r: list[Any]) -> Node:
    """One node of a snapshot, its links still to fill."""
    kind = r[0]
    if kind == "scalar":
        return ScalarNode(r[1])
    if kind == "literal":
        return LiteralNode(tuple(r[1]))
    if kind == "list":
        return ListNode(AnyNode(), r[2])
    if kind == "map":
        return MapNode(AnyNode())
    if kind == "object":
        return ObjectNode(r[1])
    if kind == "union":
        return UnionNode((), bool(r[2]), label=r[3])
    return AnyNode()
