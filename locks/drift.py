"""The drift report of ``make test-latest``: what moved against the lock, what broke, what to run next.

Why a report and not a red build: the lock keeps ``make test`` and CI on versions that passed; the
newest releases pyproject allows are checked on purpose, on a schedule or before ``make lock``, and
what changed must be readable in a few lines: the packages that moved (old -> new), the tests that
broke with them, a request-schema change the SDKs brought, and the commands that follow.

Usage: ``python locks/drift.py --lock locks/dev.txt --python .venv-latest/bin/python JUNIT.xml ...``
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

# The project itself and the venv's own installer are never in a lock.
_NOT_LOCKED = frozenset({"agentlab", "pip"})
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
_VERSIONS = (
    "import importlib.metadata as m, json\n"
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
)


def norm(name: str) -> str:
    """PEP 503 normalised project name (lock files and metadata spell names differently)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(lock: Path) -> dict[str, str]:
    """``name -> version`` pinned in a ``uv pip compile`` lock."""
    pins = (_PIN.match(line) for line in lock.read_text(encoding="utf-8").splitlines())
    return {norm(m.group(1)): m.group(2) for m in pins if m}


def installed(python: str) -> dict[str, str]:
    """``name -> version`` installed in the environment of ``python``."""
    out = subprocess.run([python, "-c", _VERSIONS], capture_output=True, text=True, check=True).stdout
    return {norm(k): v for k, v in json.loads(out).items() if norm(k) not in _NOT_LOCKED}


def moved(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """One line per package whose version differs, was added or is gone."""
    lines = [f"  {n} {old[n]} -> {new[n]}" for n in sorted(old.keys() & new.keys()) if old[n] != new[n]]
    lines += [f"  {n} (new) {new[n]}" for n in sorted(new.keys() - old.keys())]
    lines += [f"  {n} {old[n]} -> (gone)" for n in sorted(old.keys() - new.keys())]
    return lines


def junit(paths: list[Path]) -> tuple[dict[str, int], list[str], list[str]]:
    """Counts, the failed or errored tests (``file::name``), and recorded ``schema_drift`` texts."""
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    broke: list[str] = []
    drift: list[str] = []
    for path in paths:
        if not path.is_file():
            broke.append(f"{path}: no report (the test run did not finish)")
            continue
        for case in ET.parse(path).getroot().iter("testcase"):
            counts["tests"] += 1
            for kind, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
                if case.find(kind) is not None:
                    counts[key] += 1
                    if kind != "skipped":
                        broke.append(f"  {case.get('classname', '')}::{case.get('name', '')} ({kind})")
            props = case.iter("property")
            drift += [p.get("value", "") for p in props if p.get("name") == "schema_drift" and p.get("value")]
    return counts, broke, drift


def report(lock: Path, python: str, reports: list[Path]) -> tuple[str, bool]:
    """The report text, and whether anything moved or broke."""
    changes = moved(locked(lock), installed(python))
    counts, broke, drift = junit(reports)
    lines = [f"drift report: newest releases pyproject allows, against {lock}"]
    lines.append(f"moved ({len(changes)}):" if changes else "moved: nothing (the lock is current)")
    lines += changes
    ran = counts["tests"] - counts["skipped"]
    failed, errors, skipped = counts["failures"], counts["errors"], counts["skipped"]
    lines.append(f"tests: {ran} ran, {failed} failed, {errors} errors, {skipped} skipped")
    lines += ["broke:", *broke] if broke else ["broke: nothing"]
    for text in drift:
        lines += [text, "  regenerate after `make lock`: .venv/bin/python -m agentlab.sim schemas --write"]
    if changes and not broke:
        lines.append("next: `make lock` takes these versions; then `make test`")
    elif broke:
        lines.append("next: fix what broke (or bound the package in pyproject, naming the break), make lock")
    return "\n".join(lines), bool(changes or broke or drift)


def main(argv: list[str] | None = None) -> int:
    """Print the report; exit 0 (drift is information, never a failed build)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lock", type=Path, required=True)
    ap.add_argument("--python", required=True, help="the interpreter of the environment to compare")
    ap.add_argument("reports", nargs="*", type=Path, help="pytest --junitxml files of the run")
    args = ap.parse_args(argv)
    text, _ = report(args.lock, args.python, args.reports)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
