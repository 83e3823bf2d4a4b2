"""``stack_loggers`` on the installed SDKs: the logger packages a request really passes through.

The walk reads three private attributes (an SDK client's ``_client``, an ``httpx2`` client's
``_transport``, a transport's ``_pool``): neither the SDKs nor httpx2 have a public accessor for the
objects under a client, and log redaction must cover every package that can log a request. So the walk
is pinned here on real clients: a release that renames one of them fails this file, by name.
"""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest
from google import genai
from google.genai import types

from agentlab.adapters.google_gemini import _api_client
from agentlab.records.logs import stack_loggers


@pytest.mark.parametrize(
    ("make", "want"),
    [
        (lambda: openai.AsyncOpenAI(api_key="k"), ("openai", "httpx2", "httpcore2")),
        (lambda: anthropic.AsyncAnthropic(api_key="k"), ("anthropic", "httpx2", "httpcore2")),
        (lambda: httpx2.AsyncClient(), ("httpx2", "httpcore2")),
    ],
    ids=["openai", "anthropic", "httpx2 client"],
)
def test_the_walk_reaches_the_connection_pool(make: object, want: tuple[str, ...]) -> None:
    assert callable(make)
    assert stack_loggers(make()) == want


def test_the_gemini_adapters_http_client_is_walked_from_the_httpx2_client_down() -> None:
    """The Gemini adapter passes the httpx2 client itself: its pool's package must be found too."""
    http = httpx2.AsyncClient()
    client = genai.Client(api_key="k", http_options=types.HttpOptions(httpx_async_client=http))
    found = _api_client.httpx2_client(_api_client.api_client(client))
    assert found is http
    assert stack_loggers(found) == ("httpx2", "httpcore2")
