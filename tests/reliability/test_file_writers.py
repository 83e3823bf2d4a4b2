"""Every file agentlab writes goes through its atomic writer or its append-only writer.

A file written in place is half a file when the disk fills mid-way (``save_report`` replaced a
whole report with a truncated one; ``export_frames`` left 0-byte CSV and Parquet files), and the
OS error came out bare. The two writers (``records/atomic_file.py``, ``records/jsonl.py``) keep the
old file or the whole new one and raise ``StorageError``. The rule is checked two ways:

* a scan of the package's source for every other way of writing a file (``open`` for writing,
  ``os.open`` with write flags, ``write_text`` / ``write_bytes`` / ``touch``, pandas ``to_*`` and
  matplotlib ``savefig`` to a path, ``shutil`` copies, ``tarfile`` / ``zipfile`` extraction, named
  temporary files), failing with each location; the scanner itself is tested on snippets;
* every public function that writes whole files, on a disk that fills mid-write (the fault is
  injected under the atomic writer): a ``StorageError`` naming the file, the earlier file byte for
  byte as it was, no temporary file left.
"""

from __future__ import annotations

import ast
import errno
import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.errors import StorageError
from tests.support.faulty_files import AtomicFaults

PACKAGE = Path(al.__file__).resolve().parent
# The simulator, a leaf that imports nothing from agentlab, has its own temp-fsync-rename writer for
# its schema snapshot (tests/sim/test_leaf.py checks it on a full disk).
WRITERS = {
    PACKAGE / "records" / "atomic_file.py",
    PACKAGE / "records" / "jsonl.py",
    PACKAGE / "sim" / "atomic_file.py",
}

_TO_PATH = {"to_csv", "to_parquet", "to_excel", "to_json", "to_feather", "to_pickle", "to_html",
            "to_latex", "to_markdown", "to_stata", "to_hdf", "to_orc", "to_xml", "savefig",
            "write_image", "write_html"}  # fmt: skip
_TARGET_KW = ("path", "path_or_buf", "buf", "fname", "excel_writer", "file")
_ALWAYS = {"write_text", "write_bytes", "touch", "extractall", "extract", "NamedTemporaryFile",
           "copy", "copy2", "copyfile", "copytree", "copyfileobj", "move"}  # fmt: skip
_SHUTIL_ONLY = {"copy", "copy2", "copyfile", "copytree", "copyfileobj", "move"}
_OS_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
_MEMORY = {"BytesIO", "StringIO"}
_MODULE_OPEN = {"io", "tarfile", "gzip", "bz2", "lzma", "codecs", "zipfile"}  # open(name, mode)


def _name(func: ast.expr) -> tuple[str | None, str]:
    """(the object's name, if a plain name, the called name): ``shutil.copy`` -> ("shutil", "copy")."""
    if isinstance(func, ast.Attribute):
        return (func.value.id if isinstance(func.value, ast.Name) else None), func.attr
    if isinstance(func, ast.Name):
        return None, func.id
    return None, ""


def _mode(call: ast.Call, index: int) -> str | None:
    arg = call.args[index] if len(call.args) > index else None
    arg = next((k.value for k in call.keywords if k.arg == "mode"), arg)
    if arg is None:
        return None
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else "?"


