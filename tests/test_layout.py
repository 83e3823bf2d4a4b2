"""tests/ mirrors agentlab/: one folder per package room, plus the few that cut across rooms."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent
PACKAGE = ROOT.parent / "agentlab"

#: Folders that test the whole rather than one room, each with why it stands apart.
ACROSS = {
    "adversarial": "attacks on every sink at once (secrets, canaries, full disks, hostile wires)",
    "reliability": "interrupts, full disks and error texts across the run, sweep and export paths",
    "docs": "every example of the README and the docs site, and the built site",
    "providers": "a toy provider package added from outside, as a third party would",
    "support": "shared test helpers (no tests)",
}


def _rooms() -> set[str]:
    return {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def test_every_package_room_has_its_tests_folder() -> None:
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert _rooms(), PACKAGE
    assert sorted(_rooms() - folders) == []


def test_every_tests_folder_is_a_room_or_says_why_it_cuts_across() -> None:
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert sorted(folders - _rooms() - set(ACROSS)) == []
