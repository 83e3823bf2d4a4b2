"""The request-body schema of each simulated protocol, and its refusals in the real API's words.

Why here and not in the handlers: the handlers own the protocols' semantic rules (pairing, signatures,
budgets); a body that does not match the published schema is refused before any of them, with the
wording and ``param`` path the real server uses, and that is one rule per protocol:

* OpenAI Responses (400 ``invalid_request_error``): ``Unknown parameter: 'input[0].parsed_arguments'.``
  (``unknown_parameter``), ``Missing required parameter: 'input[1].call_id'.``
  (``missing_required_parameter``), ``Invalid type for 'temperature': expected a decimal, but got a
  string instead.`` (``invalid_type``), ``Invalid value: 'foo'. Supported values are: 'a', 'b', and
  'c'.`` (``invalid_value``; for an input item of unknown ``type``/``role`` the ``param`` is the item),
  and the id prefixes of replayed items: ``Invalid 'input[3].id': 'x'. Expected an ID that begins
  with 'fc'.`` (``invalid_id_prefix``; ``rs`` for reasoning items, ``msg`` for output messages).
* Anthropic Messages (400 ``invalid_request_error``, pydantic's words, ``.``-joined locations with the
  block's tag): ``messages.1.content.0.thinking.signature: Field required``, ``reasoning_details: Extra
  inputs are not permitted``, ``max_tokens: Input should be a valid integer``, ``messages.0.role: Input
  should be 'user', 'assistant' or 'system'``, ``messages.0.content.0: Input tag 'x' found using
  'type' does not match any of the expected tags: ...``.

Sources: ``openai.types.responses.response_create_params.ResponseCreateParamsBase`` (+ ``stream``) and
``anthropic.types.message_create_params.MessageCreateParamsBase`` (+ ``stream``); with an
``anthropic-beta`` header, ``anthropic.types.beta.message_create_params`` instead (the beta fields:
``thread``, ``context_management``, ``mcp_servers``, ... are accepted only then). The anthropic SDK
(2.x) speaks API version ``2026-10-21``, which removed ``temperature``/``top_p``/``top_k``; a request
that pins ``anthropic-version: 2023-06-01`` may still send them.

The schemas ship compiled, in ``request_schemas.json`` (read once, on the simulator's first request):
importing the SDK types means importing the whole SDK package, seconds on a busy machine, which a
``python -m agentlab.sim serve`` process would pay inside its first request. A test compiles them
again from the installed SDKs and fails when the snapshot differs; after an SDK upgrade,
``python -c "from agentlab.sim.schemas.dialects import write_snapshot; write_snapshot()"``
rewrites it (and the diff shows what the new API version changed).
"""

from __future__ import annotations

import difflib
import json
import threading
from collections.abc import Mapping
from itertools import zip_longest
from pathlib import Path
from typing import Any

import agentlab.sim.errors as E
from agentlab.sim.atomic_file import write_text_atomic
from agentlab.sim.schemas.validator import (
    Compiler,
    Issue,
    ListNode,
    LiteralNode,
    Node,
    ObjectNode,
    Order,
    ScalarNode,
    Tag,
    UnionNode,
    dump_nodes,
    json_kind,
    load_nodes,
)

OPENAI_ORDER = Order(extras_first=True)
ANTHROPIC_ORDER = Order(extras_first=False)
#: The Anthropic API version whose schema still has the sampling parameters.
LEGACY_ANTHROPIC_VERSION = "2023-06-01"

#: The compiled schemas, as shipped (see :func:`write_snapshot`).
SNAPSHOT = Path(__file__).with_name("request_schemas.json")
_lock = threading.Lock()
_schemas: dict[str, ObjectNode] = {}


def _cached(name: str) -> ObjectNode:
    """The schema ``name`` from the snapshot, read once (on the simulator's first request)."""
    node = _schemas.get(name)
    if node is None:
        with _lock:
            if not _schemas:
                doc = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
                for key, root in load_nodes(doc).items():
                    assert isinstance(root, ObjectNode)
                    _schemas[key] = root
            node = _schemas[name]
    return node


