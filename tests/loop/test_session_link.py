"""``Session`` and ``Run`` meet only through the public ``SessionLink`` hooks.

Checked two ways: by syntax tree (neither module reaches into the other's private members), and by
behaviour (a link that is not a ``Session`` at all, written against the protocol alone, drives a run:
so the protocol really is the whole contract).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentlab as al
from agentlab.loop.runner import Run, RunStart, SessionLink
from agentlab.neutral.events import DiagnosticEvent
from agentlab.neutral.items import PortableItem, UserItem
from agentlab.testing import ScriptedAdapter, Step

LOOP = Path(al.__file__).parent / "loop"
M = "openai:sim-reasoner"


def _private(node: ast.Attribute) -> bool:
    return node.attr.startswith("_") and not (node.attr.startswith("__") and node.attr.endswith("__"))


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _session_expr(node: ast.expr) -> bool:
    """``session``/``s``-like names and ``<x>.session``: what runner.py calls the session it was given."""
    if isinstance(node, ast.Name):
        return "session" in node.id.lower()
    return isinstance(node, ast.Attribute) and node.attr == "session"


def test_session_module_touches_no_private_member_of_a_run() -> None:
    """session.py reads runs through public attributes only: no ``run._x``, no private of anything else."""
    tree = ast.parse((LOOP / "session.py").read_text(encoding="utf-8"))
    bad = [
        f"line {n.lineno}: {ast.unparse(n)}"
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and _private(n) and not _is_self(n.value)
    ]
    assert not bad, bad


def test_runner_touches_no_private_member_of_its_session() -> None:
    tree = ast.parse((LOOP / "runner.py").read_text(encoding="utf-8"))
    bad = [
        f"line {n.lineno}: {ast.unparse(n)}"
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and _private(n) and _session_expr(n.value)
    ]
    assert not bad, bad
    imported = {
        alias.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "agentlab.loop.session"
        for alias in n.names
    }
    assert imported <= {"Session"}, "runner.py may name Session for typing only, nothing else of it"


def test_session_satisfies_the_protocol() -> None:
    assert isinstance(al.Session(), SessionLink)
    with pytest.raises(al.ConfigError, match="session"):
        Run(M, "hi", session=object())  # type: ignore[arg-type]


class _Link:
    """A history source/sink written from the protocol alone (no Session code)."""

    def __init__(self, history: tuple[PortableItem, ...]) -> None:
        self.system: str | None = "Be brief."
        self.history = history
        self.calls: list[str] = []

    def begin_run(self, run: Run) -> RunStart:
        self.calls.append("begin")
        note = DiagnosticEvent(run_id=run.run_id, step=0, code="continuation_not_carried", message="note")
        return RunStart(history=(*self.history, UserItem(text="handed over at start")), notices=(note,))

    def abandon_run(self, run: Run) -> None:
        self.calls.append("abandon")

    def end_run(self, run: Run, held: int) -> None:
        assert run.result is not None
        self.calls.append(f"end {run.result.status} held={held}")
        self.history = run.checkpoint.history


async def test_a_link_of_its_own_drives_a_run_through_the_hooks() -> None:
    link = _Link((UserItem(text="earlier"),))
    assert isinstance(link, SessionLink)
    ad = ScriptedAdapter([Step(text="done")])
    r = await Run(M, "now", adapter=ad, session=link).arun()
    assert r.status == "completed" and link.calls == ["begin", "end completed held=0"]
    # The run continued from the history handed over at the start, not the one it was built from.
    texts = [getattr(i, "text", None) for i in ad.requests[0].items]
    assert texts == ["Be brief.", "earlier", "handed over at start", "now"]
    assert [e.code for e in r.events if isinstance(e, DiagnosticEvent)] == ["continuation_not_carried"]
    assert link.history == r.history


async def test_a_start_that_cannot_be_composed_gives_the_claim_back() -> None:
    link = _Link((UserItem(text="earlier"),))
    link.begin_run = lambda run: RunStart(history=(al.SystemItem(text="another prompt"),))  # type: ignore[method-assign]
    with pytest.raises(al.UserError, match="different system prompt"):
        await Run(M, "now", adapter=ScriptedAdapter([Step(text="x")]), session=link).arun()
    assert link.calls == ["abandon"]
