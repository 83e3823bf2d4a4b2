"""``python -m bench [--quick] [--out PATH] [--only NAME ...]``: run every section, print the table."""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from . import MODULES, SECTIONS

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "bench" / "results.json"
PACKAGES = (
    "agentlab",
    "openai",
    "anthropic",
    "google-genai",
    "httpx2",
    "pydantic",
    "pandas",
    "ipywidgets",
    "litellm",
    "pydantic-ai-slim",
    "inspect-ai",
)


def _version(pkg: str) -> str | None:
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return None


def _loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def run_section(name: str, quick: bool, out: Path) -> None:
    """In this (fresh) interpreter: run one section and write its JSON to ``out``."""
    import warnings

    # SDK deprecation notices (model end-of-life dates, thinking modes) are not what is measured here.
    warnings.simplefilter("ignore", DeprecationWarning)
    mod = importlib.import_module(f"bench.{MODULES.get(name, name)}")
    t0 = time.perf_counter()
    try:
        sec = mod.run(quick)
        data = sec.as_json()
    except Exception as e:  # a broken section is reported, the others still run
        data = {
            "name": name,
            "title": name,
            "figures": {},
            "targets": [],
            "rows": [],
            "notes": [],
            "skipped": None,
            "error": f"{type(e).__name__}: {e}",
            "traceback": traceback.format_exc(),
        }
    data["seconds"] = time.perf_counter() - t0
    out.write_text(json.dumps(data, indent=1, default=str, allow_nan=True))


def _spawn(name: str, quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.json"
        cmd = [sys.executable, "-m", "bench", "--section", name, "--section-out", str(path)]
        if quick:
            cmd.append("--quick")
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if path.exists():
            data: dict[str, Any] = json.loads(path.read_text())
        else:
            data = {
                "name": name,
                "title": name,
                "figures": {},
                "targets": [],
                "rows": [],
                "notes": [],
                "skipped": None,
                "error": f"section process exited {proc.returncode}",
                "traceback": proc.stderr[-4000:],
            }
        return data


def _run_sections(names: list[str], quick: bool, jobs: int) -> list[dict[str, Any]]:
    """Each section in its own interpreter, ``jobs`` at a time; the results in the order of ``names``.

    Why ``jobs``: the CI smoke (``--quick``, tests/test_bench_smoke.py) only checks that every section
    runs and reports, so it may use every core; a measurement runs one section at a time (main refuses
    ``--jobs`` without ``--quick``).
    """

    def one(name: str) -> dict[str, Any]:
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        sec = _spawn(name, quick)
        err = f" ERROR {sec['error']}" if sec.get("error") else ""
        print(f"[bench] {name}: {sec.get('seconds', 0):.1f} s{err}", file=sys.stderr, flush=True)
        return sec

    if jobs <= 1:
        return [one(name) for name in names]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, names))


def _fmt(v: Any, unit: str) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        if unit == "x":
            return f"{v:.2f}x"
        return f"{v:,.2f} {unit}".strip() if abs(v) < 100 else f"{v:,.0f} {unit}".strip()
    return f"{v} {unit}".strip()


def table(results: dict[str, Any]) -> str:
    lines = ["| section | measurement | figure |", "|---|---|---|"]
    for sec in results["sections"]:
        title = sec["title"]
        if sec.get("error"):
            lines.append(f"| {title} | **error** | {sec['error']} |")
            continue
        if sec.get("skipped"):
            lines.append(f"| {title} | skipped | {sec['skipped']} |")
        for label, value in sec["rows"]:
            lines.append(f"| {title} | {label} | {value} |")
            title = ""
    lines += ["", "| target | measured | limit | met |", "|---|---|---|---|"]
    for sec in results["sections"]:
        for t in sec["targets"]:
            met = {True: "yes", False: "**NO**", None: "n/a"}[t["met"]]
            limit = f"{t['op']} {_fmt(t['limit'], t['unit'])}"
            lines.append(f"| {t['name']} | {_fmt(t['value'], t['unit'])} | {limit} | {met} |")
    for sec in results["sections"]:
        for note in sec.get("notes", []):
            lines.append(f"\n_{sec['name']}: {note}_")
        if sec.get("measured"):
            lines.append(f"\n_{sec['name']}: {_measured(sec['measured'])}_")
    return "\n".join(lines)


def _measured(m: dict[str, Any]) -> str:
    """The stamp of a section measured on its own and merged into a stored run (``--merge``)."""
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)
    return (
        f"measured separately {m['started_utc']} with `{m['command']}`; load average before/after "
        f"{m['loadavg_before']} / {m['loadavg_after']}; {versions}"
    )


