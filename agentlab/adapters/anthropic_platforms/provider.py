"""The registry entries of Claude's platforms: ``anthropic_bedrock:`` and ``anthropic_vertex:``.

Why two providers and not ``anthropic`` with a platform option: a model string alone says where a
run goes (``compare`` can put Claude on Anthropic, Bedrock and Vertex side by side), and the
things that differ per platform are already per-provider data: the credentials, the price table
(genai-prices' ``aws`` and ``google`` providers), the OpenTelemetry provider name (``aws.bedrock``,
``gcp.vertex_ai``) and, above all, the opaque items' provider tag, so a platform-signed thinking
block is never sent elsewhere without a line of special casing. ``anthropic-bedrock:`` would read
better but the registry's names are ``[a-z][a-z0-9_]*`` (they are also ``provider_options``
prefixes: ``anthropic_bedrock_top_k``). What stays Anthropic's is the Messages body and its rules:
these specs reuse its option rules, usage mapping and continuity policy. Imports no SDK.
"""

from __future__ import annotations

from typing import Any

from agentlab.adapters.anthropic_messages.provider import OPTIONS, claude_spec
from agentlab.adapters.option_rules import OptionRules
from agentlab.adapters.registry import ProviderSpec

__all__ = ["BEDROCK", "VERTEX"]

_PKG = "agentlab.adapters.anthropic_platforms"

PLATFORM_OPTIONS = OptionRules(
    owned={
        **OPTIONS.owned,
        "anthropic_version": "the platform's version, which agentlab writes",
        "anthropic_beta": "beta flags go in the anthropic-beta header (extra_headers); the SDK moves them",
    },
    types=OPTIONS.types,
    nested_owned=OPTIONS.nested_owned,
    neutral=OPTIONS.neutral,
)
"""Anthropic's ``provider_options`` rules, plus the two body keys the platforms add."""


def _spec(name: str, label: str, adapter: str, **own: Any) -> ProviderSpec:
    """One platform's spec: Claude's, with the platforms' rules, plus ``own`` (client, prices, names)."""
    return claude_spec(
        name=name,
        label=label,
        adapter=f"{_PKG}._adapter:{adapter}",
        drop_refusal=(
            "with thinking on, Claude requires the current tool loop's thinking blocks to go back "
            "unmodified (the platform answers 400 otherwise)"
        ),
        options=PLATFORM_OPTIONS,
        check_options=f"{_PKG}._checks:check_{name.removeprefix('anthropic_')}",
        **own,
    )


BEDROCK = _spec(
    "anthropic_bedrock",
    "Claude on Bedrock",
    "AnthropicBedrockAdapter",
    api_key_env="AWS_BEARER_TOKEN_BEDROCK",
    # botocore signs the requests (SigV4) and logs the canonical request at DEBUG
    sdk_loggers=("anthropic", "botocore", "boto3"),
    simulator="agentlab.sim:anthropic_bedrock_client",
    price_provider="aws",
    otel_name="aws.bedrock",
)

VERTEX = _spec(
    "anthropic_vertex",
    "Claude on Vertex AI",
    "AnthropicVertexAdapter",
    sdk_loggers=("anthropic", "google.auth"),
    simulator="agentlab.sim:anthropic_vertex_client",
    price_provider="google",
    otel_name="gcp.vertex_ai",
)