def compile_from_sdks() -> dict[str, Node]:
    """Every schema, compiled from the installed SDKs' request types (imports both SDKs: seconds)."""
    from openai.types.responses.response_create_params import ResponseCreateParamsBase

    compiler = Compiler()
    oai = compiler.typed_dict(ResponseCreateParamsBase, extra={"stream": (bool | None, False)})
    for class_name, key in OPENAI_OPTIONAL_IN_PRACTICE:
        compiler.make_optional(class_name, key)
    _label_input(oai)
    roots: dict[str, Node] = {"openai": oai}
    for beta in (False, True):
        shared = Compiler()
        for legacy in (False, True):
            roots[anthropic_schema_name(beta, legacy)] = _build_anthropic(shared, beta, legacy)
    return roots


def sdk_versions() -> dict[str, str]:
    """The SDK versions a snapshot was compiled from (read from the installed metadata)."""
    from importlib.metadata import version

    return {"openai": version("openai"), "anthropic": version("anthropic")}


def snapshot_text(roots: dict[str, Node]) -> str:
    """The snapshot file: the SDK versions, the roots, then one node per line (reviewable diffs)."""
    doc = dump_nodes(roots)
    head = json.dumps({"sdk": sdk_versions(), "roots": doc["roots"]}, sort_keys=True)
    lines = ",\n".join(json.dumps(n, separators=(",", ":")) for n in doc["nodes"])
    return head[:-1] + ',\n"nodes": [\n' + lines + "\n]}\n"


def write_snapshot() -> Path:
    """Recompile from the installed SDKs and rewrite :data:`SNAPSHOT` (after an SDK upgrade).

    A developer's tool, never run by the simulator. The snapshot is replaced whole or not at all, by
    the simulator's own atomic writer (:mod:`agentlab.sim.atomic_file`: the simulator is a leaf and
    imports nothing from agentlab outside it).
    """
    write_text_atomic(SNAPSHOT, snapshot_text(compile_from_sdks()))
    return SNAPSHOT


#: The command that regenerates :data:`SNAPSHOT` from the installed SDKs (named in drift reports).
REGENERATE = "python -m agentlab.sim schemas --write"


def snapshot_sdk_versions(text: str | None = None) -> dict[str, str]:
    """The SDK versions the shipped snapshot (or ``text``) was compiled from: its header's ``sdk``."""
    head = (SNAPSHOT.read_text(encoding="utf-8") if text is None else text).split("\n", 1)[0]
    versions: dict[str, str] = json.loads(head.rstrip(",") + "}")["sdk"]
    return versions


def comparable_lines(text: str) -> list[str]:
    """Snapshot lines with the SDK versions dropped and each literal's values sorted.

    A release that leaves the request types as they were (most patch releases) is no schema change,
    so the header's versions are not compared. ``typing`` caches ``Literal`` objects by equality, so
    which of two equal literals (same values, other order) an annotation gets depends on import
    order; the order shipped is the one served, and the comparison ignores it.
    """
    out = []
    for line in text.splitlines():
        if line.startswith('{"roots":'):
            head = json.loads(line.rstrip(",") + "}")
            head.pop("sdk", None)
            line = json.dumps(head, sort_keys=True)
        elif line.startswith('["literal",'):
            node = json.loads(line.rstrip(","))
            line = json.dumps(["literal", sorted(node[1], key=repr)])
        out.append(line)
    return out


