"""Local Responses endpoints: vLLM, Ollama and LM Studio (``<server>_responses:<model>``).

``vllm_responses:``, ``ollama_responses:`` and ``lmstudio_responses:``.

Named with ``_responses`` because ``vllm:`` and ``ollama:`` are their Chat Completions dialects.
Stateless only: agentlab never sends ``previous_response_id``, and the full input goes every call.

None of them issues ``encrypted_content`` as ciphertext agentlab could carry: vLLM answers a reasoning
input item with a non-null ``encrypted_content`` with 400 "Encrypted content is not supported." and
reads its ``content`` (``reasoning_text``) or ``summary`` text instead; Ollama's ``/v1/responses``
lists no ``include`` or ``store`` field (and no stateful requests); LM Studio issues none either. So
``include`` is never sent, and a reasoning item goes back with its text only
(``encrypted="refused"``). Ollama gets no ``store`` field. Usage: reasoning and cached-token figures
stay unknown (``None``) when the server does not report them, never 0. No key is needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from agentlab.adapters.openai_responses._dialect import ResponsesDialect
from agentlab.adapters.openai_responses._request import check_options as _check
from agentlab.adapters.wire_dialect import OLLAMA_HOST, VLLM_HOST, Host
from agentlab.neutral.usage import CallUsage, token_count

__all__ = [
    "LMSTUDIO_RESPONSES",
    "OLLAMA_RESPONSES",
    "VLLM_RESPONSES",
    "check_lmstudio",
    "check_ollama",
    "check_vllm",
    "usage_from_local",
]


def usage_from_local(usage: Mapping[str, Any]) -> CallUsage:
    """Input/output figures; reasoning and cache reads unknown unless reported (never 0)."""
    prompt = token_count(usage, "input_tokens")
    reasoning = token_count(usage.get("output_tokens_details") or {}, "reasoning_tokens")
    return CallUsage(
        input_tokens=prompt,
        cache_read_tokens=token_count(usage.get("input_tokens_details") or {}, "cached_tokens"),
        cache_write_tokens=0 if prompt is not None else None,
        cache_write_1h_tokens=0 if prompt is not None else None,
        output_tokens=token_count(usage, "output_tokens"),
        reasoning_tokens=reasoning,
        reasoning_source="reported" if reasoning is not None else "unknown",
    )


def _local(name: str, label: str, host: Host, *, store: bool = True) -> ResponsesDialect:
    return ResponsesDialect(
        name=name, label=label, host=host, encrypted="refused", send_store=store, usage=usage_from_local
    )


VLLM_RESPONSES = _local("vllm_responses", "vLLM (Responses)", VLLM_HOST)
OLLAMA_RESPONSES = _local("ollama_responses", "Ollama (Responses)", OLLAMA_HOST, store=False)
LMSTUDIO_RESPONSES = _local("lmstudio_responses", "LM Studio (Responses)", Host("http://localhost:1234/v1"))


check_vllm = partial(_check, dialect=VLLM_RESPONSES)
check_ollama = partial(_check, dialect=OLLAMA_RESPONSES)
check_lmstudio = partial(_check, dialect=LMSTUDIO_RESPONSES)
"""The shared Responses checks (``ProviderSpec.check_options``), under each server's name."""
