"""Re-execute the shipped notebooks from the current code, and find saved outputs that went stale.

Why: a notebook's saved outputs are what GitHub, the docs site and a reader without a kernel show,
and they are only as current as the last time someone executed it. A temp folder of the machine that
built it, a widget's Python repr where a view should be (``HBox(children=(IntProgress(…``) or a chart
drawn by an older formatter are all things a reader sees and cannot trust. ::

    python -m agentlab.notebook.refresh notebooks/          # every *.ipynb there, in place
    python -m agentlab.notebook.refresh notebooks/01_quickstart.ipynb --check   # scan only

Each notebook runs in a fresh kernel on the simulated providers (no provider keys or model variables
reach it: the same environment as ``python -m agentlab report``), with its widget state stored as
JupyterLab would, and is written back whole (a temporary file, then an atomic rename), never half.
It is then scanned (:func:`stale_outputs`); ``tests/notebook/test_notebooks_fresh.py`` runs the same
scan on every committed notebook.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["STALE", "main", "refresh", "stale_outputs"]

STALE: dict[str, re.Pattern[str]] = {
    # A folder of the machine that executed the notebook (not inside a URL: "host/home/" is preceded by
    # a word character).
    "machine path": re.compile(r"(?<![\w.:/~-])/(?:tmp|home|root|work|Users|private/var)/[^\s\"'<>]*"),
    # A widget's Python repr, saved where its static representation should be.
    "widget repr": re.compile(r"\b(?:HBox|VBox|IntProgress|FloatProgress|Accordion)\("),
    # A money tick of the old format: a round amount padded past 4 decimals ("$0.008000", "$0.01000").
    "old money format": re.compile(r"\$\d[\d,]*\.(?=\d{5,}(?!\d))\d*00(?!\d)"),
}
"""What a saved output must not hold, by name (see :func:`stale_outputs`)."""


def _texts(value: Any) -> Iterator[str]:
    """Every string inside a saved output (mime bundles hold strings, lists of lines or JSON)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            yield "".join(value)
        else:
            for v in value:
                yield from _texts(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and k.startswith("image/") and k != "image/svg+xml":
                continue  # base64 pixels: no text to read
            yield from _texts(v)


def _chart(output: Any) -> bool:
    """Whether a saved output is a chart (an image; its text/plain is the figure's own text)."""
    data = output.get("data", {}) if isinstance(output, dict) else {}
    return any(isinstance(k, str) and k.startswith("image/") for k in data)


def _scan(where: str, value: Any, checks: Sequence[str]) -> Iterator[str]:
    for text in _texts(value):
        for what in checks:
            for m in STALE[what].finditer(text):
                yield f"{where}: {what}: {m.group(0)[:80]}"


def stale_outputs(nb: dict[str, Any]) -> list[str]:
    """``cell N: <what>: <the text>`` for each saved output (and saved widget state) that went stale.

    Scanned: every code cell's outputs (streams, every text-bearing mime type, errors) and the
    notebook's saved widget state, for machine paths and widget reprs; charts' text (an SVG chart's
    labels and ticks, a figure's text/plain) for the old money format too. Tables are not held to
    the tick rule: their amounts are exact (``$0.002700`` is a price, not a padded tick). A chart
    saved as PNG carries its ticks as pixels only: those are as current as the chart code that
    drew them, which a refresh re-runs.
    """
    found: list[str] = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        for out in cell.get("outputs", []):
            checks = [*_EVERYWHERE, "old money format"] if _chart(out) else _EVERYWHERE
            found += _scan(f"cell {i}", out, checks)
    found += _scan("widget state", nb.get("metadata", {}).get("widgets", {}), _EVERYWHERE)
    return found


_EVERYWHERE = ("machine path", "widget repr")


def _write_whole(path: Path, nb: Any) -> None:
    """Through the atomic writer: a full disk or a crash leaves the old file intact (``StorageError``)."""
    import nbformat

    from agentlab.records.atomic_file import write_atomic

    write_atomic(path, nbformat.writes(nb) + "\n")


def refresh(path: Path, *, timeout: int = 600) -> list[str]:
    """Execute ``path`` in a fresh kernel on the simulated providers, write it back; its stale outputs."""
    from agentlab.notebook.report import _execute, _kernel_env

    nb = _execute(path, _kernel_env(keep_reasoning=False), timeout)
    _write_whole(path, nb)
    return stale_outputs(json.loads(path.read_text(encoding="utf-8")))


def _notebooks(targets: Sequence[str]) -> list[Path]:
    out: list[Path] = []
    for t in targets:
        p = Path(t)
        out += sorted(p.glob("*.ipynb")) if p.is_dir() else [p]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: refresh (or ``--check``) notebooks; exit 1 when any output is stale."""
    ap = argparse.ArgumentParser(
        prog="python -m agentlab.notebook.refresh", description=__doc__.split("\n")[0]
    )
    ap.add_argument("targets", nargs="+", help="notebooks, or folders of notebooks")
    ap.add_argument("--check", action="store_true", help="scan the saved outputs only, execute nothing")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    args = ap.parse_args(argv)
    missing = [t for t in args.targets if not Path(t).exists()]
    paths = _notebooks(args.targets)
    if missing or not paths:
        print(f"no notebooks at {' '.join(missing or args.targets)}", file=sys.stderr)
        return 2
    bad = 0
    for p in paths:
        if args.check:
            problems = stale_outputs(json.loads(p.read_text(encoding="utf-8")))
        else:
            print(f"executing {p} ...", flush=True)
            problems = refresh(p, timeout=args.timeout)
        bad += bool(problems)
        for line in problems:
            print(f"{p}: {line}")
    print(f"{len(paths) - bad}/{len(paths)} notebooks current")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