def snapshot_drift(fresh_text: str | None = None) -> list[str]:
    """How the installed SDKs' request types differ from the shipped snapshot; empty when they do not.

    Why a function and not only a test: on the locked SDKs a difference is a bug (the suite fails);
    on newer releases (``make test-latest``) it is drift to report with :data:`REGENERATE`.
    """
    shipped_text = SNAPSHOT.read_text(encoding="utf-8")
    fresh_text = snapshot_text(compile_from_sdks()) if fresh_text is None else fresh_text
    shipped, fresh = comparable_lines(shipped_text), comparable_lines(fresh_text)
    if shipped == fresh:
        return []
    old, new = snapshot_sdk_versions(shipped_text), snapshot_sdk_versions(fresh_text)
    moved = ", ".join(f"{k} {old.get(k)} -> {v}" for k, v in sorted(new.items()) if old.get(k) != v)
    changes: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, shipped, fresh, autojunk=False).get_opcodes():
        if tag != "equal":
            changes += [_line_change(a, b) for a, b in zip_longest(shipped[i1:i2], fresh[j1:j2])]
    head = f"request schemas changed ({moved or 'same SDK versions'}): {len(changes)} of {len(shipped)} lines"
    return [head, *(f"  {c[:200]}" for c in changes[:8])]


def _line_change(old: str | None, new: str | None) -> str:
    """One changed snapshot line, as the values a literal gained or lost where it is one."""
    if old and new and old.startswith('["literal",') and new.startswith('["literal",'):
        a, b = set(json.loads(old)[1]), set(json.loads(new)[1])
        gained, lost = sorted(b - a, key=repr), sorted(a - b, key=repr)
        return "literal " + ", ".join([*(f"+{v}" for v in gained), *(f"-{v}" for v in lost)])
    return f"- {old}" if new is None else f"+ {new}" if old is None else f"~ {new}"


# --- OpenAI Responses --------------------------------------------------------------------------


def _label_input(root: ObjectNode) -> None:
    """Name ``input`` as the API does in its type errors (``array of input items``, ``an input item``)."""
    inp = root.fields["input"][0]
    if isinstance(inp, UnionNode):
        for m in inp.members:
            if isinstance(m, ListNode):
                m.noun = "input items"
                if isinstance(m.item, UnionNode):
                    m.item.label = "an input item"


#: Keys the SDK marks ``Required[Optional[...]]`` (the spec's "required, nullable") that the API
#: accepts absent: a function tool without ``strict`` is strict by default (the Responses docs).
OPENAI_OPTIONAL_IN_PRACTICE = (("FunctionToolParam", "strict"),)


def openai_schema() -> ObjectNode:
    """The compiled ``POST /v1/responses`` body schema."""
    return _cached("openai")


#: Input item types whose ``id`` the API checks for its prefix (when an id is sent).
_ID_PREFIXES = {"function_call": "fc", "reasoning": "rs"}


def _id_prefix_issue(req: Mapping[str, Any]) -> Issue | None:
    """Replayed items keep the ids the API gave them: ``fc_``/``rs_``/``msg_`` (output messages)."""
    items = req.get("input")
    if not isinstance(items, list):
        return None
    for i, it in enumerate(items):
        if not isinstance(it, dict) or not isinstance(it.get("id"), str):
            continue
        kind = it.get("type", "message")
        prefix = _ID_PREFIXES.get(kind)
        if prefix is None and kind == "message" and it.get("role") == "assistant":
            prefix = "msg"
        if prefix is not None and not it["id"].startswith(prefix):
            msg = f"Invalid 'input[{i}].id': '{it['id']}'. Expected an ID that begins with '{prefix}'."
            return Issue("custom", ("input", i, "id"), it["id"], message=msg, code="invalid_id_prefix")
    return None


#: Documented ranges of top-level numbers (the SDK types carry no bounds).
_OPENAI_RANGES = {"temperature": (0, 2), "top_p": (0, 1)}


def _range_issue(req: Mapping[str, Any]) -> Issue | None:
    """Out-of-range numbers, e.g. ``Invalid 'temperature': decimal below minimum value. ...``."""
    for key, (lo, hi) in _OPENAI_RANGES.items():
        v = req.get(key)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or lo <= v <= hi:
            continue
        side, sign, bound = ("below minimum", ">=", lo) if v < lo else ("above maximum", "<=", hi)
        msg = f"Invalid '{key}': decimal {side} value. Expected a value {sign} {bound}, but got {v} instead."
        code = "decimal_below_min_value" if v < lo else "decimal_above_max_value"
        return Issue("custom", (key,), v, message=msg, code=code)
    return None


