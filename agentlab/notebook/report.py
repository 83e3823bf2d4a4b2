"""``python -m agentlab demo``: run the notebooks headless on the simulated providers, write an HTML report.

Why a report and not just "run the notebooks": it is what a reader without Jupyter looks at, and it is
what the browser test checks. Each notebook is executed with nbclient (widget state stored, as
Jupyter would save it), written to ``<out>/<name>.ipynb``, exported to ``<out>/<name>.html``, and an
``index.html`` links them and shows their charts.

Offline by construction:

* The kernel's environment drops ``*_API_KEY`` and ``AGENTLAB_*_MODEL``, so the notebooks pick the
  simulated providers (:func:`agentlab.notebook.choose_models`).
* nbconvert's HTML loads the widget manager and require.js from CDNs by default, which are not
  reachable here. The report serves local copies from ``<out>/_static/``, taken from a cache
  directory (``AGENTLAB_CACHE_DIR``, default ``~/.cache/agentlab``). Filling the cache is an explicit
  install step, ``python -m agentlab.notebook.report --fetch-assets`` (``npm pack``; the npm registry
  is reachable), which ``.ci/run`` runs before the tests. ``build_report`` only reads the cache
  unless ``fetch_assets=True``; the CLI (``make demo``) passes it, so users get the widgets fetched
  on demand, while tests never touch the network. Without the assets the widgets are not rendered
  in the HTML (the static ``_repr_html_`` results and charts still are), and the report says so.
  Other CDN scripts (MathJax, mermaid) are removed: the notebooks use neither.

Reasoning text is not in the report unless ``keep_reasoning=True`` (``--keep-reasoning``): panels
send it to the page as custom messages only, which nbclient does not store (it stores synced state).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlab.records.atomic_file import copy_atomic, ensure_dir, write_atomic

__all__ = [
    "NOTEBOOKS",
    "Report",
    "build_report",
    "fetch_widget_assets",
    "install_widget_assets",
    "main",
    "widget_assets_cache",
    "widget_assets_cached",
]

NOTEBOOKS = ("01_quickstart", "02_compare_providers", "03_reasoning_costs")
"""The tutorial notebooks; the report runs every ``*.ipynb`` of the directory (these and any others)."""
# Exact versions with the registry's integrity hashes (what a package-lock.json would hold): the fetch
# resolves nothing, and a tarball that is not the one pinned is refused.
_NPM_PACKAGES = {
    "html-manager": (
        "@jupyter-widgets/html-manager@1.0.15",
        "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA==",
    ),
    "requirejs": (
        "requirejs@2.3.7",
        "sha512-DouTG8T1WanGok6Qjg2SXuCMzszOo0eHeH9hDZ5Y4x8Je+9JB38HdTLT4/VA8OaUhBa0JPVHJ0pyBkM1z+pDsw==",
    ),
}


def npm_integrity(tarball: Path) -> str:
    """The npm registry's ``dist.integrity`` form of a tarball: ``sha512-`` and the base64 digest."""
    return "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()


@dataclass
class Report:
    """What :func:`build_report` wrote."""

    index: Path
    notebooks: list[Path] = field(default_factory=list)
    html: list[Path] = field(default_factory=list)
    widgets_rendered: bool = False
    seconds: dict[str, float] = field(default_factory=dict)


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def _cache_dir() -> Path:
    return Path(os.environ.get("AGENTLAB_CACHE_DIR") or Path.home() / ".cache" / "agentlab")


def widget_assets_cache() -> Path:
    """Where :func:`install_widget_assets` puts the widget JS (``$AGENTLAB_CACHE_DIR/npm``)."""
    return _cache_dir() / "npm"


def _asset_files() -> dict[str, Path]:
    cache = widget_assets_cache()
    return {
        "html-manager": cache / "html-manager" / "package" / "dist" / "embed-amd.js",
        "requirejs": cache / "requirejs" / "package" / "require.js",
    }


def widget_assets_cached() -> bool:
    """True when the widget manager and require.js are in the cache (nothing to download)."""
    return all(f.exists() for f in _asset_files().values())


