"""Gemini endpoints and transports: Vertex AI per project/location, express mode, the SDK's injection points.

The issue asks for Vertex AI as a second endpoint of the same adapter "where the SDK allows it", with
opaque items tagged by endpoint, and for the transport to be injectable "the way that SDK accepts it".
google-genai allows Vertex AI with Application Default Credentials (``project``/``location``, the
regional host) and in express mode (an API key, the global host); it accepts a transport as a ready
``httpx_async_client`` or as ``async_client_args={"transport": ...}``. Each is exercised here through
the real SDK client, over an ``httpx2.MockTransport``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import types
from google.oauth2.credentials import Credentials

from agentlab.adapters.google_gemini import GoogleGeminiAdapter
from agentlab.errors import ConfigError
from agentlab.neutral.events import DiagnosticEvent, ModelResponse, ResponseCompletedEvent
from agentlab.neutral.items import ToolCallItem, ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest, ToolSpec
from tests.adapters.google_gemini.gemini_support import FAKE_KEY, SSE, Replay, Served, adapter_on, sse

MODEL = "gemini-3-flash-preview"
TOOLS = (ToolSpec(name="add"),)
SIG = "Q2lRQnZqNzIrL19fLQ=="
BODY = sse(
    [
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"functionCall": {"name": "add", "args": {}}, "thoughtSignature": SIG}],
                    },
                    "finishReason": "STOP",
                }
            ],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "thoughtsTokenCount": 4},
        }
    ]
)


def _vertex(replay: Replay, project: str, location: str) -> GoogleGeminiAdapter:
    """A Vertex AI adapter as the SDK builds one with ADC: a bearer token, project and location."""
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(replay))
    client = genai.Client(
        vertexai=True, project=project, location=location, credentials=Credentials(token="ya29.test"),  # type: ignore[no-untyped-call]
        http_options=types.HttpOptions(httpx_async_client=http),
    )  # fmt: skip
    return GoogleGeminiAdapter(MODEL, client=client, max_retries=0)


def _first(adapter: GoogleGeminiAdapter) -> ModelResponse:
    request = ModelRequest(model=MODEL, items=(UserItem(text="q"),), tools=TOOLS)

    async def go() -> Any:
        done = [e async for e in adapter.stream(request)][-1]
        assert isinstance(done, ResponseCompletedEvent)
        return done.response

    resp: ModelResponse = asyncio.run(go())
    return resp


def _next(adapter: GoogleGeminiAdapter, resp: ModelResponse) -> tuple[dict[str, Any], dict[str, int]]:
    calls = [i for i in resp.items if isinstance(i, ToolCallItem)]
    results = [ToolResultItem(call_id=c.call_id, name=c.name, output="3") for c in calls]
    request = ModelRequest(
        model=MODEL, items=(UserItem(text="q"), *resp.items, *results), tools=TOOLS,
        continuation=resp.reasoning,
    )  # fmt: skip
    built = adapter.build(request)
    dropped = {
        d.data["reason"]: d.data["count"]
        for d in built.diagnostics
        if isinstance(d, DiagnosticEvent) and d.code == "reasoning_item_dropped"
    }
    body: dict[str, Any] = json.loads(built.body)
    return body, dropped


def test_vertex_projects_and_locations_are_separate_endpoints() -> None:
    replay = Replay([Served(200, BODY, SSE)])
    us = _vertex(replay, "p1", "us-central1")
    resp = _first(us)
    assert replay.urls[0] == (
        "https://us-central1-aiplatform.googleapis.com/v1beta1/projects/p1/locations/us-central1"
        f"/publishers/google/models/{MODEL}:streamGenerateContent?alt=sse"
    )
    assert replay.headers[0]["authorization"] == "Bearer ya29.test"
    assert "x-goog-api-key" not in replay.headers[0]
    (sig,) = resp.reasoning
    assert sig.base_url == us.base_url and "/projects/p1/locations/us-central1" in (us.base_url or "")
    sent, dropped = _next(us, resp)
    assert sent["contents"][1]["parts"][0]["thoughtSignature"] == SIG and not dropped
    others = (
        _vertex(replay, "p1", "europe-west4"),
        _vertex(replay, "p2", "us-central1"),
        adapter_on(replay, MODEL),  # the Gemini API
        GoogleGeminiAdapter(MODEL, client=genai.Client(vertexai=True, api_key=FAKE_KEY)),  # express mode
    )
    assert len({us.base_url, *(o.base_url for o in others)}) == 1 + len(others)
    for other in others:
        sent, dropped = _next(other, resp)
        assert "thoughtSignature" not in json.dumps(sent), other
        assert dropped == {"other_origin": 1}, other


def test_vertex_express_mode_takes_the_api_key() -> None:
    """Vertex AI with an API key (no project): the SDK allows it, so ``vertexai=True, api_key=`` does."""
    adapter = GoogleGeminiAdapter(MODEL, vertexai=True, api_key=FAKE_KEY)
    api = adapter.client.aio._api_client
    assert adapter.vertexai and api.api_key == FAKE_KEY and api.project is None
    assert FAKE_KEY not in repr(adapter)
    assert adapter.base_url and "aiplatform.googleapis.com" in adapter.base_url


def test_vertex_without_credentials_is_a_config_error_naming_what_to_set(monkeypatch: Any) -> None:
    """No project, no key, no ADC: a typed agentlab error at construction, not google.auth's."""
    import google.auth
    from google.auth import exceptions as auth_errors

    def no_adc(*a: Any, **k: Any) -> Any:
        raise auth_errors.DefaultCredentialsError("Your default credentials were not found.")  # type: ignore[no-untyped-call]

    monkeypatch.setattr(google.auth, "default", no_adc)
    for var in ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ConfigError, match="GOOGLE_CLOUD_PROJECT") as info:
        GoogleGeminiAdapter(MODEL, vertexai=True)
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_transport_injected_as_client_args_the_other_way_the_sdk_takes_it() -> None:
    """``HttpOptions(async_client_args={"transport": ...})``: the SDK builds the httpx2 client itself."""
    replay = Replay([Served(200, BODY, SSE)])
    options = types.HttpOptions(async_client_args={"transport": httpx2.MockTransport(replay)})
    adapter = GoogleGeminiAdapter(MODEL, client=genai.Client(api_key=FAKE_KEY, http_options=options))
    resp = _first(adapter)
    assert replay.urls == [
        f"https://generativelanguage.googleapis.com/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
    ]
    assert replay.headers[0]["x-goog-api-key"] == FAKE_KEY
    assert [r.index for r in resp.reasoning] == [0]
    assert json.loads(replay.bodies[0])["contents"] == [{"role": "user", "parts": [{"text": "q"}]}]


