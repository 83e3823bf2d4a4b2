"""Diagnostic codes come from one typed registry, and events are born stamped (never mutated).

The checks read agentlab's own source (``ast``): a ``DiagnosticEvent`` is constructed only by the
registry's helper, every code a call site names is registered, and nothing reaches into an event
through ``__dict__`` or ``object.__setattr__`` (frozen models are built with ``run_id``/``step``).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pydantic
import pytest

import agentlab
from agentlab.neutral import diagnostics
from agentlab.neutral.diagnostics import CODES, add_dropped, diagnostic, register_code
from agentlab.neutral.events import DiagnosticEvent, EventOrigin

ROOT = Path(agentlab.__file__).resolve().parent
REGISTRY = ROOT / "neutral" / "diagnostics.py"
# Call shapes that take a code as their first argument.
_CODE_CALLS = {"diagnostic", "note"}


def _sources() -> list[tuple[Path, ast.Module]]:
    return [
        (p, ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(ROOT.rglob("*.py"))
        if "sim" not in p.relative_to(ROOT).parts[:1]
    ]


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def test_every_diagnostic_event_is_built_by_the_registry() -> None:
    offenders = [
        f"{p.relative_to(ROOT)}:{node.lineno}"
        for p, tree in _sources()
        if p != REGISTRY
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _name(node.func) == "DiagnosticEvent"
    ]
    assert offenders == [], f"DiagnosticEvent built outside agentlab.neutral.diagnostics: {offenders}"


def test_every_code_named_at_a_call_site_is_registered() -> None:
    # Provider packages register their codes when imported; import them all, so the check does not
    # depend on which tests ran before it (alone, it failed on the Gemini adapter's cache codes).
    import agentlab.adapters as adapters
    import agentlab.costs.reported  # registers provider_cost_differs beside its model
    import agentlab.testing  # noqa: F401 - registers its own code, as a provider package would

    for info in pkgutil.walk_packages(adapters.__path__, "agentlab.adapters."):
        importlib.import_module(info.name)

    named: set[str] = set()
    for _, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _name(node.func) in _CODE_CALLS and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    named.add(first.value)
    assert named, "no call site found: the check is not looking at the code"
    assert sorted(named - set(CODES)) == []


# The reducer builds each new snapshot by filling a *fresh* instance's ``__dict__`` from the previous
# one (copy-on-write, the per-event hot path); it never writes to an event or to a snapshot it was
# given, which tests/assembly/test_reducer.py checks by value (earlier snapshots stay unchanged).
_COPY_ON_WRITE = {"assembly/reducer.py"}


def _slot_descriptors(tree: ast.Module) -> set[int]:
    """``Cls.__dict__["slot"].__set__`` bound once at module level: a class's descriptor, not an object.

    ``assembly/assembler.py`` builds each delta event fresh through pydantic's slot descriptors
    (``_built``, construction, checked equal to the validated constructor's event by
    tests/assembly/test_hot_path.py); reading a class's ``__dict__`` there touches no event.
    """
    found: set[int] = set()
    for stmt in tree.body:
        value = stmt.value if isinstance(stmt, ast.Assign) else None
        if (
            isinstance(value, ast.Attribute)
            and value.attr == "__set__"
            and isinstance(value.value, ast.Subscript)
            and isinstance(value.value.value, ast.Attribute)
            and value.value.value.attr == "__dict__"
            and isinstance(value.value.value.value, ast.Name)
            and value.value.value.value.id[:1].isupper()
        ):
            found.add(id(value.value.value))
    return found


def test_no_event_is_mutated_after_construction() -> None:
    """``x.__dict__`` on anything but ``self`` and ``object.__setattr__`` on anything but ``self``."""
    offenders = []
    for p, tree in _sources():
        if str(p.relative_to(ROOT)) in _COPY_ON_WRITE:
            continue
        descriptors = _slot_descriptors(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "__dict__"
                and id(node) not in descriptors
                and not (isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"})
            ):
                offenders.append(f"{p.relative_to(ROOT)}:{node.lineno} .__dict__")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "__setattr__"
                and not (node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "self")
            ):
                offenders.append(f"{p.relative_to(ROOT)}:{node.lineno} __setattr__")
    assert offenders == []


@pytest.mark.parametrize("code", sorted(CODES))
def test_each_codes_payload_is_validated(code: str) -> None:
    entry = CODES[code]
    assert entry.meaning and "\n" not in entry.meaning
    with pytest.raises(pydantic.ValidationError):
        diagnostic(code, "m", not_a_field_of_any_payload=1)


def test_the_helper_builds_a_stamped_event_with_the_models_data() -> None:
    ev = diagnostic(
        "retry", "again", origin=EventOrigin(run_id="r", step=2), attempt=1, delay_s=0.5, error_type="X"
    )
    assert isinstance(ev, DiagnosticEvent) and (ev.run_id, ev.step) == ("r", 2)
    assert ev.data == {"attempt": 1, "delay_s": 0.5, "error_type": "X"}
    with pytest.raises(pydantic.ValidationError):
        diagnostic("retry", "again", attempt="first", delay_s=0.5, error_type="X")
    with pytest.raises(KeyError):
        diagnostic("no_such_code", "m")


def test_a_provider_package_registers_its_own_code() -> None:
    class Payload(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        region: str

    try:
        entry = register_code("toy_region_fallback", "the toy provider answered from another region", Payload)
        assert register_code("toy_region_fallback", "again", Payload) is entry
        with pytest.raises(ValueError, match="already registered"):
            register_code("toy_region_fallback", "other", diagnostics.Count)
        assert diagnostic("toy_region_fallback", "m", region="eu").data == {"region": "eu"}
    finally:
        CODES.pop("toy_region_fallback", None)


def test_dropped_items_are_aggregated_per_reason() -> None:
    diags: list[DiagnosticEvent] = []
    add_dropped(diags, reason="orphaned", provider="openai", detail="follower gone")
    add_dropped(diags, reason="orphaned", provider="openai", detail="follower gone again")
    add_dropped(diags, reason="malformed", provider="openai", detail="not an item", count=3)
    add_dropped(diags, reason="trailing", provider="openai", detail="none", count=0)
    assert [d.data for d in diags] == [
        {"count": 2, "reason": "orphaned", "provider": "openai"},
        {"count": 3, "reason": "malformed", "provider": "openai"},
    ]
    assert diags[0].message == "2 opaque reasoning item(s) not sent: follower gone"