def profile(name: str, quick: bool) -> int:
    """Where a section's time goes: pyinstrument's call tree of one run of it, in this process."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("pyinstrument is not installed: .venv/bin/pip install -e '.[bench]'", file=sys.stderr)
        return 2
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    mod = importlib.import_module(f"bench.{MODULES.get(name, name)}")
    prof = Profiler(interval=0.0005, async_mode="disabled")
    with prof:
        mod.run(quick)
    print(prof.output_text(unicode=True, color=False, show_all=False))
    return 0


_PROTOCOLS = (
    ("adapter_overhead", "openai", "OpenAI Responses"),
    ("adapter_overhead", "xai", "Responses, xAI dialect"),
    ("adapter_overhead", "anthropic", "Anthropic Messages"),
    ("adapter_overhead", "gemini", "Gemini"),
    ("adapter_chat", None, "Chat Completions (DeepSeek dialect)"),
    ("bedrock", None, "Bedrock Converse (binary event stream)"),
)


def _socket_entry(sec: dict[str, Any], provider: str | None) -> dict[str, Any]:
    """A protocol's stored socket measurement in a section (``{}`` when it has none)."""
    socket = ((sec.get("figures") or {}).get("deliveries") or {}).get("socket") or {}
    m = socket.get(provider) if provider is not None else socket
    return m or {}


def _socket_figures(sec: dict[str, Any], provider: str | None) -> dict[str, float] | None:
    """A protocol's socket figures (µs per event) in a stored section; ``None`` when it has none."""
    if sec["name"] == "bedrock":
        us = (sec.get("figures") or {}).get("us_per_event")
        return dict(us) if us else None
    m = _socket_entry(sec, provider)
    return dict(m["us_per_event"]) if "us_per_event" in m else None


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def _paired(sec: dict[str, Any], provider: str | None, name: str) -> dict[str, float] | None:
    """A stored paired ratio (``bench.adapters.paired_ratios``): median and quartiles, or ``None``."""
    got = _socket_entry(sec, provider).get("paired_ratios", {}).get(name)
    return dict(got) if got else None


def _ratio_cell(paired: dict[str, float] | None, a: float | None, b: float | None) -> str:
    """The paired ratio's median with its quartiles where stored; else the ratio of the medians."""
    if paired is None:
        return _ratio(a, b)
    return f"{paired['median']:.2f}x ({paired['q1']:.2f}-{paired['q3']:.2f})"


