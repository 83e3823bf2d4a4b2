"""Fixtures for the tracing tests: an SDK tracer provider whose spans land in memory."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip(
    "opentelemetry.sdk", reason="opentelemetry-sdk (dev extra) is needed for the tracing tests"
)

from tests.telemetry.support import Traced, traced


@pytest.fixture
def spans() -> Iterator[Traced]:
    """``instrument()`` on an in-memory exporter (content off); uninstrumented afterwards."""
    with traced(include_content=False) as t:
        yield t


@pytest.fixture
def content_spans() -> Iterator[Traced]:
    """The same with ``include_content=True``."""
    with traced(include_content=True) as t:
        yield t
