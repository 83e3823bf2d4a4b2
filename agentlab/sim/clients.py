"""SDK clients wired to the in-process simulator, and the base URLs a loopback server answers on.

Why a module of its own: the facade (:mod:`agentlab.sim`) re-exports these, and the simulator's own
modules (:mod:`agentlab.sim.bench`) use them too; importing them from here keeps every arrow inside
the simulator pointing away from the facade (no import cycle through ``agentlab/sim/__init__.py``).
The SDKs are imported on first call, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from agentlab.sim.transport import SimTransport, split_options

if TYPE_CHECKING:
    import anthropic
    import openai
    from google import genai

OPENAI_BASE_URL = "http://sim.agentlab.local/v1"
ANTHROPIC_BASE_URL = "http://sim.agentlab.local"
#: What google-genai's ``HttpOptions.base_url`` takes (the SDK appends ``/v1beta/models/...``).
GEMINI_BASE_URL = "http://sim.agentlab.local"
#: Claude on Bedrock: ``AnthropicBedrock``'s ``base_url`` (the SDK appends ``/model/{id}/invoke``).
BEDROCK_BASE_URL = "http://sim.agentlab.local"
#: Claude on Vertex: ``AnthropicVertex``'s ``base_url`` (the SDK appends ``/projects/...:rawPredict``).
VERTEX_BASE_URL = "http://sim.agentlab.local/v1"
_AWS_CREDENTIALS = ("aws_access_key", "aws_secret_key", "aws_session_token", "aws_profile")
#: Chat Completions hosts, as each SDK ``base_url`` takes them (the SDK appends ``/chat/completions``).
DEEPSEEK_BASE_URL = "http://sim.agentlab.local"
OPENROUTER_BASE_URL = "http://sim.agentlab.local/api/v1"
LOCAL_BASE_URL = "http://sim.agentlab.local/v1"
ZAI_BASE_URL = "http://sim.agentlab.local/api/paas/v4"
_CHAT_BASE_URLS = {
    "deepseek": DEEPSEEK_BASE_URL,
    "openrouter": OPENROUTER_BASE_URL,
    "local": LOCAL_BASE_URL,
    "moonshot": LOCAL_BASE_URL,  # Kimi and xAI serve /v1/chat/completions, as local servers do
    "xai_chat": LOCAL_BASE_URL,
    "zai": ZAI_BASE_URL,
}
#: The placeholder key the clients below send (the simulator requires one, as the real APIs do).
SIM_API_KEY = "sim-key"
_Client = TypeVar("_Client")


def _sdk_kwargs(kw: dict[str, Any], base_url: str) -> tuple[SimTransport, dict[str, Any]]:
    """The transport, and the SDK kwargs with the placeholder key and the simulator's base URL filled in."""
    transport, rest = split_options(kw)
    rest.setdefault("api_key", SIM_API_KEY)
    rest.setdefault("base_url", base_url)
    return transport, rest


def _sdk_client(
    sdk_class: Callable[..., _Client], base_url: str, kw: dict[str, Any], *, sync: bool = False
) -> _Client:
    """The SDK class on an httpx client over the simulator transport (sync or async, to match the class)."""
    import httpx2

    transport, rest = _sdk_kwargs(kw, base_url)
    http = httpx2.Client(transport=transport) if sync else httpx2.AsyncClient(transport=transport)
    return sdk_class(http_client=http, **rest)


def openai_client(**kw: Any) -> openai.AsyncOpenAI:
    """An ``openai.AsyncOpenAI`` talking to the in-process simulator.

    Simulator options (``seed``, ``secret``, ``retry_after_ms``, ``default_fault``, ``real_models``,
    ``latency_ms``, ``simulator``) or ``transport=`` go to the transport; everything else (``max_retries``,
    ``timeout``, ...) to the SDK client.
    """
    import openai

    return _sdk_client(openai.AsyncOpenAI, OPENAI_BASE_URL, kw)


def openai_sync_client(**kw: Any) -> openai.OpenAI:
    """Sync twin of :func:`openai_client`."""
    import openai

    return _sdk_client(openai.OpenAI, OPENAI_BASE_URL, kw, sync=True)


