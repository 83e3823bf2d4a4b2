"""The one repr rule for objects that hold a request or response body, model text or opaque payload.

Such objects end up where nobody decided to show them: a cell output (``on_event=print``), a
traceback formatter that prints frame locals (IPython ``%xmode Verbose``, ``rich.traceback`` with
``show_locals``, ``traceback`` with ``capture_locals``), a debugger, a log line. So their reprs show
what helps debugging without showing content: sizes, counts, kinds and ids. Content stays one
explicit attribute away (``ev.text``, ``built.body``).

* ``shape(value)``: a stand-in whose repr is the summary (``<12 chars>``, ``<3 items: user,
  assistant_text, tool_call>``, ``<dict, 4 keys>``). Numbers, ``None`` and objects that follow this
  rule themselves pass through unchanged.
* ``ShapedRepr``: the pydantic mixin. It rewrites ``__repr_args__``, which pydantic's ``__repr__``,
  ``__str__``, ``__rich_repr__`` and ``_repr_pretty_`` (IPython) all read; fields named in
  ``_repr_shown`` (ids, kinds, settings) are shown as they are, every other field as its shape.
  Default deny: a field added later is summarized until someone decides it is safe to show.
* ``shaped_repr(obj, shown, **fields)``: the same for plain classes (``<Type a=1 b=<12 chars>>``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

__all__ = ["Shape", "ShapedDataclass", "ShapedRepr", "is_shaped", "shape", "shaped_repr"]

_PLAIN = (bool, int, float, type(None))


class Shape:
    """A value's summary; its repr is the summary text (so pydantic, IPython and rich print it bare)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def _kind(value: object) -> str:
    if getattr(type(value), "_opaque", False):
        return "opaque"
    kind = getattr(value, "kind", None)
    return kind if isinstance(kind, str) else type(value).__name__


def _kinds(values: Iterable[object]) -> str:
    counts = Counter(_kind(v) for v in values)
    parts = [k if n == 1 else f"{n} {k}" for k, n in list(counts.items())[:6]]
    return ", ".join(parts) + (", ..." if len(counts) > 6 else "")


def is_shaped(value: object) -> bool:
    """Whether ``value``'s own repr already follows this rule."""
    return isinstance(value, (*_PLAIN, Shape)) or bool(getattr(type(value), "_shaped_repr", False))


def shape(value: Any) -> Any:
    """``value`` if its repr is safe to show, else a ``Shape`` describing it without its content."""
    if is_shaped(value):
        return value
    if isinstance(value, str):
        return Shape(f"<{len(value)} chars>")
    if isinstance(value, bytes | bytearray | memoryview):
        return Shape(f"<{len(value)} bytes>")
    if isinstance(value, Mapping):
        return Shape(f"<{type(value).__name__}, {len(value)} keys>")
    if isinstance(value, list | tuple | set | frozenset):
        if not value:
            return Shape("<0 items>")
        if all(getattr(type(v), "_opaque", False) for v in value):
            return Shape(f"<{len(value)} opaque items>")
        return Shape(f"<{len(value)} items: {_kinds(value)}>")
    return Shape(f"<{type(value).__name__}>")


def shaped_repr(obj: object, shown: Iterable[str] = (), **fields: Any) -> str:
    """``<Type a=1 b=<12 chars>>``: fields in ``shown`` as they are, the others as their shapes."""
    keep = set(shown)
    args = " ".join(f"{k}={v!r}" if k in keep else f"{k}={shape(v)!r}" for k, v in fields.items())
    return f"<{type(obj).__name__} {args}>" if args else f"<{type(obj).__name__}>"


class ShapedRepr:
    """Mixin for pydantic models: reprs (and ``str``, rich, IPython) show shapes, not content.

    ``_repr_shown`` names the fields that are safe as they are (ids, kinds, counts, settings).
    """

    _shaped_repr: ClassVar[bool] = True
    _repr_shown: ClassVar[frozenset[str]] = frozenset()

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        shown = self._repr_shown
        for name, value in super().__repr_args__():  # type: ignore[misc]
            yield name, value if name in shown else shape(value)


class ShapedDataclass:
    """Mixin for dataclasses (declare them ``@dataclass(repr=False)``): the same rule as ``ShapedRepr``."""

    _shaped_repr: ClassVar[bool] = True
    _repr_shown: ClassVar[frozenset[str]] = frozenset()

    def __repr__(self) -> str:
        import dataclasses

        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.repr}  # type: ignore[arg-type]
        return shaped_repr(self, self._repr_shown, **fields)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython: the same text as ``repr`` (its dataclass printer would show every field)."""
        p.text(repr(self))
