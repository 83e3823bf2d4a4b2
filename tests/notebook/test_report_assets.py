"""The widget JS the report serves: fetched at pinned versions, checked, unpacked and copied safely.

Fetched at pinned versions and checked against their hashes; unpacked and copied through the
atomic writer (``npm pack`` is not run for those: the tarball is built by the test, laid out as npm
lays it out, ``package/``).
"""

from __future__ import annotations

import errno
import io
import stat
import tarfile
from pathlib import Path

import pytest

from agentlab.errors import StorageError
from agentlab.notebook import report
from tests.support.faulty_files import AtomicFaults


def _fake_npm(tmp_path: Path, payload: bytes) -> Path:
    """An ``npm`` whose ``pack`` writes a tarball holding both assets, with ``payload`` inside."""
    tgz = tmp_path / "pkg.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        for member in ("package/dist/embed-amd.js", "package/require.js"):
            info = tarfile.TarInfo(member)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    npm = tmp_path / "npm"
    npm.write_text(f'#!/bin/sh\n/bin/cp {tgz} "$5/pkg.tgz"\necho pkg.tgz\n', encoding="utf-8")
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    return tgz


def test_a_tarball_that_is_not_the_pinned_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tgz = _fake_npm(tmp_path, b"console.log('not the pinned bundle')")
    monkeypatch.setenv("AGENTLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="not the pinned one"):
        report.install_widget_assets()
    assert not report.widget_assets_cached()
    pinned = {name: (spec, report.npm_integrity(tgz)) for name, (spec, _) in report._NPM_PACKAGES.items()}
    monkeypatch.setattr(report, "_NPM_PACKAGES", pinned)
    report.install_widget_assets()
    assert report.widget_assets_cached()


def test_every_npm_package_is_pinned_exactly_with_an_integrity_hash() -> None:
    for spec, integrity in report._NPM_PACKAGES.values():
        version = spec.rsplit("@", 1)[1]
        assert version[0].isdigit() and all(p.isdigit() for p in version.split(".")), spec
        assert integrity.startswith("sha512-") and len(integrity) == 95, spec


def _tgz(path: Path, files: dict[str, bytes], *, evil: str | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in {**files, **({evil: b"x"} if evil else {})}.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("package/link")
        link.type, link.linkname = tarfile.SYMTYPE, "dist/embed-amd.js"
        tar.addfile(link)
    return path


def test_a_package_is_unpacked_file_by_file(tmp_path: Path) -> None:
    files = {"package/dist/embed-amd.js": b"define()", "package/package.json": b"{}"}
    into = tmp_path / "unpacked"
    report._unpack(_tgz(tmp_path / "p.tgz", files), into)
    got = {str(p.relative_to(into)): p.read_bytes() for p in into.rglob("*") if p.is_file()}
    assert got == files


def test_a_member_outside_the_package_is_refused(tmp_path: Path) -> None:
    into = tmp_path / "unpacked"
    with pytest.raises(tarfile.FilterError):
        report._unpack(_tgz(tmp_path / "p.tgz", {}, evil="../outside.js"), into)
    assert not (tmp_path / "outside.js").exists()


def test_the_assets_are_copied_whole_or_a_storage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("AGENTLAB_CACHE_DIR", str(cache))
    for name, data in {"html-manager/package/dist/embed-amd.js": b"define(1)",
                       "html-manager/package/dist/embed-amd.js.map": b"{}",
                       "requirejs/package/require.js": b"var requirejs"}.items():  # fmt: skip
        (cache / "npm" / name).parent.mkdir(parents=True, exist_ok=True)
        (cache / "npm" / name).write_bytes(data)
    static = tmp_path / "site" / "_static"
    static.mkdir(parents=True)
    assert report.fetch_widget_assets(static) == ("_static/require.js", "_static/html-manager/embed-amd.js")
    assert (static / "html-manager" / "embed-amd.js").read_bytes() == b"define(1)"
    assert not (static / "html-manager" / "embed-amd.js.map").exists()
    assert (static / "require.js").read_bytes() == b"var requirejs"

    faults = AtomicFaults(monkeypatch)
    faults.fail(after=3, err=errno.ENOSPC)
    with pytest.raises(StorageError, match="ENOSPC"):
        report.fetch_widget_assets(static)
    faults.heal()
    assert list((static / "html-manager").iterdir()) == []  # the failed copy left no partial file
