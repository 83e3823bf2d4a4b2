"""What a stdio MCP server's process gets from agentlab's environment: an allow-list, never the rest.

Why an allow-list and not a deny-list: a researcher's environment holds every provider's API key,
cloud credentials and tokens under names no list can foresee; a server is somebody else's code. It
gets what a program needs to run (``PATH``, ``HOME``, locale, temp folder), the variables named in
``pass_env=`` (copied from this process), and ``env=`` as given. Nothing else, and so no key.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from agentlab.errors import ConfigError

__all__ = ["SAFE_ENV", "server_env"]

SAFE_ENV: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "SYSTEMROOT",
)
"""Variables a server inherits unasked: what programs need to start, find files and format text."""


def server_env(env: Mapping[str, str] | None, pass_env: Iterable[str]) -> dict[str, str]:
    """The server's environment: :data:`SAFE_ENV`, then ``pass_env`` names copied, then ``env``."""
    out = {k: os.environ[k] for k in SAFE_ENV if k in os.environ}
    for name in pass_env:
        if not isinstance(name, str) or not name:
            raise ConfigError(f"pass_env takes variable names, got {name!r}")
        if name in os.environ:
            out[name] = os.environ[name]
    for k, v in (env or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise ConfigError(f"env takes str -> str, got {k!r}: {type(v).__name__}")
        out[k] = v
    return out
