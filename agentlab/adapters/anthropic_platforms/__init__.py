"""Claude on AWS Bedrock and Google Vertex AI, through the anthropic SDK's platform clients.

* :mod:`.provider`: the two ``ProviderSpec``s (``anthropic_bedrock``, ``anthropic_vertex``); no SDK.
* :mod:`._adapter`: ``AnthropicBedrockAdapter`` and ``AnthropicVertexAdapter``, the Messages adapter
  (:mod:`agentlab.adapters.anthropic_messages`) on ``AsyncAnthropicBedrock``/``AsyncAnthropicVertex``.
* :mod:`._credentials`, :mod:`._framing`, :mod:`._errors`, :mod:`._checks`: credentials checked up
  front, Bedrock's event-stream framing and AWS error shape, the request rules at run construction.

A lazy facade, as the Messages package: the registry imports :mod:`.provider` without the SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentlab._lazy import by_module, lazy_exports

if TYPE_CHECKING:
    from agentlab.adapters.anthropic_platforms._adapter import (
        AnthropicBedrockAdapter as AnthropicBedrockAdapter,
    )
    from agentlab.adapters.anthropic_platforms._adapter import (
        AnthropicVertexAdapter as AnthropicVertexAdapter,
    )

_EXPORTS: dict[str, str] = by_module(
    {"agentlab.adapters.anthropic_platforms._adapter": "AnthropicBedrockAdapter AnthropicVertexAdapter"}
)

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