def test_vertex_credentials_that_cannot_refresh_are_a_config_error_before_sending() -> None:
    """google.auth fails while the SDK signs the request: typed, unchained, nothing sent."""
    replay = Replay([Served(200, BODY, SSE)])
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(replay))
    client = genai.Client(
        vertexai=True, project="p1", location="us-central1", credentials=Credentials(token=None),  # type: ignore[no-untyped-call]
        http_options=types.HttpOptions(httpx_async_client=http),
    )  # fmt: skip
    adapter = GoogleGeminiAdapter(MODEL, client=client, max_retries=0)
    with pytest.raises(ConfigError, match="Vertex AI credentials could not be used") as info:
        _first(adapter)
    assert info.value.__cause__ is None and info.value.__context__ is None
    assert replay.urls == []


def test_with_aiohttp_installed_the_adapter_still_streams_through_httpx2(monkeypatch: Any) -> None:
    """google-genai streams through aiohttp when it is installed and no httpx2 client was given.

    The adapter reads the raw httpx2 response, so the client it builds itself keeps the SDK's own
    httpx2 client (its TLS settings, environment proxies), and a caller's client that would stream
    through aiohttp is refused at construction with what to pass instead, not an AttributeError
    mid-call.
    """
    from google.genai import _api_client

    monkeypatch.setattr(_api_client, "has_aiohttp", True)
    monkeypatch.setenv("GEMINI_API_KEY", FAKE_KEY)
    own = GoogleGeminiAdapter(MODEL)
    api = own.client.aio._api_client
    assert not api._use_aiohttp() and isinstance(api._async_httpx_client, httpx2.AsyncClient)
    with pytest.raises(ConfigError, match="httpx_async_client"):
        GoogleGeminiAdapter(MODEL, client=genai.Client(api_key=FAKE_KEY))
    # an injected httpx2 client, or an injected transport, is what the SDK then uses: accepted
    replay = Replay([Served(200, BODY, SSE)])
    GoogleGeminiAdapter(MODEL, client=genai.Client(api_key=FAKE_KEY, http_options=types.HttpOptions(
        async_client_args={"transport": httpx2.MockTransport(replay)})))  # fmt: skip
    adapter_on(replay, MODEL)