def install_widget_assets() -> Path:
    """Fetch the widget manager and require.js with ``npm pack`` into the cache; return the cache.

    The explicit install step (``python -m agentlab.notebook.report --fetch-assets``, run by
    ``.ci/run``). Packages already cached are not fetched again. Raises RuntimeError, saying why,
    when npm is missing or fails.
    """
    cache = widget_assets_cache()
    for name, (spec, integrity) in _NPM_PACKAGES.items():
        wanted = _asset_files()[name]
        if wanted.exists():
            continue
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(f"npm not found: cannot fetch {spec} into {cache}")
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            try:
                out = subprocess.run(
                    [npm, "pack", spec, "--silent", "--pack-destination", tmp],
                    capture_output=True,
                    text=True,
                    timeout=180,
                    check=True,
                )
            except subprocess.CalledProcessError as exc:
                raise RuntimeError(f"npm pack {spec} failed: {exc.stderr.strip()[-500:]}") from exc
            except (subprocess.SubprocessError, OSError) as exc:
                raise RuntimeError(f"npm pack {spec} failed: {exc}") from exc
            tgz = Path(tmp) / out.stdout.strip().splitlines()[-1]
            if npm_integrity(tgz) != integrity:
                raise RuntimeError(f"npm pack {spec}: the tarball is not the pinned one (integrity differs)")
            unpacked = Path(tmp) / "unpacked"
            _unpack(tgz, unpacked)
            dest = cache / name
            shutil.rmtree(dest, ignore_errors=True)
            unpacked.rename(dest)  # whole or not at all: an interrupted fetch leaves no half package
        if not wanted.exists():
            raise RuntimeError(f"{spec} has no {wanted.relative_to(cache / name)}")
    return cache


def _unpack(tgz: Path, into: Path) -> None:
    """The package's regular files, each through the atomic writer (tar's ``data`` filter rules)."""
    with tarfile.open(tgz) as tar:
        for member in tar.getmembers():
            safe = tarfile.data_filter(member, str(into))  # refuses absolute paths, "..", devices
            if not safe.isfile():
                continue  # directories are made as files need them; links are not needed
            got = tar.extractfile(member)
            if got is None:
                continue
            with got:
                data = got.read()
            dest = into / safe.name
            write_atomic(ensure_dir(dest.parent) / dest.name, data, mode=(safe.mode or 0o644) & 0o755)


def fetch_widget_assets(static_dir: Path, *, fetch: bool = False) -> tuple[str, str] | None:
    """Copy require.js and the html-manager bundle into ``static_dir``; return their relative URLs.

    Reads the cache only, unless ``fetch`` (then :func:`install_widget_assets` fills it first). None
    when the assets are not cached (or could not be fetched): the report then renders without live
    widget views.
    """
    if not widget_assets_cached():
        if not fetch:
            return None
        try:
            install_widget_assets()
        except RuntimeError as exc:
            print(f"warning: {exc}; widget views will not render in the report", file=sys.stderr)
            return None
    files = _asset_files()
    target = static_dir / "html-manager"
    shutil.rmtree(target, ignore_errors=True)
    source = files["html-manager"].parent
    for f in sorted(source.rglob("*")):
        if f.is_file() and not f.name.endswith(".map"):
            copy_atomic(f, ensure_dir(target / f.relative_to(source).parent) / f.name)
    copy_atomic(files["requirejs"], static_dir / "require.js")
    return "_static/require.js", "_static/html-manager/embed-amd.js"


def _kernel_env(keep_reasoning: bool) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not (k.endswith("_API_KEY") or (k.startswith("AGENTLAB_") and k.endswith("_MODEL")))
    }
    env["AGENTLAB_KEEP_REASONING"] = "1" if keep_reasoning else "0"
    env.pop("AGENTLAB_NO_WIDGETS", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_repo_root()), env.get("PYTHONPATH", "")) if p)
    return env


def _execute(src: Path, env: dict[str, str], timeout: int) -> Any:
    import nbformat
    from nbclient import NotebookClient
    from traitlets.config import Config

    nb = nbformat.read(src, as_version=4)
    with tempfile.TemporaryDirectory(prefix="agentlab-kernel-") as sockets:
        # Local IPC sockets: nothing listens on TCP (and the kernel has nothing to warn about).
        config = Config({"KernelManager": {"transport": "ipc", "ip": str(Path(sockets) / "k")}})
        client = NotebookClient(
            nb,
            config=config,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(src.parent)}},
            store_widget_state=True,
        )
        client.execute(env=env)
    return nb


_CDN_SCRIPT = re.compile(r"<script[^>]*\ssrc=\"https?://[^\"]*\"[^>]*>\s*</script>", re.IGNORECASE)


def _export_html(nb: Any, assets: tuple[str, str] | None) -> str:
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")  # type: ignore[no-untyped-call]
    if assets is not None:
        exporter.require_js_url, exporter.widget_renderer_url = assets
    body, _ = exporter.from_notebook_node(nb)
    body = _CDN_SCRIPT.sub("", body)
    if assets is None:  # no local widget manager: do not point the browser at a CDN either
        body = body.replace("document.addEventListener('DOMContentLoaded', addWidgetsRenderer);", "")
    return str(body)


def _images(nb: Any) -> list[str]:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            png = o.get("data", {}).get("image/png")
            if png:
                out.append(png if isinstance(png, str) else "".join(png))
    return out


