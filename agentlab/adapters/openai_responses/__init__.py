"""The OpenAI Responses provider: one package holds everything OpenAI-specific.

* :mod:`.provider`: the ``ProviderSpec`` the registry reads (model prefix, usage normalizer, SDK
  loggers, continuity policy, simulated models). It imports no SDK, so routing a model string and
  checking settings stay cheap.
* :mod:`._adapter`: ``OpenAIResponsesAdapter`` on the official ``openai`` SDK, imported on first use.
* :mod:`._request`, :mod:`._stream`, :mod:`._raw`, :mod:`._errors`, :mod:`._usage`: body building,
  stream mapping, raw SSE reading, error translation, usage normalization.

The package root is a lazy facade (the adapter's names resolve on first access) because the
registry imports :mod:`.provider`, and importing a submodule runs this file first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentlab._lazy import by_module, lazy_exports

if TYPE_CHECKING:
    from agentlab.adapters.openai_responses._adapter import OpenAIResponsesAdapter as OpenAIResponsesAdapter
    from agentlab.adapters.openai_responses._request import build_request as build_request
    from agentlab.adapters.openai_responses._request import is_reasoning_model as is_reasoning_model
    from agentlab.adapters.openai_responses._request import strict_schema_ok as strict_schema_ok

_EXPORTS: dict[str, str] = by_module(
    {
        "agentlab.adapters.openai_responses._adapter": "OpenAIResponsesAdapter",
        "agentlab.adapters.openai_responses._request": "build_request is_reasoning_model strict_schema_ok",
    }
)

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
