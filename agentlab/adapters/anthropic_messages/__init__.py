"""The Anthropic Messages provider: one package holds everything Anthropic-specific.

* :mod:`.provider`: the ``ProviderSpec`` the registry reads (model prefix, usage normalizer, SDK
  loggers, continuity policy, simulated models). It imports no SDK, so routing a model string and
  checking settings stay cheap.
* :mod:`._adapter`: ``AnthropicMessagesAdapter`` on the official ``anthropic`` SDK, imported on
  first use.
* :mod:`._request`, :mod:`._stream`, :mod:`._errors`, :mod:`._usage`: body building, stream
  mapping, error translation, usage normalization.

The package root is a lazy facade (the adapter's names resolve on first access) because the
registry imports :mod:`.provider`, and importing a submodule runs this file first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentlab._lazy import by_module, lazy_exports

if TYPE_CHECKING:
    from agentlab.adapters.anthropic_messages._adapter import (
        AnthropicMessagesAdapter as AnthropicMessagesAdapter,
    )
    from agentlab.adapters.anthropic_messages._request import BuiltRequest as BuiltRequest
    from agentlab.adapters.anthropic_messages._request import build_request as build_request
    from agentlab.adapters.anthropic_messages._stream import MessageAssembler as MessageAssembler

_EXPORTS: dict[str, str] = by_module(
    {
        "agentlab.adapters.anthropic_messages._adapter": "AnthropicMessagesAdapter",
        "agentlab.adapters.anthropic_messages._request": "BuiltRequest build_request",
        "agentlab.adapters.anthropic_messages._stream": "MessageAssembler",
    }
)

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