def _title(nb: Any, name: str) -> str:
    return str(nb.metadata.get("title") or name)


def build_report(
    out_dir: str | Path = "out/report",
    *,
    notebooks_dir: str | Path | None = None,
    names: tuple[str, ...] | list[str] | None = None,
    keep_reasoning: bool = False,
    timeout: int = 180,
    fetch_assets: bool = False,
) -> Report:
    """Execute ``names`` (default: every notebook in the directory) on the simulated providers.

    The widget JS comes from the cache; ``fetch_assets=True`` (the CLI) fetches it with npm when it
    is missing. The default never touches the network (what tests use).
    """
    out = Path(out_dir).resolve()
    src_dir = Path(notebooks_dir) if notebooks_dir is not None else _repo_root() / "notebooks"
    out.mkdir(parents=True, exist_ok=True)
    static = out / "_static"
    static.mkdir(exist_ok=True)
    assets = fetch_widget_assets(static, fetch=fetch_assets)
    env = _kernel_env(keep_reasoning)
    report = Report(index=out / "index.html", widgets_rendered=assets is not None)
    sections = []
    import nbformat

    if names is None:
        names = sorted(p.stem for p in src_dir.glob("*.ipynb"))
    for name in names:
        t0 = time.perf_counter()
        nb = _execute(src_dir / f"{name}.ipynb", env, timeout)
        report.seconds[name] = time.perf_counter() - t0
        ipynb = out / f"{name}.ipynb"
        write_atomic(ipynb, nbformat.writes(nb))
        page = out / f"{name}.html"
        write_atomic(page, _export_html(nb, assets))
        report.notebooks.append(ipynb)
        report.html.append(page)
        imgs = "".join(
            f'<img alt="chart from {html.escape(name)}" src="data:image/png;base64,{png.strip()}" '
            'style="max-width:100%;max-height:560px;margin:6px 0;border:1px solid #ddd;display:block">'
            for png in _images(nb)
        )
        sections.append(
            f'<section class="notebook"><h2><a href="{html.escape(page.name)}">'
            f"{html.escape(_title(nb, name))}</a></h2><p>executed in {report.seconds[name]:.1f} s · "
            f"<a href='{html.escape(ipynb.name)}'>{html.escape(ipynb.name)}</a></p>"
            f"<div class='charts'>{imgs or '<em>no charts</em>'}</div></section>"
        )
    widgets_note = (
        "Widget views are rendered with a local copy of @jupyter-widgets/html-manager."
        if assets is not None
        else (
            "The widget manager could not be fetched with npm"
            if fetch_assets
            else "The widget manager is not cached (python -m agentlab.notebook.report --fetch-assets)"
        )
        + ": widget views are not rendered in these pages (results and charts are)."
    )
    keep_note = (
        "Reasoning text was kept (keep option on)."
        if keep_reasoning
        else "Reasoning text is not saved: panels were cleared at cell end."
    )
    write_atomic(
        report.index,
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>agentlab report</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
        "h2 a{text-decoration:none}</style></head><body><h1>agentlab report</h1>"
        "<p>Notebooks executed headless on the simulated providers "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). "
        f"{html.escape(widgets_note)} {html.escape(keep_note)}</p>{''.join(sections)}</body></html>",
    )
    return report


def main(argv: list[str] | None = None) -> int:
    """CLI: build the report and print the path of its index page."""
    p = argparse.ArgumentParser(
        prog="agentlab demo", description=__doc__.splitlines()[0] if __doc__ else None
    )
    p.add_argument("--out", default="out/report", help="output directory (default: out/report)")
    p.add_argument(
        "--notebooks", default=None, help="directory of the notebooks (default: the repo's notebooks/)"
    )
    p.add_argument("--only", nargs="*", default=None, help="notebook names to run (default: all)")
    p.add_argument("--keep-reasoning", action="store_true", help="keep reasoning text in the saved panels")
    p.add_argument(
        "--fetch-assets",
        action="store_true",
        help="only fetch the widget manager and require.js with npm into the cache "
        "($AGENTLAB_CACHE_DIR/npm, default ~/.cache/agentlab/npm), print the cache and exit",
    )
    args = p.parse_args(argv)
    if args.fetch_assets:
        try:
            print(install_widget_assets())
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        return 0
    names = tuple(args.only) if args.only else None
    t0 = time.perf_counter()
    report = build_report(
        args.out,
        notebooks_dir=args.notebooks,
        names=names,
        keep_reasoning=args.keep_reasoning,
        fetch_assets=True,
    )
    for name, secs in report.seconds.items():
        print(f"  executed {name}.ipynb in {secs:.1f} s", file=sys.stderr)
    print(f"report written in {time.perf_counter() - t0:.1f} s:", file=sys.stderr)
    print(report.index)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
