"""Whole files all or nothing: the old file or the whole new one, never half a page."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from agentlab.errors import StorageError
from agentlab.records.atomic_file import write_atomic


def test_replaces_the_file_in_one_step(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    write_atomic(page, "<p>old</p>")
    write_atomic(page, "<p>new \udcff</p>")  # a lone surrogate is replaced, not an error
    assert page.read_text(encoding="utf-8") == "<p>new \ufffd</p>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    page = tmp_path / "index.html"
    page.write_text("<p>old</p>", encoding="utf-8")
    real = os.write
    calls = {"n": 0}

    def short_then_fail(fd: int, data: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real(fd, bytes(data)[:5])  # a short write first: the loop must go on
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "write", short_then_fail)
    with pytest.raises(StorageError) as info:
        write_atomic(page, "<p>new and much longer</p>")
    assert info.value.errno == code and info.value.path == str(page)
    assert "new and much longer" not in str(info.value)
    assert info.value.__context__ is None and info.value.__cause__ is None
    monkeypatch.undo()
    assert page.read_text(encoding="utf-8") == "<p>old</p>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html"]


def test_a_missing_folder_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError) as info:
        write_atomic(tmp_path / "nope" / "index.html", "x")
    assert info.value.errno == errno.ENOENT
