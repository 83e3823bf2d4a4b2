"""The widget JS the report serves is fetched at pinned versions and checked against their hashes."""

from __future__ import annotations

import io
import stat
import tarfile
from pathlib import Path

import pytest

from agentlab.notebook import report


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