def check_openai_request(req: Mapping[str, Any]) -> None:
    """Refuse (``SimError``) a Responses body that does not match the schema, as the API words it."""
    issue = openai_schema().check(dict(req), (), OPENAI_ORDER) or _range_issue(req) or _id_prefix_issue(req)
    if issue is not None:
        raise openai_error(issue)


def openai_path(path: tuple[Any, ...]) -> str:
    """``input[0].content[1].text``: keys dotted, indices bracketed, tags left out."""
    out = ""
    for p in path:
        if isinstance(p, Tag):
            continue
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else str(p)
    return out


_OAI_KIND = {
    "null": "null",
    "boolean": "a boolean",
    "integer": "an integer",
    "number": "a decimal",
    "string": "a string",
    "array": "an array",
    "object": "an object",
}


def _oai_expected(node: Node) -> str:
    """How OpenAI names an expected type: ``a string``, ``one of a string or array of input items``."""
    if isinstance(node, UnionNode):
        if node.label:
            return node.label
        names: list[str] = []
        for m in node.members:
            name = _oai_expected(m)
            if name not in names:
                names.append(name)
        if len(names) == 1:
            return names[0]
        bare = [n.split(" ", 1)[1] if n.startswith(("a ", "an ")) else n for n in names[1:]]
        return "one of " + names[0] + "".join(f" or {b}" for b in bare)
    if isinstance(node, ListNode):
        if node.noun:
            return f"an array of {node.noun}"
        return "an array of objects" if isinstance(node.item, (ObjectNode, UnionNode)) else "an array"
    if isinstance(node, LiteralNode):
        return _OAI_KIND[node.value_kind]
    if isinstance(node, ScalarNode):
        return _OAI_KIND.get(node.kind, node.kind)
    return "an object"


def _oai_values(values: tuple[Any, ...]) -> str:
    """``'a' and 'b'`` / ``'a', 'b', and 'c'`` (OpenAI writes a serial comma)."""
    q = [f"'{v}'" for v in values]
    if len(q) <= 2:
        return " and ".join(q)
    return ", ".join(q[:-1]) + ", and " + q[-1]


def openai_error(issue: Issue) -> E.SimError:
    """The 400 the Responses API sends for ``issue``."""
    p = openai_path(issue.path)
    if issue.kind == "extra":
        return E.OPENAI.bad_request(f"Unknown parameter: '{p}'.", p, "unknown_parameter")
    if issue.kind == "missing":
        return E.OPENAI.bad_request(f"Missing required parameter: '{p}'.", p, "missing_required_parameter")
    if issue.kind == "type" and issue.node is not None:
        got = _OAI_KIND[json_kind(issue.value)]
        msg = f"Invalid type for '{p}': expected {_oai_expected(issue.node)}, but got {got} instead."
        return E.OPENAI.bad_request(msg, p, "invalid_type")
    if issue.kind in ("literal", "tag"):
        values = sorted(issue.values) if issue.key == "type" else list(issue.values)
        msg = f"Invalid value: '{issue.value}'. Supported values are: {_oai_values(tuple(values))}."
        return E.OPENAI.bad_request(msg, p, "invalid_value")
    return E.OPENAI.bad_request(issue.message, p, issue.code or None)


# --- Anthropic Messages ------------------------------------------------------------------------


def _build_anthropic(compiler: Compiler, beta: bool, legacy: bool) -> ObjectNode:
    if beta:
        from anthropic.types.beta.message_create_params import MessageCreateParamsBase
    else:
        from anthropic.types.message_create_params import MessageCreateParamsBase  # type: ignore[assignment]
    extra: dict[str, tuple[Any, bool]] = {"stream": (bool, False)}
    if legacy:
        extra.update({"temperature": (float, False), "top_p": (float, False), "top_k": (int, False)})
    root = compiler.typed_dict(MessageCreateParamsBase, extra=extra)
    root.fields.pop("betas", None)  # the SDK sends ``betas`` as the anthropic-beta header
    return root


