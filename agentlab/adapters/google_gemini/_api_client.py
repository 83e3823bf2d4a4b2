"""The one module that touches google-genai's API client, which the SDK does not make public.

Why there is no public way: the typed calls (``client.aio.models.generate_content_stream``,
``client.aio.batches.create``) convert the body through ``types.Content``, which decodes each
``thoughtSignature`` to bytes and re-encodes it (URL-safe base64): the signature no longer goes back
verbatim, which Gemini requires; they also parse every chunk into pydantic models. The layer under
them, the client's ``BaseApiClient`` (``client.aio._api_client``), is what adds auth (an API key, or
Application Default Credentials on Vertex AI), the versioned URL, timeouts and retries, and posts
the bytes it is given. agentlab needs exactly that layer, and google-genai has no public handle on
it, nor a public raw-request call.

So every private member used is named here, and nowhere else in agentlab (a test scans for them):

* ``Client.aio._api_client``: the API client itself;
* ``_build_request(method, path, params, http_options)`` and ``_async_request(request, http_options,
  stream=...)``: build (auth, URL) and send (retries; streaming hands back the unread
  ``httpx2.Response`` in ``response_stream``);
* ``_use_aiohttp()``, ``_async_httpx_client``, ``_async_httpx_client_args``, ``_http_options``: which
  HTTP stack the async path uses (agentlab reads the raw ``httpx2`` stream, not aiohttp's).

``tests/adapters/google_gemini/test_gemini_api_client.py`` drives each of them on the installed SDK
through a mock transport (the URL, the auth header, the body bytes verbatim, a streamed raw
response, the aiohttp refusal), so a google-genai release that moves any of them fails there, by
name, not in a user's run.
"""

from __future__ import annotations

from typing import Any

import httpx2
from google import genai

from agentlab.errors import ConfigError

__all__ = ["api_client", "base_url", "httpx2_client", "send", "use_httpx2"]


def api_client(client: genai.Client) -> Any:
    """The async path's ``BaseApiClient`` of ``client`` (typed ``Any``: its module is private)."""
    return client.aio._api_client


def use_httpx2(api: Any, *, owned: bool) -> None:
    """Make (or require) the SDK's async path be httpx2: the adapter reads the raw ``httpx2.Response``.

    With ``aiohttp`` installed, google-genai streams through it unless an httpx2 client or transport
    was given. A client this adapter built keeps the httpx2 client the SDK made for it (the SDK's TLS
    settings and environment proxies) by naming it as the async client; a caller's client is not
    changed behind their back: refused, before anything is sent, with what to pass instead.
    """
    if not api._use_aiohttp() and api._async_httpx_client is not None:
        return
    if not owned:
        raise ConfigError(
            "google: this google.genai.Client streams through aiohttp; agentlab reads the SDK's httpx2 "
            "stream: build it with types.HttpOptions(httpx_async_client=httpx2.AsyncClient()) (or "
            "async_client_args={'transport': ...}), or let the adapter build its client"
        )
    if api._async_httpx_client is None:
        api._async_httpx_client = httpx2.AsyncClient(**api._async_httpx_client_args)
    api._http_options.httpx_async_client = api._async_httpx_client


def base_url(api: Any) -> str:
    """The endpoint the client sends to, without a trailing slash (its public read-only options)."""
    options: dict[str, Any] = api.get_read_only_http_options()
    return str(options.get("base_url") or "").rstrip("/")


def httpx2_client(api: Any) -> httpx2.AsyncClient | None:
    """The httpx2 client the async path sends through (its loggers get redaction)."""
    client = getattr(api, "_async_httpx_client", None)
    return client if isinstance(client, httpx2.AsyncClient) else None


async def send(api: Any, method: str, path: str, options: Any, data: bytes | None, *, stream: bool) -> Any:
    """Send ``data`` as the body, byte for byte, with the SDK's auth, URL, timeouts and retries.

    Returns the SDK's ``HttpResponse``: ``headers``, and ``response_stream`` (the unread
    ``httpx2.Response`` when streaming, else a list holding the body text). SDK errors propagate.
    """
    request = api._build_request(method, path, {}, options)
    if data is not None:
        request.data = data
    return await api._async_request(request, options, stream=stream)
