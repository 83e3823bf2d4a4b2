"""How long README's two commands take to set up on a fresh clone: cold (empty caches) and warm.

Not a section of ``python -m bench``: it clones the repository, builds its venvs from the locks and
downloads packages, so it is run on its own, on a quiet machine:
``python bench/setup_time.py [--out setup.json]``. Cold: a fresh clone, an empty uv cache and no pip
cache. Warm: the same clone with its venvs removed, the uv cache kept (what a second checkout or a
CI machine with a cache sees). ``make demo`` is timed whole (install + the demo run), then the
install step alone (on a cache the first steps warmed); ``make test``'s set-up adds ``.venv-mlflow``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return round(time.perf_counter() - start, 1)


def measure(work: Path) -> dict[str, float]:
    """Seconds per step, cold then warm, in a fresh clone under ``work``.

    Cold: ``make demo`` first, on an empty uv cache (its .venv install downloads everything), then
    ``.venv-mlflow`` (which still downloads what dev does not have). Warm: both again with the venvs
    removed and the cache kept.
    """
    clone = work / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {**os.environ, "UV_CACHE_DIR": str(work / "uv-cache"), "PIP_NO_CACHE_DIR": "1"}
    out: dict[str, float] = {}
    for phase in ("cold", "warm"):
        for venv in (".venv", ".venv-mlflow"):
            shutil.rmtree(clone / venv, ignore_errors=True)
        demo = f"{phase}: make demo (.venv from locks/dev.txt + the demo run)"
        out[demo] = _timed(["make", "demo"], clone, env)
        out[f"{phase}: .venv-mlflow from locks/mlflow.txt (make test's second venv)"] = _timed(
            ["make", ".venv-mlflow/.installed"], clone, env
        )
        shutil.rmtree(clone / ".venv")
        out[f"{phase}: .venv from locks/dev.txt alone"] = _timed(["make", ".venv/.installed"], clone, env)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="also write the figures here as JSON")
    args = ap.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="agentlab-setup-") as tmp:
        figures = measure(Path(tmp))
    after = os.getloadavg()
    print("| step | seconds |\n| --- | --- |")
    for name, secs in figures.items():
        print(f"| {name} | {secs:.1f} |")
    print(f"\nload average before / after: {load[0]:.2f} / {after[0]:.2f}")
    if args.out:
        doc = {"seconds": figures, "load": [load, after]}
        args.out.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
