"""``OutputSpec`` -> the Messages API ``output_config.format`` (structured outputs).

Anthropic's JSON outputs take a JSON schema from a supported subset: every object must be closed
(``additionalProperties: false``, "must be explicitly set to false"), no numeric or string
constraints (``minimum``, ``maxLength``, ...), ``minItems`` only 0 or 1, string ``format`` from a fixed
list. So:

* a schema agentlab generated from a pydantic type is transformed the way the SDK's
  ``messages.parse(output_format=...)`` does it (``anthropic.lib._parse._transform.transform_schema``):
  objects closed, unsupported keywords moved into the ``description`` (``{minimum: 1}``) so the model
  may still follow them, while the run validates the answer against the full pydantic type;
* a schema given by hand is sent as written, and refused here (``InvalidSettingsError``) when an
  object in it is not closed, which the API would answer with a 400.
"""

from __future__ import annotations

from typing import Any

from agentlab.errors import InvalidSettingsError
from agentlab.neutral.output import OutputSpec

__all__ = ["output_config", "output_format", "transform_schema"]

_STRING_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


def output_config(spec: OutputSpec, current: object) -> dict[str, Any]:
    """The body's ``output_config`` with the format added (``effort`` and other keys kept).

    A format already there (set through ``provider_options['anthropic_output_config']``) conflicts
    with ``output_type`` and is refused.
    """
    config = dict(current) if isinstance(current, dict) else {}
    if config.get("format") is not None:
        raise InvalidSettingsError(
            "anthropic: provider_options['anthropic_output_config'] may not set a format when "
            "output_type is given; output_type is the format"
        )
    config["format"] = output_format(spec)
    return config


def output_format(spec: OutputSpec) -> dict[str, Any]:
    """The ``output_config.format`` object for ``spec``; ``InvalidSettingsError`` for what the API refuses."""
    if spec.from_type:
        try:
            schema = transform_schema(spec.json_schema)
        except ValueError as e:
            raise InvalidSettingsError(f"anthropic: output_type {spec.name!r}: {e}") from None
    else:
        schema = spec.json_schema
    where = _open_object(schema, ())
    if where is not None:
        raise InvalidSettingsError(
            f"anthropic: output_type {spec.name!r}: the object at {where!r} is not closed; Anthropic's "
            "structured outputs need additionalProperties: false on every object"
        )
    return {"type": "json_schema", "schema": schema}


def transform_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A pydantic-generated ``schema`` as the Anthropic SDK sends it (module docstring)."""
    rest = dict(schema)
    out: dict[str, Any] = {}
    defs = rest.pop("$defs", None)
    if isinstance(defs, dict):
        out["$defs"] = {k: transform_schema(v) for k, v in defs.items()}
    ref = rest.pop("$ref", None)
    if ref is not None:
        out["$ref"] = ref
        return out
    kind = rest.pop("type", None)
    variants = {k: rest.pop(k, None) for k in ("anyOf", "oneOf", "allOf")}
    literal = _take_literals(rest, out)
    if isinstance(variants["anyOf"], list):
        out["anyOf"] = [transform_schema(v) for v in variants["anyOf"]]
    elif isinstance(variants["oneOf"], list):
        out["anyOf"] = [transform_schema(v) for v in variants["oneOf"]]
    elif isinstance(variants["allOf"], list):
        out["allOf"] = [transform_schema(v) for v in variants["allOf"]]
    elif not literal:
        if kind is None:
            raise ValueError(
                "a schema without 'type', 'anyOf', 'oneOf', 'allOf', 'const' or 'enum' (an Any field?) "
                "cannot be a structured output"
            )
        out["type"] = kind
    kind = None if literal else kind
    for key in ("description", "title"):
        if key in rest:
            out[key] = rest.pop(key)
    _typed(kind, rest, out)
    if rest:
        extra = ", ".join(f"{k}: {v}" for k, v in rest.items())
        out["description"] = (out["description"] + "\n\n" if "description" in out else "") + "{" + extra + "}"
    return out


def _take_literals(rest: dict[str, Any], out: dict[str, Any]) -> bool:
    enum = rest.get("enum")
    if isinstance(enum, list) and enum and all(_primitive(v) for v in enum):
        out["enum"] = list(rest.pop("enum"))
    if "const" in rest and _primitive(rest["const"]):
        out["const"] = rest.pop("const")
    return "enum" in out or "const" in out


def _typed(kind: Any, rest: dict[str, Any], out: dict[str, Any]) -> None:
    """The keywords each type keeps; what is left in ``rest`` goes to the description."""
    if kind == "object":
        out["properties"] = {k: transform_schema(v) for k, v in rest.pop("properties", {}).items()}
        rest.pop("additionalProperties", None)
        out["additionalProperties"] = False
        if "required" in rest:
            out["required"] = list(rest.pop("required"))
    elif kind == "string":
        fmt = rest.pop("format", None)
        if fmt in _STRING_FORMATS:
            out["format"] = fmt
        elif fmt:
            rest["format"] = fmt
    elif kind == "array":
        items = rest.pop("items", None)
        if items is not None:
            out["items"] = transform_schema(items)
        low = rest.pop("minItems", None)
        if low in (0, 1):
            out["minItems"] = low
        elif low is not None:
            rest["minItems"] = low
    elif kind is not None and kind not in _TYPES:
        raise ValueError(f"unsupported schema type {kind!r}")


def _primitive(v: object) -> bool:
    return v is None or isinstance(v, str | int | float | bool)


def _open_object(node: Any, path: tuple[str, ...]) -> tuple[str, ...] | None:
    """The path of the first object schema not closed with ``additionalProperties: false``."""
    if isinstance(node, list):
        for i, sub in enumerate(node):
            found = _open_object(sub, (*path, str(i)))
            if found is not None:
                return found
        return None
    if not isinstance(node, dict):
        return None
    if node.get("type") == "object" and node.get("additionalProperties") is not False:
        return path
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (node.get(key) or {}).items():
            found = _open_object(sub, (*path, key, str(name)))
            if found is not None:
                return found
    for key in ("items", "anyOf", "allOf", "oneOf"):
        if key in node:
            found = _open_object(node[key], (*path, key))
            if found is not None:
                return found
    return None