def protocol_table(results: dict[str, Any]) -> str:
    """Issue 34's view: every protocol's floor, adapter and run step per event, one row each.

    Read from the stored sections (socket delivery, one chunk per event): the floor the target divides
    by is the sync ``httpx2`` line loop + ``json.loads`` on SSE protocols and botocore's event-stream
    decoder + ``json.loads`` on Bedrock; the ``http.client`` floor is shown beside it.
    """
    named = {sec["name"]: sec for sec in results["sections"] if not sec.get("error")}
    rows = [
        "| protocol | target floor | http.client floor | adapter | adapter / target floor | run step"
        " | run step / adapter |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, provider, label in _PROTOCOLS:
        us = _socket_figures(named[name], provider) if name in named else None
        if us is None:
            continue
        bedrock = name == "bedrock"
        target = us.get("floor") if bedrock else us.get("floor_httpx_sync")
        plain = None if bedrock else us.get("floor")
        adapter, run = us.get("adapter"), us.get("run_step")
        cells = [f"{v:.1f} µs" if v else "n/a" for v in (target, plain, adapter)]
        run_cell = f"{run:.1f} µs" if run else "n/a"
        sec = named[name]
        to_floor = _ratio_cell(_paired(sec, provider, "adapter/floor_httpx_sync"), adapter, target)
        to_adapter = _ratio_cell(_paired(sec, provider, "run_step/adapter"), run, adapter)
        rows.append(
            f"| {label} | {cells[0]} | {cells[1]} | {cells[2]} | {to_floor} | {run_cell} | {to_adapter} |"
        )
    note = (
        "_Target floor: sync httpx2 `iter_lines` + `json.loads` per event (SSE), botocore"
        " `EventStreamBuffer` + `json.loads` per event (Bedrock); targets: adapter / target floor <= 1.0x,"
        " run step / adapter <= 1.1x. Socket delivery, one HTTP chunk per event; µs: medians over rounds;"
        " ratios: the median over pairs of neighbouring runs of the two consumers (run back to back,"
        " six times a round, each first as often as second), with its quartiles (a ratio of medians where"
        " only medians are stored, as for Bedrock)." + _rows_measured(named) + "_"
    )
    return "\n".join(rows) + "\n\n" + note


def _rows_measured(named: dict[str, Any]) -> str:
    """When the rows' sections were measured, if apart from the stored run (``--merge``)."""
    stamps: dict[str, list[str]] = {}
    for name in dict.fromkeys(name for name, _, _ in _PROTOCOLS):  # a section has several rows
        m = named.get(name, {}).get("measured")
        if m is not None:
            stamps.setdefault(m["started_utc"], []).append(name)
    out = []
    for when, names in stamps.items():
        m = next(named[n]["measured"] for n in names)
        out.append(
            f" Sections {', '.join(names)} measured {when} (`{m['command']}`), load average before/after"
            f" {m['loadavg_before']} / {m['loadavg_after']}."
        )
    return "".join(out)


def stamped_table(results: dict[str, Any]) -> str:
    """The table with when, where and on what it was measured (the docs' Performance page shows it).

    The docs build calls this on ``bench/results.json`` (``docs/_hooks.py``), so the published figures
    are always the stored measurement, never typed in.
    """
    m = results["machine"]
    targets = [t for sec in results["sections"] for t in sec["targets"]]
    met = sum(1 for t in targets if t["met"])
    stamp = (
        f"**{met} of {len(targets)} targets met.** "
        f"Measured {results['started_utc']} with `{results['command']}` on {m['cpus']} cores, Python "
        f"{m['python']}; load average before/after {m['loadavg_before']} / {m['loadavg_after']}. Versions: "
        + ", ".join(f"{k} {v}" for k, v in results["versions"].items() if v)
        + "."
    )
    return f"{stamp}\n\n{protocol_table(results)}\n\n{table(results)}\n"


def merge(
    out: Path,
    sections: list[dict[str, Any]],
    a: argparse.Namespace,
    started: dt.datetime,
    load_before: list[float],
) -> int:
    """Replace (or add) ``sections`` in the stored run at ``out``, each with its own stamp.

    Why: a section added later (or re-measured) must not re-run every other section, nor be shown
    under the stored run's date and load; its ``measured`` stamp is printed under the table.
    """
    if not a.only:
        print("--merge needs --only SECTION ...", file=sys.stderr)
        return 2
    results: dict[str, Any] = json.loads(out.read_text())
    stamp = {
        "command": f"python -m bench --only {' '.join(a.only)} --merge" + (" --quick" if a.quick else ""),
        "started_utc": started.isoformat(timespec="seconds"),
        "loadavg_before": load_before,
        "loadavg_after": _loadavg(),
        "cpus": os.cpu_count(),
        "versions": {pkg: _version(pkg) for pkg in PACKAGES},
    }
    new = {s["name"]: {**s, "measured": stamp} for s in sections}
    kept = [new.pop(s["name"], s) for s in results["sections"]]
    results["sections"] = kept + list(new.values())
    out.write_text(json.dumps(results, indent=1, default=str))
    print(table({**results, "sections": sections}))
    print(f"\n(merged into {out})")
    return 1 if any(s.get("error") for s in sections) else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    p.add_argument(
        "--quick", action="store_true", help="CI smoke: small sizes, few rounds (figures not meaningful)"
    )
    p.add_argument(
        "--out", type=Path, default=None, help=f"JSON output (default {DEFAULT_OUT.relative_to(ROOT)})"
    )
    p.add_argument("--only", nargs="+", choices=SECTIONS, help="run only these sections")
    p.add_argument(
        "--table", type=Path, metavar="JSON", help="print the table of a stored results file and exit"
    )
    p.add_argument(
        "--profile",
        choices=SECTIONS,
        metavar="SECTION",
        help="run one section under pyinstrument (bench extra) and print its call tree, no table",
    )
    p.add_argument(
        "--merge",
        action="store_true",
        help="with --only: put these sections into the stored --out file (each stamped with when and "
        "how it was measured), keeping the others",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="with --quick: run N sections at a time (the CI smoke on every core; default 1)",
    )
    p.add_argument("--section", choices=SECTIONS, help=argparse.SUPPRESS)
    p.add_argument("--section-out", type=Path, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.section:
        run_section(a.section, a.quick, a.section_out)
        return 0
    if a.profile:
        return profile(a.profile, a.quick)
    if a.table:
        results = json.loads(a.table.read_text())
        print(stamped_table(results))
        return 0
    out = a.out or DEFAULT_OUT
    started = dt.datetime.now(dt.UTC)
    load_before = _loadavg()
    if a.jobs > 1 and not a.quick:
        p.error("--jobs runs sections at the same time: only with --quick (its figures are not meaningful)")
    sections = _run_sections(list(a.only or SECTIONS), a.quick, a.jobs)
    if a.merge:
        return merge(out, sections, a, started, load_before)
    results = {
        "command": "python -m bench" + (" --quick" if a.quick else ""),
        "quick": a.quick,
        "started_utc": started.isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "loadavg_before": load_before,
            "loadavg_after": _loadavg(),
        },
        "versions": {pkg: _version(pkg) for pkg in PACKAGES},
        "sections": sections,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, default=str))
    print(table(results))
    after = results["machine"]["loadavg_after"]
    print(f"\n(figures written to {out}; load average before/after: {load_before} / {after})")
    return 1 if any(s.get("error") for s in sections) else 0


if __name__ == "__main__":
    raise SystemExit(main())
