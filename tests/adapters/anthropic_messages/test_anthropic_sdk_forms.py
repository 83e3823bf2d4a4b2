"""The Anthropic adapter decides from documented fields, never from the SDK's error texts.

Two refusals the SDK makes before sending are known to it only as text (a ``TypeError`` "Could not
resolve authentication method", a ``ValueError`` "Streaming is required ..."); the adapter makes
both decisions itself, from the client's documented attributes, before the SDK is called. The
tests below prove that (a new release rewording either text changes nothing), and that the rules
agree with the installed SDK's own behaviour, so a release that moves them fails here.
"""

from __future__ import annotations

import asyncio
import json
import typing
import warnings
from typing import Any

import anthropic
import httpx2
import pytest

from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter, _models
from agentlab.errors import InvalidSettingsError, MissingApiKeyError
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest
from tests.adapters.anthropic_messages.anthropic_support import sdk_client

MODEL = "claude-sonnet-4-5"
_MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": MODEL,
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


class _Counting:
    def __init__(self) -> None:
        self.sent = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.sent += 1
        return httpx2.Response(200, json={**_MESSAGE, "model": json.loads(request.content)["model"]})


def _keyless_client(handler: Any, **kw: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        base_url="https://api.anthropic.com", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)), **kw,
    )  # fmt: skip


async def _drain(adapter: AnthropicMessagesAdapter, request: ModelRequest) -> None:
    async for _ in adapter.stream(request):
        pass


def _request(max_tokens: int, *, stream: bool = False, model: str = MODEL) -> ModelRequest:
    return ModelRequest(
        model=model, items=(UserItem(text="hi"),), reasoning=None, max_output_tokens=max_tokens, stream=stream
    )


# ------------------------------------------------------------------------------ authentication


def test_a_client_with_no_way_to_authenticate_is_refused_when_the_adapter_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Typed and early: before, the SDK's TypeError text at the first call was parsed for it."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    handler = _Counting()
    with pytest.raises(MissingApiKeyError) as info:
        AnthropicMessagesAdapter(MODEL, client=_keyless_client(handler))
    assert info.value.env_var == "ANTHROPIC_API_KEY" and handler.sent == 0


@pytest.mark.parametrize(
    "kw",
    [
        {"api_key": "sk-ant-test"},
        {"auth_token": "tok-test"},
        {"default_headers": {"X-Api-Key": "sk-ant-test"}},
        {"default_headers": {"Authorization": anthropic.omit}},
    ],
    ids=["api_key", "auth_token", "x-api-key header", "authorization omitted"],
)
def test_every_documented_way_to_authenticate_is_accepted_as_the_sdk_accepts_it(
    kw: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The adapter's rule and the SDK's agree: the same client sends through the real SDK path."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    handler = _Counting()
    adapter = AnthropicMessagesAdapter(MODEL, client=_keyless_client(handler, **kw))
    asyncio.run(_drain(adapter, _request(100)))
    assert handler.sent == 1


def test_the_sdk_itself_refuses_the_client_the_adapter_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control on the installed SDK: a keyless client really cannot send (so refusing it is right)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    handler = _Counting()
    client = _keyless_client(handler)

    async def go() -> None:
        await client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}])

    with pytest.raises(TypeError):
        asyncio.run(go())
    assert handler.sent == 0


# ------------------------------------------------------------------- long non-streaming calls


def test_a_long_non_streaming_call_is_refused_whatever_the_sdk_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """A release that rewords the SDK's refusal (simulated here) must not turn it into a ProviderError."""

    def reworded(self: Any, max_tokens: int, max_nonstreaming_tokens: int | None) -> Any:
        raise ValueError("Non-streaming requests of this size are not supported; stream instead.")

    monkeypatch.setattr(anthropic.AsyncAnthropic, "_calculate_nonstreaming_timeout", reworded)
    handler = _Counting()
    adapter = AnthropicMessagesAdapter(MODEL, client=sdk_client(handler))
    with pytest.raises(InvalidSettingsError, match="too large for a non-streaming call"):
        asyncio.run(_drain(adapter, _request(64_000)))
    assert handler.sent == 0
    asyncio.run(_drain(adapter, _request(1_000)))
    assert handler.sent == 1, "a small non-streaming call still goes (the SDK's check is not consulted)"


def test_a_client_with_its_own_timeout_takes_any_size_as_with_the_sdk() -> None:
    handler = _Counting()
    client = sdk_client(handler).with_options(timeout=3600.0)
    adapter = AnthropicMessagesAdapter(MODEL, client=client)
    asyncio.run(_drain(adapter, _request(64_000)))
    assert handler.sent == 1


def _sdk_refuses(model: str, max_tokens: int) -> bool:
    """Whether the installed SDK refuses this non-streaming call at its default timeout."""
    handler = _Counting()
    client = sdk_client(handler)

    async def go() -> None:
        await client.messages.create(
            model=model, max_tokens=max_tokens, messages=[{"role": "user", "content": "hi"}]
        )

    try:
        asyncio.run(go())
    except ValueError:
        return handler.sent == 0
    return False


_OPUS_4 = (
    "claude-opus-4-0",
    "claude-opus-4-20250514",
    "claude-opus-4-1@20250805",
    "claude-opus-4-1-20250805",
)


@pytest.mark.parametrize("model", [MODEL, "claude-opus-4-6", *_OPUS_4])
def test_the_non_streaming_limit_is_the_installed_sdks(model: str) -> None:
    """Exercises the SDK's real path around the limit: agentlab refuses exactly what the SDK refuses."""
    limit = _models.nonstreaming_limit(model)
    assert not _sdk_refuses(model, limit), f"{model}: the SDK refuses {limit}, agentlab allows it"
    assert _sdk_refuses(model, limit + 1), f"{model}: the SDK allows {limit + 1}, agentlab refuses it"


# ------------------------------------------------------------------------ adaptive thinking


def _model_params() -> list[str]:
    from anthropic.types.model_param import ModelParam

    literal = next(a for a in typing.get_args(ModelParam) if typing.get_origin(a) is typing.Literal)
    return [str(m) for m in typing.get_args(literal)]


def test_every_model_the_sdk_steers_to_adaptive_defaults_to_adaptive() -> None:
    """Read from the SDK's public behaviour (it warns on budgeted thinking), not its private ``_data``."""
    handler = _Counting()
    client = sdk_client(handler)
    warned: list[str] = []
    for model in _model_params():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            async def go(m: str = model) -> None:
                await client.messages.create(
                    model=m, max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 1024},
                    messages=[{"role": "user", "content": "hi"}],
                )  # fmt: skip

            asyncio.run(go())
        if any(issubclass(w.category, UserWarning) for w in caught):
            warned.append(model)
    assert warned, "control: the SDK steers some model to adaptive thinking"
    assert [m for m in warned if not _models.adaptive_preferred(m)] == []
