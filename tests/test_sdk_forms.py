"""agentlab relies on the SDKs' documented forms only (issue 28).

SDK releases change what they never promised: the layout of ``str(exc)`` (anthropic 2.17 did), the
exception a failed body read becomes, their private modules and attributes. So, in every module of
``agentlab/``:

- no import of a private module of ``openai``, ``anthropic``, ``google.genai`` or ``httpx2``
  (``anthropic._data``, ``from openai import _models``...);
- no decision read from an exception's text: ``"..." in str(e)``, ``str(e).startswith(...)``,
  ``re.search(..., str(e))`` on a name bound by an ``except`` clause (decide before calling, or read
  ``status_code``, ``body``, typed fields);
- google-genai's private API client (no public way: :mod:`agentlab.adapters.google_gemini._api_client`
  says why, and ``tests/adapters/google_gemini/test_gemini_api_client.py`` drives each member on the
  installed SDK) is touched in that one module only.

``ALLOWED`` lists each exception to a rule with its reason; it holds no SDK site.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import agentlab

ROOT = Path(agentlab.__file__).resolve().parent
SDKS = ("openai", "anthropic", "google.genai", "httpx2")
GENAI_SEAM = "adapters/google_gemini/_api_client.py"
GENAI_PRIVATE = frozenset(
    {
        "_api_client",
        "_build_request",
        "_async_request",
        "_use_aiohttp",
        "_async_httpx_client",
        "_async_httpx_client_args",
        "_http_options",
    }
)
ALLOWED = {
    # A record that JSON cannot encode: pydantic's serialization error says "surrogate" only in its
    # text, and the message chosen is ours (no SDK involved, no decision beyond the wording).
    ("records/jsonl.py", "text"),
}
_EXC_TYPE = re.compile(r"\b\w*(Exception|Error)\b")
_REGEX_METHODS = frozenset({"search", "match", "fullmatch", "findall"})
_TEXT_METHODS = frozenset({"startswith", "endswith", "find", "index", "split", "count", "lower", "upper"})


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (p.relative_to(ROOT).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(ROOT.rglob("*.py"))
    ]


def _private_module(name: str) -> bool:
    for sdk in SDKS:
        if name == sdk or name.startswith(sdk + "."):
            rest = name[len(sdk) :].lstrip(".")
            return any(part.startswith("_") for part in rest.split(".") if part)
    return False


def _private_imports(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if _private_module(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if _private_module(node.module):
                found.append(node.module)
            elif node.module in SDKS:
                found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    return found


def _is_str_of(node: ast.AST, names: set[str]) -> bool:
    """``str(e)`` / ``repr(e)`` / ``f"{e}"`` / ``e.args[...]`` for an ``except ... as e`` name."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "repr"):
        return len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id in names
    if isinstance(node, ast.JoinedStr):
        return any(
            isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name) and v.value.id in names
            for v in node.values
        )
    return False


def _exception_scopes(tree: ast.Module) -> list[tuple[ast.AST, set[str]]]:
    """Each ``except ... as e`` clause, and each function taking an exception-typed parameter."""
    scopes: list[tuple[ast.AST, set[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.name is not None:
            scopes.append((node, {node.name}))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            names = {
                a.arg
                for a in args
                if a.annotation is not None and _EXC_TYPE.search(ast.unparse(a.annotation))
            }
            if names:
                scopes.append((node, names))
    return scopes


def _text_reads(tree: ast.Module) -> list[int]:
    """Lines where an exception's text decides something."""
    lines = {
        getattr(n, "lineno", 0)
        for scope, names in _exception_scopes(tree)
        for n in ast.walk(scope)
        if _reads_text(n, names)
    }
    return sorted(lines)


def _reads_text(node: ast.AST, names: set[str]) -> bool:
    if isinstance(node, ast.Compare):
        contains = any(isinstance(op, ast.In | ast.NotIn) for op in node.ops)
        return contains and any(_is_str_of(c, names) for c in node.comparators)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in _TEXT_METHODS:
            return _is_str_of(node.func.value, names)
        return node.func.attr in _REGEX_METHODS and any(_is_str_of(a, names) for a in node.args)
    return False


def test_no_private_module_of_an_sdk_is_imported() -> None:
    found = [f"{rel}: {name}" for rel, tree in _modules() for name in _private_imports(tree)]
    assert found == [], "private SDK modules imported (a release may move them):\n" + "\n".join(found)


def test_no_decision_is_read_from_an_exceptions_text() -> None:
    found = [
        f"{rel}:{line}"
        for rel, tree in _modules()
        if (rel, "text") not in ALLOWED
        for line in _text_reads(tree)
    ]
    assert found == [], "decisions read from str(exc) (read typed fields, or decide before):\n" + "\n".join(
        found
    )


def test_google_genais_private_api_client_is_touched_in_one_module() -> None:
    found: list[str] = []
    for rel, tree in _modules():
        if rel == GENAI_SEAM:
            continue
        for node in ast.walk(tree):
            name = node.attr if isinstance(node, ast.Attribute) else None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
                arg = node.args[1] if len(node.args) > 1 else None
                name = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
            if name in GENAI_PRIVATE:
                found.append(f"{rel}:{getattr(node, 'lineno', '?')}: {name}")
    assert found == [], f"google-genai's private API client outside {GENAI_SEAM}:\n" + "\n".join(found)


def test_the_scanners_see_what_they_look_for() -> None:
    """Controls: each scanner finds a planted example (a scanner that finds nothing proves nothing)."""
    planted = ast.parse(
        "from anthropic._data import X\nimport openai._models\nfrom httpx2 import _exceptions\n"
        "try:\n    pass\nexcept ValueError as exc:\n"
        "    if 'Streaming is required' in str(exc):\n        pass\n"
        "    if str(exc).startswith('x') or re.search('y', str(exc)):\n        pass\n"
        "def translate(exc: BaseException, n: int) -> None:\n    return 'z' in f'{exc}' or 'w' in str(n)\n"
    )
    assert _private_imports(planted) == ["anthropic._data", "openai._models", "httpx2._exceptions"]
    assert _text_reads(planted) == [7, 9, 12]
