"""The simulator's one file write, all or nothing: the compiled request-schema snapshot.

Why its own: ``agentlab.sim`` is a leaf that imports nothing from agentlab outside it (so it can be
lifted out, served alone, and never pulls the toolkit in), yet the snapshot must be replaced whole
or not at all, as every file agentlab writes (``agentlab.records.atomic_file`` is the package's
writer). So this is the same technique, cut to what the snapshot needs: the bytes go to a temporary
file beside the target, are fsynced, then renamed over it (``os.replace`` is atomic on one file
system); on failure the temporary file is removed, the old file is left as it was and the
``OSError`` propagates (the developer running ``python -m agentlab.sim schemas --write`` sees it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

__all__ = ["write_text_atomic"]


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) in one step, or leave it as it was and raise."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            view = memoryview(text.encode("utf-8"))
            while view:
                n = os.write(fd, view)
                if not n:
                    raise OSError(errno.EIO, "write made no progress", str(path))
                view = view[n:]
            os.fsync(fd)
            os.fchmod(fd, 0o644)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
