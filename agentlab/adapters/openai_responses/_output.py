"""``OutputSpec`` -> the Responses ``text.format`` (``json_schema``), with strict mode's rules.

Strict structured outputs accept a schema only when every object is closed
(``additionalProperties: false``) and lists every property in ``required``, every subschema has a
``type`` (or is a ``$ref``/``anyOf``/``enum``/``const``), and the root is an object; anything else is
a 400 ``invalid_json_schema`` after a round trip. So:

* a schema agentlab generated from a pydantic type is made strict the way the SDK's
  ``responses.parse(text_format=...)`` does it (``openai.lib._pydantic.to_strict_json_schema``): each
  object gets ``additionalProperties: false`` when it sets none, every property becomes required,
  single-entry ``allOf`` is inlined, ``default: null`` is dropped, a ``$ref`` with siblings is
  unravelled;
* a schema given by hand is sent as written;
* either way, a schema that still is not strict (a ``dict[str, X]`` field, ``additionalProperties:
  true``, a property left out of ``required``, a root that is not an object) is refused here with
  ``InvalidSettingsError`` naming where, instead of the API's 400.
"""

from __future__ import annotations

import copy
from typing import Any

from agentlab.errors import InvalidSettingsError
from agentlab.neutral.output import OutputSpec

__all__ = ["strict_schema", "text_format", "text_param"]


def text_param(spec: OutputSpec, options: dict[str, Any]) -> dict[str, Any]:
    """The body's ``text``: the format, merged with an ``openai_text`` option (e.g. ``verbosity``).

    The option is taken out of ``options`` (it would otherwise replace the whole field); one that
    sets a ``format`` of its own conflicts with ``output_type`` and is refused.
    """
    given = options.pop("text", None) or {}
    if not isinstance(given, dict) or "format" in given:
        raise InvalidSettingsError(
            "openai: provider_options['openai_text'] may not set a format when output_type is given; "
            "output_type is the format (keep other text options such as verbosity)"
        )
    return {**given, "format": text_format(spec)}


def text_format(spec: OutputSpec) -> dict[str, Any]:
    """The ``text.format`` object for ``spec``; ``InvalidSettingsError`` for what strict mode refuses."""
    schema = strict_schema(spec.json_schema) if spec.from_type else spec.json_schema
    if spec.strict:
        problem = _strict_problem(schema)
        if problem is not None:
            raise InvalidSettingsError(
                f"openai: output_type {spec.name!r} cannot be sent as a strict structured output: "
                f"{problem}. Strict mode needs every object closed with all its properties required "
                "(no dict[str, ...] fields, no additionalProperties: true); change the type, or pass "
                "output_type={'name': ..., 'schema': ..., 'strict': False}"
            )
    fmt: dict[str, Any] = {"type": "json_schema", "name": spec.name, "schema": schema, "strict": spec.strict}
    if spec.description is not None:
        fmt["description"] = spec.description
    return fmt


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a pydantic-generated ``schema`` made strict as the OpenAI SDK makes it."""
    root = copy.deepcopy(schema)
    return _ensure_strict(root, root)


def _ensure_strict(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    for key in ("$defs", "definitions"):
        defs = node.get(key)
        if isinstance(defs, dict):
            for sub in defs.values():
                if isinstance(sub, dict):
                    _ensure_strict(sub, root)
    if node.get("type") == "object" and "additionalProperties" not in node:
        node["additionalProperties"] = False
    props = node.get("properties")
    if isinstance(props, dict):
        node["required"] = list(props)
        node["properties"] = {
            k: _ensure_strict(v, root) if isinstance(v, dict) else v for k, v in props.items()
        }
    if isinstance(node.get("items"), dict):
        node["items"] = _ensure_strict(node["items"], root)
    if isinstance(node.get("anyOf"), list):
        node["anyOf"] = [_ensure_strict(v, root) if isinstance(v, dict) else v for v in node["anyOf"]]
    all_of = node.get("allOf")
    if isinstance(all_of, list):
        if len(all_of) == 1 and isinstance(all_of[0], dict):
            node.update(_ensure_strict(all_of[0], root))
            node.pop("allOf")
        else:
            node["allOf"] = [_ensure_strict(v, root) if isinstance(v, dict) else v for v in all_of]
    if "default" in node and node["default"] is None:
        node.pop("default")
    ref = node.get("$ref")
    if isinstance(ref, str) and len(node) > 1:
        resolved = _resolve(root, ref)
        node.update({**resolved, **node})
        node.pop("$ref")
        return _ensure_strict(node, root)
    return node


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise InvalidSettingsError(f"openai: output_type uses a $ref that is not local ({ref!r})")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        raise InvalidSettingsError(f"openai: output_type's $ref {ref!r} does not resolve to a schema")
    return dict(node)


def _strict_problem(node: Any, path: tuple[str, ...] = ()) -> str | None:
    """Where ``node`` breaks strict mode, in the API's context-tuple notation, or None."""
    if not isinstance(node, dict):
        return None
    if not path and node.get("type") != "object":
        return f"the root must be an object schema (got type {node.get('type')!r})"
    if (
        path
        and path[-2:-1] not in (("$defs",), ("definitions",))
        and not any(k in node for k in ("type", "anyOf", "$ref", "enum", "const", "allOf"))
    ):
        return f"in context={path!r} the schema has no 'type' (an Any field?)"
    if node.get("type") == "object" or "properties" in node:
        if node.get("additionalProperties") is not False:
            return f"in context={path!r} the object is not closed (additionalProperties must be false)"
        missing = [k for k in node.get("properties") or {} if k not in (node.get("required") or [])]
        if missing:
            return f"in context={path!r} property {missing[0]!r} is not in 'required'"
    for key, sub in _children(node):
        problem = _strict_problem(sub, (*path, *key))
        if problem is not None:
            return problem
    return None


def _children(node: dict[str, Any]) -> list[tuple[tuple[str, ...], Any]]:
    out: list[tuple[tuple[str, ...], Any]] = [
        (("properties", str(k)), v) for k, v in (node.get("properties") or {}).items()
    ]
    if isinstance(node.get("items"), dict):
        out.append((("items",), node["items"]))
    for key in ("anyOf", "allOf"):
        out += [((key, str(i)), v) for i, v in enumerate(node.get(key) or [])]
    for key in ("$defs", "definitions"):
        out += [((key, str(k)), v) for k, v in (node.get(key) or {}).items()]
    return out