def anthropic_client(**kw: Any) -> anthropic.AsyncAnthropic:
    """An ``anthropic.AsyncAnthropic`` talking to the in-process simulator (options as above)."""
    import anthropic

    return _sdk_client(anthropic.AsyncAnthropic, ANTHROPIC_BASE_URL, kw)


def anthropic_sync_client(**kw: Any) -> anthropic.Anthropic:
    """Sync twin of :func:`anthropic_client`."""
    import anthropic

    return _sdk_client(anthropic.Anthropic, ANTHROPIC_BASE_URL, kw, sync=True)


def anthropic_bedrock_client(**kw: Any) -> anthropic.AsyncAnthropicBedrock:
    """An ``anthropic.AsyncAnthropicBedrock`` talking to the in-process simulator (options as above).

    It authenticates with the placeholder as a Bedrock API key (bearer), unless AWS credentials
    are given (``aws_access_key``/``aws_secret_key``...: the SDK then signs with SigV4, which the
    simulator checks for shape); region ``us-east-1`` unless given.
    """
    import anthropic
    import httpx2

    transport, rest = split_options(kw)
    if not any(k in rest for k in _AWS_CREDENTIALS):
        rest.setdefault("api_key", SIM_API_KEY)
    rest.setdefault("aws_region", "us-east-1")
    rest.setdefault("base_url", BEDROCK_BASE_URL)
    return anthropic.AsyncAnthropicBedrock(http_client=httpx2.AsyncClient(transport=transport), **rest)


def anthropic_vertex_client(**kw: Any) -> anthropic.AsyncAnthropicVertex:
    """An ``anthropic.AsyncAnthropicVertex`` talking to the in-process simulator (options as above).

    The placeholder is its OAuth access token (``access_token``); region ``us-east5`` and project
    ``sim-project`` unless given.
    """
    import anthropic
    import httpx2

    transport, rest = split_options(kw)
    rest.setdefault("access_token", rest.pop("api_key", None) or SIM_API_KEY)
    rest.setdefault("region", "us-east5")
    rest.setdefault("project_id", "sim-project")
    rest.setdefault("base_url", VERTEX_BASE_URL)
    return anthropic.AsyncAnthropicVertex(http_client=httpx2.AsyncClient(transport=transport), **rest)


def gemini_client(**kw: Any) -> genai.Client:
    """A ``google.genai.Client`` talking to the in-process simulator, sync and async (``client.aio``).

    Simulator options or ``transport=`` go to the transport; ``http_options`` (a dict or
    ``types.HttpOptions``: ``api_version``, ``retry_options``, ...) are kept, with the simulator's
    base URL and clients filled in; everything else (``api_key``, ...) to ``genai.Client``.
    """
    import httpx2
    from google import genai
    from google.genai import types

    transport, rest = split_options(kw)
    rest.setdefault("api_key", SIM_API_KEY)
    given = rest.pop("http_options", None)
    if isinstance(given, dict):
        given = types.HttpOptions.model_validate(given)
    opts = given or types.HttpOptions()
    opts = opts.model_copy(
        update={
            "base_url": opts.base_url or GEMINI_BASE_URL,
            "httpx_client": httpx2.Client(transport=transport),
            "httpx_async_client": httpx2.AsyncClient(transport=transport),
        }
    )
    return genai.Client(http_options=opts, **rest)


def chat_client(dialect: str, **kw: Any) -> openai.AsyncOpenAI:
    """An ``openai.AsyncOpenAI`` talking to one simulated Chat Completions host (options as above).

    ``dialect`` is ``"deepseek"``, ``"openrouter"``, ``"moonshot"``, ``"zai"``, ``"xai_chat"`` or
    ``"local"`` and picks the base URL; requests
    carry the ``x-agentlab-chat-dialect`` header so a path two hosts share (``GET /v1/models``) reaches
    this one. Local servers need no key; the client still sends the placeholder, as SDKs do.
    """
    import openai

    if dialect not in _CHAT_BASE_URLS:
        raise ValueError(f"dialect must be one of {sorted(_CHAT_BASE_URLS)}, not {dialect!r}")
    kw["default_headers"] = {"x-agentlab-chat-dialect": dialect, **(kw.get("default_headers") or {})}
    return _sdk_client(openai.AsyncOpenAI, _CHAT_BASE_URLS[dialect], kw)
