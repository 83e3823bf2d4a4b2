"""Local and self-hosted servers (``vllm:``, ``llamacpp:``, ``ollama:``, generic ``chat:`` with ``base_url``).

Reasoning arrives as ``reasoning_content`` (llama.cpp, older vLLM) or ``reasoning`` (vLLM >= 0.10,
Ollama) deltas; it is kept as one opaque item per turn under the field it came in. Whether the server
needs it back is the adapter's ``send_reasoning`` setting; the documented default is to send it back
within the loop (a chat template that renders earlier reasoning, e.g. gpt-oss's harmony format,
reads it there; one that does not ignores it). Usage usually has no ``reasoning_tokens``: it stays
unknown (``<NA>``), never 0. No cache-write surcharge; a cache read is known only when reported.

Settings: ``effort`` -> ``reasoning_effort`` (llama.cpp, vLLM and Ollama all take it); reasoning off ->
``chat_template_kwargs: {enable_thinking: false}`` (vLLM, llama.cpp, and so the generic dialect) or
``reasoning_effort: "none"`` (Ollama); a token budget has no field on these servers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentlab.adapters.openai_chat._dialect import Dialect, reasoning_off, reported_usage
from agentlab.adapters.wire_dialect import OLLAMA_HOST, VLLM_HOST, Host
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.request import ReasoningSettings
from agentlab.neutral.usage import CallUsage

__all__ = ["CHAT", "LLAMACPP", "OLLAMA", "VLLM", "usage_from_local"]


def _settings(name: str, off: dict[str, Any]) -> Any:
    def reasoning_body(model: str, r: ReasoningSettings | None) -> dict[str, Any]:
        if r is None:
            return {}
        if reasoning_off(r):
            return dict(off)
        if r.budget_tokens is not None:
            raise InvalidSettingsError(
                f"{name}: a local Chat Completions server has no thinking token budget field; give "
                "effort instead of budget_tokens"
            )
        return {} if r.effort is None else {"reasoning_effort": r.effort}

    return reasoning_body


def usage_from_local(usage: Mapping[str, Any]) -> CallUsage:
    """Prompt/completion figures; reasoning unknown unless the server reports it (never 0)."""
    return reported_usage(usage)


_TEMPLATE_OFF = {"chat_template_kwargs": {"enable_thinking": False}}


def _local(name: str, label: str, host: Host, off: dict[str, Any]) -> Dialect:
    return Dialect(
        name=name,
        label=label,
        reasoning_body=_settings(name, off),
        usage=usage_from_local,
        host=host,
        sim_dialect="local",
    )


VLLM = _local("vllm", "vLLM", VLLM_HOST, _TEMPLATE_OFF)
LLAMACPP = _local("llamacpp", "llama.cpp", Host("http://localhost:8080/v1"), _TEMPLATE_OFF)
OLLAMA = _local("ollama", "Ollama", OLLAMA_HOST, {"reasoning_effort": "none"})
CHAT = _local("chat", "Chat Completions server", Host(None), _TEMPLATE_OFF)
