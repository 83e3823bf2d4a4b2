"""Structured outputs in the simulator: the schema checked as the real APIs check it, answered in it.

The request's JSON schema is checked, and a deterministic instance of it is the final answer.

Why the simulator needs this: a client asking for a schema (OpenAI ``text.format`` of type
``json_schema``, Anthropic ``output_config.format``) parses the answer as JSON and validates it
(``responses.parse(text_format=...)``, ``messages.parse(output_format=...)``, agentlab's
``output_type=``). Free text would fail there, and a schema the real API refuses would pass here
and fail in production. So:

* the schema is checked with the real refusals: OpenAI strict mode (every object closed with
  ``additionalProperties: false`` and listing every property in ``required``, a ``type`` on every
  subschema, an object at the root; 400 ``invalid_json_schema``, ``param: text.format.schema``);
  Anthropic (every object closed; 400 ``output_config.format.schema: ...``) and the model that has
  no structured outputs (``sim-thinker-legacy``, standing in for the older Claude models);
* :func:`instance` builds a value valid against the schema from the planner's answer text:
  every plain string is the answer (cut to ``maxLength``), numbers are the last number the answer
  mentions (within ``minimum``/``maximum``), an ``enum`` takes the first option the answer names,
  objects get every property, arrays ``max(minItems, 1)`` items, ``$ref``/``$defs`` are followed
  (recursion stops at a depth limit through the ``null`` branch of an ``anyOf`` or an empty array).
  The same answer and schema give the same bytes.

This module is part of the simulator leaf: it imports nothing from agentlab outside ``agentlab.sim``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import agentlab.sim.errors as E

__all__ = [
    "NO_STRUCTURED_OUTPUTS",
    "anthropic_format",
    "gemini_schema",
    "instance",
    "json_answer",
    "openai_format",
    "openai_text_echo",
]

NO_STRUCTURED_OUTPUTS = frozenset({"sim-thinker-legacy"})
"""Simulated models without structured outputs (the real API refuses the format for such models)."""

_MAX_DEPTH = 8
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_FORMATS = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00",
    "duration": "P1D",
    "email": "sim@example.com",
    "hostname": "example.com",
    "uri": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
}
_FORMAT_TYPES = ("text", "json_object", "json_schema")


# ---------------------------------------------------------------- OpenAI: text.format


def openai_format(req: dict[str, Any]) -> dict[str, Any] | None:
    """The request's ``text.format`` when it asks for JSON (checked), else ``None`` (plain text)."""
    text = req.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict):
        return None
    kind = fmt.get("type")
    if kind not in _FORMAT_TYPES:
        raise E.OPENAI.bad_request(
            f"Invalid value: '{kind}'. Supported values are: 'text', 'json_object', and 'json_schema'.",
            "text.format.type",
            "invalid_value",
        )
    if kind == "text":
        return None
    if kind == "json_object":
        return fmt
    name = fmt.get("name")
    if not isinstance(name, str) or not name:
        raise E.OPENAI.bad_request(
            "Missing required parameter: 'text.format.name'.",
            "text.format.name",
            "missing_required_parameter",
        )
    schema = fmt.get("schema")
    if not isinstance(schema, dict):
        raise E.OPENAI.bad_request(
            "Missing required parameter: 'text.format.schema'.",
            "text.format.schema",
            "missing_required_parameter",
        )
    if fmt.get("strict") is True:
        problem = _strict_problem(schema, schema)
        if problem is not None:
            raise E.OPENAI.bad_request(
                f"Invalid schema for response_format '{name}': {problem}",
                "text.format.schema",
                "invalid_json_schema",
            )
    return fmt


def openai_text_echo(req: dict[str, Any]) -> dict[str, Any]:
    """The response's ``text`` field: the requested format as the API echoes it, and the verbosity."""
    text = req.get("text") if isinstance(req.get("text"), dict) else {}
    assert isinstance(text, dict)
    fmt = text.get("format") if isinstance(text.get("format"), dict) else {"type": "text"}
    assert isinstance(fmt, dict)
    if fmt.get("type") == "json_schema":
        fmt = {
            "type": "json_schema",
            "description": fmt.get("description"),
            "name": fmt.get("name"),
            "schema": fmt.get("schema"),
            "strict": fmt.get("strict"),
        }
    return {"format": fmt, "verbosity": text.get("verbosity") or "medium"}


def json_answer(schema: dict[str, Any] | None, answer: str) -> str:
    """The final answer as JSON: an instance of ``schema``, or JSON mode's ``{"answer": ...}`` without one."""
    if schema is None:
        return json.dumps({"answer": answer}, ensure_ascii=False)
    return json.dumps(instance(schema, answer), ensure_ascii=False)


# ---------------------------------------------------------------- Gemini: generationConfig


