"""The committed locks are complete, hashed and current with pyproject; the drift report reads right.

CI and ``make test`` install only from the locks, so a dependency added to pyproject without
``make lock`` would be missing there (or a lock pin would break its declared range): this fails first.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from locks import drift

ROOT = Path(__file__).resolve().parents[1]
LOCKS = {
    "dev.txt": ("dev",),
    "mlflow.txt": ("dev", "mlflow"),
    "bench.txt": ("dev", "bench"),
}


def _requirements(extras: tuple[str, ...]) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = [*project["dependencies"], *(r for e in extras for r in project["optional-dependencies"][e])]
    tools = (ROOT / "locks" / "tools.in").read_text(encoding="utf-8").splitlines()
    return [Requirement(r) for r in [*reqs, *tools] if r.strip() and not r.startswith("#")]


@pytest.mark.parametrize("name", sorted(LOCKS))
def test_every_declared_requirement_is_pinned_within_its_range(name: str) -> None:
    pins = drift.locked(ROOT / "locks" / name)
    for req in _requirements(LOCKS[name]):
        key = drift.norm(req.name)
        assert key in pins, f"{req.name} is declared but not in locks/{name}: run `make lock`"
        assert req.specifier.contains(pins[key], prereleases=True), f"{key}=={pins[key]} is not {req}"


@pytest.mark.parametrize("name", [*sorted(LOCKS), "phoenix.txt"])
def test_every_pin_carries_hashes(name: str) -> None:
    text = (ROOT / "locks" / name).read_text(encoding="utf-8")
    blocks = [b for b in text.split("\n") if drift._PIN.match(b)]
    assert len(blocks) == len(drift.locked(ROOT / "locks" / name)) > 10
    assert text.count("==") == len(blocks)
    for block in text.split("\n"):
        if drift._PIN.match(block):
            assert block.endswith("\\"), f"{block}: no --hash lines follow"


def test_the_sdks_agree_across_the_locks() -> None:
    """The MLflow and bench venvs run the same adapters: the same SDK and transport versions."""
    dev = drift.locked(ROOT / "locks" / "dev.txt")
    for name in ("mlflow.txt", "bench.txt"):
        other = drift.locked(ROOT / "locks" / name)
        for sdk in ("openai", "anthropic", "google-genai", "httpx2", "pydantic", "uv"):
            assert other[sdk] == dev[sdk], (name, sdk)


def test_moved_lists_changes_additions_and_removals() -> None:
    old = {"openai": "3.57.0", "anthropic": "2.16.0", "gone": "1"}
    new = {"openai": "3.63.0", "anthropic": "2.16.0", "fresh": "2"}
    assert drift.moved(old, new) == ["  openai 3.57.0 -> 3.63.0", "  fresh (new) 2", "  gone 1 -> (gone)"]


def test_junit_counts_failures_and_reads_schema_drift(tmp_path: Path) -> None:
    xml = tmp_path / "r.xml"
    xml.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.a" name="ok"/>'
        '<testcase classname="tests.a" name="bad"><failure message="x"/></testcase>'
        '<testcase classname="tests.b" name="skip"><skipped/></testcase>'
        '<testcase classname="tests.c" name="schema"><properties>'
        '<property name="schema_drift" value="request schemas changed (openai 1 -> 2): 1 of 9 lines"/>'
        "</properties></testcase></testsuite></testsuites>",
        encoding="utf-8",
    )
    counts, broke, schema = drift.junit([xml, tmp_path / "missing.xml"])
    assert counts == {"tests": 4, "failures": 1, "errors": 0, "skipped": 1}
    missing = f"{tmp_path / 'missing.xml'}: no report (the test run did not finish)"
    assert broke == ["  tests.a::bad (failure)", missing]
    assert schema == ["request schemas changed (openai 1 -> 2): 1 of 9 lines"]
