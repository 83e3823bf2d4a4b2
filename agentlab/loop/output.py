"""``output_type=``: what the run asks the final answer to be, and the check that it is.

A run given ``output_type`` (a pydantic model class, or a JSON schema dict with a name) sends its
schema on every request (``ModelRequest.output``, mapped by each adapter) and validates the final
answer into ``RunResult.output_value``: the model instance, or the parsed JSON for a schema dict.

A final answer that does not match (not JSON, or failing validation) fails the run with
``OutputValidationError``. Its message follows the privacy rule for errors: it names the fields that
failed and what was wrong with them (pydantic's error type, e.g. ``missing``, ``int_parsing``), never
the model's values; pydantic's ``ValidationError`` (which quotes the input) is not chained, and a
key the model invented is shown as ``<unexpected field>``, since only the schema's own names are
known to be the caller's words. The answer itself stays where model text belongs: in ``history``.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import re
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ValidationError

from agentlab.errors import ConfigError, OutputValidationError
from agentlab.neutral.output import NAME_PATTERN, OutputSpec

__all__ = ["StructuredOutput", "structured_output"]

_MAX_PROBLEMS = 5
_NAME = re.compile(NAME_PATTERN)


@dataclasses.dataclass(frozen=True, slots=True)
class StructuredOutput:
    """The resolved ``output_type``: the spec adapters send, and how the answer is validated."""

    spec: OutputSpec
    model: type[BaseModel] | None = None
    """The pydantic class to validate into; None for a schema dict (validated as JSON)."""
    fields: frozenset[str] = frozenset()
    """Every property name the schema declares (at any depth): the names an error may show."""

    def validate(self, text: str | None, *, stop_reason: object = None) -> Any:
        """The answer as the output type's value, or ``OutputValidationError`` (value-free)."""
        problems = self._problems(text or "")
        if isinstance(problems, _Valid):
            return problems.value
        hint = ""
        if stop_reason == "max_tokens":
            hint = " (the answer was cut at the output token limit: raise max_output_tokens)"
        shown = "; ".join(problems[:_MAX_PROBLEMS])
        more = f" (+{len(problems) - _MAX_PROBLEMS} more)" if len(problems) > _MAX_PROBLEMS else ""
        raise OutputValidationError(
            f"the final answer does not match the output type {self.spec.name!r}: {shown}{more}{hint}",
            output_name=self.spec.name,
            fields=tuple(p.partition(":")[0].removeprefix("field ") for p in problems),
        )

    def _problems(self, text: str) -> _Valid | list[str]:
        if self.model is not None:
            return _pydantic_problems(self.model, text, self.fields)
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            why = f"invalid JSON ({e.msg} at line {e.lineno} column {e.colno})"
        else:
            schema = self.spec.json_schema
            found = list(_Schema(schema).problems(value, schema, (), self.fields))
            return found if found else _Valid(value)
        return [f"field <root>: {why}"]


@dataclasses.dataclass(frozen=True, slots=True)
class _Valid:
    value: Any


def _pydantic_problems(model: type[BaseModel], text: str, known: frozenset[str]) -> _Valid | list[str]:
    """Validate with pydantic; its errors become field paths and error types only (no ``input``)."""
    errors: list[Any] | None = None
    try:
        value = model.model_validate_json(text)
    except ValidationError as e:
        errors = e.errors(include_url=False, include_context=False, include_input=False)
    if errors is None:
        return _Valid(value)
    return [f"field {_path(tuple(err.get('loc', ())), known)}: {_kind(err.get('type'))}" for err in errors]


def _kind(value: object) -> str:
    return value if isinstance(value, str) and re.fullmatch(r"[a-z_]{1,40}", value) else "invalid"


def _path(loc: tuple[Any, ...], known: frozenset[str]) -> str:
    parts: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts.append(f"[{p}]")
        elif isinstance(p, str) and p in known:
            parts.append(("." if parts else "") + p)
        else:
            parts.append(("." if parts else "") + "<unexpected field>")
    return "".join(parts) or "<root>"


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "integer":
        return (
            (isinstance(value, int)
            and not isinstance(value, bool))
            or (isinstance(value, float) and value.is_integer())
        )
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, _TYPES.get(kind, (object,)))


