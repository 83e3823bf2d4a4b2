"""Every Python example in README.md and the docs pages runs, in order, page by page (see examples.py).

A page fails when a block raises, or when a block followed by an ``output`` block prints anything
else. Blocks that need real API keys are tests of their own that skip, naming the keys.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.docs.examples import RUNNER, Block, blocks, pages, runner_input

ROOT = Path(__file__).resolve().parents[2]
PAGES = [p for p in pages() if blocks(p)]
KEYED = [b for p in PAGES for b in blocks(p) if b.needs_keys]
_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "DEEPSEEK_API_KEY",
             "OPENROUTER_API_KEY")  # fmt: skip


def _runnable(page: Path) -> list[Block]:
    out = []
    for b in blocks(page):
        if b.needs_keys:
            continue
        if b.needs_extra and importlib.util.find_spec(b.needs_extra) is None:
            continue
        out.append(b)
    return out


@contextmanager
def _sim_server(needed: bool) -> Iterator[None]:
    if not needed:
        yield
        return
    from tests.support.loopback import start, stop

    proc, _ = start("--port", "8765")
    try:
        yield
    finally:
        stop(proc)


def test_the_examples_are_collected() -> None:
    assert {"README.md", "docs/index.md"} <= {str(p.relative_to(ROOT)) for p in PAGES}
    assert all(b.output is None or b.output.strip() for p in PAGES for b in blocks(p))


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_example_of_the_page_runs_and_prints_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    selected = _runnable(page)
    if not selected:
        pytest.skip(f"{page.name}: every example needs what this environment lacks (keys or an extra)")
    env = {k: v for k, v in os.environ.items() if k not in _KEY_VARS and not k.startswith("AGENTLAB_")}
    env["PYTHONPATH"] = str(ROOT)
    env["MPLBACKEND"] = "Agg"
    with _sim_server(any(b.serves_sim for b in selected)):
        proc = subprocess.run([sys.executable, "-c", RUNNER], input=runner_input(selected), cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    for block, result in zip(selected, results, strict=False):
        where = f"{block.page}:{block.line}"
        assert result["ok"], f"{where} raised:\n{result.get('error')}"
        if block.output is not None:
            assert result["stdout"].rstrip().splitlines() == block.output.rstrip().splitlines(), where
    assert len(results) == len(selected)


@pytest.mark.parametrize("block", KEYED, ids=[f"{b.page}:{b.line}" for b in KEYED])
def test_examples_that_need_real_keys(block: Block) -> None:
    pytest.skip(f"{block.page}:{block.line} needs real API keys ({block.needs_keys}); not run offline")
