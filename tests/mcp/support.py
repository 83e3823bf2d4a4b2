"""Shared by the MCP tests: the fault server (in process or as a command) and process checks."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

FAULT_SERVER = Path(__file__).with_name("fault_server.py")
EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
"""The npm reference server, pinned (``npm view @modelcontextprotocol/server-everything version``)."""

SIM_MODELS = (
    "openai:sim-reasoner",
    "anthropic:sim-thinker",
    "google:sim-gemini",
    "deepseek:sim-deepseek",
    "openrouter:sim-router-claude",
)


def fault_module() -> Any:
    spec = importlib.util.spec_from_file_location("agentlab_test_fault_server", FAULT_SERVER)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def need_npx() -> str:
    """The npx path; skip with the reason when absent, fail instead under CI=true (.ci/run fetches it)."""
    npx = shutil.which("npx")
    if npx is None:
        reason = "npx (Node.js) is not installed: the npm reference MCP server cannot run"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{reason} (CI=true: failing instead of skipping)")
        pytest.skip(reason)
    return npx


def python() -> str:
    return sys.executable
