"""The same mistake raises the same error type on every adapter (constructor, request, settings).

Each row is one mistake and the one type it raises, checked on both adapters. The types are the
error tree's (``agentlab.errors``): a user error whose message says the fix, never a bare
``TypeError``/``ValueError`` from deep inside an SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.errors import AgentlabError, InvalidSettingsError, MissingApiKeyError
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest

_NO_NET = httpx2.AsyncClient(transport=httpx2.MockTransport(lambda r: httpx2.Response(500)))

ADAPTERS: dict[str, dict[str, Any]] = {
    "openai": {
        "cls": OpenAIResponsesAdapter,
        "model": "gpt-5.1",
        "client": lambda: openai.AsyncOpenAI(api_key="sk-test", http_client=_NO_NET),
        "sync_client": lambda: openai.OpenAI(api_key="sk-test"),
        "env": "OPENAI_API_KEY",
        "other_prefix": "anthropic_top_k",
    },
    "anthropic": {
        "cls": AnthropicMessagesAdapter,
        "model": "claude-sonnet-4-5",
        "client": lambda: anthropic.AsyncAnthropic(api_key="sk-ant-test", http_client=_NO_NET),
        "sync_client": lambda: anthropic.Anthropic(api_key="sk-ant-test"),
        "env": "ANTHROPIC_API_KEY",
        "other_prefix": "openai_service_tier",
    },
}


def _make(p: dict[str, Any], **kw: Any) -> Any:
    kw.setdefault("client", p["client"]())
    model = kw.pop("model", p["model"])
    return p["cls"](model, **kw)


def _build(p: dict[str, Any], **req: Any) -> Any:
    fields: dict[str, Any] = {"model": p["model"], "items": (UserItem(text="hi"),)}
    fields.update(req)
    return _make(p).build(ModelRequest(**fields))


MISTAKES: list[tuple[str, Callable[[dict[str, Any]], object], type[AgentlabError]]] = [
    ("empty model name", lambda p: _make(p, model=""), InvalidSettingsError),
    ("model not a string", lambda p: _make(p, model=5), InvalidSettingsError),
    ("negative max_retries", lambda p: _make(p, max_retries=-1), InvalidSettingsError),
    ("max_retries not an int", lambda p: _make(p, max_retries="3"), InvalidSettingsError),
    ("max_retries a bool", lambda p: _make(p, max_retries=True), InvalidSettingsError),
    ("timeout not a number", lambda p: _make(p, timeout="10"), InvalidSettingsError),
    ("timeout <= 0", lambda p: _make(p, timeout=0), InvalidSettingsError),
    ("extra_headers not a dict of str", lambda p: _make(p, extra_headers={"x": 1}), InvalidSettingsError),
    ("client of another type", lambda p: _make(p, client=object()), InvalidSettingsError),
    ("sync SDK client", lambda p: _make(p, client=p["sync_client"]()), InvalidSettingsError),
    ("api_key beside a client", lambda p: _make(p, api_key="k"), InvalidSettingsError),
    ("base_url beside a client", lambda p: _make(p, base_url="http://x"), InvalidSettingsError),
    ("no key, no client", lambda p: p["cls"](p["model"]), MissingApiKeyError),
    ("request not a ModelRequest", lambda p: _make(p).build({"model": p["model"]}), InvalidSettingsError),
    ("request for another model", lambda p: _build(p, model="other-model"), InvalidSettingsError),
    (
        "another provider's provider_options",
        lambda p: _build(p, provider_options={p["other_prefix"]: 1}),
        InvalidSettingsError,
    ),
]


@pytest.mark.parametrize("provider", sorted(ADAPTERS))
@pytest.mark.parametrize(("mistake", "make", "expected"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_same_mistake_same_error_type(
    provider: str,
    mistake: str,
    make: Callable[[dict[str, Any]], object],
    expected: type[AgentlabError],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    p = ADAPTERS[provider]
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(AgentlabError) as info:
        make(p)
    assert type(info.value) is expected, (provider, mistake, type(info.value).__name__, str(info.value))
    assert str(info.value)  # the message says what to fix


@pytest.mark.parametrize("provider", sorted(ADAPTERS))
def test_one_built_request_type_with_a_sizes_only_repr(provider: str) -> None:
    from agentlab.adapters.built_request import BuiltRequest

    p = ADAPTERS[provider]
    built = _build(p, items=(UserItem(text="secret prompt 4b1d"),))
    assert type(built) is BuiltRequest
    assert built.reasoning_sent == 0 and built.reasoning_dropped == 0 and isinstance(built.headers, dict)
    shown = repr(built)
    assert "secret prompt" not in shown and "reasoning_dropped=0" in shown
    assert ("bytes>" if provider == "openai" else "keys>") in shown