def anthropic_schema_name(beta: bool, legacy: bool) -> str:
    """The snapshot root of a Messages request: beta headers and API version pick the schema."""
    return f"anthropic{'-beta' if beta else ''}{'-legacy' if legacy else ''}"


def anthropic_schema(headers: Mapping[str, str]) -> ObjectNode:
    """The compiled ``POST /v1/messages`` body schema for this request's version and beta headers."""
    beta = bool(headers.get("anthropic-beta", "").strip())
    legacy = headers.get("anthropic-version", LEGACY_ANTHROPIC_VERSION) == LEGACY_ANTHROPIC_VERSION
    return _cached(anthropic_schema_name(beta, legacy))


def check_anthropic_request(req: Mapping[str, Any], headers: Mapping[str, str]) -> None:
    """Refuse (``SimError``) a Messages body that does not match the schema, in pydantic's words."""
    issue = anthropic_schema(headers).check(dict(req), (), ANTHROPIC_ORDER)
    if issue is not None:
        raise anthropic_error(issue)


def anthropic_path(path: tuple[Any, ...]) -> str:
    """``messages.1.content.0.thinking.signature``: every key, index and tag, dotted."""
    return ".".join(p.value if isinstance(p, Tag) else str(p) for p in path)


_ANT_KIND = {
    "null": "None",
    "boolean": "a valid boolean",
    "integer": "a valid integer",
    "number": "a valid number",
    "string": "a valid string",
    "array": "a valid list",
    "object": "a valid dictionary",
}


def _ant_expected(node: Node) -> str:
    """Pydantic's ``Input should be ...`` (a union reports its last member, as pydantic lists last)."""
    if isinstance(node, UnionNode):
        return _ant_expected(node.members[-1])
    if isinstance(node, LiteralNode):
        return _ant_values(node.values)
    if isinstance(node, ScalarNode):
        return _ANT_KIND.get(node.kind, node.kind)
    if isinstance(node, ListNode):
        return _ANT_KIND["array"]
    return _ANT_KIND["object"]


def _ant_values(values: tuple[Any, ...]) -> str:
    """``'a', 'b' or 'c'`` (pydantic's literal list)."""
    q = [f"'{v}'" for v in values]
    return q[0] if len(q) == 1 else ", ".join(q[:-1]) + " or " + q[-1]


def anthropic_error(issue: Issue) -> E.SimError:
    """The 400 the Messages API sends for ``issue``."""
    p = anthropic_path(issue.path)
    prefix = f"{p}: " if p else ""
    if issue.kind == "extra":
        return E.ANTHROPIC.bad_request(f"{prefix}Extra inputs are not permitted")
    if issue.kind == "missing":
        if issue.key == "type":
            where = anthropic_path(issue.path[:-1])
            return E.ANTHROPIC.bad_request(f"{where}: Unable to extract tag using discriminator 'type'")
        return E.ANTHROPIC.bad_request(f"{prefix}Field required")
    if issue.kind == "type" and issue.node is not None:
        return E.ANTHROPIC.bad_request(f"{prefix}Input should be {_ant_expected(issue.node)}")
    if issue.kind == "literal":
        return E.ANTHROPIC.bad_request(f"{prefix}Input should be {_ant_values(issue.values)}")
    if issue.kind == "tag" and issue.key != "type":
        return E.ANTHROPIC.bad_request(f"{p}.{issue.key}: Input should be {_ant_values(issue.values)}")
    if issue.kind == "tag":
        tags = ", ".join(f"'{v}'" for v in issue.values)
        return E.ANTHROPIC.bad_request(
            f"{prefix}Input tag '{issue.value}' found using '{issue.key}' does not match any of the "
            f"expected tags: {tags}"
        )
    return E.ANTHROPIC.bad_request(issue.message)
