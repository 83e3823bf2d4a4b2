"""The documentation site as a reader meets it: built strictly, opened in headless Chromium.

The site (``mkdocs build --strict``, what ``make docs`` runs) is served on loopback; each page loads
with its images, the tutorials show their notebooks' saved outputs, no page pulls anything from
another host, and the local search index holds what a newcomer types. Screenshots of the home page, a
tutorial and an API page go to ``docs/screenshots/`` (look at them).
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cdp import Chromium

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
SHOTS = ROOT / "docs" / "screenshots"
_EXTERNAL = re.compile(r"""<(?:script|img|iframe)[^>]+src=["']https?://|<link[^>]+href=["']https?://[^"']+\.css""")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_no_page_loads_anything_from_another_host(site: Path) -> None:
    pages = list(site.rglob("*.html"))
    assert len(pages) >= 25
    offenders = [str(p.relative_to(site)) for p in pages if _EXTERNAL.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_tutorials_are_the_notebooks_with_their_saved_outputs(site: Path) -> None:
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = (site / "notebooks" / nb.name).with_suffix(".html").read_text(encoding="utf-8")
        assert "jp-Notebook" in page or "jupyter-wrapper" in page, nb.name
        assert "data:image/png;base64," in page, f"{nb.name}: no saved chart rendered"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    if CHROMIUM is None:
        reason = "headless Chromium not found (Debian: apt-get install -y chromium; .ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: failing instead of skipping)")
        pytest.skip(reason)
    chrome = Chromium(CHROMIUM, tmp_path_factory.mktemp("profile"), width=1280, height=900)
    try:
        yield chrome
    finally:
        chrome.close()


def _open(browser: Chromium, url: str) -> None:
    browser.page.send("Page.navigate", url=url)
    browser.page.wait_for("document.readyState === 'complete'", what=url)
    browser.page.wait_for(
        "[...document.images].every(i => i.complete)", what=f"images of {url}"
    )


@pytest.mark.browser
@pytest.mark.parametrize(
    ("path", "shot"),
    [("index.html", "docs_home.png"), ("notebooks/02_compare_providers.html", "docs_tutorial.png"),
     ("reference/api.html", "docs_api.png")],
)  # fmt: skip
def test_pages_load_with_their_images(browser: Chromium, served: str, path: str, shot: str) -> None:
    _open(browser, f"{served}/{path}")
    broken = browser.page.js("[...document.images].filter(i => i.naturalWidth === 0).map(i => i.src)")
    assert broken == []
    assert browser.page.js("document.querySelector('article, .md-content') !== null")
    SHOTS.mkdir(exist_ok=True)
    browser.page.screenshot(SHOTS / shot)


@pytest.mark.parametrize("query", ["compare", "repeats", "export", "reasoning tokens"])
def test_the_local_search_index_finds_what_a_newcomer_types(site: Path, query: str) -> None:
    """Every word of the query is in at least one indexed page section.

    The site's search runs in the browser from ``search/search_index.json`` (no service).
    """
    import json

    docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    words = query.lower().split()
    hits = [d["location"] for d in docs if all(w in (d["title"] + " " + d["text"]).lower() for w in words)]
    assert hits, f"no indexed section holds {query!r}"
