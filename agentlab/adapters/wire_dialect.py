"""What every dialect of a wire format posted through the ``openai`` SDK says about itself.

The Responses hosts (:mod:`agentlab.adapters.openai_responses._dialect`) and the Chat Completions
dialects (:mod:`agentlab.adapters.openai_chat._dialect`) differ in their body, stream and continuity;
who they are, where they live, which key they read and how their usage reads are the same facts,
declared once here, and so is the part of the registry entry made from them. Where a dialect lives
and which key it reads is its :class:`Host`, one value per host: DeepSeek and xAI serve both wire
formats on one URL with one key, as local vLLM and Ollama servers do. Imports no SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentlab.adapters.registry import ProviderSpec, target_of
from agentlab.neutral.usage import CallUsage

__all__ = ["DEEPSEEK_HOST", "OLLAMA_HOST", "VLLM_HOST", "XAI_HOST", "Host", "WireDialect", "dialect_spec"]


@dataclass(frozen=True, slots=True)
class Host:
    """Where a dialect's server lives and which key it reads (one value per host, shared by its dialects)."""

    base_url: str | None
    """``None``: no default; the user gives ``base_url`` (the generic ``chat:``; Azure: the resource's
    URL), or the SDK's own default applies (OpenAI)."""
    api_key_env: str | None = None
    """The environment variable the key is read from; ``None``: a local server, which takes no key."""

    @property
    def key_required(self) -> bool:
        """A hosted API refuses a call without a key; local servers take none."""
        return self.api_key_env is not None


DEEPSEEK_HOST = Host("https://api.deepseek.com", "DEEPSEEK_API_KEY")
XAI_HOST = Host("https://api.x.ai/v1", "XAI_API_KEY")
VLLM_HOST = Host("http://localhost:8000/v1")
OLLAMA_HOST = Host("http://localhost:11434/v1")


@dataclass(frozen=True, slots=True, kw_only=True)
class WireDialect:
    """One dialect's identity, host and usage mapping (its wire format's own facts are a subclass's)."""

    name: str
    """The provider name (``deepseek``); the ``provider`` tag of its opaque items and errors."""
    label: str
    host: Host
    usage: Callable[[Mapping[str, Any]], CallUsage]


def dialect_spec(dialect: WireDialect, api: str, adapter: str, **own: Any) -> ProviderSpec:
    """A dialect's registry entry: what the dialect says, on the ``openai`` SDK, plus ``own``.

    ``adapter``: ``"module:Class"``; ``own``: the rest of the spec (options, checks, simulator...).
    The name, label, key variable and usage mapping are the dialect's, written once there.
    """
    return ProviderSpec(
        name=dialect.name,
        api=api,
        label=dialect.label,
        adapter=adapter,
        usage=target_of(dialect.usage),
        sdk_module="openai",
        sdk_loggers=("openai",),
        api_key_env=dialect.host.api_key_env,
        **own,
    )
