"""The Messages rules, applied to a platform's request when its run is built (no SDK import).

The same build the adapter runs (:func:`agentlab.adapters.anthropic_messages._request.check_options`),
under the platform's own provider name: its ``provider_options`` keys (``anthropic_bedrock_*``) and
rules, and only its own thinking blocks.
"""

from __future__ import annotations

from agentlab.adapters.anthropic_messages._request import check_options
from agentlab.neutral.request import ModelRequest

__all__ = ["check_bedrock", "check_vertex"]


def check_bedrock(req: ModelRequest, adapter: object | None = None) -> None:
    """``anthropic_bedrock``'s request rules (the Messages rules under its name)."""
    check_options(req, adapter, provider="anthropic_bedrock")


def check_vertex(req: ModelRequest, adapter: object | None = None) -> None:
    """``anthropic_vertex``'s request rules (the Messages rules under its name)."""
    check_options(req, adapter, provider="anthropic_vertex")
