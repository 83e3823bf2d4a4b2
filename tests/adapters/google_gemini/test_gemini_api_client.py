"""Each private member of google-genai's API client that agentlab uses, driven on the installed SDK.

There is no public way to post a body verbatim with the SDK's auth, URL and retries (see
:mod:`agentlab.adapters.google_gemini._api_client`); so the members used are exercised here through
a mock transport, on the real SDK, and a google-genai release that renames or changes one of them
fails this file, by name, before it fails a user's run.
"""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest
from google import genai
from google.genai import types

from agentlab.adapters.google_gemini import _api_client
from agentlab.errors import ConfigError
from tests.adapters.google_gemini.gemini_support import FAKE_KEY, SSE, Replay, Served, client_on, sse

BODY = b'{"contents":[{"role":"model","parts":[{"thoughtSignature":"AbC+/x=="}]}],"x":"\\u00e9"}'
ANSWER = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}}]}


def test_the_api_client_posts_the_bytes_given_with_auth_and_the_versioned_url() -> None:
    replay = Replay([Served(200, json.dumps(ANSWER).encode(), "application/json")])
    api = _api_client.api_client(client_on(replay))
    options = types.HttpOptions(api_version="v1beta")

    async def go() -> object:
        return await _api_client.send(api, "post", "models/m:generateContent", options, BODY, stream=False)

    resp = asyncio.run(go())
    assert replay.bodies == [BODY], "the body went byte for byte (no re-encoding of the signature)"
    assert replay.urls == ["https://generativelanguage.googleapis.com/v1beta/models/m:generateContent"]
    assert replay.headers[0]["x-goog-api-key"] == FAKE_KEY
    text = resp.response_stream[0]  # type: ignore[attr-defined]
    assert json.loads(text) == ANSWER


def test_streaming_hands_back_the_unread_httpx2_response() -> None:
    replay = Replay([Served(200, sse([ANSWER, ANSWER]), SSE)])
    api = _api_client.api_client(client_on(replay))

    async def go() -> str:
        resp = await _api_client.send(
            api, "post", "models/m:streamGenerateContent?alt=sse", types.HttpOptions(), BODY, stream=True
        )
        raw = resp.response_stream
        assert isinstance(raw, httpx2.Response)
        try:
            return "".join([t async for t in raw.aiter_text()])
        finally:
            await raw.aclose()

    assert asyncio.run(go()).count("data: ") == 2
    assert replay.urls[0].endswith("models/m:streamGenerateContent?alt=sse")


def test_the_endpoint_and_http_client_are_read_from_the_api_client() -> None:
    replay = Replay([Served(200, b"{}", "application/json")])
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(replay))
    client = genai.Client(
        api_key=FAKE_KEY,
        http_options=types.HttpOptions(base_url="https://proxy.test/g/", httpx_async_client=http),
    )
    api = _api_client.api_client(client)
    assert _api_client.base_url(api) == "https://proxy.test/g"
    assert _api_client.httpx2_client(api) is http
    _api_client.use_httpx2(api, owned=False)  # an httpx2 client was given: nothing to change


def test_a_client_that_would_stream_through_aiohttp_is_refused_or_switched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from google.genai import _api_client as sdk_api_client

    monkeypatch.setattr(sdk_api_client, "has_aiohttp", True)
    theirs = _api_client.api_client(genai.Client(api_key=FAKE_KEY))
    with pytest.raises(ConfigError, match="httpx_async_client"):
        _api_client.use_httpx2(theirs, owned=False)
    ours = _api_client.api_client(genai.Client(api_key=FAKE_KEY))
    _api_client.use_httpx2(ours, owned=True)
    assert isinstance(_api_client.httpx2_client(ours), httpx2.AsyncClient)
    assert not ours._use_aiohttp()
