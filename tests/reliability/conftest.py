"""The loopback simulator (real sockets) for the tests that need them: timeouts and socket counts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.loopback import serving


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """``python -m agentlab.sim serve --port 0``; yields its base URL."""
    with serving() as url:
        yield url