@dataclasses.dataclass(frozen=True, slots=True)
class _Schema:
    """A JSON schema walked against a value; ``root`` is the whole schema, where ``$ref``s resolve."""

    root: dict[str, Any]

    def _resolve(self, ref: str) -> dict[str, Any]:
        node: Any = self.root
        for part in ref.removeprefix("#/").split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        return node if isinstance(node, dict) else {}

    def problems(self, value: Any, node: Any, loc: tuple[Any, ...], known: frozenset[str]) -> Iterator[str]:
        """The subset of JSON Schema both providers' structured outputs accept, checked value-free."""
        if not isinstance(node, dict):
            return
        where = f"field {_path(loc, known)}"
        if "$ref" in node:
            yield from self.problems(value, self._resolve(str(node["$ref"])), loc, known)
        if "const" in node and value != node["const"]:
            yield f"{where}: const"
        if isinstance(node.get("enum"), list) and value not in node["enum"]:
            yield f"{where}: enum"
        yield from self._combinators(value, node, loc, known, where)
        kinds = node.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if isinstance(kinds, list) and not any(_type_ok(value, str(k)) for k in kinds):
            yield f"{where}: {'_or_'.join(str(k) for k in kinds)}_type"
            return
        if isinstance(value, dict):
            yield from self._object_problems(value, node, loc, known)
        elif isinstance(value, list):
            yield from self._array_problems(value, node, loc, known, where)
        else:
            yield from _scalar_problems(value, node, where)

    def _combinators(
        self, value: Any, node: dict[str, Any], loc: tuple[Any, ...], known: frozenset[str], where: str
    ) -> Iterator[str]:
        for key in ("anyOf", "oneOf"):
            options = node.get(key)
            if (
                isinstance(options, list)
                and options
                and not any(not list(self.problems(value, o, loc, known)) for o in options)
            ):
                yield f"{where}: no {key} option matches"
        for part in node.get("allOf") or []:
            yield from self.problems(value, part, loc, known)

    def _object_problems(
        self, value: dict[str, Any], node: dict[str, Any], loc: tuple[Any, ...], known: frozenset[str]
    ) -> Iterator[str]:
        props = node.get("properties") or {}
        for name in node.get("required") or []:
            if name not in value:
                yield f"field {_path((*loc, name), known)}: missing"
        extra = node.get("additionalProperties", True)
        for key, sub in value.items():
            if key in props:
                yield from self.problems(sub, props[key], (*loc, key), known)
            elif extra is False:
                yield f"field {_path((*loc, key), frozenset())}: extra_forbidden"
            elif isinstance(extra, dict):
                yield from self.problems(sub, extra, (*loc, key), frozenset())

    def _array_problems(
        self, value: list[Any], node: dict[str, Any], loc: tuple[Any, ...], known: frozenset[str], where: str
    ) -> Iterator[str]:
        if isinstance(node.get("minItems"), int) and len(value) < node["minItems"]:
            yield f"{where}: too_short"
        if isinstance(node.get("maxItems"), int) and len(value) > node["maxItems"]:
            yield f"{where}: too_long"
        given = node.get("prefixItems")
        prefix: list[Any] = given if isinstance(given, list) else []
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else node.get("items")
            yield from self.problems(item, sub, (*loc, i), known)


def _scalar_problems(value: Any, node: dict[str, Any], where: str) -> Iterator[str]:
    if isinstance(value, str):
        if isinstance(node.get("minLength"), int) and len(value) < node["minLength"]:
            yield f"{where}: string_too_short"
        if isinstance(node.get("maxLength"), int) and len(value) > node["maxLength"]:
            yield f"{where}: string_too_long"
        return
    if isinstance(value, int | float) and not isinstance(value, bool):
        bounds = (
            ("minimum", value >= node.get("minimum", -math.inf)),
            ("maximum", value <= node.get("maximum", math.inf)),
            ("exclusiveMinimum", value > node.get("exclusiveMinimum", -math.inf)),
            ("exclusiveMaximum", value < node.get("exclusiveMaximum", math.inf)),
        )
        for name, ok in bounds:
            if name in node and not ok:
                yield f"{where}: {name}"


def _property_names(node: Any) -> Iterator[str]:
    if isinstance(node, list):
        for sub in node:
            yield from _property_names(sub)
    elif isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            yield from (str(k) for k in props)
        for value in node.values():
            if isinstance(value, dict | list):
                yield from _property_names(value)


def structured_output(output_type: object) -> StructuredOutput | None:
    """Resolve ``output_type`` (checked before anything is sent); None when not given."""
    if output_type is None:
        return None
    if inspect.isclass(output_type) and issubclass(output_type, BaseModel):
        name = output_type.__name__
        _check_name(name, "the model class's name")
        schema = output_type.model_json_schema()
        spec = OutputSpec(name=name, json_schema=schema, from_type=True)
        return StructuredOutput(spec, output_type, frozenset(_property_names(schema)))
    if isinstance(output_type, dict):
        return _from_dict(output_type)
    raise ConfigError(
        "output_type must be a pydantic model class (class Answer(BaseModel): ...) or a JSON schema "
        f"dict with a name ({{'name': 'answer', 'schema': {{...}}}}), got {type(output_type).__name__}"
    )


def _from_dict(given: dict[str, Any]) -> StructuredOutput:
    """``{"name", "schema", "strict"?}`` (the providers' own shape), or a schema with a ``title``."""
    if isinstance(given.get("schema"), dict):
        extra = sorted(set(given) - {"name", "schema", "strict", "description"})
        if extra:
            raise ConfigError(f"output_type dict: unknown key(s) {extra}; give name, schema and strict")
        name, schema, strict = given.get("name"), given["schema"], given.get("strict", True)
    else:
        name, schema, strict = given.get("title"), given, True
    if not isinstance(name, str):
        raise ConfigError(
            "output_type as a JSON schema needs a name: {'name': 'answer', 'schema': {...}}, "
            "or a 'title' in the schema"
        )
    _check_name(name, "output_type's name")
    if not isinstance(strict, bool):
        raise ConfigError(f"output_type 'strict' must be True or False, got {type(strict).__name__}")
    description = given.get("description") if "schema" in given else None
    if description is not None and not isinstance(description, str):
        raise ConfigError(f"output_type 'description' must be a str, got {type(description).__name__}")
    spec = OutputSpec(name=name, json_schema=dict(schema), strict=strict, description=description)
    return StructuredOutput(spec, None, frozenset(_property_names(schema)))


def _check_name(name: str, what: str) -> None:
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"{what} {name!r} cannot name a structured output: use 1-64 letters, digits, '_' or '-'"
        )
