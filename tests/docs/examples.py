"""The examples of README.md and docs/: collected per page, and run in order in one namespace.

A page's ``python`` blocks run top to bottom in a fresh interpreter (so one page's imports,
instrumentation or Ray session never leak into another), in a temporary folder, with every provider
key removed: they run on the simulated providers. A block whose first line is ``# needs keys: ...``
is not run (it is a test of its own that skips, naming the keys); ``# needs extra: NAME`` runs only
where that extra is installed; ``# with: python -m agentlab.sim serve`` starts the simulator's
server on 127.0.0.1:8765 for the block. A fenced ``output`` block right after a ``python`` block is
what that block must print, line for line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    """One ``python`` block of a page, with the output it must print (None: not checked)."""

    page: str
    index: int
    line: int
    code: str
    output: str | None

    @property
    def needs_keys(self) -> str | None:
        first = self.code.lstrip().splitlines()[0] if self.code.strip() else ""
        return first[len("# needs keys:") :].strip() if first.startswith("# needs keys:") else None

    @property
    def needs_extra(self) -> str | None:
        first = self.code.lstrip().splitlines()[0] if self.code.strip() else ""
        return first[len("# needs extra:") :].strip() if first.startswith("# needs extra:") else None

    @property
    def serves_sim(self) -> bool:
        return "# with: python -m agentlab.sim serve" in self.code


def pages() -> list[Path]:
    """README.md and every Markdown page of the site, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """The page's ``python`` blocks in order, each with the ``output`` block that follows it."""
    text = page.read_text(encoding="utf-8")
    fences = list(_FENCE.finditer(text))
    out: list[Block] = []
    for i, m in enumerate(fences):
        if m.group(1) != "python":
            continue
        nxt = fences[i + 1] if i + 1 < len(fences) else None
        between = text[m.end() : nxt.start()] if nxt else ""
        output = nxt.group(2) if nxt and nxt.group(1) == "output" and not between.strip() else None
        line = text.count("\n", 0, m.start()) + 1
        out.append(Block(str(page.relative_to(ROOT)), len(out), line, m.group(2), output))
    return out


RUNNER = r'''
import ast, asyncio, contextlib, io, json, sys, traceback
blocks = json.load(sys.stdin)
ns = {"__name__": "__main__"}
results = []
for b in blocks:
    buf = io.StringIO()
    try:
        code = compile(b["code"], f"{b['page']}:{b['line']}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        with contextlib.redirect_stdout(buf):
            value = eval(code, ns)
            if asyncio.iscoroutine(value):
                asyncio.run(value)
        results.append({"ok": True, "stdout": buf.getvalue()})
    except BaseException:
        results.append({"ok": False, "stdout": buf.getvalue(), "error": traceback.format_exc(limit=-4)})
        break
print(json.dumps(results))
'''


def runner_input(selected: list[Block]) -> str:
    """The JSON the runner reads: the code of each block, where it stands."""
    return json.dumps([{"page": b.page, "line": b.line, "code": b.code} for b in selected])
