"""The small launcher every stdio MCP server runs under: the server dies with the process that started it.

Why a launcher: the MCP SDK stops a server it started when the client's context exits, but nothing
stops it when that process dies without exiting (a Jupyter kernel killed on restart, ``kill -9``):
the server, in its own session, is re-parented and lives on, and a server that does not read its
stdin (one stuck in a tool call) never notices. The launcher is started in place of the server
(``python -I -S _launch.py <parent pid> <command> <args...>``), asks Linux to signal it when its
parent dies (``prctl(PR_SET_PDEATHSIG)``), watches its parent pid as well (other systems, and the
window before ``prctl``), and then kills its whole process group, which holds the server and
anything the server started (``npx`` runs the package's ``node`` as a child). The server inherits the
pipes; the launcher keeps no copy of them, so a server closing its stdout is seen at once.

Standard library only, no agentlab import: it starts in a few tens of milliseconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from types import FrameType

_PR_SET_PDEATHSIG = 1
_POLL_S = 0.2


def _kill_group(signum: int | None = None, frame: FrameType | None = None) -> None:
    """Kill the launcher's process group (the server and its children, then the launcher)."""
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    finally:
        os._exit(137)


def _die_with(parent: int) -> None:
    """Be told (SIGTERM) when the parent dies; poll its pid too, where ``prctl`` is not available."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # no prctl in this libc: the poll alone
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                _kill_group()
            time.sleep(_POLL_S)

    threading.Thread(target=watch, name="agentlab-mcp-watch", daemon=True).start()


def main(argv: list[str]) -> int:
    """Start the server as a child, drop the launcher's copies of the pipes, wait for the server."""
    if len(argv) < 3:
        print("usage: _launch.py <parent pid> <command> [args...]", file=sys.stderr)
        return 2
    parent = int(argv[1])
    signal.signal(signal.SIGTERM, _kill_group)  # the client's stop, or the parent's death
    signal.signal(signal.SIGHUP, _kill_group)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is for the kernel, not its servers
    _die_with(parent)
    try:
        child = subprocess.Popen(argv[2:])
    except OSError as e:
        print(f"agentlab: cannot start the MCP server {argv[2]!r}: {e}", file=sys.stderr)
        return 127
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
