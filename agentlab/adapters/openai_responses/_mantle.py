"""Bedrock Mantle (``mantle:<model>``, ``https://bedrock-mantle.<region>.api.aws/openai/v1/responses``).

Amazon Bedrock's OpenAI-compatible Responses endpoint (``openai.gpt-5.5`` and other vendors' models),
keyed by a Bedrock API key (``AWS_BEARER_TOKEN_BEDROCK``); ``base_url`` defaults to us-east-1.

``encrypted_content`` is ``rsn_`` + base64 (an AWS Encryption SDK envelope), sent back verbatim.
Tool ``call_id`` s are reused across responses (``call_0`` in every response), so two calls of one
loop would share an id and their results could not be told apart: each id is scoped as
``"<response id>:call_0"`` when it arrives (:attr:`call_ids_per_response`), for the call and its
result alike, which the host accepted in the recording. Usage adds
``input_tokens_details.cache_write_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from agentlab.adapters.openai_responses import _models
from agentlab.adapters.openai_responses._dialect import ResponsesDialect
from agentlab.adapters.openai_responses._request import check_options as _check
from agentlab.adapters.openai_responses._usage import usage_from_openai
from agentlab.adapters.wire_dialect import Host
from agentlab.neutral.usage import CallUsage, token_count

__all__ = ["MANTLE", "check_options", "usage_from_mantle"]


def _reasons(model: str) -> bool:
    """OpenAI's table on the model after its vendor prefix (``openai.gpt-5.5`` -> ``gpt-5.5``).

    Another vendor's model (``qwen.qwen3-...``) is unknown to the table and counts as non-reasoning
    (nothing asked for that it may refuse: "Encrypted content is not supported with this model");
    its reasoning items, if any, are then not carried. A ``sim-*`` name reasons.
    """
    return _models.is_reasoning_model(model.removeprefix("openai."))


def usage_from_mantle(usage: Mapping[str, Any]) -> CallUsage:
    """OpenAI's usage, with Mantle's reported cache writes (unknown when not reported)."""
    base = usage_from_openai(usage)
    writes = token_count(usage.get("input_tokens_details") or {}, "cache_write_tokens")
    return base.model_copy(update={"cache_write_tokens": writes})


MANTLE = ResponsesDialect(
    name="mantle",
    label="Bedrock Mantle",
    host=Host("https://bedrock-mantle.us-east-1.api.aws/openai/v1", "AWS_BEARER_TOKEN_BEDROCK"),
    call_ids_per_response=True,
    reasoning_model=_reasons,
    usage=usage_from_mantle,
)


check_options = partial(_check, dialect=MANTLE)
"""The shared Responses checks (``ProviderSpec.check_options``), under this dialect's name."""