def gemini_schema(config: dict[str, Any]) -> dict[str, Any] | bool:
    """What ``generationConfig`` asks the answer to be: a JSON schema, ``True`` (JSON mode), or ``False``.

    Gemini answers in JSON only under ``responseMimeType: application/json`` (the structured-output
    guide); the schema is ``responseJsonSchema`` (JSON Schema) or ``responseSchema`` (the OpenAPI
    subset, type names in capitals, lowered here so :func:`instance` reads them).
    """
    if str(config.get("responseMimeType") or "").lower() != "application/json":
        return False
    schema = config.get("responseJsonSchema")
    if isinstance(schema, dict):
        return schema
    openapi = config.get("responseSchema")
    return _lower_types(openapi) if isinstance(openapi, dict) else True


def _lower_types(node: Any) -> Any:
    if isinstance(node, list):
        return [_lower_types(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _lower_types(v) for k, v in node.items()}
    if isinstance(out.get("type"), str):
        out["type"] = out["type"].lower()
    if out.pop("nullable", False) is True and "type" in out:
        out = {"anyOf": [out, {"type": "null"}]}
    return out


def _context(path: tuple[str, ...]) -> str:
    return f"In context={path!r}, "


def _strict_problem(node: Any, root: dict[str, Any], path: tuple[str, ...] = ()) -> str | None:
    """The first strict-mode violation under ``node`` in the API's words, or ``None``."""
    if not isinstance(node, dict):
        return None
    if not path and node.get("type") != "object" and "$ref" not in node and "anyOf" not in node:
        got = node.get("type")
        return f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{got}\"'."
    problem = _node_problem(node, path)
    if problem is not None:
        return problem
    for key, sub in _children(node, path):
        problem = _strict_problem(sub, root, sub_path(path, key))
        if problem is not None:
            return problem
    return None


def sub_path(path: tuple[str, ...], key: tuple[str, ...]) -> tuple[str, ...]:
    """``path`` extended by ``key`` (the API's context tuples)."""
    return (*path, *key)


def _node_problem(node: dict[str, Any], path: tuple[str, ...]) -> str | None:
    keyed = ("type", "anyOf", "$ref", "enum", "const", "allOf")
    if path and not any(k in node for k in keyed) and path[-2:-1] != ("$defs",):
        return _context(path) + "schema must have a 'type' key."
    if node.get("type") == "object" or "properties" in node:
        if node.get("additionalProperties") is not False:
            return _context(path) + "'additionalProperties' is required to be supplied and to be false."
        props = node.get("properties") or {}
        listed = node.get("required")
        required: list[Any] = listed if isinstance(listed, list) else []
        missing = [k for k in props if k not in required]
        if missing:
            return (
                _context(path) + "'required' is required to be supplied and to be an array including every "
                f"key in properties. Missing '{missing[0]}'."
            )
    return None


def _children(node: dict[str, Any], path: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    out: list[tuple[tuple[str, ...], Any]] = []
    for name, sub in (node.get("properties") or {}).items():
        out.append((("properties", str(name)), sub))
    if isinstance(node.get("items"), dict):
        out.append((("items",), node["items"]))
    for key in ("anyOf", "allOf"):
        for i, sub in enumerate(node.get(key) or []):
            out.append(((key, str(i)), sub))
    for key in ("$defs", "definitions"):
        for name, sub in (node.get(key) or {}).items():
            out.append(((key, str(name)), sub))
    return out


# ---------------------------------------------------------------- Anthropic: output_config.format


def anthropic_format(req: dict[str, Any], model: str) -> dict[str, Any] | None:
    """The request's ``output_config.format`` schema (checked), or ``None`` for a plain-text answer."""
    config = req.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else None
    if fmt is None:
        return None
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        raise E.ANTHROPIC.bad_request("output_config.format.type: Input should be 'json_schema'")
    schema = fmt.get("schema")
    if not isinstance(schema, dict):
        raise E.ANTHROPIC.bad_request("output_config.format.schema: Field required")
    if model in NO_STRUCTURED_OUTPUTS:
        raise E.ANTHROPIC.bad_request(
            f"'{model}' does not support output_config.format (structured outputs)."
        )
    problem = _anthropic_problem(schema)
    if problem is not None:
        raise E.ANTHROPIC.bad_request(f"output_config.format.schema: {problem}")
    return schema


def _anthropic_problem(node: Any) -> str | None:
    """Every object must be closed (``additionalProperties: false``), at any depth."""
    if isinstance(node, list):
        return next((p for p in map(_anthropic_problem, node) if p is not None), None)
    if not isinstance(node, dict):
        return None
    if node.get("type") == "object":
        extra = node.get("additionalProperties")
        if extra is None:
            return "For 'object' type, 'additionalProperties' must be explicitly set to false"
        if extra is not False:
            return (
                "For 'object' type, 'additionalProperties: true' is not supported. Please set "
                "'additionalProperties' to false"
            )
    subs: list[Any] = list((node.get("properties") or {}).values())
    subs += list((node.get("$defs") or {}).values()) + list((node.get("definitions") or {}).values())
    subs += [node.get("items"), node.get("anyOf"), node.get("allOf"), node.get("oneOf")]
    return next((p for p in map(_anthropic_problem, subs) if p is not None), None)


# ---------------------------------------------------------------- the instance


def instance(schema: dict[str, Any], answer: str) -> Any:
    """A value valid against ``schema``, built from the planner's ``answer`` (module docstring)."""
    return _Gen(schema, answer).value(schema, 0)


class _Gen:
    """One instance walk: the root (for ``$ref``) and the answer the values are drawn from."""

    def __init__(self, root: dict[str, Any], answer: str) -> None:
        self.root = root
        self.answer = answer
        numbers = _NUMBER.findall(answer)
        self.numbers = [float(n) for n in numbers]

    def resolve(self, ref: str) -> dict[str, Any]:
        node: Any = self.root
        for part in ref.removeprefix("#/").split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        return node if isinstance(node, dict) else {}

    def value(self, node: Any, depth: int) -> Any:
        if not isinstance(node, dict):
            return self.answer
        if "$ref" in node:
            return self.value({**self.resolve(str(node["$ref"])), **_without(node, "$ref")}, depth + 1)
        if "const" in node:
            return node["const"]
        if isinstance(node.get("enum"), list) and node["enum"]:
            return self.choice(node["enum"])
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list) and node[key]:
                return self.value(self.branch(node[key], depth), depth + 1)
        if isinstance(node.get("allOf"), list) and node["allOf"]:
            merged: dict[str, Any] = _without(node, "allOf")
            for part in node["allOf"]:
                merged = _merge(merged, self.resolve(part["$ref"]) if "$ref" in part else part)
            return self.value(merged, depth + 1)
        return self.typed(node, _first_type(node), depth)

    def typed(self, node: dict[str, Any], kind: str | None, depth: int) -> Any:
        if kind == "object" or (kind is None and "properties" in node):
            props = node.get("properties") or {}
            return {str(k): self.value(v, depth + 1) for k, v in props.items()}
        if kind == "array":
            return self.array(node, depth)
        if kind in ("number", "integer"):
            return self.number(node, integer=kind == "integer")
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return self.string(node)

    def branch(self, options: list[Any], depth: int) -> Any:
        """The first non-null option, or the null one once the walk is deep (recursive schemas)."""
        nulls = [o for o in options if isinstance(o, dict) and o.get("type") == "null"]
        others = [o for o in options if o not in nulls]
        if depth >= _MAX_DEPTH and nulls:
            return nulls[0]
        return others[0] if others else options[0]

    def choice(self, options: list[Any]) -> Any:
        low = self.answer.lower()
        named = [(low.find(str(o).lower()), i) for i, o in enumerate(options) if str(o).lower() in low]
        return options[min(named)[1]] if named else options[0]

    def array(self, node: dict[str, Any], depth: int) -> list[Any]:
        given = node.get("prefixItems")
        prefix: list[Any] = given if isinstance(given, list) else []
        low = int(node.get("minItems") or 0)
        high = node.get("maxItems")
        n = 0 if depth >= _MAX_DEPTH else max(low, 1, len(prefix))
        if isinstance(high, int):
            n = min(n, high)
        n = max(n, low)
        items = [self.value(prefix[i] if i < len(prefix) else node.get("items"), depth + 1) for i in range(n)]
        return items

    def number(self, node: dict[str, Any], *, integer: bool) -> int | float:
        low = node.get("minimum", node.get("exclusiveMinimum"))
        high = node.get("maximum", node.get("exclusiveMaximum"))
        for n in reversed(self.numbers):
            if integer and not n.is_integer():
                continue
            if _within(n, node):
                return int(n) if integer else n
        start = float(low) if isinstance(low, int | float) else 0.0
        if "exclusiveMinimum" in node and isinstance(low, int | float):
            start = float(low) + 1
        if isinstance(high, int | float) and start > high:
            start = float(high)
        return int(start) if integer else start

    def string(self, node: dict[str, Any]) -> str:
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt in _FORMATS:
            return _FORMATS[fmt]
        text = self.answer or "ok"
        longest = node.get("maxLength")
        shortest = node.get("minLength")
        if isinstance(longest, int):
            text = text[:longest]
        if isinstance(shortest, int) and len(text) < shortest:
            text = text + "." * (shortest - len(text))
        return text


def _first_type(node: dict[str, Any]) -> str | None:
    kind = node.get("type")
    if isinstance(kind, list):
        real = [k for k in kind if k != "null"]
        return str(real[0]) if real else "null"
    return kind if isinstance(kind, str) else None


def _within(n: float, node: dict[str, Any]) -> bool:
    def bound(key: str, default: float) -> float:
        b = node.get(key)
        return float(b) if isinstance(b, int | float) and not isinstance(b, bool) else default

    return bound("minimum", -math.inf) <= n <= bound("maximum", math.inf) and bound(
        "exclusiveMinimum", -math.inf
    ) < n < bound("exclusiveMaximum", math.inf)


def _without(node: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k != key}


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = {**a, **b}
    if "properties" in a or "properties" in b:
        out["properties"] = {**(a.get("properties") or {}), **(b.get("properties") or {})}
    return out