def _memory_names(tree: ast.AST) -> set[str]:
    """Names bound to an in-memory buffer (``buf = io.BytesIO()``) anywhere in the module."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _name(node.value.func)[1] in _MEMORY
        ):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _writes(call: ast.Call, memory: set[str]) -> str | None:
    """Why ``call`` writes a file outside the two writers, or None."""
    owner, name = _name(call.func)
    if name == "open":
        method = isinstance(call.func, ast.Attribute) and owner not in _MODULE_OPEN | {"os"}
        mode = _mode(call, 0 if method else 1)
        if owner == "os":
            flags = {n.attr for n in ast.walk(call) if isinstance(n, ast.Attribute)}
            if call.args and _name(call.args[0]) == ("os", "devnull"):
                return None  # the null device: nothing is written anywhere
            return "os.open with write flags" if flags & _OS_WRITE_FLAGS else None
        if mode is not None and (mode == "?" or set(mode) & set("wax+")):
            return f"open(..., {mode!r})"
        return None
    if name == "fdopen" and owner == "os":
        return "os.fdopen"
    if name in _ALWAYS:
        if name in _SHUTIL_ONLY and owner != "shutil":
            return None
        return f"{owner + '.' if owner else ''}{name}"
    if name in _TO_PATH and isinstance(call.func, ast.Attribute):  # a method: df.to_csv, fig.savefig
        named = (k.value for k in call.keywords if k.arg in _TARGET_KW)
        target = call.args[0] if call.args else next(named, None)
        if target is None or (isinstance(target, ast.Name) and target.id in memory):
            return None
        return f"{name}(<path>)"
    return None


def scan_source(source: str) -> Iterator[tuple[int, str]]:
    """(line, why) for each place ``source`` writes a file some other way than the two writers."""
    tree = ast.parse(source)
    memory = _memory_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            why = _writes(node, memory)
            if why is not None:
                yield node.lineno, why


@pytest.mark.parametrize(
    ("snippet", "flagged"),
    [
        ("open(p, 'w')", True),
        ("os.open(p, os.O_RDWR)", True),
        ("os.open(os.devnull, os.O_RDWR)", False),
        ("open(p, mode='ab')", True),
        ("open(p, 'x')", True),
        ("open(p, m)", True),
        ("open(p)", False),
        ("open(p, 'rb')", False),
        ("p.open('w', encoding='utf-8')", True),
        ("p.open('r+b')", True),
        ("p.open()", False),
        ("os.open(p, os.O_WRONLY | os.O_CREAT)", True),
        ("os.open(p, os.O_RDONLY)", False),
        ("os.fdopen(fd, 'w')", True),
        ("p.write_text('x')", True),
        ("p.write_bytes(b'x')", True),
        ("p.touch()", True),
        ("df.to_csv(path, index=False)", True),
        ("df.to_parquet(path_or_buf=p)", True),
        ("df.to_csv(index=False)", False),
        ("buf = io.BytesIO()\ndf.to_parquet(buf)", False),
        ("fig.savefig('a.png')", True),
        ("buf = io.StringIO()\nfig.savefig(buf, format='svg')", False),
        ("shutil.copy2(a, b)", True),
        ("shutil.copytree(a, b)", True),
        ("shutil.rmtree(a)", False),
        ("tar.extractall(d)", True),
        ("tempfile.NamedTemporaryFile(delete=False)", True),
        ("tempfile.SpooledTemporaryFile()", False),
        ("tarfile.open(tgz)", False),
        ("gzip.open(p, 'wb')", True),
        ("to_json(value)", False),
    ],
)
def test_the_scanner_finds_each_way_of_writing_a_file(snippet: str, flagged: bool) -> None:
    assert bool(list(scan_source(snippet))) is flagged


def test_every_file_agentlab_writes_goes_through_its_two_writers() -> None:
    found = []
    sources = sorted(p for p in PACKAGE.rglob("*.py") if p not in WRITERS)
    assert len(sources) > 100  # the scan really covers the package
    for path in sources:
        for line, why in scan_source(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {why}")
    assert not found, (
        "files written outside records/atomic_file.py (whole files) and records/jsonl.py (append-only "
        "records); write them through one of the two:\n" + "\n".join(found)
    )


# ------------------------------------------------------------------ every whole-file writer, on a full disk


def _result() -> Any:
    return al.Run("openai:sim-reasoner", "Weather in Paris? Use the tool.", tools=[_weather]).run_sync()


@al.tool
def _weather(city: str) -> str:
    """Weather for a city."""
    return "sunny"


def _report(result: Any, out: Path) -> list[Path]:
    al.save_report(result, out / "report.html")
    return [out / "report.html"]


def _frames(fmt: str) -> Callable[[Any, Path], list[Path]]:
    def write(result: Any, out: Path) -> list[Path]:
        return list(al.export_frames(result, out, format=fmt).values())  # type: ignore[arg-type]

    return write


WRITES = {
    "save_report": _report,
    "export_frames csv": _frames("csv"),
    "export_frames parquet": _frames("parquet"),
}


@pytest.mark.parametrize("what", sorted(WRITES))
@pytest.mark.parametrize("after", [0, 100])
def test_a_writer_on_a_full_disk_keeps_the_earlier_files_and_raises_storage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, after: int
) -> None:
    if "parquet" in what and importlib.util.find_spec("pyarrow") is None:
        pytest.skip("pyarrow (the parquet extra) is not installed")
    write = WRITES[what]
    result = _result()
    out = tmp_path / "out"
    written = write(result, out)
    before = {p: p.read_bytes() for p in written}
    assert before and all(before.values())  # positive control: whole files were written
    faults = AtomicFaults(monkeypatch)
    faults.fail(after=after, err=errno.ENOSPC)
    with pytest.raises(StorageError) as info:
        write(_result(), out)  # another run: different bytes
    faults.heal()
    e = info.value
    assert e.errno == errno.ENOSPC and e.path in {str(p) for p in written}
    assert "\n" not in str(e) and "ENOSPC" in str(e)
    assert {p: p.read_bytes() for p in written} == before
    assert sorted(out.iterdir()) == sorted(written)  # no temporary file left behind
