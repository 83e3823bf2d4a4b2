"""A body that stops mid-read is a typed agentlab error in both shapes the SDKs have raised it in.

Up to anthropic 2.16 a failed read reached the caller as the transport's bare ``httpx2.ReadError``;
from anthropic 2.17 (and current openai) the SDK wraps it in its ``APIConnectionError``, the read
error as its cause. Streaming calls read the body themselves (raw chunks: the end-to-end contract
test, fault ``reset``, covers them); where the SDK reads the body (non-streaming calls, and the
request itself) its exception reaches each family's ``translate``, which is handed both shapes here,
so a release that switches between them cannot turn a dropped body into an untyped error. A provider
family missing from the table below fails the coverage test.
"""

from __future__ import annotations

from collections.abc import Callable

import anthropic
import httpx2
import openai
import pytest

from agentlab.adapters.anthropic_messages import _errors as anthropic_errors
from agentlab.adapters.anthropic_platforms import _errors as platform_errors
from agentlab.adapters.bedrock_converse import _errors as bedrock_errors
from agentlab.adapters.google_gemini import _errors as gemini_errors
from agentlab.adapters.openai_chat import _errors as chat_errors
from agentlab.adapters.openai_responses import _errors as responses_errors
from agentlab.adapters.registry import get_provider, provider_names
from agentlab.errors import AgentlabError, ProviderConnectionError, StreamInterruptedError

_REQUEST = httpx2.Request("POST", "https://provider.invalid/v1/x")
Translate = Callable[[BaseException], AgentlabError]
# Adapter package -> (its translation, the SDK's connection-error wrapper or None when its SDK has none).
FAMILIES: dict[str, tuple[Translate, type[Exception] | None]] = {
    "openai_responses": (responses_errors.translate, openai.APIConnectionError),
    "anthropic_messages": (anthropic_errors.translate, anthropic.APIConnectionError),
    "anthropic_platforms": (
        lambda exc: platform_errors.translate_bedrock(exc, "anthropic_bedrock"),
        anthropic.APIConnectionError,
    ),
    "openai_chat": (lambda exc: chat_errors.translate(exc, "deepseek"), openai.APIConnectionError),
    "google_gemini": (gemini_errors.translate, None),
    "bedrock_converse": (bedrock_errors.translate, None),
}


def _family(provider: str) -> str:
    return get_provider(provider).adapter.split(":")[0].split(".")[2]


def test_every_registered_provider_family_is_covered() -> None:
    assert {_family(p) for p in provider_names()} <= set(FAMILIES)


def _botocore_shapes() -> list[BaseException]:
    """Under botocore the stack is urllib3: the bare read error, and botocore's wrapper of a failed read."""
    from botocore.exceptions import ResponseStreamingError  # type: ignore[import-untyped]
    from urllib3.exceptions import ProtocolError

    bare = ProtocolError("Connection broken: connection reset by peer")
    return [bare, ResponseStreamingError(error=bare)]


# Families whose SDK does not sit on httpx2, with the shapes their stack raises instead.
SHAPES: dict[str, Callable[[], list[BaseException]]] = {"bedrock_converse": _botocore_shapes}


def _shapes(wrapper: type[Exception] | None) -> list[BaseException]:
    bare = httpx2.ReadError("Connection reset by peer", request=_REQUEST)
    if wrapper is None:
        return [bare]
    wrapped = wrapper(request=_REQUEST)  # type: ignore[call-arg]
    wrapped.__cause__ = bare
    return [bare, wrapped]


@pytest.mark.parametrize("provider", provider_names())
def test_a_dropped_body_is_typed_in_either_sdk_shape(provider: str) -> None:
    family = _family(provider)
    translate, wrapper = FAMILIES[family]
    for exc in SHAPES[family]() if family in SHAPES else _shapes(wrapper):
        err = translate(exc)
        assert isinstance(err, StreamInterruptedError | ProviderConnectionError), (type(exc), type(err))
        assert "\n" not in str(err)
